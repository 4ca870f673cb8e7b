// lite run's options as data: JSON both ways through one field list, and the value rules. Torch-free.
#include "lite/recipe/run_options.hpp"

#include "lite/core/options.hpp"

namespace lite::recipe {

// The one field list of RunOptions: to_json writes it, from_json reads it (unknown keys rejected).
template <class Fields, class O>
void run_fields(Fields& f, O& o) {
  f.field("recipe", o.recipe)
      .field("output", o.output)
      .field("work_dir", o.work_dir)
      .field("report_md", o.report_md)
      .field("junit", o.junit)
      .field("allow_noisy", o.allow_noisy);
}

void to_json(nlohmann::json& j, const RunOptions& o) {
  OptionWriter w(j);
  run_fields(w, o);
}

void from_json(const nlohmann::json& j, RunOptions& o) {
  OptionReader r(j);
  run_fields(r, o);
  r.finish();
}

void validate(const RunOptions& o) {
  if (o.recipe.empty())
    throw OptionError("recipe", "is required", "give the recipe JSON file (recipes/README.md lists the shipped ones)");
}

}  // namespace lite::recipe
