#pragma once
// Decoders lite drives (docs/llm.md): a TorchScript module whose forward maps int64 token ids [B, T] to logits
// [B, T, V], either stateless (each step re-reads the context) or with a KV cache passed in and returned: a list of
// tensors [k0, v0, k1, v1, ...] or a list or tuple of (K, V) pairs, each [B, kv_heads, context, head_dim]. The
// first call goes to a `prefill(ids)` method when the module has one (how a traced model carries both calls),
// else to forward with an empty cache. Anything else is refused with one line naming what was expected.
#include <torch/script.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "lite/llm/decoder_facts.hpp"

namespace lite::llm {

// One call's result: the logits of the last position [B, V] and the cache to pass on (for a stateless decoder,
// the whole context's ids).
struct Step {
  torch::Tensor logits;       // [B, T, V]: every position of the call
  torch::Tensor last_logits;
  c10::IValue cache;
};

// Whether the module announces itself as a decoder with a KV cache: forward(ids, cache) with a cache of a form above,
// or a prefill method. A stateless decoder looks like any forward(x) model: the caller says so.
bool takes_kv_cache(const torch::jit::Module& module);

class Decoder {
 public:
  // Reads forward's schema; throws InputError when it is not (ids) or (ids, cache) of a form above.
  // `max_positions`: the limit of the model this module was made from, when the module no longer carries the
  // attribute (a frozen or quantized copy).
  Decoder(torch::jit::Module& module, std::string path, std::optional<int64_t> max_positions = std::nullopt);

  CacheForm form() const { return form_; }
  const std::string& path() const { return path_; }
  std::optional<int64_t> max_positions() const { return max_positions_; }

  // The prompt's forward (under NoGradGuard); checks the outputs' form on every call.
  Step prefill(const torch::Tensor& ids);
  // One step on `ids` [B, n] (n >= 1 new tokens) after the context `cache` holds.
  Step extend(const torch::Tensor& ids, const c10::IValue& cache);
  // The module's very first call, for a decoder with a cache: one token per row of `batch`, the decode step's shape
  // (docs/llm.md "Warm-up"). PyTorch's oneDNN dynamic int8 linear keeps a ready kernel for the first input shape it
  // sees and sets one up anew on every call of any other shape: GPT-2-small int8 at 2 threads took 97 ms a token
  // after a prefill-first start and 65 ms after this one. prefill and extend call it (batch 1) when the caller has not.
  void warm_decode_shape(int64_t batch = 1);

  // The cache's layout, read from a cache this decoder returned (all zeros for a stateless decoder).
  CacheLayout layout_of(const c10::IValue& cache) const;
  // Tokens of context the cache holds.
  int64_t context_of(const c10::IValue& cache) const;
  // The cache with each K and V tensor replaced by `fn` of it, in the list or tuple structure the model returned
  // (a stateless decoder's context is returned as it is).
  c10::IValue map_cache(const c10::IValue& cache, const std::function<torch::Tensor(const torch::Tensor&)>& fn) const;

 private:
  Step unpack(const c10::IValue& out, const char* call, int64_t batch, int64_t new_tokens);

  torch::jit::Module& module_;
  std::string path_;
  CacheForm form_ = CacheForm::stateless;
  bool has_prefill_method_ = false;
  bool cache_optional_ = false;
  bool cache_checked_ = false;
  bool warmed_ = false;
  c10::TypePtr cache_type_;
  std::optional<int64_t> max_positions_;
};

}  // namespace lite::llm
