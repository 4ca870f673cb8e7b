#include "lite/model/load.hpp"

#include <caffe2/serialize/inline_container.h>
#include <torch/version.h>

#include <chrono>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "lite/core/error.hpp"
#include "lite/core/json_input.hpp"
#include "lite/core/options.hpp"
#include "lite/core/sha256.hpp"
#include "lite/model/tensor_bounds.hpp"
#include "lite/model/torch_errors.hpp"
#include "lite/model/traced_ops.hpp"
#include "lite/model/zip_directory.hpp"

namespace fs = std::filesystem;

namespace lite::model {

namespace {

const char* kRescript = "script or trace the model, then save it with torch.jit.save";

std::string read_head(const fs::path& path, size_t n) {
  std::ifstream in(path, std::ios::binary);
  std::string buf(n, '\0');
  in.read(buf.data(), static_cast<std::streamsize>(n));
  buf.resize(static_cast<size_t>(in.gcount()));
  return buf;
}

// Whether the file ends with a zip end record (zip_directory.hpp): a file cut short by an interrupted copy has none.
bool has_zip_end_record(const fs::path& path, uint64_t size) {
  uint64_t tail = std::min<uint64_t>(size, kEndRecordSearchBytes);
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(size - tail));
  std::string buf(tail, '\0');
  in.read(buf.data(), static_cast<std::streamsize>(tail));
  buf.resize(static_cast<size_t>(in.gcount()));
  return find_end_record(buf) != std::string_view::npos;
}

std::string record_text(caffe2::serialize::PyTorchStreamReader& reader, const std::string& name) {
  auto [data, size] = reader.getRecord(name);
  return std::string(static_cast<const char*>(data.get()), size);
}

// A model saved after torch.jit.optimize_for_inference holds MKLDNN weight constants that
// torch.jit.save does not serialize (PyTorch 1.13): no PyTorch can load the file again.
bool has_unserialized_mkldnn_constants(const fs::path& path) {
  try {
    caffe2::serialize::PyTorchStreamReader reader(path.string());
    for (const auto& r : reader.getAllRecords())
      if (r.rfind("code/", 0) == 0 && r.size() > 3 && r.compare(r.size() - 3, 3, ".py") == 0 &&
          record_text(reader, r).find("ConstantMKLDNNTensor") != std::string::npos)
        return true;
  } catch (const c10::Error&) {
  }
  return false;
}

[[noreturn]] void throw_load_failure(const fs::path& path, const std::string& reason) {
  if (has_unserialized_mkldnn_constants(path))
    throw InputError(path.string(),
                     "was saved after torch.jit.optimize_for_inference, whose MKLDNN weights torch.jit.save does not "
                     "store, so no PyTorch can load it",
                     "save the model after torch.jit.freeze only, and call optimize_for_inference after loading");
  throw InputError(path.string(), "libtorch cannot load it: " + reason,
                   "re-export it with torch.jit.save from PyTorch <= 1.13 (this lite uses libtorch " TORCH_VERSION ")");
}

// check_torchscript_archive's checks; returns the archive's zip directory, read once.
std::vector<ZipDirectoryEntry> checked_archive_directory(const fs::path& path) {
  std::error_code ec;
  const std::string file = path.string();
  if (!fs::exists(path, ec)) throw InputError(file, "no such file", "check the path");
  if (fs::is_directory(path, ec)) throw InputError(file, "is a directory, not a model file", "pass the .pt file");
  uint64_t size = fs::file_size(path, ec);
  if (ec) throw InputError(file, "cannot read file: " + ec.message(), "check the path and its permissions");
  if (size == 0) throw InputError(file, "is empty", "re-export the model with torch.jit.save");
  std::ifstream probe(path, std::ios::binary);
  if (!probe) throw InputError(file, "cannot open file for reading", "check its permissions");

  std::string head = read_head(path, 8);
  if (head.rfind("PK\x03\x04", 0) != 0) {
    if (!head.empty() && static_cast<unsigned char>(head[0]) == 0x80)
      throw InputError(file, "is a legacy (pre-1.6) torch.save pickle, not a TorchScript archive", kRescript);
    if (path.extension() == ".onnx")
      throw InputError(file, "is an ONNX model; lite reads TorchScript",
                       "export a TorchScript model from the PyTorch source with torch.jit.script or torch.jit.trace");
    throw InputError(file, "is not a TorchScript archive (no zip header)", "pass a file written by torch.jit.save");
  }
  if (!has_zip_end_record(path, size))
    throw InputError(file, "archive is truncated (no zip central directory)",
                     "copy the file again or re-save it with torch.jit.save");
  // libtorch allocates each record at the size the directory declares before reading it: a 1 KiB file could
  // ask for 4 GiB. Only sizes the archive's bytes can back get that far.
  std::vector<ZipDirectoryEntry> directory = zip_directory(file);
  check_declared_sizes(directory, size, file, "copy the file again or re-save it with torch.jit.save");

  std::vector<std::string> records;
  try {
    caffe2::serialize::PyTorchStreamReader reader(file);
    records = reader.getAllRecords();
    bool has_code = false, has_constants = false, has_data = false;
    for (const auto& r : records) {
      has_code = has_code || r.rfind("code/", 0) == 0;
      has_constants = has_constants || r == "constants.pkl";
      has_data = has_data || r == "data.pkl";
    }
    if (has_data && !has_code && !has_constants) {
      // torch.save output. A state_dict pickles collections.OrderedDict; a whole module pickles its class.
      std::string pickle = record_text(reader, "data.pkl");
      if (pickle.find("collections\nOrderedDict") != std::string::npos && pickle.find("torch.nn.modules") == std::string::npos)
        throw InputError(file, "is a state_dict saved with torch.save, not a TorchScript model",
                         std::string("load it into the model class in Python, ") + kRescript);
      if (pickle.find("torch.nn.modules") != std::string::npos || pickle.find("__main__") != std::string::npos)
        throw InputError(file, "is a pickled nn.Module saved with torch.save, not a TorchScript model", kRescript);
      throw InputError(file, "was written by torch.save (tensors or Python objects), not torch.jit.save", kRescript);
    }
    if (!has_code)
      throw InputError(file, "zip archive holds no TorchScript code (no code/ folder)", "pass a file written by torch.jit.save");
  } catch (const c10::Error& e) {
    throw InputError(file, "archive is damaged: " + first_line(e.what_without_backtrace()),
                     "copy the file again or re-save it with torch.jit.save");
  }
  return directory;
}

// The shapes a model's lite.json declares for its inputs: untrusted like a flag's value. What lite cannot use is
// kept as a problem, reported only where no --input replaces the declaration (a model whose record is odd but whose
// inputs the user gives still runs).
void read_declared_inputs(const nlohmann::json& inputs, LoadedModel& m) {
  const auto forward = m.module.find_method("forward");
  const size_t takes = forward ? forward->function().getSchema().arguments().size() - 1 : 0;
  try {
    if (!inputs.is_array())
      throw UsageError(fmt::format("\"inputs\" is {}, not a list of input shapes", inputs.type_name()));
    if (inputs.size() > takes)  // checked before any is read: 200,000 declared inputs grew to 11 GB
      throw UsageError(fmt::format("\"inputs\" lists {} inputs, but the model's forward takes {}", inputs.size(), takes));
    m.declared_inputs = inputs.get<std::vector<InputSpec>>();
  } catch (const Error& e) {  // e.g. a negative or fractional dimension, a shape too large to allocate
    m.declared_inputs.clear();
    const std::string message = e.what();
    m.declared_inputs_problem = message.substr(0, message.find("; "));  // the problem, without its fix
  } catch (const nlohmann::json::exception& e) {
    m.declared_inputs.clear();
    m.declared_inputs_problem = "\"inputs\" cannot be read: " + std::string(e.what());
  }
}

}  // namespace

void check_torchscript_archive(const fs::path& path) { checked_archive_directory(path); }

LoadedModel load_model(const fs::path& path) {
  const std::vector<ZipDirectoryEntry> directory = checked_archive_directory(path);
  LoadedModel m;
  m.path = path;
  m.file_bytes = fs::file_size(path);
  m.sha256 = sha256_file(path);
  // libtorch inflates an extra file whole, at whatever size the archive declares (a crafted lite.json of 1.5 GiB,
  // deflated, was read at 3.8 GB RSS): one declared larger than any JSON lite reads is left unread, as if absent.
  torch::jit::ExtraFilesMap extra;
  bool provenance_fits = true;
  const std::string provenance_member = std::string("/extra/") + kProvenanceFile;
  for (const auto& entry : directory)
    if (entry.name.size() >= provenance_member.size() &&
        entry.name.compare(entry.name.size() - provenance_member.size(), std::string::npos, provenance_member) == 0)
      provenance_fits = provenance_fits && entry.size <= kMaxJsonFileBytes;
  if (provenance_fits) extra[kProvenanceFile] = "";
  auto start = std::chrono::steady_clock::now();
  try {
    m.module = torch::jit::load(path.string(), torch::kCPU, extra);
  } catch (const std::exception& e) {  // c10::Error, and the IR importer's own exception types
    throw_load_failure(path, torch_error_reason(e));
  }
  m.load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  check_module_tensors_backed(m.module, path.string(), "re-save the model with torch.jit.save");
  normalize_traced_convolutions(m.module);  // a traced model's layers, seen as a scripted copy's (traced_ops.hpp)
  m.module.eval();
  const std::string meta = provenance_fits ? extra[kProvenanceFile] : std::string();
  if (!meta.empty()) {
    try {  // inside a user's model file: bounded depth, no repeated keys (core/json_input.hpp)
      m.provenance = parse_json_input(meta, path.string() + " (lite.json)", "re-save the model without it");
    } catch (const InputError&) {
      m.provenance = nullptr;  // an unreadable record of what was done is treated as none
    }
    if (m.provenance.is_object() && m.provenance.contains("inputs"))
      read_declared_inputs(m.provenance["inputs"], m);
  }
  return m;
}

}  // namespace lite::model
