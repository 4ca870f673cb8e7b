// Fuzz target: the csv trace reader (header detection and column names, delimiter detection, quoted fields,
// numbers), read from memory.
// Input: byte 0 = reader flags (fuzz_trace.hpp) and, in bits 4-5, one of four --csv-columns settings (none:
// from the header or key=1; key and size; all four columns with a tab delimiter; a far column); the rest = the
// trace. Invariants: fuzz_trace.hpp.
#include "fuzz_trace.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fuzz::Split in = fuzz::split_flags(data, size);
  auto config = fuzz::reader_config(lite::cache::TraceFormat::csv, in.flags);
  static const char* const columns[] = {"", "key=1,size=2", "time=1,key=2,size=3,cost=4,delimiter=tab", "key=9"};
  const char* spec = columns[(in.flags >> 4) & 3];
  if (*spec) config.csv = lite::cache::parse_csv_columns(spec);
  fuzz::read_trace(config, in.rest);
  return 0;
}
