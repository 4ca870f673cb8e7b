#include <doctest/doctest.h>
#include <torch/script.h>

#include "../torch_fixtures.hpp"
#include "lite/core/error.hpp"
#include "lite/core/options.hpp"
#include "lite/model/artifact.hpp"
#include "lite/model/facts_torch.hpp"
#include "lite/model/inputs.hpp"
#include "lite/model/load.hpp"

using namespace lite;
namespace fs = std::filesystem;

TEST_CASE("MACs per layer of the bundled CNN match the hand count") {
  auto m = model::load_model(test::bundled_model());
  auto facts = model::measure_facts(m, {torch::zeros({1, 1, 28, 28})});
  // conv 1->32 3x3 at 28x28: 32*28*28*9 = 225,792; conv 32->64 at 14x14: 64*196*288 = 3,612,672;
  // conv 64->128 at 7x7: 128*49*576 = 3,612,672; linear 1152->256: 294,912; linear 256->10: 2,560.
  REQUIRE(facts.layers.size() == 5);
  CHECK(facts.layers[0].macs == 225792);
  CHECK(facts.layers[1].macs == 3612672);
  CHECK(facts.layers[2].macs == 3612672);
  CHECK(facts.layers[3].macs == 294912);
  CHECK(facts.layers[4].macs == 2560);
  CHECK(facts.total_macs == 7748608);
  CHECK(facts.layers[0].module == "features.0");
  CHECK(facts.layers[0].module_type == "Conv2d");
  CHECK(facts.layers[3].module == "classifier.1");
  CHECK(facts.layers[3].output_shape == std::vector<int64_t>{1, 256});
  CHECK(facts.parameters == 390858);
  CHECK(facts.elements_by_dtype.at("float32") >= 390858);
  // batch scales MACs linearly
  auto batched = model::measure_facts(m, {torch::zeros({4, 1, 28, 28})});
  CHECK(batched.total_macs == 4 * 7748608ULL);
}

TEST_CASE("module hierarchy to module path") {
  auto [path, type] = model::module_from_hierarchy(
      {"TOP(FashionCNN)::forward", "features(Sequential)::forward", "0(Conv2d)::forward", "SELF(Conv2d)::_conv_forward"});
  CHECK(path == "features.0");
  CHECK(type == "Conv2d");
  auto [top, top_type] = model::module_from_hierarchy({"TOP(Net)::forward", "::relu"});
  CHECK(top.empty());
}

TEST_CASE("inputs come from flags, the model's declaration, or fail naming the flag") {
  auto m = model::load_model(test::bundled_model());
  model::InputOptions o;
  auto declared = model::resolve_inputs(m, o);
  REQUIRE(declared.size() == 1);
  CHECK(declared[0].sizes() == torch::IntArrayRef({1, 1, 28, 28}));
  o.batch = 8;
  CHECK(model::resolve_inputs(m, o)[0].size(0) == 8);
  o.specs = {model::parse_input_spec("2x1x28x28")};
  o.batch = 0;
  CHECK(model::resolve_inputs(m, o)[0].size(0) == 2);
  // Same seed, same tensor.
  CHECK(model::resolve_inputs(m, o)[0].equal(model::resolve_inputs(m, o)[0]));

  // Without a declaration the shape is inferred (test_infer_inputs.cpp), or the error names {inputs}.

  // A wrong shape becomes a one-line input error naming the model and the shape.
  try {
    model::run_forward(m.module, {torch::zeros({1, 3, 28, 28})}, m.path);
    FAIL("expected an input error");
  } catch (const InputError& e) {
    std::string msg = e.what();
    CHECK(msg.find("1x3x28x28") != std::string::npos);
    CHECK(msg.find(m.path.string()) == 0);
  }
}

TEST_CASE("artifacts carry provenance, chain history and never overwrite the input") {
  test::ScratchDir dir("artifact");
  auto source = model::load_model(test::bundled_model());
  model::ArtifactInfo info;
  info.transform = "test";
  info.command_line = "lite test";
  info.details = {{"mode", "identity"}};
  info.figures = {{"speedup", 1.0}};
  auto out = dir.path / "copy.pt";
  model::save_artifact(source.module, out, source, info);
  CHECK(dir.count() == 1);  // no temporary left behind

  auto reloaded = model::load_model(out);
  const auto& p = reloaded.provenance;
  CHECK(p["transform"] == "test");
  CHECK(p["input_model"]["sha256"] == source.sha256);
  CHECK(p["details"]["mode"] == "identity");
  CHECK(p["history"].size() == 1);  // the bundled model's own lite.json
  CHECK(reloaded.declared_inputs == source.declared_inputs);
  auto y = reloaded.module.forward({torch::zeros({1, 1, 28, 28})}).toTensor();
  CHECK(y.sizes() == torch::IntArrayRef({1, 10}));

  // Second generation keeps the whole chain.
  model::save_artifact(reloaded.module, dir.path / "copy2.pt", reloaded, info);
  CHECK(model::read_provenance(dir.path / "copy2.pt")["history"].size() == 2);

  CHECK_THROWS_AS(model::save_artifact(source.module, source.path, source, info), OptionError);
  CHECK_THROWS_AS(model::save_artifact(source.module, dir.path / "no" / "x.pt", source, info), OptionError);
}
