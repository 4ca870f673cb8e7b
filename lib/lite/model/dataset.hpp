#pragma once
// One loader for every data file a subcommand takes (--data, --calib, --eval, --input-file):
//   - a file written by Python torch.save (zip format): a tensor, a dict {"x": tensor, "y": labels}
//     (also "inputs"/"data" and "labels"/"targets"), or a tuple/list (x, y);
//   - a NumPy .npy file (little-endian float32/float64/float16/int64/int32/uint8, C order);
//   - MNIST/Fashion-MNIST idx files, optionally .gz, with labels from a second idx file (--labels).
//     idx images (uint8) become float32 in [0, 1] with a channel dimension: [N, 1, H, W].
#include <torch/torch.h>

#include <filesystem>
#include <optional>
#include <string>

namespace lite::model {

struct Dataset {
  torch::Tensor x;                // [N, ...]
  std::optional<torch::Tensor> y;  // [N] int64 class labels, when the file has them
  std::filesystem::path source;

  int64_t size() const { return x.size(0); }
  bool has_labels() const { return y.has_value(); }
};

// Throws InputError naming the file, the problem and the fix: missing or unreadable file, unknown
// format, empty data, NaN/Inf values, labels whose count differs from the samples.
Dataset load_dataset(const std::filesystem::path& path, const std::optional<std::filesystem::path>& labels = {});

// The first `n` samples (all when n <= 0 or n >= size).
Dataset take_first(const Dataset& d, int64_t n);

// Batches [begin, begin+batch) of x (and y).
std::pair<torch::Tensor, std::optional<torch::Tensor>> batch_of(const Dataset& d, int64_t begin, int64_t batch);

}  // namespace lite::model
