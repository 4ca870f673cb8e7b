// Parsing a recipe (see recipe.hpp): top-level keys through OptionReader (unknown keys get "did you mean" and
// the valid keys), then each step in order, resolving its path values and references as it goes, so a step
// that reads an artifact no earlier step makes is caught before any work. Option values themselves are left to
// each verb's from_json/validate (runner.cpp), which report under the same key paths. Torch-free, and never
// throws anything but OptionError/InputError on any input (tests/fuzz/fuzz_recipe.cpp holds it to that).
#include "lite/recipe/recipe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "lite/cache/verb.hpp"
#include "lite/core/error.hpp"
#include "lite/core/json_input.hpp"
#include "lite/core/options.hpp"
#include "lite/core/text.hpp"
#include "lite/distill/verb.hpp"
#include "lite/profile/verb.hpp"
#include "lite/prune/verb.hpp"
#include "lite/verbs/verbs.hpp"

namespace lite::recipe {

namespace {

namespace fs = std::filesystem;

const char* kind_of(const nlohmann::json& v) {
  if (v.is_object()) return "an object";
  if (v.is_array()) return "an array";
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  return "null";
}

// Resolves path values and references while the steps are read in order.
class Resolver {
 public:
  explicit Resolver(Recipe& recipe) : recipe_(recipe) {}

  // `text` at key path `key`, read by step `reader` (steps.size() for the evaluation after every step).
  std::string resolve(const std::string& text, const std::string& key, size_t reader) const {
    if (text.empty() || text == "-") return text;  // unset, or stdin (cache-sim's trace)
    if (text[0] != '@') {
      const fs::path p(text);
      return (p.is_absolute() ? p : (recipe_.folder / p)).lexically_normal().string();
    }
    if (text == "@model") return recipe_.model.string();
    if (text.rfind("@data.", 0) == 0) return data_file(text.substr(6), key);
    if (auto ref = parse_step_reference(text)) {
      check_step_reference(*ref, text, key, reader);
      return text;  // the runner substitutes the file once the step has run
    }
    throw OptionError(key, fmt::format("unknown reference '{}'", text),
                      "use @model, @data.NAME, @steps[I] (a step's model artifact) or @steps[I].report");
  }

  // The artifact a step's model input defaults to: the latest one written before step `reader`.
  std::string latest_artifact(size_t reader) const {
    for (size_t i = reader; i-- > 0;)
      if (recipe_.steps[i].makes_model) return step_reference(int(i));
    return recipe_.model.string();
  }

 private:
  std::string data_file(const std::string& name, const std::string& key) const {
    auto it = recipe_.data.find(name);
    if (it != recipe_.data.end()) return it->second.string();
    std::vector<std::string> names;
    for (const auto& [n, path] : recipe_.data) names.push_back(n);
    std::string problem = fmt::format("no data file named '{}'", name);
    if (auto m = closest_match(name, names)) problem += fmt::format("; did you mean '{}'?", *m);
    throw OptionError(key, problem, names.empty() ? "add it under \"data\"" : "data files: " + join(names, ", "));
  }

  void check_step_reference(const StepReference& ref, const std::string& text, const std::string& key,
                            size_t reader) const {
    if (size_t(ref.step) >= reader || size_t(ref.step) >= recipe_.steps.size())
      throw OptionError(key, fmt::format("'{}' reads what step {} makes, but that step has not run yet", text, ref.step),
                        fmt::format("refer to an earlier step (steps[0] to steps[{}])", int(reader) - 1));
    const Step& made_by = recipe_.steps[size_t(ref.step)];
    if (!ref.report && !made_by.makes_model)
      throw OptionError(key, fmt::format("'{}' reads a model artifact, but step {} ({}) writes none", text, ref.step,
                                         made_by.verb),
                        fmt::format("read '{}' for its JSON report, or the artifact of a quantize, prune or distill step",
                                    step_reference(ref.step, true)));
  }

  Recipe& recipe_;
};

// Resolves the path values of one options object in place.
void resolve_paths(nlohmann::json& options, const RecipeStepShape& verb, const std::string& prefix, size_t reader,
                   const Resolver& resolver) {
  for (const auto& key : verb.path_keys) {
    auto it = options.find(key);
    if (it != options.end() && it->is_string()) *it = resolver.resolve(it->get<std::string>(), prefix + key, reader);
  }
  for (const auto& key : verb.path_list_keys) {
    auto it = options.find(key);
    if (it == options.end() || !it->is_array()) continue;
    for (size_t j = 0; j < it->size(); ++j)
      if ((*it)[j].is_string())
        (*it)[j] = resolver.resolve((*it)[j].get<std::string>(), fmt::format("{}{}[{}]", prefix, key, j), reader);
  }
}

Step read_step(const nlohmann::json& element, size_t index, const Resolver& resolver) {
  const std::string where = fmt::format("steps[{}]", index);
  const std::string shape = "a step is {\"VERB\": {OPTIONS}} with VERB one of: " + join(step_verb_names(), ", ");
  if (!element.is_object() || element.size() != 1)
    throw OptionError(where, fmt::format("expected an object with one verb, got {}{}", kind_of(element),
                                         element.is_object() ? fmt::format(" with {} keys", element.size()) : ""),
                      shape);
  const std::string verb_name = element.begin().key();
  const VerbDescriptor* verb = find_step_verb(verb_name);
  if (!verb) throw OptionError(where, unknown_name_message("step", verb_name, step_verb_names()), shape);
  const RecipeStepShape& step_shape = *verb->recipe_step;
  Step step;
  step.index = int(index);
  step.verb = verb->name;
  step.options = element.begin().value();
  const std::string prefix = step.key_path() + ".";
  if (!step.options.is_object())
    throw OptionError(step.key_path(), fmt::format("expected an object of {} options, got {}", verb->name,
                                                   kind_of(step.options)));
  for (const auto& key : step_shape.owned_keys)
    if (step.options.contains(key))
      throw OptionError(prefix + key, "is set by lite run",
                        "remove it: steps write to {work_dir}, and the final artifact goes to {output}");
  const std::string& model_key = step_shape.model_key;
  if (!model_key.empty() && (!step.options.contains(model_key) || step.options[model_key].is_null())) {
    const std::string latest = resolver.latest_artifact(index);
    step.options[model_key] = step_shape.model_key_is_list ? nlohmann::json::array({latest}) : nlohmann::json(latest);
  }
  for (const auto& [key, value] : step_shape.defaults)
    if (!step.options.contains(key)) step.options[key] = value;
  resolve_paths(step.options, step_shape, prefix, index, resolver);
  step.makes_model = step_shape.makes_model(step.options);
  return step;
}

// A prune step that a later distill step recovers is judged after the recovery, by the recipe's own gates: its
// agreement floor (a gate against pruning without recovery) is lifted unless the step sets one.
void lift_agreement_floor_before_recovery(std::vector<Step>& steps) {
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].verb != prune::verb().name || steps[i].options.contains("agreement_floor")) continue;
    const bool recovered = std::any_of(steps.begin() + long(i) + 1, steps.end(),
                                       [](const Step& later) { return later.verb == distill::verb().name; });
    if (recovered) steps[i].options["agreement_floor"] = 100.0;
  }
}

void check_bound(const std::string& key, const std::optional<double>& value, double low, double high) {
  if (value) option_rules::in_range(key, *value, low, high);
}

GateBounds read_gates(const nlohmann::json& gates) {
  GateBounds g;
  nlohmann::json max_size;
  OptionReader in(gates, "gates.");
  in.read("max_accuracy_drop", g.max_accuracy_drop)
      .read("min_agreement", g.min_agreement)
      .read("min_speedup", g.min_speedup)
      .read("max_p99_ms", g.max_p99_ms)
      .read("max_size", max_size)
      .read("min_hit_ratio", g.min_hit_ratio)
      .read("max_cache_p99_ms", g.max_cache_p99_ms);
  in.finish();
  check_bound("gates.max_accuracy_drop", g.max_accuracy_drop, 0, 100);
  check_bound("gates.min_agreement", g.min_agreement, 0, 100);
  check_bound("gates.min_speedup", g.min_speedup, 1e-9, 1e9);
  check_bound("gates.max_p99_ms", g.max_p99_ms, 1e-9, 1e12);
  check_bound("gates.min_hit_ratio", g.min_hit_ratio, 0, 1);
  check_bound("gates.max_cache_p99_ms", g.max_cache_p99_ms, 1e-9, 1e12);
  if (max_size.is_number_unsigned() && max_size.get<uint64_t>() > 0) {
    g.max_size_bytes = max_size.get<uint64_t>();
  } else if (max_size.is_string()) {
    g.max_size_bytes = parse_byte_size(max_size.get<std::string>());
    if (!g.max_size_bytes)
      throw OptionError("gates.max_size", fmt::format("'{}' is not a byte size", max_size.get<std::string>()),
                        "give bytes (2000000) or a size with a unit (\"2MiB\")");
  } else if (!max_size.is_null()) {
    throw OptionError("gates.max_size", fmt::format("expected a positive byte count or a size like \"2MiB\", got {}",
                                                    max_size.dump()));
  }
  return g;
}

// What the gates need: a final artifact, a cache-sim step, labeled evaluation data.
void check_gates_can_be_measured(const Recipe& r) {
  auto first_set = [](std::initializer_list<std::pair<const char*, bool>> gates) {
    for (const auto& [key, set] : gates)
      if (set) return std::string("gates.") + key;
    return std::string();
  };
  const GateBounds& g = r.gates;
  if (g.any_model_gate() && r.last_model_step() < 0)
    throw OptionError(first_set({{"max_accuracy_drop", bool(g.max_accuracy_drop)},
                                 {"min_agreement", bool(g.min_agreement)},
                                 {"min_speedup", bool(g.min_speedup)},
                                 {"max_p99_ms", bool(g.max_p99_ms)},
                                 {"max_size", bool(g.max_size_bytes)}}),
                      "measures the final model artifact, but no step writes one",
                      "add a quantize, prune or distill step");
  bool has_cache_sim = false;
  for (const auto& s : r.steps) has_cache_sim |= s.verb == cache::verb().name;
  if (g.any_cache_gate() && !has_cache_sim)
    throw OptionError(first_set({{"min_hit_ratio", bool(g.min_hit_ratio)}, {"max_cache_p99_ms", bool(g.max_cache_p99_ms)}}),
                      "reads the last cache-sim step, but the recipe has none", "add a cache-sim step");
  const auto eval = r.evaluate.find("eval");
  if (g.max_accuracy_drop && (eval == r.evaluate.end() || !eval->is_string() || eval->get<std::string>().empty()))
    throw OptionError("gates.max_accuracy_drop", "needs labeled evaluation data",
                      "add \"data\": {\"eval\": FILE} (or \"evaluate\": {\"eval\": FILE})");
}

void read_data(Recipe& r, const nlohmann::json& data) {
  if (!data.is_object())
    throw OptionError("data", fmt::format("expected an object of NAME: FILE, got {}", kind_of(data)),
                      "write e.g. \"data\": {\"eval\": \"eval.pt\"}");
  for (auto it = data.begin(); it != data.end(); ++it) {
    if (!it->is_string() || it->get<std::string>().empty())
      throw OptionError("data." + it.key(), fmt::format("expected a file path, got {}", it->dump()),
                        "give the file relative to the recipe's folder");
    const fs::path p(it->get<std::string>());
    r.data[it.key()] = (p.is_absolute() ? p : r.folder / p).lexically_normal();
  }
}

void read_evaluate(Recipe& r, const nlohmann::json& evaluate, const Resolver& resolver) {
  if (!evaluate.is_object())
    throw OptionError("evaluate", fmt::format("expected an object of lite profile options, got {}", kind_of(evaluate)),
                      "write e.g. \"evaluate\": {\"eval\": \"@data.eval\"}");
  r.evaluate = evaluate;
  if (r.evaluate.contains("models"))
    throw OptionError("evaluate.models", "is set by lite run: the original model and the final artifact", "remove it");
  if (!r.evaluate.contains("eval") && r.data.count("eval")) r.evaluate["eval"] = r.data["eval"].string();
  if (!r.evaluate.contains("labels") && r.data.count("eval_labels"))
    r.evaluate["labels"] = r.data["eval_labels"].string();
  resolve_paths(r.evaluate, *profile::verb().recipe_step, "evaluate.", r.steps.size(), resolver);
}

}  // namespace

std::optional<StepReference> parse_step_reference(const std::string& text) {
  const std::string head = "@steps[";
  if (text.rfind(head, 0) != 0) return std::nullopt;
  size_t close = text.find(']', head.size());
  if (close == std::string::npos || close == head.size() || close - head.size() > 6) return std::nullopt;
  const std::string digits = text.substr(head.size(), close - head.size());
  if (digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  StepReference ref;
  ref.step = std::stoi(digits);
  const std::string rest = text.substr(close + 1);
  if (rest == ".report")
    ref.report = true;
  else if (!rest.empty())
    return std::nullopt;
  return ref;
}

std::string step_reference(int step, bool report) {
  return fmt::format("@steps[{}]{}", step, report ? ".report" : "");
}

int Recipe::last_model_step() const {
  for (size_t i = steps.size(); i-- > 0;)
    if (steps[i].makes_model) return int(i);
  return -1;
}

std::vector<fs::path> Recipe::input_files() const {
  std::vector<fs::path> files{model};
  for (const auto& [name, path] : data) files.push_back(path);
  auto add = [&](const nlohmann::json& value) {
    if (value.is_string() && !value.get<std::string>().empty() && value.get<std::string>()[0] != '@' &&
        value.get<std::string>() != "-")
      files.emplace_back(value.get<std::string>());
  };
  auto add_all = [&](const nlohmann::json& options, const RecipeStepShape& verb) {
    for (const auto& key : verb.path_keys)
      if (options.contains(key)) add(options[key]);
    for (const auto& key : verb.path_list_keys)
      if (options.contains(key) && options[key].is_array())
        for (const auto& v : options[key]) add(v);
  };
  for (const auto& s : steps) add_all(s.options, *find_step_verb(s.verb)->recipe_step);
  add_all(evaluate, *profile::verb().recipe_step);
  return files;
}

std::vector<std::string> gate_keys() {
  return {"max_accuracy_drop", "min_agreement", "min_speedup", "max_p99_ms", "max_size", "min_hit_ratio",
          "max_cache_p99_ms"};
}

Recipe parse_recipe(const nlohmann::json& document, const fs::path& recipe_file) {
  if (!document.is_object())
    throw OptionError("recipe", fmt::format("expected a JSON object, got {}", kind_of(document)),
                      "see recipes/README.md for the format");
  Recipe r;
  r.document = document;
  r.file = recipe_file;
  // Absolute, so a path resolved once (a model input defaulted to the recipe's model) resolves to itself again.
  r.folder = fs::absolute(recipe_file.parent_path().empty() ? fs::path(".") : recipe_file.parent_path());
  r.name = recipe_file.stem().string();
  std::optional<int64_t> version;
  std::string model;
  nlohmann::json data = nlohmann::json::object(), steps, evaluate = nlohmann::json::object(),
                 gates = nlohmann::json::object();
  OptionReader in(document);
  in.read("lite_recipe", version)
      .read("name", r.name)
      .read("description", r.description)
      .read("model", model)
      .read("data", data)
      .read("steps", steps)
      .read("evaluate", evaluate)
      .read("gates", gates);
  in.finish();
  if (!version)
    throw OptionError("lite_recipe", "is required: the recipe's schema version",
                      fmt::format("add \"lite_recipe\": {}", kSchemaVersion));
  if (*version != kSchemaVersion)
    throw OptionError("lite_recipe", fmt::format("schema version {} is not supported", *version),
                      fmt::format("this lite reads version {}", kSchemaVersion));
  r.schema_version = int(*version);
  option_rules::not_empty("model", model, "give the TorchScript model the steps start from (relative to the recipe)");
  const fs::path model_path(model);
  r.model = (model_path.is_absolute() ? model_path : r.folder / model_path).lexically_normal();
  read_data(r, data);
  if (!steps.is_array() || steps.empty())
    throw OptionError("steps", steps.is_null() ? "is required" : fmt::format("expected a non-empty array, got {}",
                                                                              steps.is_array() ? "[]" : kind_of(steps)),
                      "list the steps, e.g. [{\"quantize\": {\"mode\": \"static\"}}]");
  Resolver resolver(r);
  for (size_t i = 0; i < steps.size(); ++i) r.steps.push_back(read_step(steps[i], i, resolver));
  lift_agreement_floor_before_recovery(r.steps);
  read_evaluate(r, evaluate, resolver);
  r.gates = read_gates(gates);
  check_gates_can_be_measured(r);
  return r;
}

Recipe read_recipe(const fs::path& recipe_file) {
  return parse_recipe(read_json_input_file(recipe_file, "recipe", "fix the JSON (see recipes/README.md)"), recipe_file);
}

}  // namespace lite::recipe
