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
// For a model whose forward takes several inputs, a dict or .npz holds one tensor per input under the names of
// forward's arguments, or a tuple/list holds them in forward's order (then the labels, if any): input_binding.hpp.
#include <torch/torch.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace lite::model {

struct Dataset {
  torch::Tensor x;                // [N, ...]
  std::optional<torch::Tensor> y;  // [N] int64 class labels, when the file has them
  std::filesystem::path source;
  // The inputs after the first, in forward's order, for a model that takes several; each has x's first dimension.
  std::vector<torch::Tensor> more_inputs = {};

  int64_t size() const { return x.size(0); }
  bool has_labels() const { return y.has_value(); }
  // x, then more_inputs: the arguments of one forward call on the whole set.
  std::vector<torch::Tensor> inputs() const;
};

// The names of a model's forward arguments (self left out) and how many of them come first without a default:
// a data file binds its tensors to them when the model takes several inputs. Empty: one input, read as always.
struct ForwardArguments {
  std::vector<std::string> names;
  size_t required = 0;
};

// Throws InputError naming the file, the problem and the fix: missing or unreadable file, unknown
// format, empty data, NaN/Inf values, labels whose count differs from the samples.
// `forward` binds a file holding several inputs to the model's arguments (input_binding.hpp's load_model_data
// fills it from the model); left empty, the file holds the one input of a single-input model.
Dataset load_dataset(const std::filesystem::path& path, const std::optional<std::filesystem::path>& labels = {},
                     const ForwardArguments& forward = {});

// The first `n` samples (all when n <= 0 or n >= size).
Dataset take_first(const Dataset& d, int64_t n);

// Batches [begin, begin+batch) of x (and y).
std::pair<torch::Tensor, std::optional<torch::Tensor>> batch_of(const Dataset& d, int64_t begin, int64_t batch);

// Samples [begin, begin+count) of every input and the labels, as a Dataset of their own.
Dataset rows_of(const Dataset& d, int64_t begin, int64_t count);

// Samples [begin, begin+batch) of every input, in forward's order: the arguments of one forward call.
std::vector<torch::Tensor> batch_inputs(const Dataset& d, int64_t begin, int64_t batch);

}  // namespace lite::model
