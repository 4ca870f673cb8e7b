// Chunked reading of .npy and uncompressed idx files (see chunked_dataset.hpp): the header gives the offset
// of record 0 and the bytes of one record, so samples [b, b + n) are one pread of n records. The headers are
// parsed from a file's first bytes by tensor_headers.cpp, the parser dataset.cpp's whole-file reader uses too
// (same dtypes, same messages, sizes checked against the whole file's size), and the format is chosen by the
// table dataset.cpp chooses by (data_format.hpp).
#include "lite/model/chunked_dataset.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/model/data_file.hpp"
#include "lite/model/data_format.hpp"
#include "lite/model/tensor_dtype.hpp"
#include "lite/model/tensor_headers.hpp"

namespace fs = std::filesystem;

namespace lite::model {

// Named, not anonymous: lite_model is a unity build, and dataset.cpp's anonymous helpers share its unit.
namespace chunked_io {

bool named_idx(const fs::path& path) { return data_format_by_name(path.filename().string()) == DataFormat::idx; }

// A parsed header as records: the first dimension counts them, the rest is one record's shape.
RecordLayout layout_of(const fs::path& path, const TensorFileHeader& h, bool idx) {
  if (h.shape.empty()) throw InputError(path.string(), "holds a scalar, not a batch of samples", "save an array [N, ...]");
  RecordLayout l;
  l.path = path;
  l.idx = idx;
  l.dtype = scalar_type_of(h.element);
  l.count = h.shape.front();
  l.shape.assign(h.shape.begin() + 1, h.shape.end());
  l.data_offset = h.data_offset;
  l.record_bytes = h.record_bytes();
  return l;
}

RecordLayout npy_layout(const fs::path& path, const std::string& head, uint64_t file_size) {
  return layout_of(path, parse_npy_header(head, file_size, path.string()), false);
}

RecordLayout idx_layout(const fs::path& path, const std::string& head, uint64_t file_size) {
  return layout_of(path, parse_idx_header(head, file_size, path.string()), true);
}

std::string read_head(const fs::path& path, size_t max_bytes) {
  require_regular_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string(), "cannot open file for reading", "check the path and its permissions");
  std::string head(max_bytes, '\0');
  in.read(head.data(), std::streamsize(max_bytes));
  head.resize(size_t(in.gcount()));
  return head;
}

// Labels are small (one value per sample): read whole; a .gz is inflated no further than its header declares
// and within the data memory budget (data_file.hpp).
std::string read_whole_maybe_gzip(const fs::path& path) {
  const TensorFormat format = named_idx(path) ? TensorFormat::idx : TensorFormat::npy;
  const std::vector<char> bytes = read_tensor_file_maybe_gzip(path, format, default_data_memory_budget());
  return std::string(bytes.begin(), bytes.end());
}

torch::Tensor read_labels(const fs::path& path) {
  const std::string bytes = read_whole_maybe_gzip(path);
  const std::optional<DataFormat> format = data_format_of(path.filename().string(), bytes);
  RecordLayout l;
  if (format == DataFormat::npy)
    l = npy_layout(path, bytes, bytes.size());
  else if (format == DataFormat::idx)
    l = idx_layout(path, bytes, bytes.size());
  else
    throw InputError(path.string(), "labels of streamed data must be a .npy or idx file",
                     "save them with numpy.save, or raise {data_memory_mb} to load the data whole");
  std::vector<int64_t> shape{l.count};
  shape.insert(shape.end(), l.shape.begin(), l.shape.end());
  auto t = torch::empty(shape, torch::TensorOptions().dtype(l.dtype));
  const uint64_t need = uint64_t(l.count) * l.record_bytes;  // checked against the size by the header parser
  if (need > 0) std::memcpy(t.data_ptr(), bytes.data() + l.data_offset, size_t(need));
  return t;
}

}  // namespace chunked_io

std::optional<RecordLayout> record_layout(const fs::path& path) {
  using namespace chunked_io;
  std::error_code ec;
  const uint64_t size = fs::file_size(path, ec);
  if (ec || size == 0) return std::nullopt;  // load_dataset words these problems
  const std::string head = read_head(path, 1 << 20);
  const std::optional<DataFormat> format = data_format_of(path.filename().string(), head);
  std::optional<RecordLayout> l;
  if (format == DataFormat::npy)
    l = npy_layout(path, head, size);
  else if (format == DataFormat::idx && !starts_gzip(head))
    l = idx_layout(path, head, size);
  return l;
}

std::optional<RecordLayout> streamed_gzip_layout(const fs::path& path, uint64_t budget, std::optional<InflatedCopy>& copy) {
  using namespace chunked_io;
  if (!named_idx(path) || !is_gzip_file(path)) return std::nullopt;
  const std::vector<char> gz = read_data_file(path);
  const uint64_t declared = declared_tensor_bytes(std::string_view(gz.data(), gz.size()), TensorFormat::idx, path.string());
  if (declared * sizeof(float) <= budget) return std::nullopt;  // idx bytes become float32 in memory
  copy.emplace(path, TensorFormat::idx);
  std::optional<RecordLayout> layout = record_layout(copy->path());
  if (layout) {
    layout->read_from = copy->path();
    layout->path = path;
  }
  return layout;
}

uint64_t sample_bytes_in_memory(const RecordLayout& l) {
  return l.idx ? l.record_bytes * sizeof(float) : l.record_bytes;
}

ChunkedDataset::ChunkedDataset(RecordLayout layout, const std::optional<fs::path>& labels, int64_t limit,
                               int64_t chunk_samples)
    : layout_(std::move(layout)) {
  const std::string file = layout_.path.string();
  if (layout_.count == 0) throw InputError(file, "holds no samples (first dimension is 0)", "pass a file with at least one sample");
  size_ = limit > 0 ? std::min(limit, layout_.count) : layout_.count;
  chunk_ = std::max<int64_t>(1, std::min(chunk_samples, size_));
  fd_ = ::open((layout_.read_from.empty() ? layout_.path : layout_.read_from).c_str(), O_RDONLY | O_CLOEXEC);
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
