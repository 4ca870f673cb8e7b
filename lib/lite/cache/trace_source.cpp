// The format table, the shared input buffer, field parsing, format detection and open_trace. The byte sources
// live in trace_source_fd.cpp (file, stdin, memory) and trace_source_zstd.cpp, --csv-columns in
// trace_csv_columns.cpp.
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstring>

#include "lite/cache/trace_internal.hpp"
#include "lite/core/error.hpp"
#include "lite/core/registry.hpp"
#include "lite/core/text.hpp"

namespace lite::cache {

const std::vector<TraceFormatEntry>& trace_formats() {
  static const std::vector<TraceFormatEntry> table = {
      {"auto", "", TraceFormat::auto_detect, "from the file name (.csv .txt .vscsi .oracleGeneral[.bin], + .zst), else the contents"},
      {"csv", "", TraceFormat::csv, "text with configurable columns (time, key, size, cost) and an optional header"},
      {"txt", "", TraceFormat::txt, "plain text, one key per line, every request size 1"},
      {"oracleGeneral", "oracleGeneralBin", TraceFormat::oracle_general,
       "libCacheSim binary: packed little-endian uint32 time, uint64 id, uint32 size, int64 next-access"},
      {"vscsi", "", TraceFormat::vscsi, "VMware vscsi v1 binary (32-byte records; len = size, lbn = key)"},
      {"mooncake", "", TraceFormat::mooncake,
       "LLM requests as JSON lines: timestamp, input_length, output_length, hash_ids of prefix blocks (prefix mode)"},
      {"tokens", "jsonl", TraceFormat::token_ids,
       "LLM requests as JSON lines of token ids (tokens or prompt_token_ids), cut into chained blocks (prefix mode)"},
  };
  return table;
}

TraceFormat parse_trace_format(const std::string& name) {
  return find_named(trace_formats(), name, "format", "trace format", [](const TraceFormatEntry& f) {
           std::vector<std::string> names{f.name};
           if (*f.alias) names.push_back(f.alias);
           return names;
         }).format;
}

std::string trace_format_name(TraceFormat f) {
  for (const auto& e : trace_formats())
    if (e.format == f) return e.name;
  return "?";
}

namespace detail {

BufferedInput::BufferedInput(std::unique_ptr<ByteSource> source, std::string name, size_t buffer_size)
    : source_(std::move(source)), name_(std::move(name)), buf_(new char[buffer_size]), capacity_(buffer_size) {}

size_t BufferedInput::ensure(size_t want) {
  if (end_ - pos_ >= want || source_done_) return end_ - pos_;
  if (pos_ > 0) {
    std::memmove(buf_.get(), buf_.get() + pos_, end_ - pos_);
    end_ -= pos_;
    pos_ = 0;
  }
  if (want > capacity_) {
    const size_t bigger = std::max(want, capacity_ * 2);
    std::unique_ptr<char[]> grown(new char[bigger]);
    std::memcpy(grown.get(), buf_.get(), end_);
    buf_ = std::move(grown);
    capacity_ = bigger;
  }
  while (end_ < want && !source_done_) {
    size_t got = source_->read(buf_.get() + end_, capacity_ - end_);
    if (got == 0) source_done_ = true;
    end_ += got;
  }
  return end_ - pos_;
}

bool BufferedInput::next_line(std::string_view& line) {
  size_t scanned = 0;
  while (true) {
    const char* start = buf_.get() + pos_;
    const size_t avail = end_ - pos_;
    const void* nl = avail > scanned ? std::memchr(start + scanned, '\n', avail - scanned) : nullptr;
    if (nl) {
      size_t len = static_cast<const char*>(nl) - start;
      if (len > max_line_) line_too_long();
      pos_ += len + 1;
      ++line_;
      if (len && start[len - 1] == '\r') --len;
      line = std::string_view(start, len);
      return true;
    }
    if (avail > max_line_) line_too_long();
    if (source_done_) {
      if (avail == 0) return false;
      size_t len = avail;  // the last line has no '\n'
      pos_ = end_;
      ++line_;
      if (len && start[len - 1] == '\r') --len;
      line = std::string_view(start, len);
      return true;
    }
    scanned = avail;
    // grow geometrically, but never read more than one byte past the longest line allowed
    ensure(std::min(avail + std::max<size_t>(avail, 1 << 16), max_line_ + 1));
  }
}

void BufferedInput::limit_lines(size_t max_bytes, std::string what, std::string fix) {
  max_line_ = max_bytes;
  long_line_what_ = std::move(what);
  long_line_fix_ = std::move(fix);
}

void BufferedInput::line_too_long() const {
  throw InputError(fmt::format("{}:{}", name_.empty() ? std::string("trace") : name_, line_ + 1),
                   fmt::format("the line is longer than {} bytes ({} MiB, the longest line {} may have)", max_line_,
                               max_line_ >> 20, long_line_what_),
                   long_line_fix_);
}

void TraceReader::bad(const std::string& where, const std::string& field, const std::string& problem) {
  if (config_.skip_bad_lines) {
    ++stats_.n_bad_lines;
    return;
  }
  // A text line is FILE:LINE (the compilers' form); a binary record is FILE: record N.
  const bool line_number = where.find(' ') == std::string::npos;
  throw InputError(line_number ? name_ + ":" + where : name_,
                   (line_number ? "" : where + ": ") + "field " + field + ": " + problem,
                   "fix the trace or pass {skip_bad_lines} to skip malformed lines");
}

void skip_utf8_bom(BufferedInput& in) {
  if (in.ensure(3) >= 3 && std::memcmp(in.data(), "\xEF\xBB\xBF", 3) == 0) in.consume(3);
}

std::string_view trim_view(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
  return s.substr(b, e - b);
}

bool parse_uint(std::string_view text, uint64_t& value) {
  text = trim_view(text);
  if (text.empty() || text.size() > 20) return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  value = v;
  return true;
}

bool parse_double(std::string_view text, double& value) {
  text = trim_view(text);
  uint64_t whole;
  if (text.size() <= 15 && parse_uint(text, whole)) {  // the common case, exact below 2^53
    value = static_cast<double>(whole);
    return true;
  }
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  if (text.empty()) return false;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && p == text.data() + text.size() && std::isfinite(value);
}

bool parse_key(std::string_view text, uint64_t& key) {
  text = trim_view(text);
  if (text.empty()) return false;
  if (parse_uint(text, key)) return true;
  // FNV-1a over the bytes, then murmur's finalizer for good high bits
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  key = hash_key(h ^ 0x9e3779b97f4a7c15ULL);
  return true;
}

TraceFormat format_from_name(const std::string& path) {
  std::string p = to_lower(path);
  for (const char* z : {".zst", ".zstd"}) {
    std::string s(z);
    if (p.size() > s.size() && p.compare(p.size() - s.size(), s.size(), s) == 0) p.resize(p.size() - s.size());
  }
  auto ends = [&](const std::string& s) { return p.size() >= s.size() && p.compare(p.size() - s.size(), s.size(), s) == 0; };
  if (ends(".csv")) return TraceFormat::csv;
  if (ends(".txt")) return TraceFormat::txt;
  if (ends(".vscsi")) return TraceFormat::vscsi;
  auto slash = p.find_last_of('/');
  std::string base = slash == std::string::npos ? p : p.substr(slash + 1);
  if (base.find("oraclegeneral") != std::string::npos) return TraceFormat::oracle_general;
  return TraceFormat::auto_detect;
}

namespace {

TraceFormat format_from_contents(BufferedInput& in, const std::string& name) {
  size_t n = in.ensure(size_t(64) << 10);
  const char* d = in.data();
  if (n == 0) return TraceFormat::txt;  // empty: any text reader reports "no requests"
  bool binary = std::memchr(d, '\0', std::min<size_t>(n, 4096)) != nullptr;
  if (binary) {
    if (n >= 64) {
      uint16_t v0, v1;
      std::memcpy(&v0, d + 14, 2);
      std::memcpy(&v1, d + 32 + 14, 2);
      if ((v0 >> 8) == 1 && (v1 >> 8) == 1) return TraceFormat::vscsi;
    }
    throw InputError(name, "cannot tell the trace format from the file name or contents (binary data)",
                     "pass {format} oracleGeneral or {format} vscsi");
  }
  const char* nl = static_cast<const char*>(std::memchr(d, '\n', n));
  std::string_view first(d, nl ? static_cast<size_t>(nl - d) : n);
  if (first.find_first_not_of(" \t") != std::string_view::npos && first[first.find_first_not_of(" \t")] == '{')
    throw InputError(name, "holds JSON lines, which no object trace format is",
                     "an LLM request trace needs hash_ids or tokens on every line, and on a pipe {format} mooncake or "
                     "{format} tokens");
  for (char c : {',', '\t', ';', '|'})
    if (first.find(c) != std::string_view::npos) return TraceFormat::csv;
  return TraceFormat::txt;
}

}  // namespace

std::unique_ptr<TraceReader> open_trace(const ReaderConfig& config) {
  const std::string name = config.display.empty() ? display_name(config.path) : config.display;
  return open_trace(config, open_source(config.path, name));
}

std::unique_ptr<TraceReader> open_trace(const ReaderConfig& config, std::unique_ptr<ByteSource> source) {
  const std::string name = config.display.empty() ? display_name(config.path) : config.display;
  auto in = std::make_unique<BufferedInput>(std::move(source), name);
  TraceFormat f = config.format;
  if (f == TraceFormat::auto_detect && config.path != "-") f = format_from_name(config.path);
  if (f == TraceFormat::auto_detect) f = format_from_contents(*in, name);
  ReaderConfig c = config;
  c.format = f;
  if (f == TraceFormat::csv || f == TraceFormat::txt) check_text_trace(*in, name);
  else check_not_all_zero(*in, name, f);
  switch (f) {
    case TraceFormat::csv: return make_csv_reader(c, std::move(in));
    case TraceFormat::txt: return make_txt_reader(c, std::move(in));
    case TraceFormat::oracle_general: return make_oracle_reader(c, std::move(in));
    case TraceFormat::vscsi: return make_vscsi_reader(c, std::move(in));
    case TraceFormat::mooncake:
    case TraceFormat::token_ids:
      throw InputError(name, "is a prefix (LLM request) trace, which this path does not read",
                       "run lite cache-sim on it in one process (its prefix mode), without --nodes or mpirun");
    case TraceFormat::auto_detect: break;
  }
  throw InternalError("trace format not resolved");
}

}  // namespace detail
}  // namespace lite::cache
