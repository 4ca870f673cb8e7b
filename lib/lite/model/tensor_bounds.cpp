#include "lite/model/tensor_bounds.hpp"

#include <malloc.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/script.h>

#include <optional>
#include <utility>

#include "lite/core/error.hpp"

namespace lite::model {

namespace {

// The bytes a tensor's view reaches in its storage, lowest and highest (exclusive), computed in 128 bits
// (sizes and strides come from the file); nullopt for a tensor with no elements, which reads nothing.
std::optional<std::pair<__int128, __int128>> reach_in_bytes(const at::Tensor& t) {
  if (t.numel() == 0) return std::nullopt;
  __int128 low = t.storage_offset(), high = t.storage_offset();
  for (int64_t d = 0; d < t.dim(); ++d) {
    const __int128 span = __int128(t.size(d) - 1) * t.stride(d);
    (span < 0 ? low : high) += span;
  }
  const __int128 item = __int128(t.element_size());
  return std::make_pair(low * item, (high + 1) * item);
}

void check_block_constants(const torch::jit::Block* block, const std::string& file, const std::string& fix) {
  for (const torch::jit::Node* node : block->nodes()) {
    if (node->kind() == c10::prim::Constant && node->output()->type()->kind() == c10::TypeKind::TensorType) {
      const auto value = torch::jit::toIValue(node->output());
      if (value && value->isTensor()) check_tensor_backed(value->toTensor(), allocated_bytes(value->toTensor()), file, fix);
    }
    for (const torch::jit::Block* inner : node->blocks()) check_block_constants(inner, file, fix);
  }
}

}  // namespace

void for_each_tensor(const c10::IValue& v, const std::function<void(const at::Tensor&)>& visit) {
  if (v.isTensor()) {
    visit(v.toTensor());
  } else if (v.isTuple()) {
    for (const auto& e : v.toTupleRef().elements()) for_each_tensor(e, visit);
  } else if (v.isList()) {
    for (const auto& e : v.toListRef()) for_each_tensor(e, visit);
  } else if (v.isGenericDict()) {
    for (const auto& item : v.toGenericDict()) {
      for_each_tensor(item.key(), visit);
      for_each_tensor(item.value(), visit);
    }
  }
}

void check_tensor_backed(const at::Tensor& t, size_t backed_bytes, const std::string& file, const std::string& fix) {
  if (!t.has_storage()) return;
  const size_t claimed = t.storage().nbytes();
  if (claimed > backed_bytes)
    throw InputError(file, "a tensor's storage claims " + std::to_string(claimed) + " bytes but only " +
                               std::to_string(backed_bytes) + " back it (a damaged or crafted file)",
                     fix);
  const auto reach = reach_in_bytes(t);
  if (reach && (reach->first < 0 || reach->second > __int128(claimed)))
    throw InputError(file, "a tensor of shape " + c10::str(t.sizes()) + " (offset " + std::to_string(t.storage_offset()) +
                               ", strides " + c10::str(t.strides()) + ") reaches outside its storage of " +
                               std::to_string(claimed) + " bytes (a damaged or crafted file)",
                     fix);
}

size_t allocated_bytes(const at::Tensor& t) {
  const void* data = t.has_storage() ? t.storage().data() : nullptr;
  return data == nullptr ? 0 : malloc_usable_size(const_cast<void*>(data));
}

void check_module_tensors_backed(const torch::jit::Module& module, const std::string& file, const std::string& fix) {
  auto check = [&](const at::Tensor& t) { check_tensor_backed(t, allocated_bytes(t), file, fix); };
  for (const auto& attribute : module.named_attributes(/*recurse=*/true)) for_each_tensor(attribute.value, check);
  for (const auto& submodule : module.modules())
    for (const auto& method : submodule.get_methods()) check_block_constants(method.graph()->block(), file, fix);
}

}  // namespace lite::model
