// Is this a trace at all? Binary data given to a text reader (a .csv that is really a tarball, /dev/urandom,
// --format txt on an oracleGeneral file) would otherwise be read as keys, one "line" per random '\n', with a
// new object for almost every line: a long, meaningless run. So the text readers look at the first 64 KiB
// first: a NUL byte, or more than 1% control characters that text does not use, is binary. Only the start is
// checked (a stream is never read twice); the line bound in BufferedInput::next_line covers the rest. Bytes
// >= 0x80 are allowed: keys may be UTF-8 or Latin-1, and a text trace may be either.
// The binary readers get the matching check for all-zero data: a record of zeros has size 0 and is skipped,
// so /dev/zero as oracleGeneral would be skipped forever.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "lite/cache/trace_internal.hpp"
#include "lite/core/error.hpp"

namespace lite::cache::detail {
namespace {

bool is_text_control(unsigned char c) {
  if (c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') return false;
  return c < 0x20 || c == 0x7f;
}

}  // namespace

void check_text_trace(BufferedInput& in, const std::string& name) {
  const size_t n = in.ensure(kTextCheckBytes);
  const size_t looked = std::min(n, kTextCheckBytes);
  const auto* d = reinterpret_cast<const unsigned char*>(in.data());
  const char* fix = "pass {format} oracleGeneral or {format} vscsi for a binary trace, or check that this is the trace";
  // spreadsheets export "Unicode text" as UTF-16: a NUL byte in every other place, after a byte-order mark
  if (looked >= 2 && ((d[0] == 0xFF && d[1] == 0xFE) || (d[0] == 0xFE && d[1] == 0xFF)))
    throw InputError(name, "is UTF-16 text, not a text trace in UTF-8 or ASCII",
                     "convert it, e.g. iconv -f UTF-16 -t UTF-8 FILE > FILE.utf8.csv");
  if (const void* nul = std::memchr(d, '\0', looked))
    throw InputError(name,
                     fmt::format("is not a text trace: byte {} is a NUL byte (binary data)",
                                 static_cast<const unsigned char*>(nul) - d + 1),
                     fix);
  const size_t controls = static_cast<size_t>(std::count_if(d, d + looked, is_text_control));
  if (controls * 100 > looked)
    throw InputError(name,
                     fmt::format("is not a text trace: {} of its first {} bytes are control characters (binary data)",
                                 controls, looked),
                     fix);
}

void check_not_all_zero(BufferedInput& in, const std::string& name, TraceFormat format) {
  const size_t n = in.ensure(kTextCheckBytes);
  if (n < kTextCheckBytes) return;  // a short file of zeros is reported as having no requests
  const char* d = in.data();
  if (std::any_of(d, d + kTextCheckBytes, [](char c) { return c != 0; })) return;
  throw InputError(name,
                   fmt::format("is not {} {} trace: its first {} KiB are all zero bytes (every record would have size 0)",
                               format == TraceFormat::oracle_general ? "an" : "a", trace_format_name(format),
                               kTextCheckBytes >> 10),
                   "pass the trace itself (not /dev/zero, a sparse or a preallocated file)");
}

}  // namespace lite::cache::detail
