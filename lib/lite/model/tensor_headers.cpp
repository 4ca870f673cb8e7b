// Parses the headers of NumPy .npy and idx (MNIST) files, torch-free, for the whole-file reader (dataset.cpp)
// and the chunked one (chunked_dataset.cpp), which used to carry a copy each.
//
// .npy (numpy/lib/format.py): "\x93NUMPY", major and minor version, the header length (2 bytes little-endian
// in version 1.0, 4 bytes in 2.0 and 3.0), then a Python dict literal such as
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with spaces and a '\n'; the data follows
// in C order. The dict is parsed as the small literal grammar numpy writes (quoted strings, True/False, tuples
// of whole numbers), not searched for substrings: a key inside another key's string, a number past 64 bits or
// a negative dimension is a clean error rather than a std::stoll exception or a wrapped size.
// idx: two zero bytes, a type code (0x08 unsigned byte, ...), the number of dimensions, then each dimension as
// a 32-bit big-endian count; the data follows.
// Both: the byte count is the product of the dimensions and the element size, each step checked for
// overflow (zero dimensions are skipped in the check, so every partial product a reader forms fits too), and
// it is compared with what the file holds after the header, so a reader may allocate data_bytes knowing the
// file has them.
#include "lite/model/tensor_headers.hpp"

#include <fmt/format.h>

#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#include "lite/core/error.hpp"

namespace lite::model {

namespace {

struct ElementName {
  const char* npy;
  ElementType type;
  size_t bytes;
};
constexpr ElementName kElements[] = {
    {"<f4", ElementType::float32, 4}, {"<f8", ElementType::float64, 8}, {"<f2", ElementType::float16, 2},
    {"<i8", ElementType::int64, 8},   {"<i4", ElementType::int32, 4},   {"|u1", ElementType::uint8, 1},
    {"|i1", ElementType::int8, 1},    {"|b1", ElementType::boolean, 1}};

constexpr const char* kNpyFix = "save it again with numpy.save";
constexpr const char* kIdxFix = "download the file again";

// Text quoted from a hostile header into a message: at most 32 bytes.
std::string excerpt(std::string_view s) {
  return "'" + std::string(s.substr(0, 32)) + (s.size() > 32 ? "...'" : "'");
}

// The dict literal of an .npy header.
class NpyDict {
 public:
  NpyDict(std::string_view text, const std::string& file) : s_(text), file_(file) {}

  std::optional<std::string> descr;
  std::optional<bool> fortran_order;
  std::optional<std::vector<int64_t>> shape;

  void parse() {
    expect('{', "expected '{'");
    while (!eat('}')) {
      const std::string key = string_literal();
      expect(':', "expected ':' after a key");
      if (key == "descr" && !descr) {
        descr = string_literal();
      } else if (key == "fortran_order" && !fortran_order) {
        if (word("True")) fortran_order = true;
        else if (word("False")) fortran_order = false;
        else fail("fortran_order is not True or False");
      } else if (key == "shape" && !shape) {
        shape = tuple();
      } else {
        fail((descr && key == "descr") || (fortran_order && key == "fortran_order") || (shape && key == "shape")
                 ? "key " + excerpt(key) + " given twice"
                 : "unknown key " + excerpt(key));
      }
      if (!eat(',')) {
        expect('}', "expected ',' or '}'");
        break;
      }
    }
    skip_space();
    if (at_ != s_.size()) fail("text after the closing '}'");
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(file_, "malformed .npy header (" + what + ")", kNpyFix);
  }
  void skip_space() {
    while (at_ < s_.size() && (s_[at_] == ' ' || s_[at_] == '\t' || s_[at_] == '\n' || s_[at_] == '\r')) ++at_;
  }
  bool eat(char c) {
    skip_space();
    if (at_ >= s_.size() || s_[at_] != c) return false;
    ++at_;
    return true;
  }
  void expect(char c, const char* what) {
    if (!eat(c)) fail(what);
  }
  bool word(std::string_view w) {
    skip_space();
    if (s_.substr(at_, w.size()) != w) return false;
    at_ += w.size();
    return true;
  }
  std::string string_literal() {
    skip_space();
    if (at_ >= s_.size() || (s_[at_] != '\'' && s_[at_] != '"')) fail("expected a quoted string");
    const char quote = s_[at_++];
    const size_t end = s_.find(quote, at_);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string out(s_.substr(at_, end - at_));
    at_ = end + 1;
    return out;
  }
  int64_t dimension() {
    skip_space();
    const size_t start = at_;
    uint64_t v = 0;
    while (at_ < s_.size() && s_[at_] >= '0' && s_[at_] <= '9') {
      const uint64_t digit = uint64_t(s_[at_++] - '0');
      if (v > (uint64_t(std::numeric_limits<int64_t>::max()) - digit) / 10) fail("a dimension does not fit 64 bits");
      v = v * 10 + digit;
    }
    if (at_ == start) fail("a dimension is not a whole number >= 0");
    if (at_ < s_.size() && s_[at_] == 'L') ++at_;  // Python 2's long suffix (old numpy)
    return int64_t(v);
  }
  std::vector<int64_t> tuple() {
    expect('(', "shape is not a tuple");
    std::vector<int64_t> dims;
    if (eat(')')) return dims;
    while (true) {
      dims.push_back(dimension());
      if (eat(')')) return dims;
      expect(',', "expected ',' or ')' in the shape");
      if (eat(')')) return dims;
    }
  }

  std::string_view s_;
  const std::string& file_;
  size_t at_ = 0;
};

// Element size x every nonzero dimension, checked step by step; 0 when a dimension is 0.
uint64_t checked_bytes(const std::vector<int64_t>& shape, size_t element, const std::string& file, const char* fix) {
  uint64_t bytes = element;
  bool empty = false;
  for (const int64_t d : shape) {
    if (d == 0) {
      empty = true;
      continue;
    }
    if (__builtin_mul_overflow(bytes, uint64_t(d), &bytes) || bytes > uint64_t(std::numeric_limits<int64_t>::max()))
      throw InputError(file, "the header's shape holds more bytes than fit 63 bits (a damaged header)", fix);
  }
  return empty ? 0 : bytes;
}

void check_size(const TensorFileHeader& h, uint64_t file_size, const char* format, const std::string& file,
                const char* fix) {
  if (h.data_offset > file_size || file_size - h.data_offset < h.data_bytes)
    throw InputError(file,
                     fmt::format("truncated {} data ({} of {} bytes)", format,
                                 file_size > h.data_offset ? file_size - h.data_offset : 0, h.data_bytes),
                     fix);
}

uint64_t header_le(std::string_view s, size_t at, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint64_t(uint8_t(s[at + i])) << (8 * i);
  return v;
}

uint32_t header_be32(std::string_view s, size_t at) {
  return (uint32_t(uint8_t(s[at])) << 24) | (uint32_t(uint8_t(s[at + 1])) << 16) |
         (uint32_t(uint8_t(s[at + 2])) << 8) | uint32_t(uint8_t(s[at + 3]));
}

}  // namespace

size_t element_bytes(ElementType type) {
  for (const auto& e : kElements)
    if (e.type == type) return e.bytes;
  return 1;
}

uint64_t TensorFileHeader::record_bytes() const {
  uint64_t bytes = element_bytes(element);
  for (size_t i = 1; i < shape.size(); ++i) bytes *= uint64_t(shape[i]);  // fits: see checked_bytes
  return bytes;
}

TensorFileHeader parse_npy_header(std::string_view head, uint64_t file_size, const std::string& file) {
  if (head.size() < 10 || std::memcmp(head.data(), "\x93NUMPY", 6) != 0)
    throw InputError(file, "not a .npy file (missing \\x93NUMPY magic)", "save it with numpy.save");
  const unsigned major = uint8_t(head[6]), minor = uint8_t(head[7]);
  if (major < 1 || major > 3)
    throw InputError(file, fmt::format("unsupported .npy format version {}.{} (known: 1.0, 2.0, 3.0)", major, minor),
                     kNpyFix);
  const size_t length_bytes = major == 1 ? 2 : 4;
  if (head.size() < 8 + length_bytes) throw InputError(file, "truncated .npy header", kNpyFix);
  const uint64_t header_len = header_le(head, 8, length_bytes);
  const size_t offset = 8 + length_bytes;
  if (header_len > head.size() - offset)
    throw InputError(file,
                     head.size() >= file_size
                         ? "truncated .npy header"
                         : fmt::format(".npy header longer than the first {} bytes (a damaged header)", head.size()),
                     kNpyFix);
  NpyDict dict(head.substr(offset, header_len), file);
  dict.parse();
  if (!dict.descr) throw InputError(file, ".npy header has no 'descr'", "save it with numpy.save");
  if (!dict.fortran_order) throw InputError(file, ".npy header has no 'fortran_order'", "save it with numpy.save");
  if (!dict.shape) throw InputError(file, ".npy header has no 'shape'", "save it with numpy.save");
  if (*dict.fortran_order)
    throw InputError(file, "Fortran-ordered arrays are not supported", "save numpy.ascontiguousarray(a) instead");
  TensorFileHeader h;
  const ElementName* found = nullptr;
  std::string known;
  for (const auto& e : kElements) {
    known += (known.empty() ? "" : ", ") + std::string(e.npy);
    if (*dict.descr == e.npy) found = &e;
  }
  if (!found)
    throw InputError(file, "unsupported .npy dtype " + excerpt(*dict.descr) + " (known: " + known + ")",
                     "convert it with a.astype(numpy.float32)");
  h.element = found->type;
  h.shape = std::move(*dict.shape);
  h.data_offset = offset + header_len;
  h.data_bytes = checked_bytes(h.shape, found->bytes, file, kNpyFix);
  check_size(h, file_size, ".npy", file, kNpyFix);
  return h;
}

TensorFileHeader parse_idx_header(std::string_view head, uint64_t file_size, const std::string& file) {
  if (head.size() < 4 || head[0] != 0 || head[1] != 0)
    throw InputError(file, "not an idx file (bad magic number)", "pass an MNIST-style idx file (.idx or -ubyte, .gz ok)");
  static const std::pair<uint8_t, const char*> kTypes[] = {
      {0x08, "unsigned byte"}, {0x09, "signed byte"}, {0x0B, "short"}, {0x0C, "int"}, {0x0D, "float"}, {0x0E, "double"}};
  const uint8_t code = uint8_t(head[2]);
  const char* type = nullptr;
  for (const auto& [c, name] : kTypes)
    if (c == code) type = name;
  if (!type)
    throw InputError(file, fmt::format("not an idx file (unknown element type code 0x{:02x})", code),
                     "pass an MNIST-style idx file (.idx or -ubyte, .gz ok)");
  if (code != 0x08)
    throw InputError(file, fmt::format("idx element type is {}, not unsigned byte", type), "only uint8 idx files are supported");
  const size_t ndim = uint8_t(head[3]);
  if (ndim == 0) throw InputError(file, "idx header declares no dimensions", kIdxFix);
  if (head.size() < 4 + 4 * ndim)
    throw InputError(file, head.size() >= file_size ? "truncated idx header" : "idx header longer than the bytes read", kIdxFix);
  TensorFileHeader h;
  h.element = ElementType::uint8;
  for (size_t i = 0; i < ndim; ++i) h.shape.push_back(header_be32(head, 4 + 4 * i));
  h.data_offset = 4 + 4 * ndim;
  h.data_bytes = checked_bytes(h.shape, 1, file, kIdxFix);
  check_size(h, file_size, "idx", file, kIdxFix);
  return h;
}

}  // namespace lite::model
