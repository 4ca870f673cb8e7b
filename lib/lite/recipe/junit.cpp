// lite run's gates as a JUnit XML file, the form CI systems' test reporters read (GitLab's junit report, Jenkins'
// junit step, GitHub actions that publish test results): one testsuite for the recipe, one testcase per gate it
// checked (a step's own failed gate included, "steps[1].quantize: tolerance") and one per step whose own gates all
// passed. A failed gate is a <failure> whose message holds the measured value, the bound and the detail, so a
// failed compression gate shows as a failed test. Only elements and attributes the JUnit schema requires or
// allows are written (testsuites > testsuite > properties, testcase > failure, system-out). Torch-free.
#include <fmt/format.h>

#include <sstream>

#include "lite/core/text.hpp"
#include "lite/recipe/report_internal.hpp"
#include "lite/recipe/runner.hpp"

namespace lite::recipe {

namespace {

struct Case {
  std::string name;
  std::string failure;  // "" when it passed
  std::string detail;
};

std::vector<Case> cases_of(const RunResult& r) {
  std::vector<Case> cases;
  for (const auto& g : r.gates_checked) {
    std::string failure;
    if (!g.passed)
      failure = g.comparison.empty() ? g.name + ": failed"
                                     : fmt::format("{}: measured {}, bound {}", g.name, detail::measured_text(g),
                                                   detail::bound_text(g));
    cases.push_back({g.name, failure, g.detail});
  }
  for (const auto& s : r.steps)
    if (s.gates.passed()) cases.push_back({s.key_path + ": own gates", "", "the " + s.verb + " step's own gates"});
  return cases;
}

void write_case(std::ostringstream& x, const std::string& suite, const Case& c) {
  x << fmt::format("    <testcase classname=\"lite.run.{}\" name=\"{}\" time=\"0\"", xml_escape(suite),
                   xml_escape(c.name));
  if (c.failure.empty()) {
    x << "/>\n";
    return;
  }
  x << fmt::format(">\n      <failure message=\"{}\" type=\"gate\">{}</failure>\n    </testcase>\n",
                   xml_escape(c.failure), xml_escape(c.failure + "; " + c.detail));
}

}  // namespace

std::string to_junit(const RunResult& r) {
  const std::vector<Case> cases = cases_of(r);
  size_t failures = 0;
  for (const auto& c : cases) failures += c.failure.empty() ? 0 : 1;
  const Environment& e = r.environment;
  std::ostringstream x;
  x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  x << fmt::format("<testsuites name=\"lite run\" tests=\"{}\" failures=\"{}\" errors=\"0\" time=\"{:.3f}\">\n",
                   cases.size(), failures, r.wall_s);
  x << fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\" time=\"{:.3f}\">\n",
                   xml_escape(r.recipe.name), cases.size(), failures, r.wall_s);
  x << "    <properties>\n";
  for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"recipe_file", r.recipe.file.string()}, {"lite_version", e.lite_version}, {"git_commit", e.git_commit},
           {"libtorch_version", e.libtorch_version}, {"cpu_model", e.cpu_model},
           {"artifact", r.wrote_artifact ? r.output.string() : ""}})
    x << fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", name, xml_escape(value));
  x << "    </properties>\n";
  for (const auto& c : cases) write_case(x, r.recipe.name, c);
  x << fmt::format("    <system-out>{}</system-out>\n", xml_escape(to_markdown(r)));
  x << "  </testsuite>\n</testsuites>\n";
  return x.str();
}

}  // namespace lite::recipe
