#pragma once
// Tensors read from a file are checked against the bytes really behind them before anyone reads them.
// libtorch 1.13's unpickler (torch.save data, TorchScript archives, checkpoints) builds what the pickle asks:
// a storage claiming more elements than its record holds, and a tensor whose offset, sizes and strides reach
// past its storage. Kernels then read beyond the allocation (Python's torch.load does the same).
#include <ATen/ATen.h>
#include <ATen/core/ivalue.h>

#include <functional>
#include <string>

namespace torch::jit {
struct Module;
}

namespace lite::model {

// Calls `visit` for every tensor in `value`: the value itself, or inside its tuples, lists and dicts
// (nesting is bounded by the pickle scan, kMaxPickleNesting). Objects are not entered.
void for_each_tensor(const c10::IValue& value, const std::function<void(const at::Tensor&)>& visit);

// Throws InputError(file, ..., fix) when `t`'s storage claims more than `backed_bytes`, or its view reaches
// outside its storage. A tensor without storage (sparse, opaque) is not checked.
void check_tensor_backed(const at::Tensor& t, size_t backed_bytes, const std::string& file, const std::string& fix);

// The bytes the allocator really gave a storage's data (glibc's malloc_usable_size: at least what was asked,
// plus the allocator's slack), 0 for a storage without data. libtorch allocates each archive record with
// c10's CPU allocator (posix_memalign), so this bounds what a storage read from a file may claim.
size_t allocated_bytes(const at::Tensor& t);

// Checks every tensor a freshly loaded model holds (attributes of it and its submodules, tensor constants of
// their methods' graphs) with check_tensor_backed against allocated_bytes. Custom-class objects (quantized
// packed weights) are built by their __setstate__ during the load itself, before this can run: their
// tensors are not covered.
void check_module_tensors_backed(const torch::jit::Module& module, const std::string& file, const std::string& fix);

}  // namespace lite::model
