#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "../scratch_dir.hpp"
#include "lite/core/atomic_file.hpp"
#include "lite/core/error.hpp"
#include "lite/core/options.hpp"

using namespace lite;
namespace fs = std::filesystem;

using test::ScratchDir;

TEST_CASE("atomic write leaves the finished file and no temporaries") {
  ScratchDir dir;
  write_file_atomically(dir.path / "out.txt", "hello");
  std::ifstream in(dir.path / "out.txt");
  std::string s;
  in >> s;
  CHECK(s == "hello");
  CHECK(dir.count() == 1);
}

TEST_CASE("a failed write leaves the old file untouched and removes the temporary") {
  ScratchDir dir;
  write_file_atomically(dir.path / "out.txt", "old");
  CHECK_THROWS(write_atomically(dir.path / "out.txt", [](const fs::path& tmp) {
    std::ofstream(tmp) << "partial";
    throw InputError("boom");
  }));
  std::ifstream in(dir.path / "out.txt");
  std::string s;
  in >> s;
  CHECK(s == "old");
  CHECK(dir.count() == 1);
}

TEST_CASE("output path checks") {
  ScratchDir dir;
  fs::path model = dir.path / "model.pt";
  std::ofstream(model) << "x";
  CHECK_THROWS_AS(check_output(model, {model}, "output"), OptionError);
  CHECK_THROWS_AS(check_output(dir.path / "." / "model.pt", {model}, "output"), OptionError);
  CHECK_THROWS_AS(check_output(dir.path / "missing" / "out.pt", {model}, "output"), OptionError);
  CHECK_THROWS_AS(check_output(dir.path, {model}, "output"), OptionError);
  CHECK_NOTHROW(check_output(dir.path / "model.int8.pt", {model}, "output"));
  try {
    check_output(model, {model}, "output");
  } catch (const OptionError& e) {
    CHECK(e.key() == "output");  // the CLI words it with the flag that names the key (-o)
  }
  CHECK(derive_output_path("/a/b/model.pt", "int8") == fs::path("/a/b/model.int8.pt"));
  CHECK(derive_output_path("model", "fp16") == fs::path("model.fp16.pt"));
}
