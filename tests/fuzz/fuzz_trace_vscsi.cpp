// Fuzz target: VMware vscsi v1 binary traces (32-byte records), read from memory.
// Input: byte 0 = reader flags (see fuzz_trace.hpp: --bytes, --has-header, --skip-bad-lines, cost wanted);
// the rest = the trace. Invariants: fuzz_trace.hpp.
#include "fuzz_trace.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fuzz::Split in = fuzz::split_flags(data, size);
  fuzz::read_trace(fuzz::reader_config(lite::cache::TraceFormat::vscsi, in.flags), in.rest);
  return 0;
}
