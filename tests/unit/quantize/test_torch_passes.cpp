// The torch side on the bundled CNN: layer discovery, the observer contract, calibration reuse across
// builds, lite's int8 graph passes (bit-identical to what they replace) and the schemes' outputs.
#include <doctest/doctest.h>
#include <torch/script.h>

#include <ATen/core/dispatch/Dispatcher.h>
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "../torch_fixtures.hpp"
#include "lite/core/progress.hpp"
#include "lite/model/dataset.hpp"
#include "lite/model/load.hpp"
#include "lite/model/torch_environment.hpp"
#include "lite/quantize/quantize_internal.hpp"

using namespace lite::quantize;

namespace {

lite::model::LoadedModel cnn() { return lite::model::load_model(lite::test::bundled_model()); }

lite::model::Dataset samples(int64_t n) {
  return lite::model::take_first(lite::model::load_dataset(lite::test::bundled_eval()), n);
}

torch::Tensor run(torch::jit::Module& m, const torch::Tensor& x) {
  torch::NoGradGuard no_grad;
  return m.forward({x}).toTensor().dequantize();
}

}  // namespace

TEST_CASE("find_layers lists the CNN's convolutions and linears by module path, in order") {
  auto model = cnn();
  auto layers = find_layers(model.module);
  REQUIRE(layers.size() == 5);
  CHECK(layers[0].name == "features.0");
  CHECK(layers[0].kind == "Conv2d");
  CHECK(layers[0].weight_shape == std::vector<int64_t>{32, 1, 3, 3});
  CHECK(layers[0].bias == 32);
  CHECK(layers[2].name == "features.8");
  CHECK(layers[3].name == "classifier.1");
  CHECK(layers[3].kind == "Linear");
  CHECK(layers[3].weight_shape == std::vector<int64_t>{256, 1152});
  CHECK(layers[4].name == "classifier.4");
}

TEST_CASE("observers honour the contract torch::jit::InsertObservers expects") {
  auto act = make_activation_observer();
  CHECK(act.attr("dtype").toInt() == 13);   // quint8
  CHECK(act.attr("qscheme").toInt() == 0);  // per_tensor_affine
  auto x = torch::arange(-4, 12, torch::kFloat32);
  CHECK(torch::equal(act.forward({x}).toTensor(), x));  // identity
  act.setattr("phase", int64_t{1});
  act.forward({x});
  CHECK(act.attr("min_val").toTensor().item<double>() == -4);
  CHECK(act.attr("max_val").toTensor().item<double>() == 11);
  auto qparams = act.get_method("calculate_qparams")({}).toTuple();
  CHECK(qparams->elements().size() == 2);

  auto w = torch::tensor({{1.0f, -2.0f}, {0.5f, 0.25f}});
  for (bool per_channel : {true, false}) {
    auto obs = make_weight_observer(per_channel);
    CHECK(obs.attr("dtype").toInt() == 12);  // qint8
    CHECK(obs.attr("qscheme").toInt() == (per_channel ? 3 : 2));
    obs.forward({w});
    auto q = obs.get_method("calculate_qparams")({}).toTuple();
    auto scale = q->elements()[0].toTensor();
    if (per_channel) {
      CHECK(scale.numel() == 2);
      CHECK(scale[0].item<float>() == doctest::Approx(2.0 / 127.5));
      CHECK(scale[1].item<float>() == doctest::Approx(0.5 / 127.5));
    } else {
      CHECK(scale.item<float>() == doctest::Approx(2.0 / 127.5));
    }
    CHECK(q->elements()[1].toTensor().sum().item<int64_t>() == 0);
  }
}

TEST_CASE("the vectorized input quantization is bit-identical to aten::quantize_per_tensor") {
  for (int64_t zp : {int64_t{0}, int64_t{37}}) {
    torch::jit::Module m{c10::QualifiedName("__torch__.lite.test.Q" + std::to_string(zp))};
    m.define(
        "def forward(self, x: Tensor) -> Tensor:\n"
        "    return torch.int_repr(torch.quantize_per_tensor(x, 0.0173, " +
        std::to_string(zp) + ", 13))\n");
    auto reference = m.clone();
    auto passes = optimize_int8_graph(m);
    CHECK(std::find(passes.begin(), passes.end(), "vectorized-quantize") != passes.end());
    torch::manual_seed(7);
    for (int64_t n : {int64_t{100}, int64_t{5000}}) {  // below and above the switch to vectorized ops
      auto x = torch::randn({n}) * 3;                  // includes values beyond the range (saturation)
      x[0] = 0.0173f * 10.5f;                          // exact half-way points round to even
      x[1] = -0.0173f * 2.5f;
      CAPTURE(n);
      CHECK(torch::equal(m.forward({x}).toTensor(), reference.forward({x}).toTensor()));
    }
  }
}

TEST_CASE("static int8 on the CNN: every layer quantized, close to float, calibration reused across builds") {
  lite::select_quantized_engine("onednn");
  auto model = cnn();
  auto data = samples(64);
  auto layers = find_layers(model.module);
  Calibrator calibrator(&data, 32, find_calib_method("mse"), model.path, lite::no_progress());
  Plan all = make_plan(layers, find_mode("static"), "onednn", {}, {}, {}, model.file_bytes);
  BuildContext ctx{model, all, &calibrator, {}, nlohmann::json::object(), {}, {}, {}};
  static_scheme().build(ctx);
  CHECK(calibrator.passes() == 2);           // ranges, then histograms
  CHECK(ctx.details["quantized_ops"] == 4);  // 3 convs + classifier.1; classifier.4 is too small
  auto passes = ctx.details["lite_passes"].get<std::vector<std::string>>();
  CHECK(std::find(passes.begin(), passes.end(), "flatten-channels-last") != passes.end());
  CHECK(std::find(passes.begin(), passes.end(), "remove-dropout") != passes.end());
  auto x = samples(256).x;
  auto reference = run(model.module, x);
  auto out = run(ctx.result, x);
  CHECK(out.argmax(1).eq(reference.argmax(1)).to(torch::kFloat).mean().item<double>() > 0.97);
  // Keeping features.0 float makes the pooled output after it a quantized input (a value not observed
  // before): one more calibration (two passes); building that configuration again needs none.
  size_t observed = calibrator.stats().values.size();
  Plan skip = make_plan(layers, find_mode("static"), "onednn", {"features.0"}, {}, {}, model.file_bytes);
  BuildContext ctx2{model, skip, &calibrator, {}, nlohmann::json::object(), {}, {}, {}};
  static_scheme().build(ctx2);
  CHECK(calibrator.passes() == 4);
  CHECK(calibrator.stats().values.size() == observed + 1);
  CHECK(ctx2.details["quantized_ops"] == 3);
  BuildContext ctx3{model, skip, &calibrator, {}, nlohmann::json::object(), {}, {}, {}};
  static_scheme().build(ctx3);
  CHECK(calibrator.passes() == 4);
  BuildContext ctx4{model, all, &calibrator, {}, nlohmann::json::object(), {}, {}, {}};
  static_scheme().build(ctx4);
  CHECK(calibrator.passes() == 4);
  CHECK(torch::equal(run(ctx4.result, x), out));  // same statistics, same model
  // A saved and reloaded artifact computes the same.
  auto reloaded = deserialize(serialize(ctx.result));
  CHECK(torch::equal(run(reloaded, x), out));
}

TEST_CASE("calibration data in one batch takes one pass and records what two passes record") {
  lite::select_quantized_engine("onednn");
  auto model = cnn();
  auto data = samples(32);
  auto layers = find_layers(model.module);
  Plan all = make_plan(layers, find_mode("static"), "onednn", {}, {}, {}, model.file_bytes);
  const auto& mse = find_calib_method("mse");
  Calibrator one(&data, 32, mse, model.path, lite::no_progress());  // the whole data in one batch: phase 3
  BuildContext a{model, all, &one, {}, nlohmann::json::object(), {}, {}, {}};
  static_scheme().build(a);
  CHECK(one.passes() == 1);
  Calibrator two(&data, 16, mse, model.path, lite::no_progress());  // two batches: ranges, then histograms
  BuildContext b{model, all, &two, {}, nlohmann::json::object(), {}, {}, {}};
  static_scheme().build(b);
  CHECK(two.passes() == 2);
  REQUIRE(one.stats().values.size() == two.stats().values.size());
  for (const auto& [key, s1] : one.stats().values) {
    CAPTURE(key);
    REQUIRE(two.stats().values.count(key) == 1);
    const auto& s2 = two.stats().values.at(key);
    // The float model at batch 32 and at batch 16 may round differently in the last bit, no more.
    CHECK(s1.min == doctest::Approx(s2.min).epsilon(1e-5));
    CHECK(s1.max == doctest::Approx(s2.max).epsilon(1e-5));
    CHECK(s1.histogram.lo == doctest::Approx(std::min(s1.min, 0.0)));
    CHECK(s1.histogram.hi == doctest::Approx(std::max(s1.max, 0.0)));
    REQUIRE(s1.histogram.counts.size() == s2.histogram.counts.size());
    double total = s1.histogram.total(), moved = 0;
    CHECK(total == s2.histogram.total());
    CHECK(total > 0);
    for (size_t i = 0; i < s1.histogram.counts.size(); ++i) moved += std::abs(s1.histogram.counts[i] - s2.histogram.counts[i]);
    CHECK(moved <= 1e-3 * total);
  }
}

TEST_CASE("values and weights inside an `if` get their qparams when the calibration statistics are reused") {
  // Functional code reading the weight in a branch: InsertObservers puts its observer in that block.
  // The variable assigned in the branch gets a different debug name in each build (y.2, y.6): its
  // statistics must still be found again (keyed by source position).
  lite::select_quantized_engine("onednn");
  torch::manual_seed(11);
  torch::jit::Module m{c10::QualifiedName("__torch__.lite.test.Branchy")};
  m.register_parameter("w", torch::randn({16, 8}), /*is_buffer=*/false);
  m.register_parameter("b", torch::randn({16}), /*is_buffer=*/false);
  m.register_attribute("wide", c10::BoolType::get(), true);
  m.define(R"JIT(
def forward(self, x: Tensor) -> Tensor:
    if self.wide:
        y = torch.linear(x, self.w, self.b)
    else:
        y = torch.cat([x, x], 1)
    return torch.relu(y)
)JIT");
  m.eval();
  lite::model::LoadedModel source;
  source.module = m;
  source.path = "branchy.pt";
  auto layers = find_layers(source.module);
  REQUIRE(layers.size() == 1);
  CHECK(layers[0].name == "w");
  lite::model::Dataset data{torch::randn({32, 8}), std::nullopt, "branchy data"};
  Plan plan = make_plan(layers, find_mode("static"), "onednn", {}, {}, {}, 0);
  const auto& method = find_calib_method("minmax");

  Calibrator calibrated(&data, 16, method, source.path, lite::no_progress());
  BuildContext first{source, plan, &calibrated, {}, nlohmann::json::object(), {}, {}, {}};
  static_scheme().build(first);
  CHECK(calibrated.passes() == 1);
  bool keyed_by_position = false;  // the branch's y, e.g. ":y@4:13"
  for (const auto& [key, stats] : calibrated.stats().values) keyed_by_position |= key.rfind(":y@", 0) == 0;
  CHECK(keyed_by_position);

  // No data: every value is covered by the statistics, so only the weight observers run.
  Calibrator reused(nullptr, 16, method, source.path, lite::no_progress());
  reused.preload(calibrated.stats());
  BuildContext second{source, plan, &reused, {}, nlohmann::json::object(), {}, {}, {}};
  static_scheme().build(second);
  CHECK(reused.passes() == 0);
  CHECK(second.details["quantized_ops"] == first.details["quantized_ops"]);
  CHECK(torch::equal(run(second.result, data.x), run(first.result, data.x)));
}

TEST_CASE("every frozen-graph scheme stays close to float and keeps the output shape") {
  auto model = cnn();
  auto layers = find_layers(model.module);
  auto x = samples(200).x;
  auto reference = run(model.module, x);
  struct Case {
    const char* mode;
    double max_error;
  };
  for (auto c : {Case{"fp16", 0.05}, Case{"bf16", 0.5}, Case{"weight-int8", 0.5}, Case{"weight-int4", 3.0}}) {
    CAPTURE(c.mode);
    Plan plan = make_plan(layers, find_mode(c.mode), "onednn", {}, {}, {}, model.file_bytes);
    BuildContext ctx{model, plan, nullptr, {}, nlohmann::json::object(), {}, {}, {}};
    find_mode(c.mode).scheme->build(ctx);
    auto loaded = deserialize(serialize(ctx.result));
    auto out = run(loaded, x);
    CHECK(out.sizes().vec() == reference.sizes().vec());
    CHECK(bool(out.scalar_type() == torch::kFloat32));
    double err = (out - reference).abs().max().item<double>();
    CHECK(err < c.max_error);
    CHECK(err > 0);  // something was really changed
    CHECK(out.argmax(1).eq(reference.argmax(1)).to(torch::kFloat).mean().item<double>() > 0.95);
  }
}

TEST_CASE("eval specialization drops training-only branches and folds flags every instance shares") {
  // `same` holds `wide` alike in both its instances: a constant of the model. `differ`'s two instances do
  // not: its `if` stays (and becomes a float region if InsertObservers rejects it).
  auto child = [](const char* type, bool a, bool b) {
    torch::jit::Module first{c10::QualifiedName(std::string("__torch__.lite.test.") + type)};
    first.register_attribute("training", c10::BoolType::get(), true);
    first.register_attribute("wide", c10::BoolType::get(), a);
    first.define(R"JIT(
def forward(self, x: Tensor) -> Tensor:
    if self.wide:
        x = torch.relu(x)
    return x
)JIT");
    torch::jit::Module second = first.copy();  // the same type, as TorchScript gives two like submodules
    second.setattr("wide", b);
    return std::make_pair(first, second);
  };
  torch::jit::Module m{c10::QualifiedName("__torch__.lite.test.Depth")};
  m.register_attribute("training", c10::BoolType::get(), true);  // what nn.Module gives every scripted module
  m.register_parameter("w", torch::randn({8, 8}), /*is_buffer=*/false);
  m.register_attribute("wide", c10::BoolType::get(), true);
  auto [same1, same2] = child("Same", true, true);
  auto [differ1, differ2] = child("Differ", true, false);
  m.register_module("same1", same1);
  m.register_module("same2", same2);
  m.register_module("differ1", differ1);
  m.register_module("differ2", differ2);
  m.define(R"JIT(
def forward(self, x: Tensor) -> Tensor:
    y = torch.linear(x, self.w)
    if self.training:
        y = y * torch.bernoulli(torch.full_like(y, 0.5))
    if self.wide:
        y = y * 2.0
    return self.differ2.forward(self.differ1.forward(self.same2.forward(self.same1.forward(y))))
)JIT");
  m.eval();
  auto count = [](torch::jit::Module& module, const char* kind) {
    int n = 0;
    for (auto* node : module.get_method("forward").graph()->nodes())
      n += node->kind().toQualString() == std::string(kind);
    return n;
  };
  REQUIRE(count(m, "prim::If") == 2);
  REQUIRE(count(same1, "prim::If") == 1);
  REQUIRE(count(differ1, "prim::If") == 1);
  CHECK(specialize_for_inference(m) == 2);  // the root's forward and Same's
  CHECK(count(m, "prim::If") == 0);         // the root is its type's only instance: `wide` is a constant
  CHECK(count(m, "aten::bernoulli") == 0);
  CHECK(count(same1, "prim::If") == 0);
  CHECK(count(differ1, "prim::If") == 1);  // instances differ in `wide`: kept
  CHECK(specialize_for_inference(m) == 0);  // nothing left to do
  auto x = torch::randn({4, 8});
  auto y = torch::relu(torch::relu(2.0 * torch::linear(x, m.attr("w").toTensor())));  // same1, same2, differ1
  CHECK(torch::allclose(m.forward({x}).toTensor(), torch::relu(y)));
}

TEST_CASE("eval specialization reads an optional argument every call passes as None as None") {
  // nn.TransformerEncoder's case: its masks default to None and its caller passes none, but its `if mask is not
  // None` stays an `if` on data (a float region) unless the method is specialized for the calls it gets.
  auto child = [](const char* type) {
    torch::jit::Module m{c10::QualifiedName(std::string("__torch__.lite.test.") + type)};
    m.register_attribute("training", c10::BoolType::get(), false);
    m.define(R"JIT(
def forward(self, x: Tensor, mask: Optional[Tensor] = None) -> Tensor:
    if mask is not None:
        x = x * mask
    return torch.relu(x)
)JIT");
    return m;
  };
  torch::jit::Module m{c10::QualifiedName("__torch__.lite.test.Masks")};
  m.register_attribute("training", c10::BoolType::get(), false);
  auto never = child("Never"), sometimes = child("Sometimes");
  m.register_module("never", never);
  m.register_module("sometimes", sometimes);
  m.define(R"JIT(
def forward(self, x: Tensor, mask: Optional[Tensor] = None) -> Tensor:
    y = self.never.forward(x, None)
    y = self.never.forward(y)
    return self.sometimes.forward(self.sometimes.forward(y, None), mask)
)JIT");
  auto ifs = [](torch::jit::Module& module) {
    int n = 0;
    for (auto* node : module.get_method("forward").graph()->nodes()) n += node->kind() == c10::prim::If;
    return n;
  };
  REQUIRE(ifs(never) == 1);
  CHECK(specialize_for_inference(m) == 1);  // Never's mask
  CHECK(ifs(never) == 0);
  CHECK(ifs(sometimes) == 1);  // the root passes its own mask on: kept
  auto x = torch::randn({4}), mask = torch::zeros({4});
  CHECK(torch::equal(m.forward({x, mask}).toTensor(), torch::zeros({4})));
  CHECK(torch::equal(m.forward({x}).toTensor(), torch::relu(x)));
}

TEST_CASE("rejected_if_location reads the `if` InsertObservers printed, and nothing else") {
  const std::string error =
      "branches for `if` should return values that are observed consistently, if node:%x : Tensor = "
      "prim::If(%3) # /usr/lib/python3/dist-packages/torchvision/ops/stochastic_depth.py:32:4\n  block0():\n";
  CHECK(rejected_if_location(error) == "/usr/lib/python3/dist-packages/torchvision/ops/stochastic_depth.py:32");
  CHECK(rejected_if_location("Expected a value of type 'Tensor'") == "");
  CHECK(rejected_if_location("branches for `if` should return values that are observed consistently") == "");
}

TEST_CASE("ReLU6 after an int8 convolution folds into conv2d_relu: bit-identical where the range allowed it") {
  lite::select_quantized_engine("onednn");
  torch::manual_seed(3);
  auto w = torch::quantize_per_channel(torch::randn({8, 4, 3, 3}), torch::full({8}, 0.01, torch::kDouble),
                                       torch::zeros({8}, torch::kLong), 0, torch::kQInt8);
  auto conv = [](const char* op) { return c10::Dispatcher::singleton().findSchemaOrThrow(op, ""); };
  torch::jit::Stack stack{w, torch::randn({8}), std::vector<int64_t>{1, 1}, std::vector<int64_t>{1, 1},
                          std::vector<int64_t>{1, 1}, int64_t{1}};
  conv("quantized::conv2d_prepack").callBoxed(&stack);
  auto packed = stack.at(0);
  auto x = torch::quantize_per_tensor(torch::randn({2, 4, 8, 8}) * 3, 0.05, 60, torch::kQUInt8);
  torch::jit::Stack unpacked{packed};
  conv("quantized::conv2d_unpack").callBoxed(&unpacked);
  auto bias = unpacked.at(1).toTensor();
  auto float_reference = torch::clamp(torch::conv2d(x.dequantize(), w.dequantize(), bias, 1, 1), 0, 6);
  struct Case {
    double scale;
    int64_t zero_point;
    bool exact;
  };
  // (0.02, 0) ends at 5.1 < 6: the clamp never fires. (0.1, 100) and (0.05, 0) spend codes outside [0, 6].
  for (Case c : {Case{0.02, 0, true}, Case{0.1, 100, false}, Case{0.05, 0, false}}) {
    CAPTURE(c.scale);
    torch::jit::Module m{c10::QualifiedName("__torch__.lite.test.Relu6Fold")};
    m.register_attribute("w", packed.type(), packed);
    // TorchScript source cannot name quantized ops from C++ (no torch.ops resolver here): the graph is built
    // node by node, as graph mode quantization leaves it.
    m.define("def forward(self, x: Tensor) -> Tensor:\n    return x\n");
    auto g = m.get_method("forward").graph();
    torch::jit::WithInsertPoint guard(g->return_node());
    auto* weight = g->insertNode(g->createGetAttr(g->inputs()[0], "w"))->output();
    auto node = [&](const char* kind, std::vector<torch::jit::Value*> in) {
      auto* n = g->insertNode(g->create(c10::Symbol::fromQualString(kind), in));
      n->output()->setType(c10::TensorType::get());
      return n->output();
    };
    auto* y = node("quantized::conv2d", {g->inputs()[1], weight, g->insertConstant(c.scale),
                                         g->insertConstant(c.zero_point)});
    g->return_node()->replaceInput(0, node("aten::hardtanh_", {y, g->insertConstant(0.0), g->insertConstant(6.0)}));
    auto reference = m.clone();
    auto passes = optimize_int8_graph(m);
    auto before = reference.forward({x}).toTensor();
    CHECK(std::find(passes.begin(), passes.end(), "fold-relu6") != passes.end());
    std::string graph = m.get_method("forward").graph()->toString();
    CHECK(graph.find("hardtanh") == std::string::npos);
    CHECK(graph.find("quantized::conv2d_relu") != std::string::npos);
    auto after = m.forward({x}).toTensor();
    CHECK(after.q_zero_point() == 0);
    if (c.exact) {
      CHECK(torch::equal(after.int_repr(), before.int_repr()));
    } else {  // a finer grid over [0, 6]: never further from the float result than before
      double err_before = (before.dequantize() - float_reference).abs().max().item<double>();
      double err_after = (after.dequantize() - float_reference).abs().max().item<double>();
      CHECK(err_after <= err_before);
      CHECK(err_after <= 6.0 / 255 / 2 + 1e-3);
    }
  }
}

namespace {

// forward(x) = quantize_per_tensor(<float op>(dequantize(quantize_per_tensor(x, 0.05, 60))), scale, zero_point):
// a float island between two int8 values, as graph mode quantization leaves one around an op it cannot quantize.
torch::jit::Module float_island(const char* op, double scale, int64_t zero_point) {
  torch::jit::Module m{c10::QualifiedName(std::string("__torch__.lite.test.Island_") + (op + 6))};
  m.define("def forward(self, x: Tensor) -> Tensor:\n    return x\n");
  auto g = m.get_method("forward").graph();
  torch::jit::WithInsertPoint guard(g->return_node());
  auto node = [&](const char* kind, std::vector<torch::jit::Value*> in) {
    auto* n = g->insertNode(g->create(c10::Symbol::fromQualString(kind), in));
    n->output()->setType(c10::TensorType::get());
    return n->output();
  };
  auto quantize = [&](torch::jit::Value* v, double s, int64_t z) {
    return node("aten::quantize_per_tensor", {v, g->insertConstant(s), g->insertConstant(z), g->insertConstant(13)});
  };
  auto* island = node(op, {node("aten::dequantize", {quantize(g->inputs()[1], 0.05, 60)})});
  g->return_node()->replaceInput(0, quantize(island, scale, zero_point));
  return m;
}

}  // namespace

TEST_CASE("a SiLU island becomes int8 sigmoid and mul, other islands keep float but quantize with vectorized ops") {
  lite::select_quantized_engine("onednn");
  torch::manual_seed(5);
  auto x = torch::randn({2, 16, 32, 32}) * 3;  // 32768 values: above the vectorized-quantize threshold
  {
    auto m = float_island("aten::silu_", 0.04, 12);
    auto reference = m.clone();
    auto passes = optimize_int8_graph(m);
    CHECK(std::find(passes.begin(), passes.end(), "int8-silu") != passes.end());
    std::string graph = m.get_method("forward").graph()->toString();
    CHECK(graph.find("aten::silu") == std::string::npos);
    CHECK(graph.find("quantized::mul") != std::string::npos);
    auto before = reference.forward({x}).toTensor(), after = m.forward({x}).toTensor();
    CHECK(after.q_scale() == doctest::Approx(0.04));
    CHECK(after.q_zero_point() == 12);
    // The sigmoid's 1/256 grid moves x * sigmoid(x) by at most |x| / 512 (|x| <= 3 here) before requantization.
    double drift = (after.dequantize() - before.dequantize()).abs().max().item<double>();
    CHECK(drift <= 3.0 / 512 + 0.04 + 1e-6);
  }
  {
    auto m = float_island("aten::tanh", 0.01, 128);
    auto reference = m.clone();
    auto passes = optimize_int8_graph(m);
    CHECK(std::find(passes.begin(), passes.end(), "int8-silu") == passes.end());
    CHECK(std::find(passes.begin(), passes.end(), "vectorized-quantize") != passes.end());
    CHECK(m.get_method("forward").graph()->toString().find("aten::tanh") != std::string::npos);
    CHECK(torch::equal(m.forward({x}).toTensor().int_repr(), reference.forward({x}).toTensor().int_repr()));
  }
}

TEST_CASE("the vectorized dequantization is bit-identical to aten::dequantize") {
  for (int64_t zp : {int64_t{0}, int64_t{200}}) {
    for (double scale : {0.0173, 1e-4, 3.7}) {
      CAPTURE(scale);
      torch::jit::Module m{c10::QualifiedName("__torch__.lite.test.Deq")};
      m.define(fmt::format("def forward(self, x: Tensor) -> Tensor:\n"
                           "    return torch.dequantize(torch.quantize_per_tensor(x, {}, {}, 13))\n",
                           scale, zp));
      auto reference = m.clone();
      auto passes = optimize_int8_graph(m);
      CHECK(std::find(passes.begin(), passes.end(), "vectorized-dequantize") != passes.end());
      torch::manual_seed(11);
      for (int64_t n : {int64_t{100}, int64_t{5000}}) {  // below and above the switch to vectorized ops
        // every uint8 code appears: values spread over and beyond the representable range
        auto x = (torch::rand({n}) * 300 - 20 - zp) * scale;
        CAPTURE(n);
        CHECK(torch::equal(m.forward({x}).toTensor(), reference.forward({x}).toTensor()));
      }
    }
  }
}
