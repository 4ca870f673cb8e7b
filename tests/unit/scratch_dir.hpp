#pragma once
// A scratch folder for one test case, removed with its contents at the end. Torch-free: the core, cache
// and torch unit tests all use it.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace lite::test {

struct ScratchDir {
  std::filesystem::path path;
  explicit ScratchDir(const std::string& tag = "t") {
    // pid + a random number: parallel test processes and successive cases never share a folder
    path = std::filesystem::temp_directory_path() /
           ("lite_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(std::random_device{}()));
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  // Writes `bytes` to a file in the folder and returns its path.
  std::filesystem::path file(const std::string& name, const std::string& bytes) const {
    auto p = path / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  size_t count() const {
    size_t n = 0;
    for ([[maybe_unused]] auto& e : std::filesystem::directory_iterator(path)) ++n;
    return n;
  }
};

}  // namespace lite::test
