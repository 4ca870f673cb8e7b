#pragma once
// Which reader a data file (--data, --calib, --eval, --labels) goes to: the one table of data-file formats,
// told by the file's name first and else by its first bytes. load_dataset (dataset.cpp) and the chunked reader
// (chunked_dataset.cpp) both choose through it, so a file is read as the same format either way. Torch-free.
#include <optional>
#include <string_view>
#include <vector>

namespace lite::model {

enum class DataFormat { npy, npz, idx, torch_save };

struct DataFormatEntry {
  const char* name;
  DataFormat format;
  const char* description;
  bool (*named)(std::string_view file_name);  // the name says this format (nullptr: no name does)
  bool (*holds)(std::string_view head);       // the first bytes say this format (nullptr: they cannot tell)
};

// In the order they are tried, by name and by contents alike.
const std::vector<DataFormatEntry>& data_formats();

// The first format whose name rule matches `file_name` (a file name, not a path); nullopt when none does.
std::optional<DataFormat> data_format_by_name(std::string_view file_name);
// The first format whose content rule matches `head` (the file's first bytes, 512 are enough); nullopt when none.
std::optional<DataFormat> data_format_by_contents(std::string_view head);
// By name, else by contents.
std::optional<DataFormat> data_format_of(std::string_view file_name, std::string_view head);

// Whether `head` starts with gzip's magic bytes (1f 8b).
bool starts_gzip(std::string_view head);

}  // namespace lite::model
