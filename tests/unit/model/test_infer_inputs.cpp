// infer_inputs: the first layer reading each input decides its shape; models with no such layer get none.
#include <doctest/doctest.h>
#include <torch/script.h>

#include "../torch_fixtures.hpp"
#include "lite/core/error.hpp"
#include "lite/model/infer_inputs.hpp"
#include "lite/model/inputs.hpp"
#include "lite/model/load.hpp"

using namespace lite;

namespace {
torch::jit::Module module_with(const std::string& type, const std::string& source, std::vector<int64_t> weight) {
  torch::jit::Module m{c10::QualifiedName("__torch__.lite_test." + type)};
  if (!weight.empty()) m.register_parameter("weight", torch::randn(weight), false);
  m.define(source);
  return m;
}
}  // namespace

TEST_CASE("conv2d inside a submodule, behind element-wise ops") {
  auto conv = module_with("Conv", "def forward(self, x):\n    return torch.conv2d(x, self.weight)\n", {8, 3, 3, 3});
  torch::jit::Module net{c10::QualifiedName("__torch__.lite_test.Net")};
  net.register_module("stem", conv);
  net.define("def forward(self, x):\n    return self.stem.forward(torch.relu(x * 2.0))\n");
  auto inferred = model::infer_inputs(net);
  REQUIRE(inferred);
  REQUIRE(inferred->specs.size() == 1);
  CHECK(inferred->specs[0] == model::InputSpec{{1, 3, 224, 224}, "float32"});
  CHECK(inferred->reasons[0] == "stem (Conv2d with 3 input channels)");
  auto note = model::inferred_inputs_note(*inferred);
  CHECK(note.find("1x3x224x224") != std::string::npos);
  CHECK(note.find("{inputs}") != std::string::npos);
}

TEST_CASE("conv1d, embedding, and a model with nothing to infer from") {
  auto c1 = model::infer_inputs(
      module_with("C1", "def forward(self, x):\n    return torch.conv1d(x, self.weight)\n", {4, 2, 5}));
  REQUIRE(c1);
  CHECK(c1->specs[0].shape == std::vector<int64_t>{1, 2, 1024});
  auto emb = model::infer_inputs(
      module_with("Emb", "def forward(self, ids):\n    return torch.embedding(self.weight, ids)\n", {100, 16}));
  REQUIRE(emb);
  CHECK(emb->specs[0] == model::InputSpec{{1, 128}, "int64"});
  CHECK(!model::infer_inputs(module_with("Plain", "def forward(self, x):\n    return x * 2.0\n", {})));
}

TEST_CASE("resolve_inputs infers a shape only when nothing else gives one") {
  auto m = model::load_model(test::bundled_model());
  m.declared_inputs.clear();
  std::string note;
  auto inputs = model::resolve_inputs(m, {}, nullptr, &note);
  REQUIRE(inputs.size() == 1);
  // The CNN's first conv has 1 channel; 224x224 does not run (its flatten feeds a Linear of 1152 features), so the
  // size is solved from the feature counts and the common size in reach, Fashion-MNIST's 28, is taken.
  CHECK(inputs[0].sizes() == torch::IntArrayRef({1, 1, 28, 28}));
  CHECK(note.find("inferred from") != std::string::npos);
  CHECK(note.find("sized 28x28 by") != std::string::npos);
  // Flags and declared shapes win, and then there is no note.
  note.clear();
  model::InputOptions o;
  o.specs = {model::parse_input_spec("2x1x28x28")};
  CHECK(model::resolve_inputs(m, o, nullptr, &note)[0].size(0) == 2);
  CHECK(note.empty());

  m.module = module_with("Plain2", "def forward(self, x):\n    return x * 2.0\n", {});
  try {
    model::resolve_inputs(m, {});
    FAIL("expected an input error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("carries no input shape") != std::string::npos);
  }
}
