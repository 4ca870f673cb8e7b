#pragma once
// Shared fixtures for the torch unit tests: the bundled model and a scratch folder.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace lite::test {

inline std::filesystem::path source_dir() { return LITE_SOURCE_DIR; }
inline std::filesystem::path bundled_model() { return source_dir() / "data" / "fmnist_cnn.pt"; }
inline std::filesystem::path bundled_eval() { return source_dir() / "data" / "fmnist_eval.pt"; }
inline std::filesystem::path fashion_mnist_dir() { return "/usr/share/datasets/fashion-mnist"; }

struct ScratchDir {
  std::filesystem::path path;
  explicit ScratchDir(const std::string& tag = "t") {
    path = std::filesystem::temp_directory_path() / ("lite_" + tag + "_" + std::to_string(::getpid()));
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() { std::filesystem::remove_all(path); }
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
