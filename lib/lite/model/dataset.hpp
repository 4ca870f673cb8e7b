#pragma once
// One loader for every data file a subcommand takes (--data, --calib, --eval, --input-file):
//   - a file written by Python torch.save (zip format; read by torch_save.hpp, which also takes the forms
//     libtorch's own reader rejects): a tensor; a dict with the inputs under x/input/inputs/data (or images)
//     and optional labels under y/label/labels/target/targets (other names are listed in the error); a
//     list or tuple (x,) or (x, y) with one label per sample; a list of (x, y) pairs (batches or samples);
//     a list of batches of x (concatenated along the first dimension);
//   - a NumPy .npy file (little-endian float32/float64/float16/int64/int32/uint8, C order), or an .npz
//     (np.savez / np.savez_compressed) whose arrays follow the dict's names, or arr_0 [, arr_1] as (x, y);
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
