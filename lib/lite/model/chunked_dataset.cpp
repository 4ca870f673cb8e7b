// Chunked reading of .npy and uncompressed idx files (see chunked_dataset.hpp): the header gives the offset
// of record 0 and the bytes of one record, so samples [b, b + n) are one pread of n records. The header
// parsers here read only a file's first bytes; they mirror dataset.cpp's whole-file parsers (same
// dtypes, same messages) without needing the file in memory.
#include "lite/model/chunked_dataset.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/core/text.hpp"

namespace fs = std::filesystem;

namespace lite::model {

// Named, not anonymous: lite_model is a unity build, and dataset.cpp's anonymous helpers share its unit.
namespace chunked_io {

bool name_ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool idx_name(const std::string& name) {
  return name.find("idx") != std::string::npos || name.find("-ubyte") != std::string::npos;
}

uint32_t big_endian32(const char* p) {
  return (uint32_t(uint8_t(p[0])) << 24) | (uint32_t(uint8_t(p[1])) << 16) | (uint32_t(uint8_t(p[2])) << 8) |
         uint32_t(uint8_t(p[3]));
}

// The .npy header in `head` (the file's first bytes): dtype, shape, where the data starts.
RecordLayout npy_layout(const fs::path& path, const std::string& head) {
  const std::string file = path.string();
  if (head.size() < 10 || std::memcmp(head.data(), "\x93NUMPY", 6) != 0)
    throw InputError(file, "not a .npy file (missing \\x93NUMPY magic)", "save it with numpy.save");
  const uint8_t major = uint8_t(head[6]);
  size_t header_len = 0, offset = 10;
  if (major == 1) {
    header_len = uint8_t(head[8]) | (size_t(uint8_t(head[9])) << 8);
  } else {
    if (head.size() < 12) throw InputError(file, "truncated .npy header", "save it again with numpy.save");
    for (int i = 0; i < 4; ++i) header_len |= size_t(uint8_t(head[8 + i])) << (8 * i);
    offset = 12;
  }
  if (offset + header_len > head.size()) throw InputError(file, "truncated .npy header", "save it again with numpy.save");
  const std::string header = head.substr(offset, header_len);
  auto field = [&](const std::string& key) {
    auto pos = header.find("'" + key + "'");
    if (pos == std::string::npos) throw InputError(file, ".npy header has no '" + key + "'", "save it with numpy.save");
    return header.substr(header.find(':', pos) + 1);
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
  for (const auto& part : split(shape_text, ','))
    if (!trim(part).empty()) shape.push_back(std::stoll(trim(part)));
  static const std::vector<std::pair<std::string, torch::ScalarType>> dtypes = {
      {"<f4", torch::kFloat32}, {"<f8", torch::kFloat64}, {"<f2", torch::kFloat16}, {"<i8", torch::kInt64},
      {"<i4", torch::kInt32},   {"|u1", torch::kUInt8},   {"|i1", torch::kInt8},    {"|b1", torch::kBool}};
  RecordLayout l;
  bool known = false;
  std::vector<std::string> names;
  for (const auto& [name, type] : dtypes) {
    names.push_back(name);
    if (name == descr) l.dtype = type, known = true;
  }
  if (!known)
    throw InputError(file, "unsupported .npy dtype '" + descr + "' (known: " + join(names, ", ") + ")",
                     "convert it with a.astype(numpy.float32)");
  if (shape.empty()) throw InputError(file, "holds a scalar, not a batch of samples", "save an array [N, ...]");
  l.path = path;
  l.count = shape.front();
  l.shape.assign(shape.begin() + 1, shape.end());
  l.data_offset = offset + header_len;
  l.record_bytes = c10::elementSize(l.dtype);
  for (auto d : l.shape) l.record_bytes *= uint64_t(d);
  return l;
}

RecordLayout idx_layout(const fs::path& path, const std::string& head) {
  const std::string file = path.string();
  if (head.size() < 4 || head[0] != 0 || head[1] != 0)
    throw InputError(file, "not an idx file (bad magic number)", "pass an MNIST-style idx file (.idx or -ubyte, .gz ok)");
  if (uint8_t(head[2]) != 0x08)
    throw InputError(file, "idx element type is not unsigned byte", "only uint8 idx files are supported");
  const int ndim = uint8_t(head[3]);
  if (ndim < 1 || head.size() < size_t(4 + 4 * ndim)) throw InputError(file, "truncated idx header", "download the file again");
  RecordLayout l;
  l.path = path;
  l.idx = true;
  l.dtype = torch::kUInt8;
  l.count = big_endian32(head.data() + 4);
  l.record_bytes = 1;
  for (int i = 1; i < ndim; ++i) {
    l.shape.push_back(big_endian32(head.data() + 4 + 4 * i));
    l.record_bytes *= uint64_t(l.shape.back());
  }
  l.data_offset = uint64_t(4 + 4 * ndim);
  return l;
}

std::string read_head(const fs::path& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string(), "cannot open file for reading", "check the path and its permissions");
  std::string head(max_bytes, '\0');
  in.read(head.data(), std::streamsize(max_bytes));
  head.resize(size_t(in.gcount()));
  return head;
}

// Labels are small (one value per sample): read whole, gzip-aware (zlib passes plain files through).
std::string read_whole_maybe_gzip(const fs::path& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw InputError(path.string(), "cannot open file for reading", "check the path and its permissions");
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) out.append(buf, size_t(n));
  gzclose(f);
  if (n < 0) throw InputError(path.string(), "corrupt gzip data", "download the file again");
  return out;
}

void check_complete(const RecordLayout& l, uint64_t available) {
  const uint64_t need = uint64_t(l.count) * l.record_bytes;
  if (available < l.data_offset || available - l.data_offset < need)
    throw InputError(l.path.string(),
                     fmt::format("truncated data ({} of {} bytes)", available > l.data_offset ? available - l.data_offset : 0, need),
                     l.idx ? "download the file again" : "save it again with numpy.save");
}

torch::Tensor read_labels(const fs::path& path) {
  const std::string name = path.filename().string();
  const std::string bytes = read_whole_maybe_gzip(path);
  RecordLayout l;
  if (name_ends_with(name, ".npy") || (bytes.size() >= 6 && std::memcmp(bytes.data(), "\x93NUMPY", 6) == 0))
    l = npy_layout(path, bytes);
  else if (idx_name(name))
    l = idx_layout(path, bytes);
  else
    throw InputError(path.string(), "labels of streamed data must be a .npy or idx file",
                     "save them with numpy.save, or raise {data_memory_mb} to load the data whole");
  check_complete(l, bytes.size());
  std::vector<int64_t> shape{l.count};
  shape.insert(shape.end(), l.shape.begin(), l.shape.end());
  auto t = torch::empty(shape, torch::TensorOptions().dtype(l.dtype));
  std::memcpy(t.data_ptr(), bytes.data() + l.data_offset, size_t(uint64_t(l.count) * l.record_bytes));
  return t;
}

}  // namespace chunked_io

std::optional<RecordLayout> record_layout(const fs::path& path) {
  using namespace chunked_io;
  std::error_code ec;
  const uint64_t size = fs::file_size(path, ec);
  if (ec || size == 0) return std::nullopt;  // load_dataset words these problems
  const std::string head = read_head(path, 1 << 20);
  const std::string name = path.filename().string();
  const bool gzip = head.size() >= 2 && uint8_t(head[0]) == 0x1f && uint8_t(head[1]) == 0x8b;
  std::optional<RecordLayout> l;
  if (name_ends_with(name, ".npy") || (head.size() >= 6 && std::memcmp(head.data(), "\x93NUMPY", 6) == 0))
    l = npy_layout(path, head);
  else if (idx_name(name) && !gzip)
    l = idx_layout(path, head);
  if (l) check_complete(*l, size);
  return l;
}

uint64_t sample_bytes_in_memory(const RecordLayout& l) {
  return l.idx ? l.record_bytes * sizeof(float) : l.record_bytes;
}

uint64_t default_data_memory_budget() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024 / 2;
  return uint64_t(2) << 30;
}

ChunkedDataset::ChunkedDataset(RecordLayout layout, const std::optional<fs::path>& labels, int64_t limit,
                               int64_t chunk_samples)
    : layout_(std::move(layout)) {
  const std::string file = layout_.path.string();
  if (layout_.count == 0) throw InputError(file, "holds no samples (first dimension is 0)", "pass a file with at least one sample");
  size_ = limit > 0 ? std::min(limit, layout_.count) : layout_.count;
  chunk_ = std::max<int64_t>(1, std::min(chunk_samples, size_));
  fd_ = ::open(layout_.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw InputError(file, "cannot open file for reading", "check the path and its permissions");
  if (!labels) return;
  std::error_code ec;
  if (!fs::exists(*labels, ec)) throw InputError(labels->string(), "no such file", "check the {labels} path");
  auto y = chunked_io::read_labels(*labels).flatten();
  if (y.size(0) != layout_.count)
    throw InputError(file, std::to_string(y.size(0)) + " labels for " + std::to_string(layout_.count) + " samples",
                     "pass one label per sample");
  if (y.is_floating_point() && !torch::equal(y, y.round()))
    throw InputError(file, "labels are not whole numbers", "store class indices (int64)");
  labels_ = y.narrow(0, 0, size_).to(torch::kInt64);
}

ChunkedDataset::~ChunkedDataset() {
  if (fd_ >= 0) ::close(fd_);
}

std::vector<int64_t> ChunkedDataset::sample_shape() const {
  std::vector<int64_t> shape = layout_.shape;
  if (layout_.idx && shape.size() == 2) shape.insert(shape.begin(), 1);  // [H, W] images gain a channel
  return shape;
}

torch::Tensor ChunkedDataset::read(int64_t begin, int64_t count) const {
  std::vector<int64_t> shape{count};
  shape.insert(shape.end(), layout_.shape.begin(), layout_.shape.end());
  auto raw = torch::empty(shape, torch::TensorOptions().dtype(layout_.dtype));
  char* out = static_cast<char*>(raw.data_ptr());
  const uint64_t total = uint64_t(count) * layout_.record_bytes;
  uint64_t done = 0;
  const uint64_t offset = layout_.data_offset + uint64_t(begin) * layout_.record_bytes;
  while (done < total) {
    const ssize_t n = ::pread(fd_, out + done, size_t(total - done), off_t(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw InputError(layout_.path.string(), n == 0 ? "ended early (truncated while reading)" : std::strerror(errno),
                       "check the file");
    done += uint64_t(n);
  }
  if (!layout_.idx) return raw;
  auto x = raw.to(torch::kFloat32).div_(255.0f);
  return layout_.shape.size() == 2 ? x.unsqueeze(1) : x;
}

Dataset ChunkedDataset::chunk(int64_t c) const {
  Dataset d;
  d.source = layout_.path;
  const int64_t begin = c * chunk_, count = std::min(chunk_, size_ - begin);
  d.x = read(begin, count);
  if (labels_) d.y = labels_->narrow(0, begin, count);
  return d;
}

const torch::Tensor& ChunkedDataset::cached_chunk(int64_t c) {
  for (const auto& [index, samples] : cache_)
    if (index == c) return samples;
  if (cache_.size() == 2) cache_.pop_front();
  cache_.emplace_back(c, read(c * chunk_, std::min(chunk_, size_ - c * chunk_)));
  return cache_.back().second;
}

torch::Tensor ChunkedDataset::gather(const torch::Tensor& indices) {
  auto idx = indices.to(torch::kInt64).contiguous();
  auto owner = idx.div(chunk_, "floor");
  const int64_t first = owner[0].item<int64_t>();
  if ((owner == first).all().item<bool>()) return cached_chunk(first).index_select(0, idx - first * chunk_);
  std::vector<int64_t> shape{idx.size(0)};
  for (auto d : sample_shape()) shape.push_back(d);
  auto out = torch::empty(shape, torch::TensorOptions().dtype(layout_.idx ? torch::kFloat32 : layout_.dtype));
  // Chunks in the order the batch first uses them: a chunk-major epoch order needs at most two.
  auto chunks = std::get<0>(torch::unique_consecutive(owner));
  for (int64_t i = 0; i < chunks.size(0); ++i) {
    const int64_t c = chunks[i].item<int64_t>();
    auto positions = (owner == c).nonzero().squeeze(1);
    const torch::Tensor& samples = cached_chunk(c);
    out.index_copy_(0, positions, samples.index_select(0, idx.index_select(0, positions) - c * chunk_));
  }
  return out;
}

double ChunkedDataset::scan(Progress& progress) const {
  ProgressPhase phase(progress, "reading " + layout_.path.filename().string(), uint64_t(chunks()));
  double sum = 0;
  for (int64_t c = 0; c < chunks(); ++c) {
    throw_if_interrupted();
    const int64_t begin = c * chunk_;
    auto x = read(begin, std::min(chunk_, size_ - begin));
    if (x.is_floating_point()) {
      auto finite = torch::isfinite(x);
      if (!finite.all().item<bool>()) {
        const int64_t bad = (~finite).sum().item<int64_t>();
        const int64_t first = (~finite).flatten().nonzero()[0].item<int64_t>() / (x.numel() / x.size(0));
        throw InputError(layout_.path.string(),
                         fmt::format("{} NaN/Inf values (first in sample {})", bad, begin + first),
                         "clean the data; NaN inputs make training and accuracy meaningless");
      }
    }
    sum += x.sum().item<double>();
    phase.advance();
  }
  return sum;
}

torch::Tensor chunk_major_order(int64_t n, int64_t chunk_samples, at::Generator& generator) {
  const int64_t chunks = (n + chunk_samples - 1) / chunk_samples;
  auto chunk_order = torch::randperm(chunks, generator, torch::TensorOptions().dtype(torch::kInt64));
  std::vector<torch::Tensor> parts;
  parts.reserve(size_t(chunks));
  for (int64_t i = 0; i < chunks; ++i) {
    const int64_t c = chunk_order[i].item<int64_t>();
    const int64_t begin = c * chunk_samples, len = std::min(chunk_samples, n - begin);
    parts.push_back(torch::randperm(len, generator, torch::TensorOptions().dtype(torch::kInt64)).add_(begin));
  }
  return torch::cat(parts);
}

}  // namespace lite::model
