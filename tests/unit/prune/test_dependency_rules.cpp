// The dependency analysis's rules, each on a small model built here in C++ (modules with TorchScript methods
// defined from source: no Python, no torchvision): which channel groups form, which slices and counts they
// carry, and which are left alone with which reason. One case per family of rules
// (lib/lite/prune/dependency_rules_internal.hpp), and the rule table itself.
#include <string>
#include <utility>
#include <vector>

#include <torch/script.h>
#include <torch/torch.h>
// glog (through the torch headers) defines CHECK as an abort; doctest's CHECK must win.
#undef CHECK
#include <doctest/doctest.h>

#include "lite/prune/dependency_rules_internal.hpp"
#include "lite/prune/plan_internal.hpp"

using namespace lite::prune;
using torch::jit::Module;
namespace rules = lite::prune::detail;

namespace {

// A 1x1 convolution (so any input size works) with `groups`.
Module conv(int64_t in, int64_t out, int64_t groups = 1) {
  Module m("Conv");
  m.register_parameter("weight", torch::rand({out, in / groups, 1, 1}), false);
  m.register_parameter("bias", torch::rand({out}), false);
  m.define("def forward(self, x):\n  return torch.conv2d(x, self.weight, self.bias, [1, 1], [0, 0], [1, 1], " +
           std::to_string(groups) + ")\n");
  return m;
}

Module batch_norm(int64_t channels) {
  Module m("BatchNorm");
  m.register_parameter("weight", torch::rand({channels}), false);
  m.register_parameter("bias", torch::rand({channels}), false);
  m.register_buffer("running_mean", torch::zeros({channels}));
  m.register_buffer("running_var", torch::ones({channels}));
  m.define(
      "def forward(self, x):\n"
      "  return torch.batch_norm(x, self.weight, self.bias, self.running_mean, self.running_var, False, 0.1, 1e-5, "
      "False)\n");
  return m;
}

Module linear(int64_t in, int64_t out) {
  Module m("Linear");
  m.register_parameter("weight", torch::rand({out, in}), false);
  m.register_parameter("bias", torch::rand({out}), false);
  m.define("def forward(self, x):\n  return torch.linear(x, self.weight, self.bias)\n");
  return m;
}

Module layer_norm(int64_t channels) {
  Module m("LayerNorm");
  m.register_parameter("weight", torch::ones({channels}), false);
  m.register_parameter("bias", torch::zeros({channels}), false);
  m.define("def forward(self, x):\n  return torch.layer_norm(x, [" + std::to_string(channels) +
           "], self.weight, self.bias, 1e-5, False)\n");
  return m;
}

// What the analysis reads of nn.MultiheadAttention (packed in_proj, no bias_k, head counts as attributes); its
// forward stands in for attention's with the same signature and result type.
Module attention(int64_t embed, int64_t heads) {
  Module m("MultiheadAttention");
  m.register_parameter("in_proj_weight", torch::rand({3 * embed, embed}), false);
  m.register_parameter("in_proj_bias", torch::rand({3 * embed}), false);
  m.register_attribute("bias_k", c10::NoneType::get(), c10::IValue());
  m.register_attribute("num_heads", c10::IntType::get(), heads);
  m.register_attribute("embed_dim", c10::IntType::get(), embed);
  m.register_attribute("kdim", c10::IntType::get(), embed);
  m.register_attribute("vdim", c10::IntType::get(), embed);
  m.register_attribute("head_dim", c10::IntType::get(), embed / heads);
  m.register_module("out_proj", linear(embed, embed));
  m.define(
      "def forward(self, query: Tensor, key: Tensor, value: Tensor) -> Tuple[Tensor, Optional[Tensor]]:\n"
      "  return self.out_proj.forward(query + key + value), None\n");
  return m;
}

// A model of `layers` whose forward is `body` (indented lines of `def forward(self, x):`). A module built in C++
// has no __call__: the body calls `self.layer.forward(x)`, the same prim::CallMethod a scripted call is.
Module model(const std::vector<std::pair<std::string, Module>>& layers, const std::string& body) {
  Module m("Net");
  for (const auto& [name, layer] : layers) m.register_module(name, layer);
  m.define("def forward(self, x):\n" + body);
  return m;
}

DependencyGraph analyse(const Module& m, std::vector<int64_t> input_shape = {1, 3, 4, 4}) {
  return build_dependency_graph(m, {torch::rand(input_shape)});
}

const ChannelGroup* group_named(const DependencyGraph& g, const std::string& name) {
  for (const auto& group : g.groups)
    if (group.name == name) return &group;
  return nullptr;
}

bool has_slice(const ChannelGroup& group, const std::string& module, const std::string& attr, int64_t dim,
               const std::string& role, int64_t offset = 0, int64_t factor = 1) {
  for (const auto& sl : group.slices)
    if (sl.module == module && sl.attr == attr && sl.dim == dim && sl.role == role && sl.offset == offset &&
        sl.factor == factor)
      return true;
  return false;
}

}  // namespace

TEST_CASE("rule table: each op kind has one rule, found by its kind, and an op with no rule has none") {
  size_t kinds = 0;
  for (const auto& entry : rules::op_rules()) {
    REQUIRE((entry.rule != nullptr));  // parenthesised: doctest prints no function pointer
    REQUIRE_FALSE(entry.kinds.empty());
    for (const auto& kind : entry.kinds) {
      CAPTURE(kind);
      CHECK((rules::find_rule(kind) == entry.rule));
      ++kinds;
    }
  }
  CHECK(kinds > 70);
  CHECK((rules::find_rule("aten::conv2d") == rules::conv_rule));
  CHECK((rules::find_rule("aten::flip") == nullptr));
  CHECK((rules::find_rule("prim::If") == nullptr));  // control flow is decided by the node's blocks, not its kind
}

TEST_CASE("conv rules and norms: conv -> bn -> relu -> conv is one group, the last conv's kept for the output") {
  auto m = model({{"conv1", conv(3, 8)}, {"bn", batch_norm(8)}, {"conv2", conv(8, 4)}},
                 "  return self.conv2.forward(torch.relu(self.bn.forward(self.conv1.forward(x))))\n");
  auto g = analyse(m);
  REQUIRE(g.groups.size() == 2);
  const ChannelGroup* first = group_named(g, "conv1");
  REQUIRE(first != nullptr);
  CHECK(first->blocked.empty());
  CHECK(first->channels == 8);
  CHECK(first->layers == std::vector<std::string>{"conv1", "bn"});
  CHECK(has_slice(*first, "conv1", "weight", 0, "producer"));
  CHECK(has_slice(*first, "conv1", "bias", 0, "producer"));
  CHECK(has_slice(*first, "bn", "weight", 0, "norm_scale"));
  CHECK(has_slice(*first, "bn", "running_var", 0, "norm"));
  CHECK(has_slice(*first, "conv2", "weight", 1, "consumer"));
  const ChannelGroup* last = group_named(g, "conv2");
  REQUIRE(last != nullptr);
  CHECK(last->blocked == "model output");
  REQUIRE(g.weights.size() == 2);
  CHECK(g.weights[0].path() == "conv1.weight");
  CHECK(g.weights[1].path() == "conv2.weight");
}

TEST_CASE("conv rules: a depthwise convolution passes the channels through and follows their count") {
  auto m = model({{"conv1", conv(3, 8)}, {"dw", conv(8, 8, 8)}, {"conv2", conv(8, 4)}},
                 "  return self.conv2.forward(self.dw.forward(self.conv1.forward(x)))\n");
  auto g = analyse(m);
  const ChannelGroup* first = group_named(g, "conv1");
  REQUIRE(first != nullptr);
  CHECK(first->blocked.empty());
  CHECK(first->depthwise == std::vector<std::string>{"dw"});
  CHECK(has_slice(*first, "dw", "weight", 0, "depthwise"));
  CHECK(group_named(g, "dw") == nullptr);
}

TEST_CASE("elementwise rules: a residual add merges the groups of its two sides") {
  auto m = model({{"conv1", conv(3, 8)}, {"conv2", conv(8, 8)}, {"conv3", conv(8, 4)}},
                 "  h = torch.relu(self.conv1.forward(x))\n"
                 "  return self.conv3.forward(self.conv2.forward(h) + h)\n");
  auto g = analyse(m);
  REQUIRE(g.groups.size() == 2);
  const ChannelGroup* merged = group_named(g, "conv1");
  REQUIRE(merged != nullptr);
  CHECK(merged->blocked.empty());
  CHECK(merged->layers == std::vector<std::string>{"conv1", "conv2"});
  CHECK(has_slice(*merged, "conv2", "weight", 0, "producer"));
  CHECK(has_slice(*merged, "conv2", "weight", 1, "consumer"));
  CHECK(has_slice(*merged, "conv3", "weight", 1, "consumer"));
  CHECK(group_named(g, "conv2") == nullptr);
}

TEST_CASE("an op without a rule fences the channels it reads, with its kind as the reason") {
  auto m = model({{"conv1", conv(3, 8)}, {"conv2", conv(8, 4)}},
                 "  return self.conv2.forward(self.conv1.forward(x).flip([1]))\n");
  auto g = analyse(m);
  REQUIRE(g.groups.size() == 2);
  CHECK(group_named(g, "conv1")->blocked == "aten::flip");
  CHECK(group_named(g, "conv2")->blocked == "model output");
}

TEST_CASE("control rule: an if left after folding fences its channels, a guard reading the rank is skipped") {
  auto branch = model({{"conv1", conv(3, 8)}, {"conv2", conv(8, 4)}},
                      "  h = self.conv1.forward(x)\n"
                      "  if bool(x.sum() > 0):\n"
                      "    h = torch.relu(h)\n"
                      "  return self.conv2.forward(h)\n");
  auto g = build_dependency_graph(branch);  // no example: the branch stays undecided
  CHECK(group_named(g, "conv1")->blocked == "prim::If left after folding");
  auto guard = model({{"conv1", conv(3, 8)}, {"conv2", conv(8, 4)}},
                     "  h = self.conv1.forward(x)\n"
                     "  assert h.dim() == 4, 'expected a 4-d input'\n"  // an `if` that raises
                     "  return self.conv2.forward(h)\n");
  CHECK(group_named(build_dependency_graph(guard), "conv1")->blocked.empty());
}

TEST_CASE("shape rules: a flatten into a linear spreads each channel, a view to another layout is left alone") {
  auto flat = model({{"conv1", conv(3, 8)}, {"fc", linear(8 * 16, 10)}},
                    "  return self.fc.forward(torch.flatten(self.conv1.forward(x), 1))\n");
  auto g = analyse(flat);
  const ChannelGroup* first = group_named(g, "conv1");
  REQUIRE(first != nullptr);
  CHECK(first->blocked.empty());
  CHECK(has_slice(*first, "fc", "weight", 1, "consumer", 0, 16));
  CHECK(group_named(g, "fc")->blocked == "model output");

  auto other = model({{"conv1", conv(3, 8)}, {"conv2", conv(4, 4)}},
                     "  h = self.conv1.forward(x)\n"
                     "  return self.conv2.forward(h.view([h.size(0), 4, 8, -1]))\n");
  CHECK(group_named(analyse(other), "conv1")->blocked == "aten::view to another layout");
}

TEST_CASE("shape rules: permute to channels-last feeds a linear, and so does a mean over the spatial dims") {
  auto permuted = model({{"conv1", conv(3, 8)}, {"fc", linear(8, 2)}},
                        "  return self.fc.forward(self.conv1.forward(x).permute([0, 2, 3, 1]))\n");
  const ChannelGroup* first = group_named(analyse(permuted), "conv1");
  REQUIRE(first != nullptr);
  CHECK(first->blocked.empty());
  CHECK(has_slice(*first, "fc", "weight", 1, "consumer"));

  auto pooled = model({{"conv1", conv(3, 8)}, {"fc", linear(8, 2)}},
                      "  return self.fc.forward(self.conv1.forward(x).mean([2, 3], False))\n");
  CHECK(group_named(analyse(pooled), "conv1")->blocked.empty());
  auto over_channels = model({{"conv1", conv(3, 8)}}, "  return self.conv1.forward(x).mean([1], True)\n");
  CHECK(group_named(analyse(over_channels), "conv1")->blocked == "aten::mean over the channel dimension");
}

TEST_CASE("lists and cat: two convolutions concatenated along the channels, each read at its own offset") {
  auto m = model({{"a", conv(3, 4)}, {"b", conv(3, 6)}, {"head", conv(10, 5)}},
                 "  return self.head.forward(torch.cat([self.a.forward(x), self.b.forward(x)], 1))\n");
  auto g = analyse(m);
  REQUIRE(g.groups.size() == 3);
  const ChannelGroup* a = group_named(g, "a");
  const ChannelGroup* b = group_named(g, "b");
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  CHECK(a->blocked.empty());
  CHECK(b->blocked.empty());
  CHECK(has_slice(*a, "head", "weight", 1, "consumer", 0));
  CHECK(has_slice(*b, "head", "weight", 1, "consumer", 4));
  CHECK(group_named(g, "head")->blocked == "model output");
}

TEST_CASE("linear and layer norm rules: a chain of linears, a layer norm following the channels between them") {
  auto m = model({{"fc1", linear(16, 32)}, {"norm", layer_norm(32)}, {"fc2", linear(32, 8)}, {"fc3", linear(8, 2)}},
                 "  h = self.norm.forward(self.fc1.forward(x))\n"
                 "  return self.fc3.forward(torch.relu(self.fc2.forward(torch.relu(h))))\n");
  auto g = analyse(m, {2, 16});
  REQUIRE(g.groups.size() == 3);
  const ChannelGroup* first = group_named(g, "fc1");
  REQUIRE(first != nullptr);
  CHECK(first->blocked.empty());
  CHECK(first->channels == 32);
  CHECK(first->layer_norms == std::vector<std::string>{"norm"});
  CHECK(has_slice(*first, "norm", "weight", 0, "norm"));
  CHECK(has_slice(*first, "fc2", "weight", 1, "consumer"));
  CHECK(group_named(g, "fc2")->blocked.empty());
  CHECK(group_named(g, "fc3")->blocked == "model output");
  CHECK(g.weights.size() == 3);
}

namespace {

// A linear embedding of width 8, two-head self-attention over it with a residual, and a linear head.
Module self_attention_block() {
  return model({{"embed", linear(6, 8)}, {"attn", attention(8, 2)}, {"head", linear(8, 3)}},
               "  h = self.embed.forward(x)\n"
               "  y, _ = self.attn.forward(h, h, h)\n"
               "  return self.head.forward(y + h)\n");
}

}  // namespace

TEST_CASE("attention rule: self-attention's projections and head counts join the width it reads") {
  auto m = self_attention_block();
  auto g = analyse(m, {2, 5, 6});
  const ChannelGroup* width = group_named(g, "embed");
  REQUIRE(width != nullptr);
  CHECK(width->blocked.empty());
  CHECK(width->multiple_of == 2);
  CHECK(has_slice(*width, "attn", "in_proj_weight", 1, "consumer"));
  CHECK(has_slice(*width, "attn", "in_proj_weight", 0, "producer", 8));
  CHECK(has_slice(*width, "attn.out_proj", "weight", 0, "producer"));
  CHECK(has_slice(*width, "head", "weight", 1, "consumer"));
  bool head_dim = false;
  for (const auto& c : width->counts) head_dim = head_dim || (c.module == "attn" && c.name == "head_dim" && c.divisor == 2);
  CHECK(head_dim);
}

namespace {

// What the analysis reads of torchvision's ShiftedWindowAttention (Swin): qkv [3C, C], proj [C, C] and the
// relative-position bias table [(2W-1)^2, heads]; its forward stands in for the windowed one (same signature).
Module window_attention(int64_t width, int64_t heads, int64_t qkv_rows = 0) {
  Module m("ShiftedWindowAttention");
  m.register_module("qkv", linear(width, qkv_rows ? qkv_rows : 3 * width));
  m.register_module("proj", linear(width, width));
  m.register_parameter("relative_position_bias_table", torch::rand({9, heads}), false);
  m.register_attribute("num_heads", c10::IntType::get(), heads);
  m.define("def forward(self, x):\n  return self.proj.forward(x)\n");
  return m;
}

}  // namespace

TEST_CASE("window attention rule: Swin's qkv rows, projection and head count join the channels-last width") {
  auto m = model({{"embed", linear(3, 8)}, {"attn", window_attention(8, 2)}, {"head", linear(8, 4)}},
                 "  h = self.embed.forward(x)\n"
                 "  return self.head.forward(h + self.attn.forward(h))\n");
  auto g = analyse(m, {1, 4, 4, 3});
  const ChannelGroup* width = group_named(g, "embed");
  REQUIRE(width != nullptr);
  CHECK(width->blocked.empty());
  CHECK(width->multiple_of == 2);  // every head keeps width / heads: num_heads and the bias table stay
  CHECK(width->blocks == 2);       // each head loses the same local indices: no channel changes heads
  CHECK(has_slice(*width, "attn.qkv", "weight", 1, "consumer"));
  for (int64_t k = 0; k < 3; ++k) {
    CHECK(has_slice(*width, "attn.qkv", "weight", 0, "producer", k * 8));
    CHECK(has_slice(*width, "attn.qkv", "bias", 0, "producer", k * 8));
  }
  CHECK(has_slice(*width, "attn.proj", "weight", 0, "producer"));
  CHECK(has_slice(*width, "attn.proj", "weight", 1, "consumer"));
  CHECK(has_slice(*width, "attn.proj", "bias", 0, "producer"));
  CHECK(has_slice(*width, "head", "weight", 1, "consumer"));
  for (const auto& sl : width->slices) CHECK(sl.attr != "relative_position_bias_table");
  CHECK(g.weights.size() == 4);  // embed, qkv, proj, head: unstructured pruning reaches the uninlined call

  auto channels_first = model({{"embed", conv(3, 8)}, {"attn", window_attention(8, 2)}},
                              "  return self.attn.forward(self.embed.forward(x))\n");
  CHECK(group_named(analyse(channels_first), "embed")->blocked ==
        "Swin's ShiftedWindowAttention over a tensor whose channels are not its last dimension");
  auto other_widths = model({{"embed", linear(3, 8)}, {"attn", window_attention(8, 2, 16)}},
                            "  return self.attn.forward(self.embed.forward(x))\n");
  CHECK(group_named(analyse(other_widths, {1, 4, 4, 3}), "embed")->blocked ==
        "Swin's ShiftedWindowAttention with other widths than qkv [3C, C] and proj [C, C] (attn)");
}

TEST_CASE("pad rule: padding the spatial dimensions passes the channels, padding the channels is left alone") {
  auto spatial = model({{"conv1", conv(3, 8)}, {"conv2", conv(8, 4)}},
                       "  h = self.conv1.forward(x)\n"
                       "  return self.conv2.forward(torch.constant_pad_nd(h, [1, 1, 0, 1], 0.0))\n");
  CHECK(group_named(analyse(spatial), "conv1")->blocked.empty());
  auto last = model({{"fc1", linear(3, 8)}, {"fc2", linear(8, 4)}},
                    "  h = self.fc1.forward(x)\n"
                    "  return self.fc2.forward(torch.constant_pad_nd(h, [0, 0, 0, h.size(1) % 3], 0.0))\n");
  const ChannelGroup* kept = group_named(analyse(last, {1, 4, 4, 3}), "fc1");
  REQUIRE(kept != nullptr);
  CHECK(kept->blocked.empty());
  CHECK(has_slice(*kept, "fc2", "weight", 1, "consumer"));
  auto channels = model({{"fc1", linear(3, 8)}, {"fc2", linear(10, 4)}},
                        "  return self.fc2.forward(torch.constant_pad_nd(self.fc1.forward(x), [1, 1], 0.0))\n");
  CHECK(group_named(analyse(channels, {1, 4, 4, 3}), "fc1")->blocked ==
        "aten::constant_pad_nd of the channel dimension");
}

TEST_CASE("shape rules: Swin's patch merging (pad, quarters by slices, cat) reads the channels at each offset") {
  auto m = model({{"fc1", linear(3, 8)}, {"norm", layer_norm(16)}, {"reduction", linear(16, 4)}},
                 "  h = torch.constant_pad_nd(self.fc1.forward(x), [0, 0, 0, 1, 0, 1], 0.0)\n"
                 "  q = torch.cat([h[..., 0::2, 0::2, :], h[..., 1::2, 1::2, :]], -1)\n"
                 "  return self.reduction.forward(self.norm.forward(q))\n");
  const ChannelGroup* width = group_named(analyse(m, {1, 3, 3, 3}), "fc1");
  REQUIRE(width != nullptr);
  CHECK(width->blocked.empty());
  CHECK(has_slice(*width, "norm", "weight", 0, "norm", 0));
  CHECK(has_slice(*width, "norm", "weight", 0, "norm", 8));
  CHECK(has_slice(*width, "reduction", "weight", 1, "consumer", 0));
  CHECK(has_slice(*width, "reduction", "weight", 1, "consumer", 8));
  auto part = model({{"fc1", linear(3, 8)}, {"fc2", linear(4, 2)}},
                    "  return self.fc2.forward(self.fc1.forward(x)[..., 0:4])\n");
  CHECK(group_named(analyse(part, {1, 3, 3, 3}), "fc1")->blocked == "aten::slice of the channel dimension");
}

namespace {

// An IntermediateLayerGetter in small: a two-stage backbone whose features a dict carries to the heads, stored
// under the names a Dict(str, str) attribute gives (`return_layers`, as torchvision's) and read back by constant
// keys; the result is a dict too, as a torchvision segmentation model's.
Module dict_routed(const std::string& body) {
  Module m("Segmenter");
  m.register_module("stage1", conv(3, 4));
  m.register_module("stage2", conv(4, 8));
  m.register_module("head", conv(8, 5));
  m.register_module("low_head", conv(4, 5));
  c10::Dict<std::string, std::string> return_layers;
  return_layers.insert("stage1", "low");
  return_layers.insert("stage2", "high");
  m.register_attribute("return_layers", c10::DictType::create(c10::StringType::get(), c10::StringType::get()),
                       return_layers);
  m.define("def forward(self, x) -> Dict[str, Tensor]:\n" + body);
  return m;
}

}  // namespace

TEST_CASE("dict rules: features stored under constant keys and read back carry their channels to the heads") {
  auto m = dict_routed(
      "  features: Dict[str, Tensor] = dict()\n"  // aten::dict, what `OrderedDict()` scripts to
      "  low = self.stage1.forward(x)\n"
      "  if 'stage1' in self.return_layers:\n"
      "    features[self.return_layers['stage1']] = low\n"
      "  features[self.return_layers['stage2']] = torch.relu(self.stage2.forward(low))\n"
      "  y = self.head.forward(features['high']) + self.low_head.forward(features['low'])\n"
      "  return {'out': y}\n");
  auto g = analyse(m);
  const ChannelGroup* low = group_named(g, "stage1");
  const ChannelGroup* high = group_named(g, "stage2");
  REQUIRE(low != nullptr);
  REQUIRE(high != nullptr);
  CHECK(low->blocked.empty());
  CHECK(has_slice(*low, "stage2", "weight", 1, "consumer"));
  CHECK(has_slice(*low, "low_head", "weight", 1, "consumer"));
  CHECK(high->blocked.empty());
  CHECK(has_slice(*high, "head", "weight", 1, "consumer"));
  CHECK(group_named(g, "head")->blocked == "model output");  // the result dict is the model's output
}

TEST_CASE("dict and container rules: a value stored where lite cannot follow it is left alone with the reason") {
  const std::string read_back = "  return {'out': self.head.forward(self.stage2.forward(h))}\n";
  auto by_items = dict_routed(
      "  features = {'a': self.stage1.forward(x)}\n"
      "  h = features.items()[0][1]\n" +
      read_back);
  CHECK(group_named(analyse(by_items), "stage1")->blocked == "aten::items");
  auto computed_key = dict_routed(
      "  features: Dict[str, Tensor] = {}\n"
      "  features[str(x.dim())] = self.stage1.forward(x)\n"
      "  h = features['4']\n" +
      read_back);
  CHECK(group_named(analyse(computed_key), "stage1")->blocked == "aten::_set_item into a container lite cannot follow");
  auto missing_key = dict_routed(
      "  features = {'a': self.stage1.forward(x)}\n"
      "  h = features['b']\n" +
      read_back);
  CHECK(group_named(build_dependency_graph(missing_key), "stage1")->blocked ==
        "aten::__getitem__ of a dict key lite cannot follow");
  // An op with no rule that outputs no tensor but stores one (list.insert): read back, it would carry channels
  // nobody tracked.
  auto inserted = dict_routed(
      "  items: List[Tensor] = []\n"
      "  items.insert(0, self.stage1.forward(x))\n"
      "  h = items[0]\n" +
      read_back);
  CHECK(group_named(analyse(inserted), "stage1")->blocked == "aten::insert");
}

namespace {

// A backbone returning its two features as a tuple, what a trace makes of IntermediateLayerGetter's dict.
Module tuple_backbone() {
  Module m("Backbone");
  m.register_module("stage1", conv(3, 4));
  m.register_module("stage2", conv(4, 8));
  m.define(
      "def forward(self, x) -> Tuple[Tensor, Tensor]:\n"
      "  low = self.stage1.forward(x)\n"
      "  return low, self.stage2.forward(low)\n");
  return m;
}

}  // namespace

TEST_CASE("tuple rules: features returned as a tuple and unpacked carry their channels to the heads") {
  auto m = model({{"backbone", tuple_backbone()}, {"head", conv(8, 5)}, {"low_head", conv(4, 5)}},
                 "  low, high = self.backbone.forward(x)\n"
                 "  return self.head.forward(high) + self.low_head.forward(low)\n");
  auto g = analyse(m);
  const ChannelGroup* low = group_named(g, "backbone.stage1");
  const ChannelGroup* high = group_named(g, "backbone.stage2");
  REQUIRE(low != nullptr);
  REQUIRE(high != nullptr);
  CHECK(low->blocked.empty());
  CHECK(has_slice(*low, "low_head", "weight", 1, "consumer"));
  CHECK(high->blocked.empty());
  CHECK(has_slice(*high, "head", "weight", 1, "consumer"));
  // A tuple holding a list is not followed inside: its tensors are left alone with the reason.
  auto nested = model({{"a", conv(3, 4)}, {"head", conv(4, 5)}},
                      "  y = self.a.forward(x)\n"
                      "  return self.head.forward(y), [y]\n");
  CHECK(group_named(analyse(nested), "a")->blocked ==
        "prim::TupleConstruct of a container (a tuple holding a list, dict or tuple)");
}

TEST_CASE("lists and cat: an empty list filled by appends (torchvision's ASPP) is read at each branch's offset") {
  auto m = model({{"a", conv(3, 4)}, {"b", conv(3, 6)}, {"head", conv(10, 5)}},
                 "  parts: List[Tensor] = []\n"
                 "  parts.append(self.a.forward(x))\n"
                 "  parts.append(self.b.forward(x))\n"
                 "  return self.head.forward(torch.cat(parts, 1))\n");
  auto g = analyse(m);
  REQUIRE(group_named(g, "a") != nullptr);
  REQUIRE(group_named(g, "b") != nullptr);
  CHECK(group_named(g, "a")->blocked.empty());
  CHECK(has_slice(*group_named(g, "a"), "head", "weight", 1, "consumer", 0));
  CHECK(has_slice(*group_named(g, "b"), "head", "weight", 1, "consumer", 4));
}

namespace {

// torchvision.ops.misc.FrozenBatchNorm2d as a script holds it: four [C] buffers and the forward torchvision writes.
Module frozen_batch_norm(int64_t channels, const std::string& type = "__torch__.torchvision.ops.misc.FrozenBatchNorm2d") {
  Module m(type);
  m.register_buffer("weight", torch::rand({channels}));
  m.register_buffer("bias", torch::rand({channels}));
  m.register_buffer("running_mean", torch::rand({channels}));
  m.register_buffer("running_var", torch::rand({channels}) + 0.5);
  m.register_attribute("eps", c10::FloatType::get(), 1e-5);
  m.define(
      "def forward(self, x):\n"
      "  w = self.weight.reshape(1, -1, 1, 1)\n"
      "  b = self.bias.reshape(1, -1, 1, 1)\n"
      "  rv = self.running_var.reshape(1, -1, 1, 1)\n"
      "  rm = self.running_mean.reshape(1, -1, 1, 1)\n"
      "  scale = w * (rv + self.eps).rsqrt()\n"
      "  bias = b - rm * scale\n"
      "  return x * scale + bias\n");
  return m;
}

}  // namespace

TEST_CASE("frozen batch norm rule: torchvision's FrozenBatchNorm2d buffers follow the channels, as batch norm's do") {
  auto m = model({{"conv1", conv(3, 8)}, {"bn", frozen_batch_norm(8)}, {"conv2", conv(8, 4)}},
                 "  return self.conv2.forward(torch.relu(self.bn.forward(self.conv1.forward(x))))\n");
  auto g = analyse(m);
  const ChannelGroup* first = group_named(g, "conv1");
  REQUIRE(first != nullptr);
  CHECK(first->blocked.empty());
  CHECK(first->layers == std::vector<std::string>{"conv1", "bn"});
  CHECK(has_slice(*first, "bn", "weight", 0, "norm_scale"));
  for (const char* buffer : {"bias", "running_mean", "running_var"}) CHECK(has_slice(*first, "bn", buffer, 0, "norm"));
  CHECK(has_slice(*first, "conv2", "weight", 1, "consumer"));
  // Cut by half: the buffers shrink with the convolutions and the model still runs.
  auto pruned = m.clone();
  Removal removal{{size_t(first - g.groups.data()), {0, 2, 4, 6}}};
  remove_channels(pruned, g, removal);
  CHECK(pruned.attr("bn").toModule().attr("running_var").toTensor().size(0) == 4);
  CHECK(pruned.forward({torch::rand({1, 3, 4, 4})}).toTensor().size(1) == 4);
  // The same forward in a module of another type is inlined: its `x * scale` over reshaped buffers is not followed.
  auto other = model({{"conv1", conv(3, 8)}, {"bn", frozen_batch_norm(8, "__torch__.mine.FrozenBatchNorm2d")},
                      {"conv2", conv(8, 4)}},
                     "  return self.conv2.forward(self.bn.forward(self.conv1.forward(x)))\n");
  CHECK_FALSE(group_named(analyse(other), "conv1")->blocked.empty());
}

TEST_CASE("dict values and loops: features read as list(d.values()) in a loop over their count are followed") {
  // What a scripted FeaturePyramidNetwork does with the backbone's dict: the loop's count is the list's length,
  // which the example run measures; unrolled, each x[idx] is a read at a constant position.
  auto m = model({{"stage1", conv(3, 4)}, {"stage2", conv(4, 6)}, {"stage3", conv(6, 8)}, {"lateral", conv(8, 4)},
                  {"lateral1", conv(6, 4)}, {"head", conv(4, 5)}},
                 "  d: Dict[str, Tensor] = {}\n"
                 "  d['0'] = self.stage1.forward(x)\n"
                 "  d['1'] = self.stage2.forward(d['0'])\n"
                 "  d['2'] = self.stage3.forward(d['1'])\n"
                 "  feats = list(d.values())\n"
                 "  out = self.lateral.forward(feats[-1])\n"
                 "  for idx in range(len(feats) - 2, -1, -1):\n"  // idx = 1, then 0
                 "    if idx == 1:\n"
                 "      out = out + self.lateral1.forward(feats[idx])\n"
                 "    else:\n"
                 "      out = out + feats[idx]\n"
                 "  return self.head.forward(out)\n");
  auto g = analyse(m);
  const ChannelGroup* low = group_named(g, "stage1");
  const ChannelGroup* mid = group_named(g, "stage2");
  const ChannelGroup* high = group_named(g, "stage3");
  REQUIRE(low != nullptr);
  REQUIRE(mid != nullptr);
  REQUIRE(high != nullptr);
  CHECK(low->blocked.empty());
  for (const char* lateral : {"lateral", "lateral1"})  // feats[0] + both laterals: one width
    CHECK(has_slice(*low, lateral, "weight", 0, "producer"));
  CHECK(has_slice(*low, "head", "weight", 1, "consumer"));
  CHECK(mid->blocked.empty());
  CHECK(has_slice(*mid, "lateral1", "weight", 1, "consumer"));  // feats[1], read at idx 1
  CHECK(high->blocked.empty());
  CHECK(has_slice(*high, "lateral", "weight", 1, "consumer"));
  // A loop whose count is read from a tensor stays a loop: what it reads is left alone with the reason.
  auto by_size = model({{"conv1", conv(3, 4)}, {"conv2", conv(4, 4)}, {"head", conv(4, 5)}},
                       "  h = self.conv1.forward(x)\n"
                       "  for i in range(x.size(2)):\n"
                       "    h = self.conv2.forward(h)\n"
                       "  return self.head.forward(h)\n");
  CHECK(group_named(analyse(by_size), "conv1")->blocked == "prim::Loop left after folding");
}

TEST_CASE("attention rule: the width is cut as per-head blocks, every head losing the same local channels") {
  auto m = self_attention_block();
  auto g = analyse(m, {2, 5, 6});
  const ChannelGroup* width = group_named(g, "embed");
  REQUIRE(width != nullptr);
  CHECK(width->blocks == 2);
  PruneOptions o;
  o.ratio = 0.5;
  std::vector<lite::report::Finding> findings;
  auto plans = describe_groups(g, o, findings);
  std::vector<torch::Tensor> scores(g.groups.size());
  const size_t index = size_t(width - g.groups.data());
  // Scored alone, the four lowest would be head 0's channels 0 and 1 and head 1's local 2 and 3 (6, 7): channels
  // of head 1 would then sit at head 0's places. Summed over the heads, local 0 and 1 score lowest: they go from both.
  scores[index] = torch::tensor({0.1, 0.2, 0.9, 0.95, 0.8, 0.85, 0.3, 0.35});
  auto removal = choose_channels(scores, plans, o);
  CHECK(removal.at(index) == std::vector<int64_t>{0, 1, 4, 5});
  auto pruned = m.clone();
  const auto out_before = m.attr("attn").toModule().attr("out_proj").toModule().attr("weight").toTensor();
  remove_channels(pruned, g, removal);
  const auto out_after = pruned.attr("attn").toModule().attr("out_proj").toModule().attr("weight").toTensor();
  const auto kept = torch::tensor({2, 3, 6, 7}, torch::kLong);  // two per head, each in its own head
  CHECK(torch::equal(out_after, out_before.index_select(0, kept).index_select(1, kept)));
  CHECK(pruned.attr("attn").toModule().attr("head_dim").toInt() == 2);
}
