#pragma once
// Shared fixtures for the torch unit tests: the bundled model and data (and, from scratch_dir.hpp, a
// scratch folder).
#include <filesystem>

#include "scratch_dir.hpp"

namespace lite::test {

inline std::filesystem::path source_dir() { return LITE_SOURCE_DIR; }
inline std::filesystem::path bundled_model() { return source_dir() / "data" / "fmnist_cnn.pt"; }
inline std::filesystem::path bundled_eval() { return source_dir() / "data" / "fmnist_eval.pt"; }
inline std::filesystem::path fashion_mnist_dir() { return "/usr/share/datasets/fashion-mnist"; }

}  // namespace lite::test
