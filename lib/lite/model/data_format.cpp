// The data-file format table (see data_format.hpp). A name rule wins over the contents: an idx file has no magic
// of its own (its header is a dtype code and dimension sizes), and a gzip-compressed .npy or idx file shows only
// gzip's. The contents tell the rest: NumPy's magic, and a zip that is an .npz (members *.npy) or else
// torch.save's archive (one top folder holding data.pkl).
#include "lite/model/data_format.hpp"


namespace lite::model {

namespace data_format_rules {  // named, not anonymous: lite_model is a unity build

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

bool named_npy(std::string_view name) { return ends_with(name, ".npy"); }
bool named_npz(std::string_view name) { return ends_with(name, ".npz"); }
// MNIST's names: train-images-idx3-ubyte(.gz), t10k-labels-idx1-ubyte.
bool named_idx(std::string_view name) {
  return name.find("idx") != std::string_view::npos || name.find("-ubyte") != std::string_view::npos;
}

bool holds_npy(std::string_view head) { return starts_with(head, "\x93NUMPY"); }
bool is_zip(std::string_view head) { return starts_with(head, "PK\x03\x04"); }
// A zip whose first member names say .npy and not torch.save's data.pkl.
bool holds_npz(std::string_view head) {
  const std::string_view first = head.substr(0, 512);
  return is_zip(head) && first.find(".npy") != std::string_view::npos &&
         first.find("data.pkl") == std::string_view::npos;
}
bool holds_torch_save(std::string_view head) { return is_zip(head); }  // tried after holds_npz

}  // namespace data_format_rules

const std::vector<DataFormatEntry>& data_formats() {
  using namespace data_format_rules;
  static const std::vector<DataFormatEntry> table = {
      {"npy", DataFormat::npy, "NumPy .npy (numpy.save), one array", named_npy, holds_npy},
      {"npz", DataFormat::npz, "NumPy .npz (numpy.savez), arrays by name", named_npz, holds_npz},
      {"idx", DataFormat::idx, "MNIST idx (*-idx3-ubyte), .gz too", named_idx, nullptr},
      {"torch.save", DataFormat::torch_save, "torch.save of a tensor, a {'x','y'} dict, a list or a tuple", nullptr,
       holds_torch_save},
  };
  return table;
}

std::optional<DataFormat> data_format_by_name(std::string_view file_name) {
  for (const auto& f : data_formats())
    if (f.named && f.named(file_name)) return f.format;
  return std::nullopt;
}

std::optional<DataFormat> data_format_by_contents(std::string_view head) {
  for (const auto& f : data_formats())
    if (f.holds && f.holds(head)) return f.format;
  return std::nullopt;
}

std::optional<DataFormat> data_format_of(std::string_view file_name, std::string_view head) {
  if (auto named = data_format_by_name(file_name)) return named;
  return data_format_by_contents(head);
}

bool starts_gzip(std::string_view head) { return data_format_rules::starts_with(head, "\x1f\x8b"); }

}  // namespace lite::model
