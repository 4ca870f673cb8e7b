#include <doctest/doctest.h>

#include <sstream>

#include "lite/core/error.hpp"
#include "lite/core/report.hpp"

using namespace lite;

namespace {
report::Report sample_report() {
  report::Report r;
  r.command = "profile";
  r.environment.lite_version = "0.1.0";
  r.result = {{"median_ms", 1.25}};
  r.tables.push_back({"Latency", {"metric", "ms"}, {{"p50", "1.25"}, {"p99", "10.5"}}});
  r.findings.push_back({"warning", "latency spikes in 3 of 100 iterations", "robust z > 3.5", "pin threads"});
  return r;
}
}  // namespace

TEST_CASE("every registered printer renders a report") {
  for (const auto& p : report::printers()) {
    CAPTURE(p.name);
    std::ostringstream out;
    report::print(sample_report(), report::parse_format(p.name), out);
    CHECK(out.str().find("1.25") != std::string::npos);
  }
}

TEST_CASE("text table aligns numbers right") {
  auto text = report::render_text_table({"", {"metric", "ms"}, {{"p50", "1.25"}, {"p99", "10.5"}}});
  CHECK(text == "metric    ms\n------------\np50     1.25\np99     10.5\n");
}

TEST_CASE("json carries schema version, environment and findings") {
  auto j = report::to_json(sample_report());
  CHECK(j["schema_version"] == report::kSchemaVersion);
  CHECK(j["command"] == "profile");
  CHECK(j["environment"]["lite_version"] == "0.1.0");
  CHECK(j["result"]["median_ms"] == 1.25);
  CHECK(j["findings"][0]["threshold"] == "robust z > 3.5");
}

TEST_CASE("csv quotes fields with commas") {
  report::Report r;
  r.tables.push_back({"t", {"a", "b"}, {{"x,y", "say \"hi\""}}});
  std::ostringstream out;
  report::print(r, report::Format::csv, out);
  CHECK(out.str() == "a,b\n\"x,y\",\"say \"\"hi\"\"\"\n");
}

TEST_CASE("unknown format names the known ones") {
  try {
    report::parse_format("jsn");
    FAIL("expected a usage error");
  } catch (const UsageError& e) {
    CHECK(std::string(e.what()).find("did you mean 'json'") != std::string::npos);
  }
}
