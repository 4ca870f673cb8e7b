#pragma once
// Data read in chunks instead of loaded whole, for files whose records sit at fixed offsets: NumPy .npy
// (C order) and uncompressed idx. The header is parsed once; a chunk of consecutive samples is one pread
// into a tensor, converted the way load_dataset converts (idx images become float32 in [0, 1] with a
// channel dimension). Labels, one small value per sample, are read whole (.npy or idx, .gz allowed).
// Other formats (torch.save pickles) cannot be read at an offset: load_dataset reads them whole; a
// gzip-compressed .npy or idx file is read from its inflated copy (data_file.hpp, InflatedCopy).
//
// Shuffling a streamed set (chunk_major_order): the order of the chunks is permuted, then the samples
// within each chunk. An epoch thus reads every chunk once, with one pread, and a batch draws from at most
// two chunks, the two that ChunkedDataset::gather keeps in memory. The mixing is weaker than a full
// permutation (a batch holds samples of one or two neighbouring chunks), the usual price of streamed
// shuffling (a shuffle buffer or shards); with chunks of thousands of samples it matters little for
// data stored in random order. Both permutations come from the caller's seeded generator, so an epoch's
// order is reproducible and a resumed run sees the same batches.
#include <ATen/core/Generator.h>
#include <torch/torch.h>

#include <cstdint>
#include <deque>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include "lite/core/progress.hpp"
#include "lite/model/data_file.hpp"
#include "lite/model/dataset.hpp"

namespace lite::model {

struct RecordLayout {
  std::filesystem::path path;
  int64_t count = 0;                // records in the file
  std::vector<int64_t> shape;       // of one record, as stored
  torch::ScalarType dtype = torch::kUInt8;
  uint64_t data_offset = 0;         // where record 0 starts
  uint64_t record_bytes = 0;
  bool idx = false;                 // idx: uint8 images, converted on read
  std::filesystem::path read_from;  // where the records are read, when not `path` (an inflated copy of a .gz)
};

// The layout of `path` when it is a .npy file or an uncompressed idx file; nullopt for every other format.
// Throws InputError for a broken header or a file shorter than its header says.
std::optional<RecordLayout> record_layout(const std::filesystem::path& path);

// The layout of a gzip-compressed idx file whose samples would take more than `budget` bytes in memory, read
// from `copy`, which this fills with the inflated bytes (InflatedCopy: a temporary file, removed when `copy`
// goes; a ChunkedDataset built before then keeps reading it). nullopt, and `copy` left empty, for any other
// file and for one that fits the budget.
std::optional<RecordLayout> streamed_gzip_layout(const std::filesystem::path& path, uint64_t budget,
                                                 std::optional<InflatedCopy>& copy);

// Bytes one sample takes in memory once read and converted (idx: float32).
uint64_t sample_bytes_in_memory(const RecordLayout& layout);

// default_data_memory_budget(): data_file.hpp.

class ChunkedDataset {
 public:
  // The first `limit` samples (all when limit <= 0) in chunks of `chunk_samples`; labels from `labels`
  // (counted against the whole file, like load_dataset). Throws InputError for unreadable files and
  // label counts that differ.
  ChunkedDataset(RecordLayout layout, const std::optional<std::filesystem::path>& labels, int64_t limit,
                 int64_t chunk_samples);
  ~ChunkedDataset();
  ChunkedDataset(const ChunkedDataset&) = delete;
  ChunkedDataset& operator=(const ChunkedDataset&) = delete;

  int64_t size() const { return size_; }
  int64_t chunk_samples() const { return chunk_; }
  int64_t chunks() const { return (size_ + chunk_ - 1) / chunk_; }
  const std::filesystem::path& source() const { return layout_.path; }
  const std::optional<torch::Tensor>& labels() const { return labels_; }  // [size] int64
  std::vector<int64_t> sample_shape() const;  // after conversion

  // Samples [begin, begin + count), converted; one pread.
  torch::Tensor read(int64_t begin, int64_t count) const;
  // Chunk `c` with its labels, as a Dataset (for no-grad passes over the whole set).
  Dataset chunk(int64_t c) const;
  // The samples at `indices` (int64, in that order), read through a cache of the last two chunks.
  torch::Tensor gather(const torch::Tensor& indices);
  // Reads every chunk once: throws InputError for NaN/Inf values (naming the sample) and returns the sum
  // of all values (what a checkpoint records to recognise the data).
  double scan(Progress& progress) const;

 private:
  const torch::Tensor& cached_chunk(int64_t c);

  RecordLayout layout_;
  int fd_ = -1;
  int64_t size_ = 0, chunk_ = 1;
  std::optional<torch::Tensor> labels_;
  std::deque<std::pair<int64_t, torch::Tensor>> cache_;  // (chunk, samples), at most two
};

// An epoch's order over a streamed set of `n` samples in chunks of `chunk_samples`: the chunks permuted,
// then the samples within each (see the top of this file).
torch::Tensor chunk_major_order(int64_t n, int64_t chunk_samples, at::Generator& generator);

}  // namespace lite::model
