#include <doctest/doctest.h>
#include <torch/serialize.h>
#include <torch/torch.h>

#include <cstring>

#include "../torch_fixtures.hpp"
#include "lite/core/error.hpp"
#include "lite/model/dataset.hpp"

using namespace lite;
namespace fs = std::filesystem;

namespace {
std::string npy(const std::string& descr, const std::string& shape, const void* data, size_t bytes,
                bool fortran = false) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                       ", 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += char(header.size() & 0xff);
  out += char(header.size() >> 8);
  out += header;
  out.append(static_cast<const char*>(data), bytes);
  return out;
}

std::string pickled(const c10::IValue& v) {
  auto bytes = torch::pickle_save(v);
  return std::string(bytes.begin(), bytes.end());
}

std::string error_of(const fs::path& p, std::optional<fs::path> labels = std::nullopt) {
  try {
    model::load_dataset(p, labels);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("torch.save dict with x and y") {
  test::ScratchDir dir("data");
  c10::Dict<std::string, torch::Tensor> d;
  d.insert("x", torch::arange(12, torch::kFloat32).reshape({3, 4}));
  d.insert("y", torch::tensor({2, 0, 1}));
  auto p = dir.file("d.pt", pickled(d));
  auto ds = model::load_dataset(p);
  CHECK(ds.size() == 3);
  REQUIRE(ds.has_labels());
  CHECK(ds.y->dtype() == torch::kInt64);
  CHECK(ds.y->equal(torch::tensor({2, 0, 1}, torch::kInt64)));
  CHECK(ds.x[2][3].item<float>() == 11.0f);
}

TEST_CASE("the bundled evaluation split") {
  auto ds = model::load_dataset(test::bundled_eval());
  CHECK(ds.size() == 1000);
  CHECK(ds.x.sizes() == torch::IntArrayRef({1000, 1, 28, 28}));
  CHECK(ds.has_labels());
}

TEST_CASE("npy float32 and int64") {
  test::ScratchDir dir("npy");
  float f[6] = {1, 2, 3, 4, 5, 6};
  auto ds = model::load_dataset(dir.file("a.npy", npy("<f4", "(2, 3)", f, sizeof f)));
  CHECK(ds.x.sizes() == torch::IntArrayRef({2, 3}));
  CHECK(ds.x[1][2].item<float>() == 6.0f);
  int64_t labels[2] = {7, 1};
  auto with_labels = model::load_dataset(dir.path / "a.npy", dir.file("y.npy", npy("<i8", "(2,)", labels, sizeof labels)));
  CHECK(with_labels.y->equal(torch::tensor({7, 1}, torch::kInt64)));

  CHECK(error_of(dir.file("f.npy", npy("<f4", "(2, 3)", f, sizeof f, true))).find("Fortran") != std::string::npos);
  CHECK(error_of(dir.file("c.npy", npy("<c8", "(1,)", f, 8))).find("unsupported .npy dtype") != std::string::npos);
  CHECK(error_of(dir.file("t.npy", npy("<f4", "(2, 3)", f, 8))).find("truncated") != std::string::npos);
}

TEST_CASE("Fashion-MNIST idx files with labels") {
  auto images = test::fashion_mnist_dir() / "t10k-images-idx3-ubyte.gz";
  if (!fs::exists(images)) {
    MESSAGE("dataset-fashion-mnist is not installed; skipping");
    return;
  }
  auto ds = model::load_dataset(images, test::fashion_mnist_dir() / "t10k-labels-idx1-ubyte.gz");
  CHECK(ds.x.sizes() == torch::IntArrayRef({10000, 1, 28, 28}));
  CHECK(ds.x.dtype() == torch::kFloat32);
  CHECK(ds.x.max().item<float>() <= 1.0f);
  CHECK(ds.y->max().item<int64_t>() == 9);
}

TEST_CASE("bad data files") {
  test::ScratchDir dir("bad");
  CHECK(error_of(dir.path / "nope.pt").find("no such file") != std::string::npos);
  CHECK(error_of(dir.file("empty.pt", "")).find("is empty") != std::string::npos);
  CHECK(error_of(dir.file("junk.bin", "junkjunk")).find("unknown data format") != std::string::npos);

  auto nan = torch::ones({4, 2});
  nan[2][1] = std::numeric_limits<float>::quiet_NaN();
  auto msg = error_of(dir.file("nan.pt", pickled(nan)));
  CHECK(msg.find("NaN") != std::string::npos);
  CHECK(msg.find("sample 2") != std::string::npos);

  CHECK(error_of(dir.file("zero.pt", pickled(torch::ones({0, 3})))).find("no samples") != std::string::npos);
  CHECK(error_of(dir.file("scalar.pt", pickled(torch::tensor(3.0)))).find("scalar") != std::string::npos);

  c10::Dict<std::string, torch::Tensor> d;
  d.insert("x", torch::ones({3, 2}));
  d.insert("y", torch::tensor({1, 2}));
  CHECK(error_of(dir.file("mismatch.pt", pickled(d))).find("2 labels for 3 samples") != std::string::npos);

  c10::Dict<std::string, torch::Tensor> no_x;
  no_x.insert("weights", torch::ones({3}));
  msg = error_of(dir.file("nox.pt", pickled(no_x)));
  CHECK(msg.find("no inputs under a known name") != std::string::npos);
  CHECK(msg.find("'weights'") != std::string::npos);
}
