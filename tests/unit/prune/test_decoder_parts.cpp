// lite prune on a decoder's parts (lib/lite/prune/decoder_parts.cpp, decoder_surgery.cpp), on small modules built
// here in C++: an attention found by its q/k/v/o children with its head counts as int attributes (scripted) or as
// constants of its size lists (how a trace keeps them), a KV head cut with its query group (the returned K keeps
// head_dim and loses the group), a gated MLP cut in width, and a graph whose constants several modules share left
// alone.
#include <string>
#include <vector>

#include <torch/script.h>
#include <torch/torch.h>
// glog (through the torch headers) defines CHECK as an abort; doctest's CHECK must win.
#undef CHECK
#include <doctest/doctest.h>

#include "lite/model/module_bytes.hpp"
#include "lite/prune/decoder_internal.hpp"
#include "lite/prune/prune_internal.hpp"

using namespace lite::prune;
using torch::jit::Module;

namespace {

constexpr int64_t kWidth = 32, kHeadDim = 8;

Module linear(int64_t in, int64_t out) {
  Module m("Linear");
  m.register_parameter("weight", torch::randn({out, in}), false);
  m.register_parameter("bias", torch::randn({out}), false);
  m.define("def forward(self, x):\n  return torch.linear(x, self.weight, self.bias)\n");
  return m;
}

// Grouped-query attention returning (out, K): 4 heads over 2 KV heads of 8, the counts read from `heads` and
// `kv_heads` (attributes) or written as constants (traced style).
Module attention(bool attributes) {
  Module m("Attention");
  m.register_module("q", linear(kWidth, 4 * kHeadDim));
  m.register_module("k", linear(kWidth, 2 * kHeadDim));
  m.register_module("v", linear(kWidth, 2 * kHeadDim));
  m.register_module("o", linear(4 * kHeadDim, kWidth));
  if (attributes) {
    m.register_attribute("heads", c10::IntType::get(), int64_t(4));
    m.register_attribute("kv_heads", c10::IntType::get(), int64_t(2));
  }
  const std::string h = attributes ? "self.heads" : "4", kv = attributes ? "self.kv_heads" : "2";
  const std::string merged = attributes ? "self.heads * 8" : "32";
  m.define("def forward(self, x):\n"
           "  b = x.size(0)\n"
           "  t = x.size(1)\n"
           "  q = self.q.forward(x).view([b, t, " + h + ", 8]).transpose(1, 2)\n"
           "  k = self.k.forward(x).view([b, t, " + kv + ", 8]).transpose(1, 2)\n"
           "  v = self.v.forward(x).view([b, t, " + kv + ", 8]).transpose(1, 2)\n"
           "  keys = k.repeat_interleave(2, 1)\n"
           "  values = v.repeat_interleave(2, 1)\n"
           "  a = torch.matmul(torch.softmax(torch.matmul(q, keys.transpose(-1, -2)), -1), values)\n"
           "  return self.o.forward(a.transpose(1, 2).reshape([b, t, " + merged + "])), k\n");
  return m;
}

Module gated_mlp() {
  Module m("SwiGLU");
  m.register_module("gate", linear(kWidth, 48));
  m.register_module("up", linear(kWidth, 48));
  m.register_module("down", linear(48, kWidth));
  m.define("def forward(self, x):\n  return self.down.forward(torch.silu(self.gate.forward(x)) * self.up.forward(x))\n");
  return m;
}

Module block(bool attributes) {
  Module m("Block");
  m.register_module("attn", attention(attributes));
  m.register_module("mlp", gated_mlp());
  m.define("def forward(self, x):\n  a, k = self.attn.forward(x)\n  return self.mlp.forward(x + a), k\n");
  return m;
}

std::vector<int64_t> shapes_after_cut(const Module& model, const PruneOptions& o) {
  DecoderParts parts = find_decoder_parts(model);
  plan_decoder_cut(parts, o);
  Module pruned = lite::model::deserialize(cut_decoder(model, parts, "l1"));
  auto out = pruned.forward({torch::randn({1, 5, kWidth})}).toTuple();
  CHECK(out->elements()[0].toTensor().sizes().vec() == std::vector<int64_t>({1, 5, kWidth}));
  CHECK(count_unique_parameters(pruned) == planned_decoder_parameters(model, parts));
  return out->elements()[1].toTensor().sizes().vec();
}

}  // namespace

TEST_CASE("decoder parts: attention counts in attributes, gated MLP") {
  Module m = block(true);
  DecoderParts parts = find_decoder_parts(m);
  REQUIRE(parts.attention.size() == 1);
  REQUIRE(parts.mlp.size() == 1);
  const AttentionCut& a = parts.attention[0].cut;
  CHECK(a.module == "attn");
  CHECK(a.counts_in == "attributes");
  CHECK(a.heads == 4);
  CHECK(a.kv_heads == 2);
  CHECK(a.head_dim == kHeadDim);
  CHECK(a.skipped.empty());
  CHECK(parts.mlp[0].cut.width == 48);
  CHECK(std::string(parts.mlp[0].names.gate) == "gate");
}

TEST_CASE("decoder parts: head counts read from the size lists' constants") {
  DecoderParts parts = find_decoder_parts(block(false));
  REQUIRE(parts.attention.size() == 1);
  const AttentionCut& a = parts.attention[0].cut;
  CHECK(a.counts_in == "graph constants");
  CHECK(a.heads == 4);
  CHECK(a.kv_heads == 2);
  CHECK(head_sites(block(false).attr("attn").toModule(), parts.attention[0].names).size() == 4);
}

TEST_CASE("decoder cut: a KV head goes with its query group, attributes and constants alike") {
  for (bool attributes : {true, false}) {
    CAPTURE(attributes);
    PruneOptions o;
    o.heads = 0.5;
    o.ratio = 0.25;
    Module m = block(attributes);
    DecoderParts parts = find_decoder_parts(m);
    plan_decoder_cut(parts, o);
    CHECK(parts.attention[0].cut.kv_heads_kept == 1);
    CHECK(parts.attention[0].cut.heads_kept == 2);
    CHECK(parts.mlp[0].cut.kept == 36);
    // K as returned: [B, kv_heads_kept, T, head_dim]
    CHECK(shapes_after_cut(m, o) == std::vector<int64_t>({1, 1, 5, kHeadDim}));
  }
}

TEST_CASE("decoder cut: the highest-scoring KV group stays") {
  Module m = block(true);
  Module attn = m.attr("attn").toModule();
  torch::NoGradGuard no_grad;
  for (const char* child : {"q", "k", "v", "o"}) attn.attr(child).toModule().attr("weight").toTensor().mul_(0.01);
  // KV group 1 (k/v rows 8..15, q rows 16..31) made large: it must be the one kept
  attn.attr("k").toModule().attr("weight").toTensor().slice(0, 8, 16).fill_(1);
  PruneOptions o;
  o.heads = 0.5;
  DecoderParts parts = find_decoder_parts(m);
  plan_decoder_cut(parts, o);
  Module pruned = lite::model::deserialize(cut_decoder(m, parts, "l1"));
  torch::Tensor k = pruned.attr("attn").toModule().attr("k").toModule().attr("weight").toTensor();
  CHECK(k.size(0) == kHeadDim);
  CHECK(k.min().item<float>() == 1);
}

TEST_CASE("decoder parts: constants shared by several attention modules are left alone") {
  Module attn = attention(false);
  Module m("Two");
  m.register_module("a", attn);
  m.register_module("b", attn.deepcopy());
  m.define("def forward(self, x):\n  return self.a.forward(x)[0] + self.b.forward(x)[0]\n");
  DecoderParts parts = find_decoder_parts(m);
  REQUIRE(parts.attention.size() == 2);
  CHECK(parts.attention[0].cut.skipped.find("share") != std::string::npos);
}

TEST_CASE("decoder plan: exclude and layer ratios") {
  PruneOptions o;
  o.heads = 0.5;
  o.layer_ratios = {{"mlp", 0.5}};
  o.exclude = {"attn"};
  DecoderParts parts = find_decoder_parts(block(true));
  plan_decoder_cut(parts, o);
  CHECK(parts.attention[0].cut.skipped == "excluded");
  CHECK(parts.attention[0].cut.kv_heads_kept == 2);
  CHECK(parts.mlp[0].cut.kept == 24);
}
