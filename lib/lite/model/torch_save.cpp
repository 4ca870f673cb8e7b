// torch.save files, read the way torch::pickle_load reads them, with the pickle stream first made
// readable by libtorch's unpickler (pickle_compat.hpp: a single-key dict's SETITEM, a one-element list's
// APPEND, protocol 4's FRAME/MEMOIZE).
//
// Algorithm: open the zip with libtorch's PyTorchStreamReader (records are named relative to the archive's
// top folder: "data.pkl", "data/<storage key>", "version"), rewrite data.pkl, and run torch's Unpickler
// over the rewritten bytes with the same storage callback pickle_load uses ("data/" + key), so tensors are
// rebuilt by torch itself, exactly as pickle_load would.
//
// Hostile files: the zip directory's sizes are checked before libtorch allocates a record at its declared size
// (zip_directory.hpp), and every tensor the pickle builds is checked against the record that backs it before
// anyone reads it (tensor_bounds.hpp).
#include "lite/model/torch_save.hpp"

#include <caffe2/serialize/inline_container.h>
#include <caffe2/serialize/read_adapter_interface.h>
#include <torch/csrc/jit/serialization/unpickler.h>

#include <cstring>
#include <unordered_map>

#include "lite/core/error.hpp"
#include "lite/model/pickle_compat.hpp"
#include "lite/model/tensor_bounds.hpp"
#include "lite/model/torch_errors.hpp"
#include "lite/model/zip_directory.hpp"

namespace lite::model {

namespace {

class MemoryReader final : public caffe2::serialize::ReadAdapterInterface {
 public:
  explicit MemoryReader(const std::vector<char>& bytes) : bytes_(bytes) {}
  size_t size() const override { return bytes_.size(); }
  size_t read(uint64_t pos, void* buf, size_t n, const char*) const override {
    if (pos >= bytes_.size()) return 0;
    n = std::min<size_t>(n, bytes_.size() - pos);
    std::memcpy(buf, bytes_.data() + pos, n);
    return n;
  }

 private:
  const std::vector<char>& bytes_;
};

}  // namespace

c10::IValue read_torch_save(const std::vector<char>& bytes, const std::string& file) {
  check_declared_sizes(zip_directory_in_memory(std::string_view(bytes.data(), bytes.size())), bytes.size(), file,
                       "save the tensors again with torch.save");
  std::string rewrite_problem;
  try {
    caffe2::serialize::PyTorchStreamReader reader(std::make_shared<MemoryReader>(bytes));
    auto [data, size] = reader.getRecord("data.pkl");
    // The scan also refuses what would crash libtorch's unpickler or make it allocate what the stream does not
    // hold (nesting, lengths, memo indices: pickle_compat.hpp); its InputError passes through as it is.
    PickleRewrite pickle = rewrite_for_torch_unpickler(std::string(static_cast<const char*>(data.get()), size), file);
    rewrite_problem = pickle.stopped_at;
    size_t offset = 0;
    auto read = [&](char* buffer, size_t n) -> size_t {
      n = std::min(n, pickle.bytes.size() - offset);
      std::memcpy(buffer, pickle.bytes.data() + offset, n);
      offset += n;
      return n;
    };
    std::unordered_map<const void*, size_t> record_bytes;
    auto read_record = [&](const std::string& key) {
      auto [data, size] = reader.getRecord("data/" + key);
      record_bytes[data.get()] = size;
      return std::move(data);
    };
    torch::jit::Unpickler unpickler(read, nullptr, nullptr, read_record, c10::nullopt);
    unpickler.set_version(reader.version());
    c10::IValue value = unpickler.parse_ivalue();
    for_each_tensor(value, [&](const at::Tensor& t) {
      const auto record = t.has_storage() ? record_bytes.find(t.storage().data()) : record_bytes.end();
      check_tensor_backed(t, record == record_bytes.end() ? 0 : record->second, file, "save the tensors again with torch.save");
    });
    return value;
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    std::string reason = torch_error_reason(e);
    if (reason.find("central directory") != std::string::npos)
      throw InputError(file, "is in the legacy torch.save format or truncated",
                       "re-save it with torch.save(obj, path) from PyTorch >= 1.6 (zip format)");
    if (!rewrite_problem.empty()) reason += " (lite's pickle scan stopped at " + rewrite_problem + ")";
    throw InputError(file, "cannot read torch.save data: " + reason,
                     "save tensors only: a tensor, a dict or list of tensors, or a tuple (x, y)");
  }
}

}  // namespace lite::model
