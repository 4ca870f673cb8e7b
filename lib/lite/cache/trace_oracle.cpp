// libCacheSim's oracleGeneral binary format: packed little-endian 24-byte records
//   uint32 clock_time, uint64 obj_id, uint32 obj_size, int64 next_access_vtime
// where next_access_vtime is the 1-based index of the next request to the same object, -1 for none
// (read as "never", like libCacheSim's reader). Size-0 requests are skipped, as libCacheSim does.
// Records are decoded straight from the input buffer.
#include <fmt/format.h>

#include <cstring>

#include "lite/cache/trace_internal.hpp"

namespace lite::cache::detail {
namespace {

constexpr size_t kRecord = 24;

class OracleReader final : public TraceReader {
 public:
  OracleReader(const ReaderConfig& c, std::unique_ptr<BufferedInput> in)
      : TraceReader(c, std::move(in), TraceFormat::oracle_general) {
    has_next_ = true;
  }

  bool fill(Batch& b) override {
    const size_t start = b.n;
    while (b.n < b.capacity()) {
      size_t avail = in_->ensure(kRecord * 4096);
      if (avail < kRecord) {
        if (avail > 0) {
          in_->consume(avail);
          bad(fmt::format("record {}", record_ + 1), "'record'",
              fmt::format("truncated: the last {} bytes are not a whole 24-byte record", avail));
        }
        break;
      }
      const char* p = in_->data();
      size_t records = std::min(avail / kRecord, b.capacity() - b.n);
      for (size_t r = 0; r < records; ++r, p += kRecord) {
        ++record_;
        uint64_t id;
        uint32_t size;
        int64_t next;
        std::memcpy(&id, p + 4, 8);
        std::memcpy(&size, p + 12, 4);
        std::memcpy(&next, p + 16, 8);
        if (size == 0) {
          ++stats_.n_skipped_zero_size;
          continue;
        }
        if (next < -1) {
          bad(fmt::format("record {}", record_), "'next_access'",
              fmt::format("{} is not a request index (>= 1) or -1", next));
          continue;
        }
        b.key[b.n] = id;
        b.size[b.n] = config_.bytes ? size : 1;
        b.cost[b.n] = 0;
        b.next[b.n] = next == -1 ? kNoNextAccess : next;
        ++b.n;
      }
      in_->consume(records * kRecord);
    }
    stats_.n_read += b.n - start;
    return b.n > start;
  }

 private:
  uint64_t record_ = 0;
};

}  // namespace

std::unique_ptr<TraceReader> make_oracle_reader(const ReaderConfig& c, std::unique_ptr<BufferedInput> in) {
  return std::make_unique<OracleReader>(c, std::move(in));
}

}  // namespace lite::cache::detail
