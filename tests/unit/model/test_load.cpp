#include <doctest/doctest.h>
#include <torch/script.h>
#include <torch/serialize.h>

#include <fstream>

#include "../torch_fixtures.hpp"
#include "lite/core/error.hpp"
#include "lite/model/load.hpp"

using namespace lite;
namespace fs = std::filesystem;

namespace {
std::string load_error(const fs::path& p) {
  try {
    model::load_model(p);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
}  // namespace

TEST_CASE("the bundled model loads with its declared input and fingerprint") {
  auto m = model::load_model(test::bundled_model());
  CHECK(m.file_bytes == fs::file_size(test::bundled_model()));
  CHECK(m.sha256.size() == 64);
  REQUIRE(m.declared_inputs.size() == 1);
  CHECK(m.declared_inputs[0].shape == std::vector<int64_t>{1, 1, 28, 28});
  CHECK(m.load_ms > 0);
  CHECK_FALSE(m.module.is_training());
}

TEST_CASE("load errors name the file, the problem and the fix") {
  test::ScratchDir dir("load");
  auto missing = dir.path / "missing.pt";
  auto msg = load_error(missing);
  CHECK(msg.find(missing.string()) == 0);
  CHECK(msg.find("no such file") != std::string::npos);

  CHECK(load_error(dir.path).find("is a directory") != std::string::npos);
  CHECK(load_error(dir.file("empty.pt", "")).find("is empty") != std::string::npos);
  CHECK(load_error(dir.file("text.pt", "hello world")).find("not a TorchScript archive") != std::string::npos);
  auto legacy = load_error(dir.file("legacy.pt", std::string("\x80\x02\x8a\x0alegacy", 10)));
  CHECK(legacy.find("legacy") != std::string::npos);
  CHECK(legacy.find("torch.jit.save") != std::string::npos);
  CHECK(load_error(dir.file("model.onnx", "\x08\x07\x12\x07pytorch")).find("ONNX") != std::string::npos);

  std::string whole = read_bytes(test::bundled_model());
  auto truncated = load_error(dir.file("cut.pt", whole.substr(0, whole.size() / 2)));
  CHECK(truncated.find("truncated") != std::string::npos);

  // A tensor written by torch.save (the C++ twin of Python's torch.save is pickle_save).
  auto bytes = torch::pickle_save(torch::ones({2, 2}));
  auto saved = load_error(dir.file("tensor.pt", std::string(bytes.begin(), bytes.end())));
  CHECK(saved.find("torch.save") != std::string::npos);
  CHECK(saved.find("torch.jit.save") != std::string::npos);
}
