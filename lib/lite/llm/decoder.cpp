#include "lite/llm/decoder.hpp"

#include <fmt/format.h>

#include <vector>

#include "lite/core/error.hpp"
#include "lite/model/inputs.hpp"
#include "lite/model/torch_errors.hpp"

namespace lite::llm {

const char* form_name(CacheForm form) {
  switch (form) {
    case CacheForm::stateless: return "stateless";
    case CacheForm::tensor_list: return "kv-list";
    case CacheForm::pairs: return "kv-pairs";
  }
  return "?";
}

namespace {

constexpr const char* kFix = "export forward(ids) -> logits, or forward(ids, cache) -> (logits, cache) (docs/llm.md)";

bool is_tensor_pair(const c10::TypePtr& t) {
  const auto tuple = t->cast<c10::TupleType>();
  return tuple && tuple->elements().size() == 2 && tuple->elements()[0]->kind() == c10::TypeKind::TensorType &&
         tuple->elements()[1]->kind() == c10::TypeKind::TensorType;
}

// The cache argument's form, or nullopt when lite cannot drive it.
std::optional<CacheForm> cache_form_of(const c10::TypePtr& type) {
  if (const auto list = type->cast<c10::ListType>()) {
    if (list->getElementType()->kind() == c10::TypeKind::TensorType) return CacheForm::tensor_list;
    if (is_tensor_pair(list->getElementType())) return CacheForm::pairs;
    return std::nullopt;
  }
  if (const auto tuple = type->cast<c10::TupleType>()) {
    if (tuple->elements().empty()) return std::nullopt;
    bool tensors = true, pairs = true;
    for (const auto& e : tuple->elements()) {
      tensors = tensors && e->kind() == c10::TypeKind::TensorType;
      pairs = pairs && is_tensor_pair(e);
    }
    if (tensors) return CacheForm::tensor_list;
    if (pairs) return CacheForm::pairs;
  }
  return std::nullopt;
}

// The cache's K and V tensors in layer order: [k0, v0, k1, v1, ...].
std::vector<torch::Tensor> cache_tensors(const c10::IValue& cache, CacheForm form, const std::string& path) {
  std::vector<torch::Tensor> out;
  auto bad = [&](const std::string& found) {
    return InputError(path, fmt::format("the KV cache the model returned is {}; lite reads K and V tensors "
                                        "[batch, kv_heads, context, head_dim] per layer ({})", found,
                                        form == CacheForm::pairs ? "as (K, V) pairs" : "as one list"),
                      "see docs/llm.md for the forms lite drives");
  };
  std::vector<c10::IValue> items;
  if (cache.isList()) items = cache.toListRef().vec();
  else if (cache.isTuple()) items = cache.toTupleRef().elements().vec();
  else throw bad(std::string("a ") + cache.tagKind());
  for (const auto& item : items) {
    if (form == CacheForm::tensor_list && item.isTensor()) {
      out.push_back(item.toTensor());
    } else if (form == CacheForm::pairs && item.isTuple() && item.toTupleRef().elements().size() == 2 &&
               item.toTupleRef().elements()[0].isTensor() && item.toTupleRef().elements()[1].isTensor()) {
      out.push_back(item.toTupleRef().elements()[0].toTensor());
      out.push_back(item.toTupleRef().elements()[1].toTensor());
    } else {
      throw bad(fmt::format("a sequence holding a {}", item.tagKind()));
    }
  }
  if (out.empty() || out.size() % 2 != 0) throw bad(fmt::format("{} tensors (K and V per layer need an even count)", out.size()));
  for (const auto& t : out) {
    if (t.dim() != 4 || t.size(0) != out[0].size(0) || t.size(2) != out[0].size(2))
      throw bad(fmt::format("tensors shaped like {}", fmt::join(t.sizes().vec(), "x")));
    // A broadcast view declares bytes it does not hold: its KV bytes per token would be a fiction.
    for (int64_t d = 0; d < 4; ++d)
      if (t.stride(d) == 0 && t.size(d) > 1)
        throw bad(fmt::format("a broadcast view {} (dimension {} repeats one stored value)",
                              fmt::join(t.sizes().vec(), "x"), d));
  }
  return out;
}

}  // namespace

bool takes_kv_cache(const torch::jit::Module& module) {
  if (module.find_method("prefill")) return true;
  const auto method = module.find_method("forward");
  if (!method) return false;
  const auto& args = method->function().getSchema().arguments();
  if (args.size() != 3) return false;
  c10::TypePtr type = args[2].type();
  if (const auto optional = type->cast<c10::OptionalType>()) type = optional->getElementType();
  return cache_form_of(type).has_value();
}

Decoder::Decoder(torch::jit::Module& module, std::string path, std::optional<int64_t> max_positions)
    : module_(module), path_(std::move(path)), max_positions_(max_positions) {
  const auto method = module_.find_method("forward");
  if (!method) throw InputError(path_, "has no forward method", kFix);
  const auto& args = method->function().getSchema().arguments();
  const size_t inputs = args.empty() ? 0 : args.size() - 1;  // args[0] is self
  if (inputs == 0 || inputs > 2)
    throw InputError(path_, fmt::format("forward takes {} inputs; a decoder takes (ids) or (ids, cache)", inputs), kFix);
  if (args[1].type()->kind() != c10::TypeKind::TensorType)
    throw InputError(path_, fmt::format("forward's first input is a {}, not a tensor of token ids", args[1].type()->str()), kFix);
  has_prefill_method_ = module_.find_method("prefill").has_value();
  if (module_.hasattr("max_positions") && module_.attr("max_positions").isInt())
    max_positions_ = module_.attr("max_positions").toInt();
  if (inputs == 1) return;  // stateless
  cache_type_ = args[2].type();
  if (const auto optional = cache_type_->cast<c10::OptionalType>()) {
    cache_optional_ = true;
    cache_type_ = optional->getElementType();
  }
  const auto form = cache_form_of(cache_type_);
  if (!form)
    throw InputError(path_, fmt::format("forward's cache input is a {}, which is neither List[Tensor] nor (K, V) pairs",
                                        cache_type_->str()), kFix);
  form_ = *form;
}

void Decoder::warm_decode_shape(int64_t batch) {
  if (warmed_) return;
  warmed_ = true;
  if (form_ != CacheForm::stateless) prefill(torch::zeros({batch, 1}, torch::kInt64));
}

Step Decoder::prefill(const torch::Tensor& ids) {
  torch::NoGradGuard no_grad;
  warm_decode_shape();
  const char* call = "forward";
  try {
    c10::IValue out;
    if (form_ == CacheForm::stateless) {
      out = module_.forward({ids});
    } else if (has_prefill_method_) {
      call = "prefill";
      out = module_.get_method("prefill")({ids});
    } else if (cache_optional_) {
      out = module_.forward({ids, c10::IValue()});
    } else if (const auto list = cache_type_->cast<c10::ListType>()) {
      out = module_.forward({ids, c10::impl::GenericList(list->getElementType())});
    } else {
      throw InputError(path_, fmt::format("forward needs a cache of fixed size ({}) and the model has no prefill(ids) method",
                                          cache_type_->str()),
                       "export prefill(ids) -> (logits, cache) too, e.g. with torch.jit.trace_module (docs/llm.md)");
    }
    Step s = unpack(out, call, ids.size(0), ids.size(1));
    if (form_ == CacheForm::stateless) s.cache = ids;
    return s;
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(path_, fmt::format("{} of a {}-token prompt failed: {}", call, ids.size(1), model::torch_error_reason(e)),
                     "check that the model is a decoder of int64 token ids below its vocabulary (docs/llm.md)");
  }
}

Step Decoder::extend(const torch::Tensor& ids, const c10::IValue& cache) {
  torch::NoGradGuard no_grad;
  warm_decode_shape();
  try {
    if (form_ == CacheForm::stateless) {
      const torch::Tensor all = torch::cat({cache.toTensor(), ids}, 1);
      Step s = unpack(module_.forward({all}), "forward", all.size(0), all.size(1));
      s.cache = all;
      return s;
    }
    return unpack(module_.forward({ids, cache}), "forward", ids.size(0), ids.size(1));
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(path_, fmt::format("forward at context {} (+{} tokens) failed: {}", context_of(cache), ids.size(1),
                                        model::torch_error_reason(e)),
                     "a context beyond the model's positions or a preallocated cache fails: give fewer prompt or "
                     "generated tokens");
  }
}

Step Decoder::unpack(const c10::IValue& out, const char* call, int64_t batch, int64_t new_tokens) {
  c10::IValue logits = out;
  Step s;
  if (form_ != CacheForm::stateless) {
    if (!out.isTuple() || out.toTupleRef().elements().size() != 2)
      throw InputError(path_, fmt::format("{} returned a {}, not (logits, cache)", call, out.tagKind()), kFix);
    logits = out.toTupleRef().elements()[0];
    s.cache = out.toTupleRef().elements()[1];
    if (!cache_checked_) {  // refuses a cache lite cannot read at its first appearance; later steps pay nothing
      cache_tensors(s.cache, form_, path_);
      cache_checked_ = true;
    }
  }
  if (!logits.isTensor() || logits.toTensor().dim() != 3 || logits.toTensor().size(0) != batch ||
      logits.toTensor().size(1) != new_tokens || !logits.toTensor().is_floating_point())
    throw InputError(path_, fmt::format("{} returned {} for ids {}x{}; a decoder returns float logits [{}, {}, vocab]", call,
                                        logits.isTensor() ? "a tensor " + fmt::format("{}", fmt::join(logits.toTensor().sizes().vec(), "x"))
                                                          : std::string("a ") + logits.tagKind(),
                                        batch, new_tokens, batch, new_tokens),
                     kFix);
  s.logits = logits.toTensor();
  s.last_logits = s.logits.select(1, new_tokens - 1);
  return s;
}

CacheLayout Decoder::layout_of(const c10::IValue& cache) const {
  CacheLayout l;
  if (form_ == CacheForm::stateless) return l;
  const auto tensors = cache_tensors(cache, form_, path_);
  l.layers = int64_t(tensors.size() / 2);
  l.kv_heads = tensors[0].size(1);
  l.head_dim = tensors[0].size(3);
  l.dtype = model::dtype_name(tensors[0].scalar_type());
  l.element_bytes = int64_t(tensors[0].element_size());
  const double positions = double(tensors[0].size(0) * tensors[0].size(2));
  double bytes = 0;
  for (const auto& t : tensors) bytes += double(t.numel()) * double(t.element_size());
  l.bytes_per_token = positions > 0 ? bytes / positions : 0;
  return l;
}

int64_t Decoder::context_of(const c10::IValue& cache) const {
  if (form_ == CacheForm::stateless) return cache.toTensor().size(1);
  return cache_tensors(cache, form_, path_)[0].size(2);
}

namespace {
c10::IValue map_tensors(const c10::IValue& v, const std::function<torch::Tensor(const torch::Tensor&)>& fn) {
  if (v.isTensor()) return fn(v.toTensor());
  if (v.isList()) {
    c10::impl::GenericList list = v.toList().copy();  // a c10::List copy shares its storage: copy() does not
    for (size_t i = 0; i < list.size(); ++i) list.set(i, map_tensors(list.get(i), fn));
    return list;
  }
  if (v.isTuple()) {
    std::vector<c10::IValue> items;
    for (const auto& item : v.toTupleRef().elements()) items.push_back(map_tensors(item, fn));
    return c10::ivalue::Tuple::create(std::move(items));
  }
  return v;
}
}  // namespace

c10::IValue Decoder::map_cache(const c10::IValue& cache, const std::function<torch::Tensor(const torch::Tensor&)>& fn) const {
  if (form_ == CacheForm::stateless) return cache;
  cache_tensors(cache, form_, path_);  // the form lite reads, or one line saying what it found
  return map_tensors(cache, fn);
}

}  // namespace lite::llm
