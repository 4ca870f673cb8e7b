// Reading data files (lib/lite/model/data_file.cpp, gzip_tensor.cpp; torch-free): only regular files, and a
// gzip-compressed idx or .npy inflated no further than its header declares, within what its compressed bytes
// can hold and the memory bound.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "data_test_util.hpp"
#include "lite/core/error.hpp"
#include "lite/model/data_file.hpp"

namespace fs = std::filesystem;

namespace {

using data_test::gzip_bytes;
using data_test::idx_header;
using lite::model::inflate_tensor_file;
using lite::model::TensorFormat;

constexpr uint64_t kPlenty = uint64_t(1) << 30;

std::string inflate_refusal(const std::string& gz, TensorFormat format = TensorFormat::idx, uint64_t max = kPlenty) {
  try {
    inflate_tensor_file(gz, format, max, "bad-idx3-ubyte.gz");
  } catch (const lite::InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

template <class F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const lite::InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("lite_data_file_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

}  // namespace

TEST_CASE("an idx.gz inflates to its header and data") {
  const std::string idx = idx_header({10, 28, 28}) + data_test::noise(10 * 28 * 28);
  auto out = inflate_tensor_file(gzip_bytes(idx), TensorFormat::idx, kPlenty, "f-idx3-ubyte.gz");
  CHECK(std::string(out.begin(), out.end()) == idx);
  // Concatenated gzip members (gzip -c header data > f.gz) read as one stream, as gzread reads them.
  const std::string split = gzip_bytes(idx.substr(0, 7)) + gzip_bytes(idx.substr(7));
  out = inflate_tensor_file(split, TensorFormat::idx, kPlenty, "f-idx3-ubyte.gz");
  CHECK(std::string(out.begin(), out.end()) == idx);
  // An .npy.gz too.
  std::string npy("\x93NUMPY\x01\x00", 8);
  std::string dict = "{'descr': '|u1', 'fortran_order': False, 'shape': (3,), }";
  while ((10 + dict.size() + 1) % 64) dict += ' ';
  dict += '\n';
  npy += char(dict.size()), npy += '\0';
  npy += dict + "abc";
  out = inflate_tensor_file(gzip_bytes(npy), TensorFormat::npy, kPlenty, "y.npy.gz");
  CHECK(std::string(out.begin(), out.end()) == npy);
}

TEST_CASE("inflating stops at the header's size: a bomb behind a small header costs nothing") {
  // 7840 bytes declared, then 512 MiB of zeros (well under a MiB compressed).
  const std::string gz = data_test::gzip_with_zeros(idx_header({10, 28, 28}), uint64_t(512) << 20);
  CHECK(gz.size() < (1 << 20));
  const long before = data_test::peak_rss_kib();
  CHECK(has(inflate_refusal(gz), "bad-idx3-ubyte.gz: inflates to more than the 7856 bytes its header declares"));
  CHECK(data_test::peak_rss_kib() - before < 16 * 1024);  // KiB
}

TEST_CASE("a header that declares more than the file can hold, or more than the memory bound, is refused first") {
  // 4 GiB declared (65536 x 256 x 256) in a gzip of a few hundred bytes.
  const std::string claim = gzip_bytes(idx_header({65536, 256, 256}) + std::string(4096, '\0'));
  const std::string why = inflate_refusal(claim);
  CHECK(has(why, "its header declares 4294967312 bytes, more than its "));
  CHECK(has(why, "(deflate expands at most 1032:1)"));
  // 100 MB declared and backed by enough compressed bytes, but over a 10 MB bound.
  const std::string big = gzip_bytes(idx_header({1000, 1000, 100}) + data_test::noise(200000));
  CHECK(has(inflate_refusal(big, TensorFormat::idx, 10000000), "over the 10.0 MB data may take in memory"));
}

TEST_CASE("a short stream is a truncated file, corrupt gzip and bad headers are named") {
  CHECK(has(inflate_refusal(gzip_bytes(idx_header({100}) + std::string(50, 'a'))), "truncated idx data (50 of 100 bytes)"));
  CHECK(has(inflate_refusal(gzip_bytes(std::string("\0\0", 2))), "not an idx file"));
  std::string corrupt = gzip_bytes(idx_header({100}) + std::string(100, 'a'));
  corrupt[12] = char(corrupt[12] ^ 0x55);
  CHECK(has(inflate_refusal(corrupt), "bad-idx3-ubyte.gz: "));
  const std::string cut = gzip_bytes(idx_header({100}) + data_test::noise(100));
  CHECK(has(inflate_refusal(cut.substr(0, cut.size() / 2)), "truncated idx"));
}

TEST_CASE("data paths must be regular files") {
  const std::string expected = "is not a regular file (a character device); give a data file";
  CHECK(has(refusal([] { lite::model::read_data_file("/dev/zero"); }), "/dev/zero: " + expected));
  CHECK(has(refusal([] { lite::model::read_data_file("/dev/urandom"); }), "/dev/urandom: " + expected));
  TempDir dir;
  const fs::path fifo = dir.path / "labels-idx1-ubyte";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(has(refusal([&] { lite::model::read_tensor_file_maybe_gzip(fifo, TensorFormat::idx, kPlenty); }),
            "is not a regular file (a FIFO); give a data file"));
  CHECK(has(refusal([&] { lite::model::read_data_file(dir.path); }), "is a directory"));
  CHECK(has(refusal([&] { lite::model::read_data_file(dir.path / "none.npy"); }), "no such file"));
  const fs::path plain = dir.path / "x-idx1-ubyte";
  std::ofstream(plain, std::ios::binary) << idx_header({2}) << "ab";
  auto bytes = lite::model::read_tensor_file_maybe_gzip(plain, TensorFormat::idx, kPlenty);
  CHECK(bytes.size() == 10);
}

TEST_CASE("Fashion-MNIST's own .gz files read as before") {
  const fs::path labels = "/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz";
  if (!fs::exists(labels)) return;
  CHECK(lite::model::read_tensor_file_maybe_gzip(labels, TensorFormat::idx, kPlenty).size() == 10008);
  const fs::path images = "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz";
  CHECK(lite::model::read_tensor_file_maybe_gzip(images, TensorFormat::idx, kPlenty).size() == 16 + 10000 * 784);
}

TEST_CASE("inflated to a sink: the same bytes in pieces, the declared size known from the header alone") {
  const std::string idx = idx_header({40, 28, 28}) + data_test::noise(40 * 28 * 28);  // ~31 KB x 40: several pieces
  const std::string big = idx_header({2000, 28, 28}) + data_test::noise(2000 * 28 * 28);
  for (const std::string* original : {&idx, &big}) {
    const std::string gz = gzip_bytes(*original);
    CHECK(lite::model::declared_tensor_bytes(gz, TensorFormat::idx, "f-idx3-ubyte.gz") == original->size());
    std::string sunk;
    int pieces = 0;
    const uint64_t n = lite::model::inflate_tensor_file_to(
        gz, TensorFormat::idx, kPlenty, [&](const char* data, size_t size) { sunk.append(data, size), ++pieces; },
        "f-idx3-ubyte.gz");
    CHECK(n == original->size());
    CHECK(sunk == *original);
    CHECK(pieces == int((original->size() >> 20) + 1));
  }
  const std::string cut = gzip_bytes(big.substr(0, big.size() - 5000));
  CHECK(has(refusal([&] { lite::model::inflate_tensor_file_to(cut, TensorFormat::idx, kPlenty, [](const char*, size_t) {}, "c.gz"); }),
            "c.gz: truncated idx data (it inflates to " + std::to_string(big.size() - 5000) + " of the " +
                std::to_string(big.size()) + " bytes its header declares)"));
}

TEST_CASE("an inflated copy reads back as the uncompressed file and is removed with its owner") {
  TempDir dir;
  const std::string idx = idx_header({30, 28, 28}) + data_test::noise(30 * 28 * 28);
  const fs::path gz = dir.path / "train-images-idx3-ubyte.gz";
  std::ofstream(gz, std::ios::binary) << gzip_bytes(idx);
  CHECK(lite::model::is_gzip_file(gz));
  fs::path copy_path;
  {
    lite::model::InflatedCopy copy(gz, TensorFormat::idx);
    copy_path = copy.path();
    CHECK(copy_path.filename().string().find("train-images-idx3-ubyte") != std::string::npos);
    CHECK(copy_path.extension() != ".gz");
    auto back = lite::model::read_data_file(copy_path);
    CHECK(std::string(back.begin(), back.end()) == idx);
  }
  CHECK_FALSE(fs::exists(copy_path));
}
