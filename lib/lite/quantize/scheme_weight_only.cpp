// Weight-only int8 and int4 (one file for both: they differ only in bits and packing). The planned
// layers' weights are stored as signed integers with one float16 scale per group of up to 64 weights
// along the input dimension (symmetric: w ~= q * scale, scale = max|w| / 127 or / 7), int4 packed two
// per byte. The frozen graph dequantizes them where they are used, so the file shrinks and compute stays
// float32; libtorch's executor folds the dequantization of constant weights on the first call.
#include <torch/csrc/jit/passes/dead_code_elimination.h>

#include "lite/quantize/quantize_internal.hpp"

namespace lite::quantize {

namespace {

const char* kDequantSource = R"JIT(
def lite_dequant_int8(q: Tensor, scale: Tensor, k: int, shape: List[int]) -> Tensor:
    w = q.float() * scale.float().unsqueeze(-1)
    w = w.reshape([q.size(0), -1])
    if w.size(1) != k:
        w = w.narrow(1, 0, k)
    return w.reshape(shape)

def lite_dequant_int4(p: Tensor, scale: Tensor, k: int, shape: List[int]) -> Tensor:
    lo = torch.bitwise_and(p, 15)
    hi = torch.bitwise_right_shift(p, 4)
    u = torch.stack([lo, hi], -1).reshape([p.size(0), p.size(1), -1])
    w = (u.float() - 8.0) * scale.float().unsqueeze(-1)
    w = w.reshape([p.size(0), -1])
    if w.size(1) != k:
        w = w.narrow(1, 0, k)
    return w.reshape(shape)
)JIT";

constexpr int64_t kMaxGroup = 64;

// The group size along the K = in_channels * kernel inputs of each output channel: the largest of 64,
// 32, 16 that divides K, else the whole row (rounded up to even for int4, padded with zeros).
int64_t group_size(int64_t k, int bits) {
  for (int64_t g : {kMaxGroup, int64_t{32}, int64_t{16}})
    if (k % g == 0) return g;
  return bits == 4 && k % 2 ? k + 1 : k;
}

struct Grouped {
  torch::Tensor q;      // int8 [O, groups, G], or uint8 [O, groups, G/2] for int4
  torch::Tensor scale;  // float16 [O, groups]
  int64_t group = 0;
};

Grouped quantize_groups(const torch::Tensor& weight, int bits) {
  const int64_t out = weight.size(0);
  torch::Tensor flat = weight.reshape({out, -1}).to(torch::kFloat32);
  const int64_t k = flat.size(1), g = group_size(k, bits);
  const int64_t padded = (k + g - 1) / g * g;
  if (padded != k) flat = torch::cat({flat, torch::zeros({out, padded - k})}, 1);
  torch::Tensor grouped = flat.view({out, padded / g, g});
  const double qmax = bits == 8 ? 127 : 7;
  torch::Tensor scale = (grouped.abs().amax(-1) / qmax).to(torch::kHalf);
  scale = torch::where(scale == 0, torch::ones_like(scale), scale);
  torch::Tensor q = (grouped / scale.to(torch::kFloat32).unsqueeze(-1)).round().clamp(-qmax - 1, qmax).to(torch::kInt8);
  if (bits == 4) {
    using torch::indexing::Slice;
    torch::Tensor u = (q.to(torch::kInt16) + 8).to(torch::kUInt8);
    q = u.index({"...", Slice(0, torch::indexing::None, 2)})
            .bitwise_or(u.index({"...", Slice(1, torch::indexing::None, 2)}).bitwise_left_shift(4));
  }
  return {q.contiguous(), scale.contiguous(), g};
}

class WeightOnlyScheme final : public Scheme {
 public:
  explicit WeightOnlyScheme(int bits) : bits_(bits) {}
  std::string layer_scheme(const LayerInfo&) const override {
    return "int" + std::to_string(bits_) + " weights (group scales), float32 compute";
  }
  uint64_t layer_bytes(const LayerInfo& l) const override {
    if (l.weight_shape.empty()) return 0;
    const auto out = static_cast<uint64_t>(l.weight_shape[0]);
    const auto k = static_cast<int64_t>(l.weight_elements() / std::max<uint64_t>(out, 1));
    const auto g = group_size(k, bits_);
    const auto groups = static_cast<uint64_t>((k + g - 1) / g);
    const uint64_t q = out * groups * static_cast<uint64_t>(g) * static_cast<uint64_t>(bits_) / 8;
    return q + 2 * out * groups + 4 * static_cast<uint64_t>(l.bias);
  }
  void build(BuildContext& ctx) const override {
    torch::NoGradGuard no_grad;
    FrozenModel f = freeze_with_layers(ctx.source, ctx.plan);
    nlohmann::json groups = nlohmann::json::object();
    for (const auto& fl : f.layers) {
      if (!fl.plan->quantized) continue;
      auto w = torch::jit::toIValue(fl.weight)->toTensor();
      Grouped gq = quantize_groups(w, bits_);
      torch::jit::Node* after = fl.weight->node()->next();
      torch::jit::WithInsertPoint guard(after);
      std::vector<torch::jit::Value*> args = {f.graph->insertConstant(gq.q), f.graph->insertConstant(gq.scale),
                                              f.graph->insertConstant(w.numel() / w.size(0)),
                                              f.graph->insertConstant(w.sizes().vec())};
      auto out = insert_function(*f.graph, after, kDequantSource, bits_ == 8 ? "lite_dequant_int8" : "lite_dequant_int4",
                                 args);
      fl.weight->replaceAllUsesWith(out.at(0));
      groups[fl.plan->layer.name] = gq.group;
    }
    ctx.notes = f.notes("keep float32 weights");
    torch::jit::EliminateDeadCode(f.graph);
    ctx.details["weights"] = "int" + std::to_string(bits_) + " symmetric, float16 scale per group";
    ctx.details["group_size"] = groups;
    ctx.result = f.module;
  }

 private:
  int bits_;
};

}  // namespace

const Scheme& weight_int8_scheme() {
  static const WeightOnlyScheme scheme(8);
  return scheme;
}

const Scheme& weight_int4_scheme() {
  static const WeightOnlyScheme scheme(4);
  return scheme;
}

}  // namespace lite::quantize
