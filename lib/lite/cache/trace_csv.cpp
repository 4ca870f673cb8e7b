// CSV traces: configurable 1-based columns (key, size, time, cost), an optional header, delimiter
// detected from the first line (',' '\t' ';' '|'), simple double-quoted fields. Without --csv-columns
// the header names pick the columns (key/obj_id/id/lbn, size/obj_size/bytes, time/timestamp,
// cost/latency_ms/...), else the key is column 1. A UTF-8 byte-order mark at the start is skipped. Size-0 requests are skipped, as libCacheSim's reader
// does. Parsing works on views into the reader's buffer: no allocation per line.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>

#include "lite/cache/trace_internal.hpp"
#include "lite/core/error.hpp"
#include "lite/core/text.hpp"

namespace lite::cache::detail {
namespace {

constexpr int kMaxColumns = 4096;

// Splits a line into fields (views; quotes stripped, "" left as is). Returns the number of fields.
size_t split_fields(std::string_view line, char delim, std::vector<std::string_view>& out, size_t needed) {
  out.clear();
  size_t i = 0;
  const size_t n = line.size();
  while (out.size() < needed) {
    if (i < n && line[i] == '"') {
      size_t j = i + 1;
      while (j < n) {
        if (line[j] == '"') {
          if (j + 1 < n && line[j + 1] == '"') {
            j += 2;
            continue;
          }
          break;
        }
        ++j;
      }
      out.push_back(line.substr(i + 1, j - (i + 1)));
      size_t d = line.find(delim, j);
      if (d == std::string_view::npos) return out.size();
      i = d + 1;
      continue;
    }
    size_t d = line.find(delim, i);
    if (d == std::string_view::npos) {
      out.push_back(line.substr(i));
      return out.size();
    }
    out.push_back(line.substr(i, d - i));
    i = d + 1;
  }
  return out.size();
}

int column_for_header(const std::string& name) {
  static const std::vector<std::pair<std::vector<std::string>, int>> aliases = {
      {{"key", "obj_id", "obj-id", "objid", "object_id", "object", "obj", "id", "lbn", "item", "request", "item_id",
        "prompt_id", "input_id"},
       0},
      {{"size", "obj_size", "obj-size", "object_size", "bytes", "len", "length", "size_bytes", "value_size"}, 1},
      {{"time", "timestamp", "ts", "clock_time", "real_time", "t"}, 2},
      {{"cost", "cost_ms", "latency", "latency_ms", "miss_cost", "miss_cost_ms", "miss_latency", "miss_latency_ms"},
       3},
  };
  const std::string n = to_lower(trim(name));
  for (const auto& [names, which] : aliases)
    if (std::find(names.begin(), names.end(), n) != names.end()) return which;
  return -1;
}

class CsvReader final : public TraceReader {
 public:
  CsvReader(const ReaderConfig& c, std::unique_ptr<BufferedInput> in) : TraceReader(c, std::move(in), TraceFormat::csv) {
    columns_ = c.csv;
    skip_utf8_bom(*in_);  // else the header's first name, or the first key, would carry it
    // Look at the first line without consuming it.
    size_t n = in_->ensure(size_t(64) << 10);
    std::string_view head(in_->data(), n);
    std::string_view first = head.substr(0, std::min(head.find('\n'), head.size()));
    if (!first.empty() && first.back() == '\r') first.remove_suffix(1);
    delim_ = columns_.delimiter;
    if (!delim_) {
      delim_ = ',';
      size_t best = 0;
      for (char d : {',', '\t', ';', '|'}) {
        size_t k = static_cast<size_t>(std::count(first.begin(), first.end(), d));
        if (k > best) best = k, delim_ = d;
      }
    }
    bool letters = false, digits = false;
    for (char ch : first) {
      letters = letters || (std::isalpha(static_cast<unsigned char>(ch)) != 0);
      digits = digits || (std::isdigit(static_cast<unsigned char>(ch)) != 0);
    }
    const bool header = c.has_header || (letters && !digits);
    std::vector<std::string_view> fields;
    if (header) {
      split_fields(first, delim_, fields, kMaxColumns);
      if (!columns_.explicit_columns) {
        CsvColumns found;
        for (size_t i = 0; i < fields.size(); ++i) {
          int which = column_for_header(std::string(fields[i]));
          int* target = which == 0 ? &found.key : which == 1 ? &found.size : which == 2 ? &found.time
                                                            : which == 3 ? &found.cost : nullptr;
          if (target && *target == 0) *target = static_cast<int>(i) + 1;
        }
        if (found.key == 0)
          throw InputError(name_ + ":1",
                           fmt::format("the header '{}' names no key column (key, obj_id, id, lbn, ...)", std::string(first)),
                           "pass {csv_columns} key=N[,size=N,time=N,cost=N]");
        found.delimiter = columns_.delimiter;
        if (found.cost && !c.want_cost) {
          notes.push_back(fmt::format("csv column {} ('{}') ignored: the miss latency comes from {{miss_latency_ms}}/{{miss_latency_from}}",
                                      found.cost, std::string(fields[found.cost - 1])));
          found.cost = 0;
        }
        columns_ = found;
        notes.push_back(fmt::format("csv columns from the header: key={}{}{}{}", columns_.key,
                                    columns_.size ? fmt::format(" size={}", columns_.size) : "",
                                    columns_.time ? fmt::format(" time={}", columns_.time) : "",
                                    columns_.cost ? fmt::format(" cost={}", columns_.cost) : ""));
      }
      std::string_view skipped;
      in_->next_line(skipped);
    } else if (!columns_.explicit_columns) {
      columns_.key = 1;
    }
    if (!c.want_cost && !columns_.explicit_columns) columns_.cost = 0;
    needed_ = static_cast<size_t>(std::max({columns_.key, columns_.size, columns_.time, columns_.cost}));
    has_cost_ = columns_.cost > 0;
  }

  bool fill(Batch& b) override {
    const size_t start = b.n;
    std::string_view line;
    while (b.n < b.capacity() && in_->next_line(line)) {
      if (trim_view(line).empty()) continue;
      size_t got = split_fields(line, delim_, fields_, needed_);
      if (got < needed_) {
        bad(std::to_string(in_->line_number()), column_name(static_cast<int>(got) + 1),
            fmt::format("the line has {} field{} but column {} is needed (delimiter '{}')", got, got == 1 ? "" : "s",
                        needed_, delim_ == '\t' ? "\\t" : std::string(1, delim_)));
        continue;
      }
      uint64_t key;
      if (!parse_key(fields_[columns_.key - 1], key)) {
        bad(std::to_string(in_->line_number()), column_label(columns_.key, "key"), "is empty");
        continue;
      }
      uint64_t size = 1;
      if (columns_.size) {
        std::string_view t = fields_[columns_.size - 1];
        if (!parse_uint(t, size)) {
          bad(std::to_string(in_->line_number()), column_label(columns_.size, "size"),
              fmt::format("'{}' is not a whole number of bytes", std::string(trim_view(t))));
          continue;
        }
        if (size > UINT32_MAX) {
          bad(std::to_string(in_->line_number()), column_label(columns_.size, "size"),
              fmt::format("{} is larger than 4294967295", size));
          continue;
        }
        if (size == 0) {
          ++stats_.n_skipped_zero_size;
          continue;
        }
      }
      if (columns_.time) {
        double t;
        if (!parse_double(fields_[columns_.time - 1], t)) {
          bad(std::to_string(in_->line_number()), column_label(columns_.time, "time"),
              fmt::format("'{}' is not a number", std::string(trim_view(fields_[columns_.time - 1]))));
          continue;
        }
      }
      double cost = 0;
      if (columns_.cost) {
        std::string_view t = fields_[columns_.cost - 1];
        // stored as float: a value beyond float's range would become inf
        if (!parse_double(t, cost) || cost < 0 || cost > std::numeric_limits<float>::max()) {
          bad(std::to_string(in_->line_number()), column_label(columns_.cost, "cost"),
              fmt::format("'{}' is not a latency in ms (a number >= 0)", std::string(trim_view(t))));
          continue;
        }
      }
      b.key[b.n] = key;
      b.size[b.n] = config_.bytes ? static_cast<uint32_t>(size) : 1;
      b.cost[b.n] = static_cast<float>(cost);
      b.next[b.n] = kNoNextAccess;
      ++b.n;
      ++stats_.n_read;
    }
    return b.n > start;
  }

 private:
  static std::string column_label(int col, const char* what) { return fmt::format("'{}' (column {})", what, col); }
  std::string column_name(int col) const {
    if (col == columns_.key) return column_label(col, "key");
    if (col == columns_.size) return column_label(col, "size");
    if (col == columns_.time) return column_label(col, "time");
    if (col == columns_.cost) return column_label(col, "cost");
    return fmt::format("column {}", col);
  }

  CsvColumns columns_;
  char delim_ = ',';
  size_t needed_ = 1;
  std::vector<std::string_view> fields_;
};

}  // namespace

std::unique_ptr<TraceReader> make_csv_reader(const ReaderConfig& c, std::unique_ptr<BufferedInput> in) {
  return std::make_unique<CsvReader>(c, std::move(in));
}

}  // namespace lite::cache::detail
