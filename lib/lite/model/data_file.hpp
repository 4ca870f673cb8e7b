#pragma once
// Where a data path (--data, --calib, --eval, --labels, --input-file) becomes bytes: the regular-file check and
// the whole-file reads, bounded by what the file really holds. Torch-free; see data_file.cpp.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "lite/core/interrupt.hpp"
#include "lite/model/gzip_tensor.hpp"

namespace lite::model {

// Throws InputError for a path that is missing, a directory, or not a regular file (a device such as /dev/zero
// or /dev/urandom, a FIFO, a socket: reading one never ends, or blocks).
void require_regular_file(const std::filesystem::path& path);

// The whole file, after require_regular_file.
std::vector<char> read_data_file(const std::filesystem::path& path);

// The whole file, after require_regular_file; when it is gzip-compressed, inflated as an .npy or idx file of
// `format` within the bounds of inflate_tensor_file (gzip_tensor.hpp).
std::vector<char> read_tensor_file_maybe_gzip(const std::filesystem::path& path, TensorFormat format,
                                              uint64_t max_inflated_bytes);

// True when the file starts with gzip's magic bytes (1f 8b).
bool is_gzip_file(const std::filesystem::path& path);

// A gzip-compressed .npy or idx file inflated once into a temporary file in TMPDIR (named
// lite-inflated-XXXXXX-<name without .gz>), so that it can be read at an offset like its uncompressed form: data
// over the memory budget then streams in chunks. The copy is removed when this object goes (a reader that
// opened it keeps reading), and on a forced exit after a signal. Throws InputError for what
// inflate_tensor_file refuses, and when TMPDIR has no room for the declared size.
class InflatedCopy {
 public:
  InflatedCopy(const std::filesystem::path& gz, TensorFormat format);
  ~InflatedCopy();
  InflatedCopy(const InflatedCopy&) = delete;
  InflatedCopy& operator=(const InflatedCopy&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::unique_ptr<TemporaryFileGuard> guard_;
};

// Half of MemAvailable (/proc/meminfo): the default memory budget for data (2 GiB when unknown).
uint64_t default_data_memory_budget();

}  // namespace lite::model
