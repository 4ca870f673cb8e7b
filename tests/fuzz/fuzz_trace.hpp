#pragma once
// Shared by the trace-reader fuzz targets: reads a whole in-memory trace through lite's reader for one format,
// in small batches (records then cross batch boundaries), and checks what a reader promises: every request it
// delivers has a size within 32 bits (1 in object mode), a finite non-negative cost, and a next-access index
// that is 'never' or >= 1; the count it reports equals what it delivered.
#include <cmath>
#include <string_view>

#include "fuzz_common.hpp"
#include "lite/cache/trace_internal.hpp"

namespace fuzz {

inline void read_trace(lite::cache::detail::ReaderConfig config, std::string_view bytes) {
  using namespace lite::cache::detail;
  expect_clean([&] {
    auto reader = open_trace(config, open_memory_source(bytes, "fuzz"));
    Batch batch;
    batch.reserve(7);
    uint64_t delivered = 0;
    while (true) {
      batch.n = 0;
      if (!reader->fill(batch)) break;
      require(batch.n > 0 && batch.n <= batch.capacity(), "a filled batch holds 1..capacity requests");
      for (size_t i = 0; i < batch.n; ++i) {
        require(config.bytes || batch.size[i] == 1, "object mode: every size is 1");
        require(std::isfinite(batch.cost[i]) && batch.cost[i] >= 0, "costs are finite and >= 0");
        require(batch.next[i] == lite::cache::kNoNextAccess || batch.next[i] >= 0, "next access is an index");
      }
      delivered += batch.n;
    }
    require(reader->stats().n_read == delivered, "n_read counts the delivered requests");
  });
}

// The reader options from the flag byte: bit 0 --bytes, bit 1 --has-header, bit 2 --skip-bad-lines,
// bit 3 no cost column wanted.
inline lite::cache::detail::ReaderConfig reader_config(lite::cache::TraceFormat format, uint8_t flags) {
  lite::cache::detail::ReaderConfig c;
  c.path = "";
  c.display = "fuzz";
  c.format = format;
  c.bytes = (flags & 1) != 0;
  c.has_header = (flags & 2) != 0;
  c.skip_bad_lines = (flags & 4) != 0;
  c.want_cost = (flags & 8) == 0;
  return c;
}

}  // namespace fuzz
