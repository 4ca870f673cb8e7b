// The torch-free .npy and idx header parser (lib/lite/model/tensor_headers.cpp): the forms numpy and MNIST write,
// and the damaged headers it must reject cleanly (a std::stoll exception, a wrapped size or a read past the
// bytes would be bugs; the fuzz target tensor_headers looks for more).
#include <doctest/doctest.h>

#include <string>

#include "lite/core/error.hpp"
#include "lite/model/tensor_headers.hpp"

namespace {

using lite::model::ElementType;
using lite::model::parse_idx_header;
using lite::model::parse_npy_header;

// An .npy file of version `major` with `dict` as its header and `data_bytes` zero bytes of data.
std::string npy(const std::string& dict, size_t data_bytes, int major = 1) {
  std::string header = dict;
  const size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::string out("\x93NUMPY", 6);
  out += char(major);
  out += '\0';
  for (size_t i = 0; i < prefix - 8; ++i) out += char((header.size() >> (8 * i)) & 0xff);
  return out + header + std::string(data_bytes, '\0');
}

std::string idx(std::initializer_list<uint32_t> dims, size_t data_bytes, uint8_t type = 0x08) {
  std::string out{'\0', '\0', char(type), char(dims.size())};
  for (uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8) out += char((d >> shift) & 0xff);
  return out + std::string(data_bytes, '\0');
}

std::string npy_error(const std::string& bytes, uint64_t file_size = 0) {
  try {
    parse_npy_header(bytes, file_size ? file_size : bytes.size(), "f.npy");
  } catch (const lite::InputError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string idx_error(const std::string& bytes) {
  try {
    parse_idx_header(bytes, bytes.size(), "f-idx");
  } catch (const lite::InputError& e) {
    return e.what();
  }
  return "(no error)";
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("npy: the versions and forms numpy writes") {
  const std::string v1 = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 24);
  auto h = parse_npy_header(v1, v1.size(), "f.npy");
  CHECK(h.element == ElementType::float32);
  CHECK(h.shape == std::vector<int64_t>{2, 3});
  CHECK(h.data_offset == v1.size() - 24);
  CHECK(h.data_offset % 64 == 0);
  CHECK(h.data_bytes == 24);
  CHECK(h.record_bytes() == 12);

  const std::string v2 = npy("{\"descr\": \"<i8\", \"fortran_order\": False, \"shape\": (3,)}", 24, 2);
  h = parse_npy_header(v2, v2.size(), "f.npy");
  CHECK(h.element == ElementType::int64);
  CHECK(h.shape == std::vector<int64_t>{3});
  CHECK(h.data_offset == v2.size() - 24);

  const std::string v3 = npy("{'descr': '|b1', 'fortran_order': False, 'shape': (0, 7L), }", 0, 3);
  h = parse_npy_header(v3, v3.size(), "f.npy");
  CHECK(h.shape == std::vector<int64_t>{0, 7});
  CHECK(h.data_bytes == 0);
  CHECK(h.record_bytes() == 7);

  const std::string scalar = npy("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", 8);
  CHECK(parse_npy_header(scalar, scalar.size(), "f.npy").shape.empty());
  // A prefix of a bigger file: the size check uses the whole file's size.
  CHECK(parse_npy_header(v1.substr(0, v1.size() - 24), v1.size(), "f.npy").data_bytes == 24);
}

TEST_CASE("npy: damaged headers are clean errors") {
  const std::string ok = "'fortran_order': False, 'shape': (2, 3)";
  CHECK(has(npy_error(npy("{'descr': '<f4', " + ok + "}", 23)), "truncated .npy data (23 of 24 bytes)"));
  CHECK(has(npy_error(npy("{'descr': '<f4', " + ok + "}", 24).substr(0, 40)), "truncated .npy header"));
  CHECK(has(npy_error(npy("{'descr': '<f4', " + ok + "}", 24).substr(0, 40), 1000), "longer than the first 40 bytes"));
  CHECK(has(npy_error(npy("{'descr': '<c8', " + ok + "}", 96)), "unsupported .npy dtype '<c8'"));
  CHECK(has(npy_error(npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3)}", 24)), "Fortran"));
  CHECK(has(npy_error(npy("{'descr': '<f4', 'shape': (2, 3)}", 24)), "no 'fortran_order'"));
  // A key inside another key's string is not that key.
  CHECK(has(npy_error(npy("{'descr': \"<f4', 'shape': (1,)\", 'fortran_order': False}", 4)), "no 'shape'"));
  CHECK(has(npy_error(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3)}", 24)), "not a whole number"));
  CHECK(has(npy_error(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", 4)),
            "does not fit 64 bits"));
  CHECK(has(npy_error(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}", 4)),
            "more bytes than fit 63 bits"));
  // Zero-sized but with a record that overflows: still refused (a reader multiplies the other dimensions).
  CHECK(has(npy_error(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4294967296, 4294967296)}", 0)),
            "more bytes than fit 63 bits"));
  CHECK(has(npy_error(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}", 24)), "unknown key 'x'"));
  CHECK(has(npy_error(npy("{'descr': '<f4', 'descr': '<f4', " + ok + "}", 24)), "given twice"));
  CHECK(has(npy_error(npy("{'descr': '<f4', " + ok + "} junk", 24)), "text after"));
  CHECK(has(npy_error(npy("{'descr': '<f4, " + ok + "}", 24)), "malformed .npy header"));
  CHECK(has(npy_error(npy("{'descr': '<f4', " + ok + "}", 24, 4)), "format version 4.0"));
  CHECK(has(npy_error(std::string("\x93NUMPY\x02\x00\x01\x00\x00", 11)), "truncated .npy header"));
  CHECK(has(npy_error("NUMPY!!!!!!!"), "missing \\x93NUMPY magic"));
  // A 4-byte header length near 2^32 does not wrap the offset.
  CHECK(has(npy_error(std::string("\x93NUMPY\x02\x00\xff\xff\xff\xff{}", 14)), "truncated .npy header"));
}

TEST_CASE("idx: MNIST images and labels") {
  const std::string images = idx({2, 3, 4}, 24);
  auto h = parse_idx_header(images, images.size(), "f-idx");
  CHECK(h.shape == std::vector<int64_t>{2, 3, 4});
  CHECK(h.data_offset == 16);
  CHECK(h.data_bytes == 24);
  CHECK(h.record_bytes() == 12);
  CHECK(parse_idx_header(idx({5}, 5), 13, "f-idx").shape == std::vector<int64_t>{5});
}

TEST_CASE("idx: damaged headers are clean errors") {
  CHECK(has(idx_error(idx({2, 3}, 5)), "truncated idx data (5 of 6 bytes)"));
  CHECK(has(idx_error(idx({2, 3}, 0).substr(0, 9)), "truncated idx header"));
  CHECK(has(idx_error(idx({1}, 4, 0x0D)), "idx element type is float, not unsigned byte"));
  CHECK(has(idx_error(idx({1}, 4, 0x42)), "unknown element type code 0x42"));
  CHECK(has(idx_error(idx({}, 0)), "declares no dimensions"));
  CHECK(has(idx_error(idx({0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}, 0)), "more bytes than fit 63 bits"));
  CHECK(has(idx_error(std::string("\x01\x00\x08\x01", 4)), "bad magic number"));
}
