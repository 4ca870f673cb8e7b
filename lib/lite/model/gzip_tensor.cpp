// Inflating a gzip-compressed .npy or idx file (MNIST ships its idx files as .gz) without trusting the stream:
// a 2 MB idx.gz can inflate to gigabytes, and reading "until the stream ends" grows until the process is
// killed.
//
// Algorithm: inflate in 64 KiB steps. Once the header is in (idx: 4 + 4 x dimensions bytes; .npy: its length
// field, at most kMaxHeadBytes), parse it with tensor_headers.cpp and take its declared size, header + data.
// That size is refused before the data is inflated when it exceeds what the compressed bytes can hold
// (kMaxDeflateRatio:1, deflate's own limit, summed over concatenated gzip members) or the caller's memory
// bound; the output then grows with what really inflates, up to the declared size; a stream that would go on
// past it is refused at the first byte too many, and one that ends short is a truncated file (the same message
// as the uncompressed form). So the bytes kept are at most what the header declares and what the input can
// back, and an uncompressed idx file and its .gz obey the same size check. inflate_tensor_file_to hands the
// bytes on in ~1 MiB pieces as they come (to a file on disk) and keeps none.
#include "lite/model/gzip_tensor.hpp"

#include <zlib.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>

#include "lite/core/error.hpp"
#include "lite/model/tensor_headers.hpp"
#include "lite/model/zip_members.hpp"

namespace lite::model {

namespace {

constexpr size_t kMaxHeadBytes = size_t(1) << 20;  // an .npy header longer than this is refused (numpy's are < 4 KiB)
constexpr const char* kRefetch = "download or save the file again";

// Header + data bytes the header in `head` declares; nullopt while `head` does not hold the whole header yet.
// `ended`: `head` is the whole file (a header it cuts short is then a truncated file).
std::optional<uint64_t> declared_size(std::string_view head, bool ended, TensorFormat format, const std::string& file) {
  const uint64_t file_size = ended ? head.size() : std::numeric_limits<uint64_t>::max();
  if (format == TensorFormat::idx) {
    if (!ended && (head.size() < 4 || head.size() < 4 + 4 * size_t(uint8_t(head[3])))) return std::nullopt;
    const TensorFileHeader h = parse_idx_header(head, file_size, file);
    return h.data_offset + h.data_bytes;
  }
  if (!ended) {
    if (head.size() < 8) return std::nullopt;
    const unsigned major = uint8_t(head[6]);
    if (std::memcmp(head.data(), "\x93NUMPY", 6) == 0 && major >= 1 && major <= 3) {
      const size_t length_bytes = major == 1 ? 2 : 4;
      if (head.size() < 8 + length_bytes) return std::nullopt;
      uint64_t header_len = 0;
      for (size_t i = 0; i < length_bytes; ++i) header_len |= uint64_t(uint8_t(head[8 + i])) << (8 * i);
      if (header_len > kMaxHeadBytes)
        throw InputError(file, fmt::format(".npy header of {} bytes, over the {} lite reads (a damaged header)",
                                           header_len, kMaxHeadBytes),
                         "save it again with numpy.save");
      if (head.size() < 8 + length_bytes + header_len) return std::nullopt;
    }
  }
  const TensorFileHeader h = parse_npy_header(head, file_size, file);
  return h.data_offset + h.data_bytes;
}

void check_declared(uint64_t declared, uint64_t compressed, uint64_t max_bytes, const std::string& file) {
  if (declared > compressed * kMaxDeflateRatio + 1024)
    throw InputError(file,
                     fmt::format("its header declares {} bytes, more than its {} compressed bytes can inflate to "
                                 "(deflate expands at most {}:1)",
                                 declared, compressed, kMaxDeflateRatio),
                     kRefetch);
  if (declared > max_bytes)
    throw InputError(file,
                     fmt::format("its header declares {:.1f} MB, over the {:.1f} MB data may take in memory (the "
                                 "data memory budget: half of the available memory)",
                                 double(declared) / 1e6, double(max_bytes) / 1e6),
                     "free memory or pass a smaller file");
}

class Inflater {
 public:
  explicit Inflater(const std::string& file) : file_(file) {
    if (inflateInit2(&z_, 15 + 16) != Z_OK) throw InputError(file, "cannot start zlib", "check the zlib installation");
  }
  ~Inflater() { inflateEnd(&z_); }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;

  // Inflates the next step of `gz` into `out` (at most kStep bytes); false once the input is used up.
  bool step(std::string_view gz, std::vector<char>& out) {
    if (z_.avail_in == 0 && fed_ < gz.size()) {
      const size_t n = std::min<size_t>(gz.size() - fed_, size_t(1) << 30);
      z_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data() + fed_));
      z_.avail_in = uInt(n);
      fed_ += n;
    }
    const size_t have = out.size();
    out.resize(have + kStep);
    z_.next_out = reinterpret_cast<Bytef*>(out.data() + have);
    z_.avail_out = uInt(kStep);
    const int rc = inflate(&z_, Z_NO_FLUSH);
    out.resize(out.size() - z_.avail_out);
    const size_t left = z_.avail_in + (gz.size() - fed_);
    if (rc == Z_STREAM_END) {
      // Another gzip member may follow (gzip -c a b > c); anything else after a member is ignored, as gzread does.
      const size_t next = gz.size() - left;
      if (left < 2 || uint8_t(gz[next]) != 0x1f || uint8_t(gz[next + 1]) != 0x8b) return false;
      inflateReset(&z_);
      return true;
    }
    if (rc == Z_BUF_ERROR) return false;  // no progress possible: the input ended inside a member
    if (rc != Z_OK)
      throw InputError(file_, std::string("corrupt gzip data (") + (z_.msg ? z_.msg : "inflate failed") + ")", kRefetch);
    return left > 0 || z_.avail_out == 0;
  }

  static constexpr size_t kStep = size_t(1) << 16;

 private:
  const std::string& file_;
  z_stream z_{};
  size_t fed_ = 0;
};

}  // namespace

std::vector<char> inflate_tensor_file(std::string_view gz, TensorFormat format, uint64_t max_bytes,
                                      const std::string& file) {
  Inflater inflater(file);
  std::vector<char> out;
  std::optional<uint64_t> declared;
  bool more = true;
  while (more) {
    more = inflater.step(gz, out);
    if (!declared && (declared = declared_size(std::string_view(out.data(), out.size()), false, format, file))) {
      check_declared(*declared, gz.size(), max_bytes, file);
      // Address space only until written; one step of slack so the last step does not reallocate.
      out.reserve(size_t(std::max<uint64_t>(*declared, out.size())) + Inflater::kStep);
    }
    if (declared && out.size() > *declared)
      throw InputError(file, fmt::format("inflates to more than the {} bytes its header declares", *declared), kRefetch);
  }
  // The whole stream is in: a header or data it cuts short is a truncated file (tensor_headers' message).
  declared_size(std::string_view(out.data(), out.size()), true, format, file);
  return out;
}

uint64_t declared_tensor_bytes(std::string_view gz, TensorFormat format, const std::string& file) {
  Inflater inflater(file);
  std::vector<char> head;
  for (bool more = true; more;) {
    more = inflater.step(gz, head);
    if (auto declared = declared_size(std::string_view(head.data(), head.size()), false, format, file)) {
      check_declared(*declared, gz.size(), std::numeric_limits<uint64_t>::max(), file);
      return *declared;
    }
  }
  return *declared_size(std::string_view(head.data(), head.size()), true, format, file);  // throws: truncated
}

uint64_t inflate_tensor_file_to(std::string_view gz, TensorFormat format, uint64_t max_bytes,
                                const std::function<void(const char*, size_t)>& sink, const std::string& file) {
  constexpr size_t kPiece = size_t(1) << 20;
  Inflater inflater(file);
  std::vector<char> piece;
  uint64_t handed = 0;
  std::optional<uint64_t> declared;
  bool more = true;
  while (more) {
    more = inflater.step(gz, piece);
    if (!declared && (declared = declared_size(std::string_view(piece.data(), piece.size()), false, format, file)))
      check_declared(*declared, gz.size(), max_bytes, file);
    if (declared && handed + piece.size() > *declared)
      throw InputError(file, fmt::format("inflates to more than the {} bytes its header declares", *declared), kRefetch);
    if (declared && piece.size() >= kPiece) {
      sink(piece.data(), piece.size());
      handed += piece.size();
      piece.clear();
    }
  }
  // A header the stream cuts short is a truncated file (tensor_headers' message); so is data cut short.
  if (!declared) declared_size(std::string_view(piece.data(), piece.size()), true, format, file);
  if (!piece.empty()) sink(piece.data(), piece.size());
  handed += piece.size();
  if (declared && handed < *declared)
    throw InputError(file, fmt::format("truncated {} data (it inflates to {} of the {} bytes its header declares)",
                                       format == TensorFormat::idx ? "idx" : ".npy", handed, *declared),
                     kRefetch);
  return handed;
}

}  // namespace lite::model
