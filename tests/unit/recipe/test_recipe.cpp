// The recipe parser of lite run (torch-free): structure, key paths of every error, "did you mean", relative paths
// resolved against the recipe's folder, references to earlier steps, model inputs defaulting to the latest
// artifact, and what the gates need.
#include <doctest/doctest.h>

#include <string>

#include "../scratch_dir.hpp"
#include "lite/core/options.hpp"
#include "lite/recipe/recipe.hpp"

namespace {

using nlohmann::json;
using lite::recipe::parse_recipe;

json base() {
  return json::parse(R"({
    "lite_recipe": 1,
    "model": "models/m.pt",
    "data": {"eval": "data/eval.pt", "trace": "/abs/trace.csv"},
    "steps": [{"quantize": {"mode": "static", "calib": "@data.eval"}}]
  })");
}

lite::OptionError error_of(const json& doc) {
  try {
    parse_recipe(doc, "/r/recipes/x.json");
  } catch (const lite::OptionError& e) {
    return e;
  }
  FAIL("expected an OptionError");
  return lite::OptionError("", "");
}

}  // namespace

TEST_CASE("recipe: paths resolve against the recipe's folder, and the model input defaults to the latest artifact") {
  json doc = base();
  doc["steps"].push_back({{"prune", {{"ratio", 0.3}}}});
  doc["steps"].push_back({{"profile", json::object()}});
  doc["steps"].push_back({{"distill", {{"data", "@data.eval"}}}});
  const auto r = parse_recipe(doc, "/r/recipes/x.json");
  CHECK(r.name == "x");
  CHECK(r.model == "/r/recipes/models/m.pt");
  CHECK(r.data.at("trace") == "/abs/trace.csv");
  REQUIRE(r.steps.size() == 4);
  CHECK(r.steps[0].options["model"] == "/r/recipes/models/m.pt");
  CHECK(r.steps[0].options["calib"] == "/r/recipes/data/eval.pt");
  CHECK(r.steps[1].options["model"] == "@steps[0]");
  CHECK(r.steps[2].options["models"] == json::array({"@steps[1]"}));
  CHECK_FALSE(r.steps[2].makes_model);
  CHECK(r.steps[3].options["student"] == "@steps[1]");  // the pruned model, not the profile step
  CHECK(r.steps[3].options["teacher"] == "/r/recipes/models/m.pt");
  CHECK(r.last_model_step() == 3);
  CHECK(r.evaluate["eval"] == "/r/recipes/data/eval.pt");  // data.eval is the evaluation data by default
}

TEST_CASE("recipe: dry runs and sensitivity analyses write no model") {
  json doc = base();
  doc["steps"][0]["quantize"]["dry_run"] = true;
  doc["steps"].push_back({{"prune", {{"sensitivity", true}}}});
  const auto r = parse_recipe(doc, "x.json");
  CHECK(r.last_model_step() == -1);
  CHECK(r.steps[1].options["model"] == r.model.string());  // still the recipe's model
  CHECK(r.model.is_absolute());  // resolved against the current folder
}

TEST_CASE("recipe: errors name the key path, with did-you-mean and the valid keys") {
  SUBCASE("unknown top-level key") {
    json doc = base();
    doc["stpes"] = json::array();
    auto e = error_of(doc);
    CHECK(e.key() == "stpes");
    CHECK(e.problem().find("did you mean 'steps'") != std::string::npos);
    CHECK(e.fix().find("valid keys: lite_recipe, name") != std::string::npos);
  }
  SUBCASE("unknown step") {
    json doc = base();
    doc["steps"].push_back({{"quantise", json::object()}});
    auto e = error_of(doc);
    CHECK(e.key() == "steps[1]");
    CHECK(e.problem().find("did you mean 'quantize'") != std::string::npos);
  }
  SUBCASE("a step that is not one verb") {
    json doc = base();
    doc["steps"][0]["prune"] = json::object();
    CHECK(error_of(doc).key() == "steps[0]");
  }
  SUBCASE("step options that are not an object") {
    json doc = base();
    doc["steps"][0]["quantize"] = 3;
    CHECK(error_of(doc).key() == "steps[0].quantize");
  }
  SUBCASE("an output lite run sets itself") {
    json doc = base();
    doc["steps"][0]["quantize"]["output"] = "x.pt";
    CHECK(error_of(doc).key() == "steps[0].quantize.output");
  }
  SUBCASE("missing model, missing version, unsupported version") {
    json doc = base();
    doc.erase("model");
    CHECK(error_of(doc).key() == "model");
    doc = base();
    doc.erase("lite_recipe");
    CHECK(error_of(doc).key() == "lite_recipe");
    doc = base();
    doc["lite_recipe"] = 2;
    CHECK(error_of(doc).problem().find("version 2") != std::string::npos);
    doc["lite_recipe"] = "1";
    CHECK(error_of(doc).key() == "lite_recipe");
  }
  SUBCASE("no steps") {
    json doc = base();
    doc["steps"] = json::array();
    CHECK(error_of(doc).key() == "steps");
  }
  SUBCASE("unknown data name") {
    json doc = base();
    doc["steps"][0]["quantize"]["calib"] = "@data.evl";
    auto e = error_of(doc);
    CHECK(e.key() == "steps[0].quantize.calib");
    CHECK(e.problem().find("did you mean 'eval'") != std::string::npos);
  }
  SUBCASE("unknown reference") {
    json doc = base();
    doc["steps"][0]["quantize"]["eval"] = "@stepz[0]";
    CHECK(error_of(doc).key() == "steps[0].quantize.eval");
  }
  SUBCASE("gates: unknown gate, wrong type, out of range") {
    json doc = base();
    doc["gates"] = {{"min_speedp", 1.2}};
    auto e = error_of(doc);
    CHECK(e.key() == "gates.min_speedp");
    CHECK(e.problem().find("did you mean 'min_speedup'") != std::string::npos);
    doc["gates"] = {{"min_speedup", "fast"}};
    CHECK(error_of(doc).key() == "gates.min_speedup");
    doc["gates"] = {{"min_hit_ratio", 1.5}};
    CHECK(error_of(doc).key() == "gates.min_hit_ratio");
    doc["gates"] = {{"max_size", "big"}};
    CHECK(error_of(doc).key() == "gates.max_size");
  }
}

TEST_CASE("recipe: a step may read only what an earlier step made") {
  SUBCASE("a later step's artifact") {
    json doc = base();
    doc["steps"][0]["quantize"]["model"] = "@steps[1]";
    doc["steps"].push_back({{"prune", {{"ratio", 0.3}}}});
    auto e = error_of(doc);
    CHECK(e.key() == "steps[0].quantize.model");
    CHECK(e.problem().find("has not run yet") != std::string::npos);
  }
  SUBCASE("its own artifact") {
    json doc = base();
    doc["steps"][0]["quantize"]["model"] = "@steps[0]";
    CHECK(error_of(doc).key() == "steps[0].quantize.model");
  }
  SUBCASE("the model of a step that writes none") {
    json doc = base();
    doc["steps"] = json::array({{{"profile", json::object()}}, {{"quantize", {{"model", "@steps[0]"}}}}});
    auto e = error_of(doc);
    CHECK(e.key() == "steps[1].quantize.model");
    CHECK(e.problem().find("writes none") != std::string::npos);
  }
  SUBCASE("an earlier step's report is fine") {
    json doc = base();
    doc["steps"] = json::array({{{"profile", json::object()}},
                                {{"cache-sim", {{"trace", "@data.trace"}, {"miss_latency_from", {"@steps[0].report"}}}}}});
    const auto r = parse_recipe(doc, "/r/x.json");
    CHECK(r.steps[1].options["miss_latency_from"][0] == "@steps[0].report");
    CHECK(r.steps[1].options["trace"] == "/abs/trace.csv");
  }
  SUBCASE("a list element names its index") {
    json doc = base();
    doc["steps"] = json::array({{{"profile", {{"models", {"@model", "@steps[3]"}}}}}});
    CHECK(error_of(doc).key() == "steps[0].profile.models[1]");
  }
}

TEST_CASE("recipe: gates need what they measure") {
  json doc = base();
  doc["steps"] = json::array({{{"profile", json::object()}}});
  doc["gates"] = {{"min_speedup", 1.5}};
  CHECK(error_of(doc).key() == "gates.min_speedup");  // no step writes a model
  doc = base();
  doc["gates"] = {{"min_hit_ratio", 0.5}};
  CHECK(error_of(doc).key() == "gates.min_hit_ratio");  // no cache-sim step
  doc = base();
  doc["data"].erase("eval");
  doc["steps"][0]["quantize"].erase("calib");
  doc["gates"] = {{"max_accuracy_drop", 1.0}};
  CHECK(error_of(doc).key() == "gates.max_accuracy_drop");  // no evaluation data
  doc = base();
  doc["gates"] = {{"max_size", "2MiB"}, {"max_accuracy_drop", 1.0}};
  CHECK(*parse_recipe(doc, "x.json").gates.max_size_bytes == 2u * 1024 * 1024);
}

TEST_CASE("recipe: step references parse strictly") {
  using lite::recipe::parse_step_reference;
  CHECK(parse_step_reference("@steps[2]")->step == 2);
  CHECK(parse_step_reference("@steps[12].report")->report);
  CHECK_FALSE(parse_step_reference("@steps[]"));
  CHECK_FALSE(parse_step_reference("@steps[-1]"));
  CHECK_FALSE(parse_step_reference("@steps[1].artifact"));
  CHECK_FALSE(parse_step_reference("@steps[99999999]"));
}

TEST_CASE("recipe: read_recipe reports unreadable files and invalid JSON by file") {
  lite::test::ScratchDir dir("recipe");
  CHECK_THROWS_AS(lite::recipe::read_recipe(dir.path / "missing.json"), lite::InputError);
  CHECK_THROWS_AS(lite::recipe::read_recipe(dir.file("bad.json", "{\"lite_recipe\": 1,")), lite::InputError);
  const auto r = lite::recipe::read_recipe(dir.file("ok.json", base().dump()));
  CHECK(r.model == (dir.path / "models/m.pt").lexically_normal());
}

TEST_CASE("recipe: read_recipe refuses deep nesting and repeated keys by file, before any step is read") {
  lite::test::ScratchDir dir("recipe");
  auto message_of = [](const std::filesystem::path& file) -> std::string {
    try {
      lite::recipe::read_recipe(file);
    } catch (const lite::InputError& e) {
      return e.what();
    }
    FAIL("expected an InputError for " << file);
    return {};
  };
  // 100k levels inside a step's options: refused, not a stack overflow.
  const std::string deep = R"({"lite_recipe": 1, "model": "m.pt", "steps": [{"quantize": {"skip": )" +
                           std::string(100000, '[') + std::string(100000, ']') + "}}]}";
  const std::string deep_message = message_of(dir.file("deep.json", deep));
  CHECK(deep_message.find("deep.json: nests arrays and objects deeper than 256 levels") != std::string::npos);
  CHECK(deep_message.find("steps[0].quantize.skip[0]") != std::string::npos);

  const std::string twice_step = R"({"lite_recipe": 1, "model": "m.pt",
    "steps": [{"quantize": {"mode": "static"}, "quantize": {"mode": "dynamic"}}]})";
  CHECK(message_of(dir.file("step.json", twice_step)).find("step.json: has the key 'quantize' twice in steps[0]") !=
        std::string::npos);
  const std::string twice_option = R"({"lite_recipe": 1, "model": "m.pt",
    "steps": [{"prune": {"ratio": 0.3}}, {"quantize": {"mode": "static", "calib": "c.pt", "mode": "dynamic"}}]})";
  CHECK(message_of(dir.file("opt.json", twice_option)).find("has the key 'mode' twice in steps[1].quantize") !=
        std::string::npos);
  CHECK(message_of(dir.file("top.json", R"({"lite_recipe": 1, "lite_recipe": 1})"))
            .find("'lite_recipe' twice in the top-level object") != std::string::npos);
  CHECK(message_of(dir.path).find("is a folder, not a recipe") != std::string::npos);
  CHECK(message_of("/dev/zero").find("is not a regular file") != std::string::npos);
}
