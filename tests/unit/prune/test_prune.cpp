// lite prune's units on the bundled Fashion-MNIST CNN: options (JSON, value rules), the dependency graph
// (groups, the flatten factor, the output kept), every criterion in the table, the surgery (parameter
// count equals the plan; removing channels whose weights are all zero leaves outputs unchanged) and
// unstructured sparsity per layer.
#include <fstream>
#include <sstream>

#include <torch/script.h>
#include <torch/torch.h>
// glog (through the torch headers) defines CHECK as an abort; doctest's CHECK must win.
#undef CHECK
#include <doctest/doctest.h>

#include "../torch_fixtures.hpp"
#include "lite/core/options.hpp"
#include "lite/prune/plan_internal.hpp"

using namespace lite;
using namespace lite::prune;

namespace {

torch::jit::Module load_cnn() {
  auto m = torch::jit::load(test::bundled_model().string());
  m.eval();
  return m;
}

torch::Tensor forward(torch::jit::Module& m, const torch::Tensor& x) {
  torch::NoGradGuard no_grad;
  return m.forward({x}).toTensor();
}

const ChannelGroup* group_named(const DependencyGraph& g, const std::string& name) {
  for (const auto& group : g.groups)
    if (group.name == name) return &group;
  return nullptr;
}

}  // namespace

TEST_CASE("prune options: JSON round trip and value rules keyed by option") {
  PruneOptions o;
  o.model = "m.pt";
  o.ratio = 0.5;
  o.layer_ratios = {{"layer4.*", 0.3}};
  nlohmann::json j = o;
  PruneOptions back = j.get<PruneOptions>();
  CHECK(back.ratio == 0.5);
  REQUIRE(back.layer_ratios.size() == 1);
  CHECK(back.layer_ratios[0].glob == "layer4.*");
  CHECK_NOTHROW(validate(back));

  auto key_of = [](PruneOptions p) {
    try {
      validate(p);
    } catch (const OptionError& e) {
      return e.key();
    }
    return std::string("none");
  };
  PruneOptions bad = o;
  bad.ratio = 1.0;
  CHECK(key_of(bad) == "ratio");
  bad.ratio = -0.1;
  CHECK(key_of(bad) == "ratio");
  bad = o;
  bad.criterion = "taylor";
  CHECK(key_of(bad) == "data");
  bad.data = "d.pt";
  CHECK(key_of(bad) == "none");
  bad = o;
  bad.round_to = 0;
  CHECK(key_of(bad) == "round_to");
  bad = o;
  bad.ratio.reset();
  bad.layer_ratios.clear();
  CHECK(key_of(bad) == "ratio");
  bad.unstructured = true;
  CHECK(key_of(bad) == "sparsity");
  bad = o;
  bad.structured = true;
  CHECK(key_of(bad) == "none");
  bad.ratio.reset();
  bad.layer_ratios.clear();
  bad.sparsity = 0.5;
  CHECK(key_of(bad) == "structured");
  bad.sparsity.reset();
  bad.unstructured = true;
  CHECK(key_of(bad) == "structured");

  CHECK_THROWS_AS(nlohmann::json({{"ratoi", 0.5}}).get<PruneOptions>(), OptionError);
  CHECK(parse_ratio("0.25").glob.empty());
  CHECK(parse_ratio("layer4.*=0.3").glob == "layer4.*");
  CHECK(parse_ratio("layer4.*=0.3").ratio == doctest::Approx(0.3));
  CHECK_THROWS_AS(parse_ratio("half"), OptionError);
}

TEST_CASE("dependency graph of the bundled CNN: conv-bn-relu chains and a flatten into a linear with the output kept") {
  auto m = load_cnn();
  auto g = build_dependency_graph(m);
  REQUIRE(g.groups.size() == 5);
  const auto* conv3 = group_named(g, "features.8");
  REQUIRE(conv3);
  CHECK(conv3->channels == 128);
  CHECK(conv3->blocked.empty());
  bool flatten_factor = false;
  for (const auto& sl : conv3->slices) flatten_factor = flatten_factor || (sl.module == "classifier.1" && sl.factor == 9);
  CHECK(flatten_factor);
  const auto* out = group_named(g, "classifier.4");
  REQUIRE(out);
  CHECK(out->blocked == "model output");
  CHECK(g.weights.size() == 5);
}

TEST_CASE("every criterion scores every channel of a group") {
  auto m = load_cnn();
  auto g = build_dependency_graph(m);
  auto x = torch::randn({8, 1, 28, 28});
  auto grads = parameter_gradients(m, x, c10::nullopt, 4);
  CHECK(grads.count("features.0.weight"));
  for (const auto& c : criteria()) {
    CAPTURE(c.name);
    for (const auto& group : g.groups) {
      auto s = c.score(CriterionContext{m, group, c.needs_data ? &grads : nullptr});
      CHECK(s.numel() == group.channels);
      CHECK(s.min().item<double>() >= 0);
    }
  }
  CHECK(std::string(find_criterion("BN_scale").name) == "bn-scale");
  CHECK_THROWS_AS(find_criterion("l3"), OptionError);
}

TEST_CASE("surgery: parameters equal the plan and removing all-zero channels leaves outputs unchanged") {
  auto m = load_cnn();
  auto g = build_dependency_graph(m);
  auto x = torch::rand({4, 1, 28, 28});
  // Zero channels 1 and 5 of every group's tensors (producer rows, batchnorm, consumer columns).
  Removal removal;
  {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < g.groups.size(); ++i) {
      if (!g.groups[i].blocked.empty()) continue;
      removal[i] = {1, 5};
      for (const auto& sl : g.groups[i].slices) {
        auto t = tensor_at(m, sl.module, sl.attr);
        for (int64_t c : removal[i]) {
          if (sl.attr == "running_var") continue;  // a zero variance would divide by zero
          slice_rows(t, sl, g.groups[i].channels)[c].zero_();
        }
      }
    }
  }
  auto before = forward(m, x);
  uint64_t planned = planned_parameter_count(m, g, removal);
  std::ostringstream bytes;
  m.save(bytes);
  std::istringstream in(bytes.str());
  auto pruned = torch::jit::load(in);
  pruned.eval();
  remove_channels(pruned, g, removal);
  CHECK(count_parameters(pruned) == planned);
  CHECK(count_parameters(pruned) < count_parameters(m));
  auto after = forward(pruned, x);
  CHECK(after.sizes() == before.sizes());
  CHECK(torch::allclose(before, after, 1e-4, 1e-5));
  CHECK(tensor_at(pruned, "features.0", "weight").size(0) == 30);
  CHECK(tensor_at(pruned, "classifier.1", "weight").size(1) == 126 * 9);
  CHECK(pruned.attr("features").toModule().attr("0").toModule().attr("weight").toTensor().requires_grad());
}

TEST_CASE("plan: ratio per group with globs and round-to and exclude and the global floor") {
  auto m = load_cnn();
  auto g = build_dependency_graph(m);
  PruneOptions o;
  o.ratio = 0.5;
  o.layer_ratios = {{"features.4", 0.25}};
  o.exclude = {"classifier.1", "nothing.*"};
  o.round_to = 8;
  std::vector<report::Finding> findings;
  auto plans = describe_groups(g, o, findings);
  REQUIRE(findings.size() == 1);
  CHECK(findings[0].what.find("nothing.*") != std::string::npos);
  std::vector<torch::Tensor> scores;
  for (size_t i = 0; i < g.groups.size(); ++i) scores.push_back(score_l1(CriterionContext{m, g.groups[i], nullptr}));
  auto removal = choose_channels(scores, plans, o);
  std::map<std::string, int64_t> kept;
  for (const auto& p : plans) kept[p.name] = p.kept;
  CHECK(kept["features.0"] == 16);
  CHECK(kept["features.4"] == 48);
  CHECK(kept["features.8"] == 64);
  CHECK(kept["classifier.1"] == 256);  // excluded
  CHECK(kept["classifier.4"] == 10);   // the model's output
  o.global = true;
  o.layer_ratios.clear();
  o.round_to = 1;
  o.ratio = 0.9;
  o.global_floor = 0.25;
  plans = describe_groups(g, o, findings);
  choose_channels(scores, plans, o);
  for (const auto& p : plans)
    if (p.prunable) CHECK(p.kept >= int64_t(std::ceil(0.25 * double(p.channels))));
}

TEST_CASE("unstructured: per-layer sparsity equals the request and global reaches it overall") {
  auto m = load_cnn();
  auto g = build_dependency_graph(m);
  auto layers = zero_smallest(m, g.weights, 0.6, false, {"classifier.4"});
  for (const auto& l : layers) {
    CAPTURE(l.name);
    if (l.excluded)
      CHECK(l.zeros == 0);
    else
      CHECK(l.zeros == std::llround(0.6 * double(l.elements)));
  }
  auto m2 = load_cnn();
  auto global = zero_smallest(m2, g.weights, 0.5, true, {});
  int64_t zeros = 0, total = 0;
  for (const auto& l : global) zeros += l.zeros, total += l.elements;
  CHECK(double(zeros) / double(total) == doctest::Approx(0.5).epsilon(0.001));
}

namespace {

// Runs `script` (argv[1]: the folder it writes models into) with Debian's python. When python, torch or
// torchvision is missing the case FAILS with the script's output: a skip would pass while checking nothing.
bool python_wrote_models(test::ScratchDir& dir, const std::string& script) {
  auto py = dir.file("make.py", script);
  auto log = dir.path / "make.log";
  std::string command = "/usr/bin/python3 " + py.string() + " " + dir.path.string() + " > " + log.string() + " 2>&1";
  if (std::system(command.c_str()) == 0) return true;
  std::ifstream in(log);
  std::stringstream output;
  output << in.rdbuf();
  FAIL("the fixture script failed (/usr/bin/python3 with torch and torchvision is needed); its output:\n" << output.str());
  return false;
}

// Every prunable group halved by l1, cut from a copy of `m`: the copy must hold the planned parameters and run.
torch::jit::Module halved(const torch::jit::Module& m, const DependencyGraph& g) {
  PruneOptions o;
  o.ratio = 0.5;
  std::vector<report::Finding> findings;
  auto plans = describe_groups(g, o, findings);
  std::vector<torch::Tensor> scores(g.groups.size());
  for (size_t i = 0; i < g.groups.size(); ++i)
    if (plans[i].prunable) scores[i] = score_l1(CriterionContext{m, g.groups[i], nullptr});
  auto removal = choose_channels(scores, plans, o);
  auto pruned = deserialize(serialize(m));
  remove_channels(pruned, g, removal);
  CHECK(count_parameters(pruned) == planned_parameter_count(m, g, removal));
  return pruned;
}

}  // namespace

namespace {

// Zeroes channels {0, C/2} of every prunable group in every tensor slice (running variances excepted):
// those channels then contribute nothing anywhere, so removing them must leave the outputs unchanged.
// A numerical check of the surgery that holds for any architecture.
void check_zeroed_channels_removed(const std::filesystem::path& file, const torch::Tensor& x) {
  auto m = torch::jit::load(file.string());
  m.eval();
  auto g = build_dependency_graph(m);
  Removal removal;
  {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < g.groups.size(); ++i) {
      const ChannelGroup& group = g.groups[i];
      if (!group.blocked.empty() || group.channels < 4) continue;
      removal[i] = {0, group.channels / 2};
      if (group.blocks > 1) {  // through a grouped convolution: local index 0 of every block
        removal[i].clear();
        for (int64_t j = 0; j < group.blocks; ++j) removal[i].push_back(j * (group.channels / group.blocks));
      }
      for (const auto& sl : group.slices)
        for (int64_t c : removal[i])  // a grouped convolution's columns (fold) read zeros once their inputs are
          if (sl.attr != "running_var" && !sl.fold) slice_rows(tensor_at(m, sl.module, sl.attr), sl, group.channels)[c].zero_();
    }
  }
  REQUIRE(!removal.empty());
  std::ostringstream bytes;
  m.save(bytes);
  std::istringstream in(bytes.str());
  auto pruned = torch::jit::load(in);
  pruned.eval();
  remove_channels(pruned, g, removal);
  CHECK(count_parameters(pruned) == planned_parameter_count(m, g, removal));
  auto before = forward(m, x), after = forward(pruned, x);
  REQUIRE(before.sizes() == after.sizes());
  double rel = ((after - before).norm() / before.norm()).item<double>();
  CHECK(rel < 1e-4);
}

}  // namespace

TEST_CASE("surgery on residual, depthwise, squeeze-excitation, concatenation, dense-block and grouped graphs keeps outputs") {
  test::ScratchDir dir("prune");
  const std::string script =
      "import sys, torch, torchvision\n"
      "torch.manual_seed(0)\n"
      "for name in ('resnet18', 'mobilenet_v2', 'efficientnet_b0', 'squeezenet1_0', 'densenet121', 'regnet_x_400mf'):\n"
      "    net = getattr(torchvision.models, name)(num_classes=10)\n"
      "    net.train()\n"
      "    with torch.no_grad():\n"
      "        net(torch.rand(8, 3, 64, 64))\n"
      "    torch.jit.save(torch.jit.script(net.eval()), sys.argv[1] + '/' + name + '.pt')\n";
  if (!python_wrote_models(dir, script)) return;
  auto x = torch::rand({2, 3, 64, 64});
  for (const char* name : {"resnet18", "mobilenet_v2", "efficientnet_b0", "squeezenet1_0", "densenet121", "regnet_x_400mf"}) {
    CAPTURE(name);
    check_zeroed_channels_removed(dir.path / (std::string(name) + ".pt"), x);
  }
  // densenet's dense blocks grow a list by append and concatenate it before every layer: a layer's new
  // channels are read by every later layer of its block and the transition, each at its own offset.
  auto dense = torch::jit::load((dir.path / "densenet121.pt").string());
  auto g = build_dependency_graph(dense);
  const ChannelGroup* first = group_named(g, "features.denseblock1.denselayer1.conv2");
  REQUIRE(first != nullptr);
  CHECK(first->blocked.empty());
  bool read_by_last_layer = false;
  for (const auto& sl : first->slices)
    read_by_last_layer = read_by_last_layer || (sl.module == "features.denseblock1.denselayer6.conv1" &&
                                                sl.role == "consumer" && sl.offset == 64);
  CHECK(read_by_last_layer);
  // regnet's bottleneck convolution is grouped: its input and output channels are blocks that lose the same
  // local indices, and the halved model keeps groups=g with half the columns.
  auto regnet = torch::jit::load((dir.path / "regnet_x_400mf.pt").string());
  auto rg = build_dependency_graph(regnet);
  const ChannelGroup* bottleneck = group_named(rg, "trunk_output.block1.block1-0.f.a.0");
  REQUIRE(bottleneck != nullptr);
  CHECK(bottleneck->blocked.empty());
  CHECK(bottleneck->blocks == 2);
  auto pruned = halved(regnet, rg);
  CHECK(tensor_at(pruned, "trunk_output.block1.block1-0.f.b.0", "weight").sizes() == torch::IntArrayRef{16, 8, 3, 3});
  torch::NoGradGuard no_grad;
  CHECK(pruned.forward({x}).toTensor().sizes() == torch::IntArrayRef{2, 10});
}

TEST_CASE("transformers: residual width through layer norms and attention, feed-forward pairs, the fused path kept") {
  test::ScratchDir dir("prune_transformers");
  const std::string script =
      "import sys, torch, torch.nn as nn, torchvision\n"
      "torch.manual_seed(0)\n"
      "class Encoder(nn.Module):\n"
      "    def __init__(self):\n"
      "        super().__init__()\n"
      "        self.embed = nn.Embedding(50, 32)\n"
      "        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(32, 4, 64, batch_first=True), 2)\n"
      "        self.head = nn.Linear(32, 3)\n"
      "    def forward(self, ids): return self.head(self.encoder(self.embed(ids)).mean(1))\n"
      "vit = torchvision.models.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=4,\n"
      "                                          hidden_dim=32, mlp_dim=64, num_classes=5)\n"
      "torch.jit.save(torch.jit.script(Encoder().eval()), sys.argv[1] + '/encoder.pt')\n"
      "torch.jit.save(torch.jit.script(vit.eval()), sys.argv[1] + '/vit.pt')\n";
  if (!python_wrote_models(dir, script)) return;
  SUBCASE("encoder") {
    auto m = torch::jit::load((dir.path / "encoder.pt").string());
    m.eval();
    auto ids = torch::randint(0, 50, {2, 7});
    // Without the example the fast-path `if`s stay undecided and block every group.
    CHECK(group_named(build_dependency_graph(m), "encoder.layers.0.linear1") == nullptr);
    auto g = build_dependency_graph(m, {ids});
    const ChannelGroup* width = group_named(g, "embed");
    const ChannelGroup* ffn = group_named(g, "encoder.layers.0.linear1");
    REQUIRE(width != nullptr);
    REQUIRE(ffn != nullptr);
    CHECK(width->blocked.empty());
    CHECK(ffn->blocked.empty());
    CHECK(width->multiple_of == 4);
    CHECK(width->layer_norms.size() == 4);
    CHECK(width->counts.size() == 8);  // embed_dim, head_dim, kdim, vdim of two attentions
    auto pruned = halved(m, g);
    auto layer = submodule_at(pruned, "encoder.layers.0");
    CHECK(layer.attr("self_attn").toModule().attr("embed_dim").toInt() == 16);
    CHECK(tensor_at(pruned, "encoder.layers.0.self_attn", "in_proj_weight").sizes() == torch::IntArrayRef{48, 16});
    // Under no_grad the encoder layer takes its fused fast path, with grad the unfused layers: both read the cut weights.
    auto unfused = pruned.forward({ids}).toTensor();
    torch::NoGradGuard no_grad;
    auto fused = pruned.forward({ids}).toTensor();
    CHECK(fused.sizes() == torch::IntArrayRef{2, 3});
    CHECK(torch::allclose(fused, unfused, 1e-4, 1e-5));
  }
  SUBCASE("vit") {
    auto m = torch::jit::load((dir.path / "vit.pt").string());
    m.eval();
    auto x = torch::rand({2, 3, 32, 32});
    auto g = build_dependency_graph(m, {x});
    const ChannelGroup* width = group_named(g, "conv_proj");
    REQUIRE(width != nullptr);
    CHECK(width->blocked.empty());
    bool hidden_dim = false, class_token = false;
    for (const auto& c : width->counts) hidden_dim = hidden_dim || (c.module.empty() && c.name == "hidden_dim");
    for (const auto& sl : width->slices) class_token = class_token || sl.path() == "class_token";
    CHECK(hidden_dim);
    CHECK(class_token);
    auto pruned = halved(m, g);
    CHECK(pruned.attr("hidden_dim").toInt() == 16);
    torch::NoGradGuard no_grad;
    CHECK(pruned.forward({x}).toTensor().sizes() == torch::IntArrayRef{2, 5});
  }
}
