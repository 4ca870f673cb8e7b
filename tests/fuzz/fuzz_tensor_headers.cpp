// Fuzz target: the .npy and idx header parsers (lib/lite/model/tensor_headers.cpp, torch-free, compiled in), and
// the bounded gzip inflation of .npy/idx files in front of them (gzip_tensor.cpp, with zlib).
// Input: a file's bytes; both parsers see it, once whole and once as a chunked reader sees a big file (the first
// half of the bytes as the head of a file twice as long); then the bytes as a gzip-compressed idx and .npy file.
// Invariants: a parser rejects input only with InputError; an accepted header's dimensions are >= 0, its
// data_bytes is the element size times their product, the data lies inside the file (data_offset + data_bytes
// <= file size, no wrap), the header lies inside the head, and record_bytes() divides data_bytes (it is 0 only
// for a 0 among a record's dimensions: a [4, 0] array is valid). Inflating rejects input only with InputError,
// and what it returns is at most the memory bound and 1032 times the compressed bytes (+ 1024), and is exactly
// the header plus the data the header declares.
#include <string>
#include <string_view>

#include "fuzz_common.hpp"
#include "lite/model/gzip_tensor.hpp"
#include "lite/model/tensor_headers.hpp"

namespace {

using lite::model::TensorFileHeader;

void check(const TensorFileHeader& h, std::string_view head, uint64_t file_size) {
  unsigned __int128 product = lite::model::element_bytes(h.element);
  for (const int64_t d : h.shape) {
    fuzz::require(d >= 0, "dimensions are >= 0");
    product *= uint64_t(d);
    if (product > (unsigned __int128)(uint64_t(1) << 63)) product = (unsigned __int128)(uint64_t(1) << 63) + 1;
  }
  fuzz::require(product == h.data_bytes, "data_bytes is the element size times the dimensions");
  fuzz::require(h.data_offset <= head.size(), "the header lies inside the bytes read");
  fuzz::require(h.data_offset <= file_size && h.data_bytes <= file_size - h.data_offset, "the data lies in the file");
  const uint64_t record = h.record_bytes();
  bool empty_record = false;
  for (size_t i = 1; i < h.shape.size(); ++i) empty_record = empty_record || h.shape[i] == 0;
  fuzz::require((record == 0) == empty_record, "a record is empty only when a dimension after the first is 0");
  if (record > 0) fuzz::require(h.data_bytes % record == 0, "records tile the data");
}

void parse_both(std::string_view head, uint64_t file_size) {
  fuzz::expect_clean([&] { check(lite::model::parse_npy_header(head, file_size, "fuzz.npy"), head, file_size); });
  fuzz::expect_clean([&] { check(lite::model::parse_idx_header(head, file_size, "fuzz-idx"), head, file_size); });
}

constexpr uint64_t kInflateBound = uint64_t(64) << 20;  // under fuzz.sh's -rss_limit_mb

void inflate_both(std::string_view gz) {
  using lite::model::TensorFormat;
  for (const TensorFormat format : {TensorFormat::idx, TensorFormat::npy}) {
    fuzz::expect_clean([&] {
      const auto out = lite::model::inflate_tensor_file(gz, format, kInflateBound, "fuzz.gz");
      fuzz::require(out.size() <= kInflateBound, "inflating stays within the memory bound");
      fuzz::require(out.size() <= uint64_t(gz.size()) * 1032 + 1024, "inflating stays within 1032:1");
      const std::string_view all(out.data(), out.size());
      const TensorFileHeader h = format == TensorFormat::idx ? lite::model::parse_idx_header(all, out.size(), "f")
                                                             : lite::model::parse_npy_header(all, out.size(), "f");
      fuzz::require(h.data_offset + h.data_bytes == out.size(), "inflating stops at the declared size");
    });
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  parse_both(bytes, bytes.size());
  parse_both(std::string_view(bytes).substr(0, bytes.size() / 2), uint64_t(bytes.size()) * 2);
  inflate_both(bytes);
  return 0;
}
