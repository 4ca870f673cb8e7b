#pragma once
// Streaming trace readers. A ByteSource yields raw bytes (a file, stdin, or a zstd stream around
// either); BufferedInput keeps one buffer (1 MiB) that the format parsers read records and lines
// straight out of; one TraceReader per format turns them into batches of requests. Memory is the
// buffer plus the batch, whatever the trace length.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lite/cache/cache_sim.hpp"
#include "lite/cache/policy_internal.hpp"

namespace lite::cache::detail {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to n bytes; 0 means the end. Throws InputError on a read error or corrupt data.
  virtual size_t read(char* dst, size_t n) = 0;
  // Bytes taken from the underlying file so far (compressed bytes for zstd), for progress.
  virtual uint64_t consumed() const = 0;
};

// Every byte read from a file or stdin, in order, before any decompression (a spool of a stream).
using CopyBytes = std::function<void(const char* data, size_t n)>;
// Opens a path ("-" = stdin); transparently decompresses zstd (detected by its magic number). `copy`, when
// given, sees every raw byte read, so one pass over a stream can also spool it (trace_source_fd.cpp).
std::unique_ptr<ByteSource> open_source(const std::string& path, const std::string& display = "",
                                        CopyBytes copy = {});
// True for stdin and for paths that can be read only once (a FIFO, /dev/fd/N of a pipe, a character
// device): a trace read twice must be spooled. A path that cannot be stat'ed is not a stream (opening it
// reports the problem).
bool is_stream(const std::string& path);
// Bytes in memory, which must outlive the source (tests, fuzz targets); zstd detected as for files.
std::unique_ptr<ByteSource> open_memory_source(std::string_view bytes, const std::string& name);
// True when `head` starts with zstd's frame magic number (28 B5 2F FD).
bool has_zstd_magic(std::string_view head);
// Decompresses `inner` as a zstd stream (trace_source_zstd.cpp).
std::unique_ptr<ByteSource> make_zstd_source(std::unique_ptr<ByteSource> inner, const std::string& name);
// Size of a regular file in bytes (0 if unknown, e.g. stdin or a pipe).
uint64_t file_size_or_zero(const std::string& path);
// The name used in messages: the path, or "<stdin>".
std::string display_name(const std::string& path);

// The longest line a text trace may have (docs/cache-sim.md "Trace formats"): a file or stream without line breaks
// (/dev/zero, a binary file read as text) stops here instead of growing the buffer until memory runs out.
constexpr size_t kMaxLineBytes = size_t(1) << 20;
// How much of a text trace is looked at to tell text from binary data (check_text_trace).
constexpr size_t kTextCheckBytes = size_t(64) << 10;

class BufferedInput {
 public:
  // `name` is the trace in messages (a line longer than kMaxLineBytes is reported as NAME:LINE).
  BufferedInput(std::unique_ptr<ByteSource> source, std::string name = "", size_t buffer_size = size_t(1) << 20);
  // Makes at least `want` bytes available (fewer only at the end); returns what is available.
  size_t ensure(size_t want);
  const char* data() const { return buf_.get() + pos_; }
  size_t available() const { return end_ - pos_; }
  void consume(size_t n) { pos_ += n; }
  bool at_end() { return available() == 0 && ensure(1) == 0; }
  // The next line without its '\n' (and a trailing '\r'); false at the end. Valid until the next call.
  // Throws InputError (NAME:LINE) for a line longer than the limit (kMaxLineBytes unless limit_lines says).
  bool next_line(std::string_view& line);
  // Another longest line, for a format whose lines are longer by nature (a prompt's token ids), and what the
  // message says of it: `what` names the kind of trace, `fix` what to do.
  void limit_lines(size_t max_bytes, std::string what, std::string fix);
  uint64_t line_number() const { return line_; }
  uint64_t source_consumed() const { return source_->consumed(); }

 private:
  [[noreturn]] void line_too_long() const;

  std::unique_ptr<ByteSource> source_;
  std::string name_;
  std::unique_ptr<char[]> buf_;  // not zero-filled
  size_t capacity_;
  size_t max_line_ = kMaxLineBytes;
  std::string long_line_what_ = "a text trace";
  std::string long_line_fix_ = "is it a binary trace? pass {format} oracleGeneral or {format} vscsi; else split the line";
  size_t pos_ = 0, end_ = 0;
  bool source_done_ = false;
  uint64_t line_ = 0;
};

struct ReaderConfig {
  std::string path;
  std::string display;  // name in messages ("" = the path, or <stdin>)
  TraceFormat format = TraceFormat::auto_detect;
  CsvColumns csv;
  bool has_header = false;
  bool bytes = false;
  bool skip_bad_lines = false;
  bool want_cost = true;  // false: ignore an auto-detected cost column (another miss-latency source wins)
};

struct ReaderStats {
  uint64_t n_read = 0;           // requests delivered
  uint64_t n_skipped_zero_size = 0;
  uint64_t n_bad_lines = 0;
};

class TraceReader {
 public:
  virtual ~TraceReader() = default;
  // Appends requests to `batch` (key, size, cost, next) until it is full; false once the trace ended
  // and nothing was appended.
  virtual bool fill(Batch& batch) = 0;

  TraceFormat format() const { return format_; }
  bool has_cost() const { return has_cost_; }
  bool has_next() const { return has_next_; }
  const ReaderStats& stats() const { return stats_; }
  uint64_t bytes_consumed() const { return in_->source_consumed(); }
  std::vector<std::string> notes;  // e.g. "csv columns: key=5 size=4 (from the header)"

 protected:
  TraceReader(const ReaderConfig& config, std::unique_ptr<BufferedInput> in, TraceFormat format)
      : config_(config),
        name_(config.display.empty() ? display_name(config.path) : config.display),
        in_(std::move(in)),
        format_(format) {}
  // A malformed line or record: throws InputError naming file, line/record and field, or counts it
  // when --skip-bad-lines is on.
  void bad(const std::string& where, const std::string& field, const std::string& problem);

  // One request decoded from a fixed-size binary record.
  struct Record {
    uint64_t key = 0;
    uint32_t size = 0;
    int64_t next = kNoNextAccess;
  };
  // The loop every fixed-size binary format shares: decodes whole records straight from the input
  // buffer into `batch`, and reports a truncated tail. decode(bytes, record) fills one request, or
  // returns false to skip the record (after calling bad() or counting it). records_ is the 1-based
  // index of the record being decoded, for messages.
  template <class Decode>
  bool fill_records(Batch& b, size_t record_bytes, Decode decode) {
    const size_t start = b.n;
    while (b.n < b.capacity()) {
      const size_t avail = in_->ensure(record_bytes * 4096);
      if (avail < record_bytes) {
        if (avail > 0) {
          in_->consume(avail);
          bad(fmt::format("record {}", records_ + 1), "'record'",
              fmt::format("truncated: the last {} bytes are not a whole {}-byte record", avail, record_bytes));
        }
        break;
      }
      const char* p = in_->data();
      const size_t count = std::min(avail / record_bytes, b.capacity() - b.n);
      for (size_t r = 0; r < count; ++r, p += record_bytes) {
        ++records_;
        Record rec;
        if (!decode(p, rec)) continue;
        b.key[b.n] = rec.key;
        b.size[b.n] = config_.bytes ? rec.size : 1;
        b.cost[b.n] = 0;
        b.next[b.n] = rec.next;
        ++b.n;
      }
      in_->consume(count * record_bytes);
    }
    stats_.n_read += b.n - start;
    return b.n > start;
  }
  uint64_t records_ = 0;

  ReaderConfig config_;
  std::string name_;
  std::unique_ptr<BufferedInput> in_;
  TraceFormat format_;
  bool has_cost_ = false, has_next_ = false;
  ReaderStats stats_;
};

// Opens the trace and picks the format (explicit, else from the name, else from the contents).
std::unique_ptr<TraceReader> open_trace(const ReaderConfig& config);
// The same over an already opened source (config.path then only serves format detection by name).
std::unique_ptr<TraceReader> open_trace(const ReaderConfig& config, std::unique_ptr<ByteSource> source);

// Format constructors (one file each).
std::unique_ptr<TraceReader> make_csv_reader(const ReaderConfig&, std::unique_ptr<BufferedInput>);
std::unique_ptr<TraceReader> make_txt_reader(const ReaderConfig&, std::unique_ptr<BufferedInput>);
std::unique_ptr<TraceReader> make_oracle_reader(const ReaderConfig&, std::unique_ptr<BufferedInput>);
std::unique_ptr<TraceReader> make_vscsi_reader(const ReaderConfig&, std::unique_ptr<BufferedInput>);

// Keys: a decimal number is its value (so the same id in txt, csv, vscsi and oracleGeneral is the
// same object); anything else is hashed (64-bit). Returns false for an empty key.
bool parse_key(std::string_view text, uint64_t& key);
// A plain decimal unsigned integer (surrounding blanks allowed).
bool parse_uint(std::string_view text, uint64_t& value);
bool parse_double(std::string_view text, double& value);
std::string_view trim_view(std::string_view s);
// The format a file name says (.csv, .txt, .vscsi, oracleGeneral; a .zst/.zstd suffix ignored), else auto.
TraceFormat format_from_name(const std::string& path);
// Refuses binary data read as a text trace (trace_text_check.cpp): InputError naming the trace when its first
// kTextCheckBytes hold a NUL byte or more than 1% control characters other than tab, CR, LF, FF and VT.
void check_text_trace(BufferedInput& in, const std::string& name);
// Refuses a binary trace whose first kTextCheckBytes are all zero bytes (/dev/zero, a preallocated or sparse
// file): every record would be skipped as size 0, forever on an endless stream.
void check_not_all_zero(BufferedInput& in, const std::string& name, TraceFormat format);
// Consumes a UTF-8 byte-order mark (EF BB BF) at the start of a text trace, which editors and spreadsheet
// exports write: it is not part of the first header name or key.
void skip_utf8_bom(BufferedInput& in);

}  // namespace lite::cache::detail
