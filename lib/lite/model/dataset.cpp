#include "lite/model/dataset.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "lite/core/error.hpp"
#include "lite/core/text.hpp"
#include "lite/model/data_file.hpp"
#include "lite/model/data_format.hpp"
#include "lite/model/input_binding.hpp"
#include "lite/model/torch_errors.hpp"
#include "lite/model/tensor_dtype.hpp"
#include "lite/model/tensor_headers.hpp"
#include "lite/model/torch_save.hpp"
#include "lite/model/zip_members.hpp"

namespace fs = std::filesystem;

namespace lite::model {

namespace {

// Every data file is read through data_file.hpp: a regular file only, and gzip inflated within bounds.
std::vector<char> read_all(const fs::path& path) { return read_data_file(path); }

// An idx file, gzip-compressed or not: inflated no further than its header declares, and within the data
// memory budget (gzip_tensor.hpp).
std::vector<char> read_maybe_gzip(const fs::path& path) {
  return read_tensor_file_maybe_gzip(path, TensorFormat::idx, default_data_memory_budget());
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// ---- NumPy .npy and idx (MNIST): headers parsed by tensor_headers.cpp, the data copied after them ----
torch::Tensor tensor_after_header(const TensorFileHeader& h, const std::vector<char>& bytes) {
  auto t = torch::empty(h.shape, torch::TensorOptions().dtype(scalar_type_of(h.element)));
  if (h.data_bytes > 0) std::memcpy(t.data_ptr(), bytes.data() + h.data_offset, size_t(h.data_bytes));
  return t;
}

torch::Tensor parse_npy(const fs::path& path, const std::vector<char>& bytes) {
  const std::string_view all(bytes.data(), bytes.size());
  return tensor_after_header(parse_npy_header(all, bytes.size(), path.string()), bytes);
}

torch::Tensor parse_idx(const fs::path& path, const std::vector<char>& bytes) {
  const std::string_view all(bytes.data(), bytes.size());
  return tensor_after_header(parse_idx_header(all, bytes.size(), path.string()), bytes);
}

// ---- the objects users save: a tensor, a dict, a list or tuple ----
const std::vector<std::string>& input_keys() {
  static const std::vector<std::string> keys = {"x", "input", "inputs", "data", "images"};
  return keys;
}
const std::vector<std::string>& label_keys() {
  static const std::vector<std::string> keys = {"y", "label", "labels", "target", "targets"};
  return keys;
}

std::vector<c10::IValue> items_of(const c10::IValue& v) {
  if (v.isTuple()) return v.toTupleRef().elements().vec();
  std::vector<c10::IValue> items;
  for (const auto& e : v.toListRef()) items.push_back(e);
  return items;
}

// A tensor, or a list/tuple of batches concatenated along the first dimension.
torch::Tensor tensor_of(const fs::path& path, const c10::IValue& v, const std::string& what) {
  if (v.isTensor()) return v.toTensor();
  if (v.isTuple() || v.isList()) {
    std::vector<torch::Tensor> parts;
    for (const auto& item : items_of(v)) {
      if (!item.isTensor()) break;
      parts.push_back(item.toTensor());
    }
    if (!parts.empty() && parts.size() == items_of(v).size()) {
      for (const auto& p : parts)
        if (p.dim() == 0 || p.sizes().slice(1) != parts[0].sizes().slice(1))
          throw InputError(path.string(), what + " is a list of tensors whose shapes differ beyond the first dimension",
                           "save one tensor [N, ...] (torch.stack the samples, or torch.cat the batches)");
      return torch::cat(parts, 0);
    }
  }
  throw InputError(path.string(), what + " is a " + v.tagKind() + ", not a tensor", "store a torch.Tensor");
}

bool looks_like_labels(const torch::Tensor& x, const torch::Tensor& y) {
  return y.dim() == 1 && x.dim() >= 1 && y.size(0) == x.size(0) && !y.is_complex();
}

// The error for a dict or .npz with no inputs where lite looks: the keys it holds, and what it expected.
[[noreturn]] void throw_no_inputs(const fs::path& path, const NamedEntries& entries, const std::string& container,
                                  const ForwardArguments& forward) {
  std::vector<std::string> names;
  for (const auto& e : entries) names.push_back("'" + e.first + "'");
  std::string problem = container + " has no inputs under a known name (it holds " + join(names, ", ") + ")";
  if (!forward.names.empty()) problem += "; the model's forward takes " + argument_list(forward);
  throw InputError(path.string(), problem,
                   "name the inputs x (or " + join(std::vector<std::string>(input_keys().begin() + 1, input_keys().end() - 1), ", ") +
                       (forward.names.size() == 1 ? ", or " + forward.names[0] : "") + ") and the labels y (or " +
                       join(std::vector<std::string>(label_keys().begin() + 1, label_keys().end()), ", ") + ")" +
                       (forward.names.size() > 1 ? "; for several inputs, one per forward argument by its name" : ""));
}

// name -> value pairs of a dict or an .npz: x under one of input_keys() (or forward's one argument name), or the
// inputs of a model with several under forward's argument names; labels under one of label_keys().
Dataset from_named(const fs::path& path, const NamedEntries& entries, const std::string& container,
                   const ForwardArguments& forward) {
  auto find = [&](const std::vector<std::string>& keys) -> const std::pair<std::string, c10::IValue>* {
    for (const auto& k : keys)
      for (const auto& e : entries)
        if (e.first == k) return &e;
    return nullptr;
  };
  Dataset d;
  std::vector<std::string> taken;  // the keys the inputs came from
  if (binds_by_name(entries, forward)) {
    d = bind_named_inputs(path, entries, container, forward);
    for (const auto& e : entries)
      if (std::find(forward.names.begin(), forward.names.end(), e.first) != forward.names.end()) taken.push_back(e.first);
  } else {
    const auto* x = find(input_keys());
    if (!x && forward.names.size() == 1) x = find(forward.names);
    if (!x) throw_no_inputs(path, entries, container, forward);
    d.x = tensor_of(path, x->second, "'" + x->first + "'");
    taken.push_back(x->first);
  }
  d.source = path;
  if (const auto* y = find(label_keys())) {
    d.y = tensor_of(path, y->second, "'" + y->first + "'");
  } else if (entries.size() > taken.size()) {
    // Labels under a name lite does not read would silently turn accuracy into output agreement.
    std::vector<std::string> others, inputs;
    for (const auto& e : entries)
      if (std::find(taken.begin(), taken.end(), e.first) == taken.end()) others.push_back("'" + e.first + "'");
    for (const auto& k : taken) inputs.push_back("'" + k + "'");
    throw InputError(path.string(), container + " holds " + join(others, ", ") + " beside the inputs " + join(inputs, ", ") +
                                        ", and no labels under a known name",
                     "name the labels y (or " +
                         join(std::vector<std::string>(label_keys().begin() + 1, label_keys().end()), ", ") +
                         "), or save the inputs alone");
  }
  return d;
}

// A list or tuple: (x,), (x, y) when the second holds one label per sample, a list of (x, y) pairs of
// batches, or a list of batches of x.
Dataset from_sequence(const fs::path& path, const std::vector<c10::IValue>& items, const ForwardArguments& forward) {
  Dataset d;
  d.source = path;
  if (items.empty()) throw InputError(path.string(), "holds an empty list", "save a tensor [N, ...] or (x, y)");
  if (binds_by_position(forward)) return bind_positional_inputs(path, items, forward);  // (a, b[, y])
  if (items.size() <= 2 && items[0].isTensor() && (items.size() == 1 || items[1].isTensor()) &&
      (items.size() == 1 || looks_like_labels(items[0].toTensor(), items[1].toTensor()))) {
    d.x = items[0].toTensor();
    if (items.size() == 2) d.y = items[1].toTensor();
    return d;
  }
  const bool pairs = std::all_of(items.begin(), items.end(), [](const c10::IValue& v) {
    return (v.isTuple() || v.isList()) && items_of(v).size() == 2;
  });
  if (pairs) {  // [(x0, y0), (x1, y1), ...]: batches (or samples) with their labels
    std::vector<c10::IValue> xs, ys;
    for (const auto& v : items) {
      auto pair = items_of(v);
      xs.push_back(pair[0]);
      ys.push_back(pair[1]);
    }
    d.x = tensor_of(path, c10::ivalue::Tuple::create(xs), "the inputs of the (x, y) pairs");
    torch::Tensor y = tensor_of(path, c10::ivalue::Tuple::create(ys), "the labels of the (x, y) pairs");
    if (y.dim() == 0 || y.size(0) != d.x.size(0)) {  // one (sample, label) per item: stack them
      std::vector<torch::Tensor> samples, labels;
      for (const auto& v : xs) samples.push_back(tensor_of(path, v, "a sample"));
      for (const auto& v : ys) labels.push_back(tensor_of(path, v, "a label"));
      d.x = torch::stack(samples);
      y = torch::stack(labels);
    }
    d.y = y;
    return d;
  }
  d.x = tensor_of(path, c10::ivalue::Tuple::create(items), "the list");
  return d;
}

Dataset from_object(const fs::path& path, const c10::IValue& v, const ForwardArguments& forward) {
  if (v.isTensor()) {
    Dataset d;
    d.source = path;
    d.x = v.toTensor();
    return d;
  }
  if (v.isGenericDict()) {
    NamedEntries entries;
    for (const auto& item : v.toGenericDict())
      entries.emplace_back(item.key().isString() ? item.key().toStringRef() : item.key().tagKind(), item.value());
    return from_named(path, entries, "the dict", forward);
  }
  if (v.isTuple() || v.isList()) return from_sequence(path, items_of(v), forward);
  throw InputError(path.string(), "holds a " + v.tagKind() + ", not a tensor, a dict or a list",
                   "save a tensor, {'x': inputs, 'y': labels}, or (x, y)");
}

Dataset from_pickle(const fs::path& path, const std::vector<char>& bytes, const ForwardArguments& forward = {}) {
  return from_object(path, read_torch_save(bytes, path.string()), forward);
}

// An .npz: its arrays by name ("x.npy" -> x); arr_0, arr_1 (np.savez without names) in order, as (x, y).
Dataset from_npz(const fs::path& path, const std::vector<char>& bytes, const ForwardArguments& forward) {
  NamedEntries entries;
  bool positional = true;
  // An .npy member's header says how many bytes its shape needs: a member declared at fewer or more is refused
  // before it is inflated (a zip bomb costs its header, not its inflation: one of 16 images declared at 1 GiB was
  // read whole). A member that is no .npy at all is judged whole.
  const MemberCheck npy_header_fits = [&](const std::string& name, std::string_view head, uint64_t size) {
    if (!ends_with(name, ".npy") || head.substr(0, 6) != "\x93NUMPY") return;
    const TensorFileHeader h = parse_npy_header(head, size, (path / name).string());
    if (size > h.data_offset + h.data_bytes)
      throw InputError((path / name).string(),
                       fmt::format("is {} bytes, but its header's shape needs {} after a header of {}: {} bytes "
                                   "more than the array holds",
                                   size, h.data_bytes, h.data_offset, size - h.data_offset - h.data_bytes),
                       "save the file again (numpy.savez or numpy.savez_compressed)");
  };
  for (auto& m : read_zip_members(std::string_view(bytes.data(), bytes.size()), path.string(), npy_header_fits)) {
    std::string name = ends_with(m.name, ".npy") ? m.name.substr(0, m.name.size() - 4) : m.name;
    // np.savez without names writes arr_0, arr_1, ...; only such names (digits, few enough to compare) are positional
    positional = positional && name.rfind("arr_", 0) == 0 && name.size() > 4 && name.size() <= 4 + 18 &&
                 name.find_first_not_of("0123456789", 4) == std::string::npos;
    entries.emplace_back(name, parse_npy(path / m.name, std::vector<char>(m.bytes.begin(), m.bytes.end())));
  }
  if (entries.empty()) throw InputError(path.string(), "holds no arrays", "save arrays with numpy.savez(path, x=..., y=...)");
  if (positional) {
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
      return std::stoll(a.first.substr(4)) < std::stoll(b.first.substr(4));
    });
    std::vector<c10::IValue> items;
    for (const auto& e : entries) items.push_back(e.second);
    return from_sequence(path, items, forward);
  }
  return from_named(path, entries, "the .npz", forward);
}

// NaN or Inf in a floating input, named by the sample it sits in (and the input, for a model with several).
void check_finite(const torch::Tensor& t, const std::string& file, const std::string& which) {
  if (!t.is_floating_point()) return;
  auto finite = torch::isfinite(t);
  if (finite.all().item<bool>()) return;
  int64_t bad = (~finite).sum().item<int64_t>();
  auto first = (~finite).flatten().nonzero()[0].item<int64_t>();
  int64_t per_sample = std::max<int64_t>(t.numel() / t.size(0), 1);
  throw InputError(file, std::to_string(bad) + " NaN/Inf values" + which + " (first in sample " +
                             std::to_string(first / per_sample) + ")",
                   "clean the data; NaN inputs make calibration and accuracy meaningless");
}

void validate(Dataset& d, const std::string& file) {
  if (!d.x.defined() || d.x.dim() == 0) throw InputError(file, "holds a scalar, not a batch of samples", "save a tensor [N, ...]");
  if (d.x.size(0) == 0) throw InputError(file, "holds no samples (first dimension is 0)", "pass a file with at least one sample");
  d.x = d.x.contiguous();
  check_finite(d.x, file, d.more_inputs.empty() ? "" : " in the first input");
  for (size_t i = 0; i < d.more_inputs.size(); ++i) {
    d.more_inputs[i] = d.more_inputs[i].contiguous();
    check_finite(d.more_inputs[i], file, " in input " + std::to_string(i + 2));
  }
  if (d.y) {
    auto y = d.y->flatten();
    if (y.size(0) != d.x.size(0))
      throw InputError(file, std::to_string(y.size(0)) + " labels for " + std::to_string(d.x.size(0)) + " samples",
                       "pass one label per sample");
    if (y.is_floating_point()) {
      if (!torch::equal(y, y.round())) throw InputError(file, "labels are not whole numbers", "store class indices (int64)");
    }
    d.y = y.to(torch::kInt64);
  }
}

// ---- the format, from data_format.hpp's table: by name, else by the first bytes ----
std::string_view view_of(const std::vector<char>& bytes) { return std::string_view(bytes.data(), bytes.size()); }

// The samples (and labels, where the format holds them) of a non-empty data file.
Dataset read_samples(const fs::path& path, const ForwardArguments& forward) {
  std::vector<char> bytes;  // read here only when the name does not tell the format
  std::optional<DataFormat> format = data_format_by_name(path.filename().string());
  if (!format) {
    bytes = read_all(path);
    format = data_format_by_contents(view_of(bytes));
  }
  if (!format) {
    const std::string file = path.string();
    if (starts_gzip(view_of(bytes)))
      throw InputError(file, "is gzip-compressed but not named like an idx file",
                       "name MNIST idx files *-idx3-ubyte.gz, or decompress it");
    throw InputError(file, "unknown data format",
                     "pass a torch.save file (tensor, {'x','y'} dict, list or tuple), a .npy or .npz file, or idx files with "
                     "{labels}");
  }
  if (bytes.empty() && *format != DataFormat::idx) bytes = read_all(path);
  Dataset d;
  switch (*format) {
    case DataFormat::npy: d.x = parse_npy(path, bytes); break;
    case DataFormat::npz: d = from_npz(path, bytes, forward); break;
    case DataFormat::torch_save: d = from_pickle(path, bytes, forward); break;
    case DataFormat::idx:
      d.x = parse_idx(path, read_maybe_gzip(path));
      // Images become float [0,1] with a channel dimension, the form a CNN trained on them expects.
      if (d.x.dim() == 3) d.x = d.x.unsqueeze(1);
      d.x = d.x.to(torch::kFloat32).div_(255.0f);
      break;
  }
  return d;
}

// A --labels file: .npy or idx by name, else a torch.save file (its tensor, or the x of what it holds).
torch::Tensor read_label_file(const fs::path& path) {
  const std::optional<DataFormat> format = data_format_by_name(path.filename().string());
  if (format == DataFormat::npy) return parse_npy(path, read_all(path));
  if (format == DataFormat::idx) return parse_idx(path, read_maybe_gzip(path));
  return from_pickle(path, read_all(path)).x;
}

}  // namespace

Dataset load_dataset(const fs::path& path, const std::optional<fs::path>& labels, const ForwardArguments& forward) {
  const std::string file = path.string();
  std::error_code ec;
  if (!fs::exists(path, ec)) throw InputError(file, "no such file", "check the path");
  require_regular_file(path);  // a directory, a device (/dev/zero), a FIFO or a socket is refused here
  if (fs::file_size(path, ec) == 0) throw InputError(file, "is empty", "pass a file with at least one sample");

  Dataset d = read_samples(path, forward);
  d.source = path;
  require_all_inputs(d, forward);
  if (labels) {
    if (d.y) throw InputError(labels->string(), "the data file already carries labels", "drop {labels}");
    std::error_code lec;
    if (!fs::exists(*labels, lec)) throw InputError(labels->string(), "no such file", "check the {labels} path");
    require_regular_file(*labels);
    d.y = read_label_file(*labels);
  }
  validate(d, file);
  return d;
}

std::vector<torch::Tensor> Dataset::inputs() const {
  std::vector<torch::Tensor> all{x};
  all.insert(all.end(), more_inputs.begin(), more_inputs.end());
  return all;
}

Dataset take_first(const Dataset& d, int64_t n) {
  if (n <= 0 || n >= d.size()) return d;
  return rows_of(d, 0, n);
}

Dataset rows_of(const Dataset& d, int64_t begin, int64_t count) {
  Dataset out;
  out.source = d.source;
  out.x = d.x.narrow(0, begin, count);
  for (const auto& t : d.more_inputs) out.more_inputs.push_back(t.narrow(0, begin, count));
  if (d.y) out.y = d.y->narrow(0, begin, count);
  return out;
}

std::vector<torch::Tensor> batch_inputs(const Dataset& d, int64_t begin, int64_t batch) {
  return rows_of(d, begin, std::min(batch, d.size() - begin)).inputs();
}

std::pair<torch::Tensor, std::optional<torch::Tensor>> batch_of(const Dataset& d, int64_t begin, int64_t batch) {
  int64_t len = std::min(batch, d.size() - begin);
  std::optional<torch::Tensor> y;
  if (d.y) y = d.y->narrow(0, begin, len);
  return {d.x.narrow(0, begin, len), y};
}

}  // namespace lite::model
