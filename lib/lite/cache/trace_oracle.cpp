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
    return fill_records(b, kRecord, [this](const char* p, Record& rec) {
      uint32_t size;
      int64_t next;
      std::memcpy(&rec.key, p + 4, 8);
      std::memcpy(&size, p + 12, 4);
      std::memcpy(&next, p + 16, 8);
      if (size == 0) {
        ++stats_.n_skipped_zero_size;
        return false;
      }
      if (next < -1) {
        bad(fmt::format("record {}", records_), "'next_access'", fmt::format("{} is not a request index (>= 1) or -1", next));
        return false;
      }
      rec.size = size;
      rec.next = next == -1 ? kNoNextAccess : next;
      return true;
    });
  }
};

}  // namespace

std::unique_ptr<TraceReader> make_oracle_reader(const ReaderConfig& c, std::unique_ptr<BufferedInput> in) {
  return std::make_unique<OracleReader>(c, std::move(in));
}

}  // namespace lite::cache::detail
