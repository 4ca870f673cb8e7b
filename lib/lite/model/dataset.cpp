#include "lite/model/dataset.hpp"

#include <zlib.h>

#include <cstring>
#include <fstream>

#include "lite/core/error.hpp"
#include "lite/core/text.hpp"
#include "lite/model/torch_errors.hpp"

namespace fs = std::filesystem;

namespace lite::model {

namespace {

std::vector<char> read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string(), "cannot open file for reading", "check the path and its permissions");
  return std::vector<char>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// gzip-aware read: zlib's gzread passes plain files through unchanged.
std::vector<char> read_maybe_gzip(const fs::path& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw InputError(path.string(), "cannot open file for reading", "check the path and its permissions");
  std::vector<char> out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) out.insert(out.end(), buf, buf + n);
  int err = 0;
  const char* msg = gzerror(f, &err);
  std::string problem = (n < 0 || err < 0) ? std::string(msg ? msg : "read error") : std::string();
  gzclose(f);
  if (!problem.empty()) throw InputError(path.string(), "corrupt gzip data (" + problem + ")", "download the file again");
  return out;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// ---- NumPy .npy (format version 1.0/2.0/3.0) ----
torch::Tensor parse_npy(const fs::path& path, const std::vector<char>& bytes) {
  const std::string file = path.string();
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
    throw InputError(file, "not a .npy file (missing \\x93NUMPY magic)", "save it with numpy.save");
  uint8_t major = static_cast<uint8_t>(bytes[6]);
  size_t header_len, offset;
  if (major == 1) {
    header_len = static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
    offset = 10;
  } else {
    if (bytes.size() < 12) throw InputError(file, "truncated .npy header", "save it again with numpy.save");
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= size_t(static_cast<uint8_t>(bytes[8 + i])) << (8 * i);
    offset = 12;
  }
  if (offset + header_len > bytes.size()) throw InputError(file, "truncated .npy header", "save it again with numpy.save");
  std::string header(bytes.data() + offset, header_len);
  auto field = [&](const std::string& key) -> std::string {
    auto pos = header.find("'" + key + "'");
    if (pos == std::string::npos) throw InputError(file, ".npy header has no '" + key + "'", "save it with numpy.save");
    pos = header.find(':', pos);
    return header.substr(pos + 1);
  };
  std::string descr = field("descr");
  descr = descr.substr(descr.find('\'') + 1);
  descr = descr.substr(0, descr.find('\''));
  if (trim(field("fortran_order")).rfind("True", 0) == 0)
    throw InputError(file, "Fortran-ordered arrays are not supported", "save numpy.ascontiguousarray(a) instead");
  std::string shape_text = field("shape");
  shape_text = shape_text.substr(shape_text.find('(') + 1);
  shape_text = shape_text.substr(0, shape_text.find(')'));
  std::vector<int64_t> shape;
  for (const auto& part : split(shape_text, ',')) {
    std::string t = trim(part);
    if (!t.empty()) shape.push_back(std::stoll(t));
  }
  static const std::vector<std::pair<std::string, torch::ScalarType>> dtypes = {
      {"<f4", torch::kFloat32}, {"<f8", torch::kFloat64}, {"<f2", torch::kFloat16}, {"<i8", torch::kInt64},
      {"<i4", torch::kInt32},   {"|u1", torch::kUInt8},   {"|i1", torch::kInt8},    {"|b1", torch::kBool}};
  std::optional<torch::ScalarType> type;
  std::vector<std::string> known;
  for (const auto& [name, t] : dtypes) {
    known.push_back(name);
    if (name == descr) type = t;
  }
  if (!type)
    throw InputError(file, "unsupported .npy dtype '" + descr + "' (known: " + join(known, ", ") + ")",
                     "convert it with a.astype(numpy.float32)");
  int64_t count = 1;
  for (auto d : shape) count *= d;
  size_t data_offset = offset + header_len;
  size_t need = size_t(count) * c10::elementSize(*type);
  if (bytes.size() - data_offset < need)
    throw InputError(file, "truncated .npy data (" + std::to_string(bytes.size() - data_offset) + " of " +
                               std::to_string(need) + " bytes)", "save it again with numpy.save");
  auto t = torch::empty(shape, torch::TensorOptions().dtype(*type));
  std::memcpy(t.data_ptr(), bytes.data() + data_offset, need);
  return t;
}

// ---- idx (MNIST) ----
uint32_t be32(const char* p) {
  return (uint32_t(uint8_t(p[0])) << 24) | (uint32_t(uint8_t(p[1])) << 16) | (uint32_t(uint8_t(p[2])) << 8) |
         uint32_t(uint8_t(p[3]));
}

torch::Tensor parse_idx(const fs::path& path, const std::vector<char>& bytes) {
  const std::string file = path.string();
  if (bytes.size() < 4 || bytes[0] != 0 || bytes[1] != 0)
    throw InputError(file, "not an idx file (bad magic number)", "pass an MNIST-style idx file (.idx or -ubyte, .gz ok)");
  uint8_t type_code = uint8_t(bytes[2]);
  int ndim = uint8_t(bytes[3]);
  if (type_code != 0x08) throw InputError(file, "idx element type is not unsigned byte", "only uint8 idx files are supported");
  if (bytes.size() < size_t(4 + 4 * ndim)) throw InputError(file, "truncated idx header", "download the file again");
  std::vector<int64_t> shape;
  int64_t count = 1;
  for (int i = 0; i < ndim; ++i) {
    shape.push_back(be32(bytes.data() + 4 + 4 * i));
    count *= shape.back();
  }
  size_t offset = 4 + 4 * ndim;
  if (bytes.size() - offset < size_t(count))
    throw InputError(file, "truncated idx data (" + std::to_string(bytes.size() - offset) + " of " +
                               std::to_string(count) + " bytes)", "download the file again");
  auto t = torch::empty(shape, torch::kUInt8);
  std::memcpy(t.data_ptr(), bytes.data() + offset, size_t(count));
  return t;
}

bool is_idx_name(const std::string& name) {
  return name.find("idx") != std::string::npos || name.find("-ubyte") != std::string::npos;
}

torch::Tensor require_tensor(const fs::path& path, const c10::IValue& v, const std::string& what) {
  if (!v.isTensor())
    throw InputError(path.string(), what + " is a " + v.tagKind() + ", not a tensor", "store a torch.Tensor");
  return v.toTensor();
}

Dataset from_pickle(const fs::path& path, const std::vector<char>& bytes) {
  const std::string file = path.string();
  c10::IValue v;
  try {
    v = torch::pickle_load(bytes);
  } catch (const std::exception& e) {
    std::string msg = torch_error_reason(e);
    if (msg.find("central directory") != std::string::npos)
      throw InputError(file, "is in the legacy torch.save format or truncated",
                       "re-save it with torch.save(obj, path) from PyTorch >= 1.6 (zip format)");
    throw InputError(file, "cannot read torch.save data: " + msg, "save a tensor or {'x': tensor, 'y': labels}");
  }
  Dataset d;
  d.source = path;
  if (v.isTensor()) {
    d.x = v.toTensor();
  } else if (v.isGenericDict()) {
    auto dict = v.toGenericDict();
    auto find = [&](std::initializer_list<const char*> keys) -> std::optional<c10::IValue> {
      for (const char* k : keys)
        for (const auto& item : dict)
          if (item.key().isString() && item.key().toStringRef() == k) return item.value();
      return std::nullopt;
    };
    auto x = find({"x", "inputs", "data", "images"});
    if (!x) throw InputError(file, "dict has no 'x' entry", "save {'x': inputs, 'y': labels}");
    d.x = require_tensor(path, *x, "'x'");
    if (auto y = find({"y", "labels", "targets"})) d.y = require_tensor(path, *y, "'y'");
  } else if (v.isTuple() || v.isList()) {
    std::vector<c10::IValue> items;
    if (v.isTuple())
      items = v.toTupleRef().elements().vec();
    else
      for (const auto& e : v.toListRef()) items.push_back(e);
    if (items.empty() || items.size() > 2)
      throw InputError(file, "holds a sequence of " + std::to_string(items.size()) + " items", "save (x, y) or {'x': x, 'y': y}");
    d.x = require_tensor(path, items[0], "item 0");
    if (items.size() == 2) d.y = require_tensor(path, items[1], "item 1");
  } else {
    throw InputError(file, "holds a " + v.tagKind() + ", not a tensor or a dict", "save {'x': inputs, 'y': labels}");
  }
  return d;
}

void validate(Dataset& d, const std::string& file) {
  if (!d.x.defined() || d.x.dim() == 0) throw InputError(file, "holds a scalar, not a batch of samples", "save a tensor [N, ...]");
  if (d.x.size(0) == 0) throw InputError(file, "holds no samples (first dimension is 0)", "pass a file with at least one sample");
  d.x = d.x.contiguous();
  if (d.x.is_floating_point()) {
    auto finite = torch::isfinite(d.x);
    if (!finite.all().item<bool>()) {
      int64_t bad = (~finite).sum().item<int64_t>();
      auto first = (~finite).flatten().nonzero()[0].item<int64_t>();
      int64_t per_sample = d.x.numel() / d.x.size(0);
      throw InputError(file, std::to_string(bad) + " NaN/Inf values (first in sample " + std::to_string(first / per_sample) + ")",
                       "clean the data; NaN inputs make calibration and accuracy meaningless");
    }
  }
  if (d.y) {
    auto y = d.y->flatten();
    if (y.size(0) != d.x.size(0))
      throw InputError(file, std::to_string(y.size(0)) + " labels for " + std::to_string(d.x.size(0)) + " samples",
                       "pass one label per sample");
    if (y.is_floating_point()) {
      if (!torch::equal(y, y.round())) throw InputError(file, "labels are not whole numbers", "store class indices (int64)");
    }
    d.y = y.to(torch::kInt64);
  }
}

}  // namespace

Dataset load_dataset(const fs::path& path, const std::optional<fs::path>& labels) {
  const std::string file = path.string();
  std::error_code ec;
  if (!fs::exists(path, ec)) throw InputError(file, "no such file", "check the path");
  if (fs::is_directory(path, ec)) throw InputError(file, "is a directory", "pass a data file");
  if (fs::file_size(path, ec) == 0) throw InputError(file, "is empty", "pass a file with at least one sample");

  const std::string name = path.filename().string();
  Dataset d;
  d.source = path;
  if (ends_with(name, ".npy")) {
    d.x = parse_npy(path, read_all(path));
  } else if (is_idx_name(name)) {
    d.x = parse_idx(path, read_maybe_gzip(path));
    // Images become float [0,1] with a channel dimension, the form a CNN trained on them expects.
    if (d.x.dim() == 3) d.x = d.x.unsqueeze(1);
    d.x = d.x.to(torch::kFloat32).div_(255.0f);
  } else {
    auto bytes = read_all(path);
    if (bytes.size() >= 4 && std::memcmp(bytes.data(), "PK\x03\x04", 4) == 0) {
      d = from_pickle(path, bytes);
    } else if (bytes.size() >= 6 && std::memcmp(bytes.data(), "\x93NUMPY", 6) == 0) {
      d.x = parse_npy(path, bytes);
    } else if (bytes.size() >= 2 && uint8_t(bytes[0]) == 0x1f && uint8_t(bytes[1]) == 0x8b) {
      throw InputError(file, "is gzip-compressed but not named like an idx file",
                       "name MNIST idx files *-idx3-ubyte.gz, or decompress it");
    } else {
      throw InputError(file, "unknown data format",
                       "pass a torch.save file (tensor or {'x','y'} dict), a .npy file, or idx files with {labels}");
    }
  }
  if (labels) {
    if (d.y) throw InputError(labels->string(), "the data file already carries labels", "drop {labels}");
    std::error_code lec;
    if (!fs::exists(*labels, lec)) throw InputError(labels->string(), "no such file", "check the {labels} path");
    Dataset l;
    std::string lname = labels->filename().string();
    if (ends_with(lname, ".npy"))
      l.x = parse_npy(*labels, read_all(*labels));
    else if (is_idx_name(lname))
      l.x = parse_idx(*labels, read_maybe_gzip(*labels));
    else
      l = from_pickle(*labels, read_all(*labels));
    d.y = l.x;
  }
  validate(d, file);
  return d;
}

Dataset take_first(const Dataset& d, int64_t n) {
  if (n <= 0 || n >= d.size()) return d;
  Dataset out;
  out.source = d.source;
  out.x = d.x.narrow(0, 0, n);
  if (d.y) out.y = d.y->narrow(0, 0, n);
  return out;
}

std::pair<torch::Tensor, std::optional<torch::Tensor>> batch_of(const Dataset& d, int64_t begin, int64_t batch) {
  int64_t len = std::min(batch, d.size() - begin);
  std::optional<torch::Tensor> y;
  if (d.y) y = d.y->narrow(0, begin, len);
  return {d.x.narrow(0, begin, len), y};
}

}  // namespace lite::model
