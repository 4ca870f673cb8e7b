// VMware vscsi v1 traces: packed little-endian 32-byte records
//   uint32 sn, uint32 len, uint32 nSG, uint16 cmd, uint16 ver, uint64 lbn, uint64 ts (microseconds)
// with ver >> 8 == 1. lbn is the key and len the request size, as in libCacheSim's vscsi reader
// (which, unlike its oracleGeneral and csv readers, keeps size-0 requests; so does this one).
#include <fmt/format.h>

#include <cstring>

#include "lite/cache/trace_internal.hpp"
#include "lite/core/error.hpp"

namespace lite::cache::detail {
namespace {

constexpr size_t kRecord = 32;

class VscsiReader final : public TraceReader {
 public:
  VscsiReader(const ReaderConfig& c, std::unique_ptr<BufferedInput> in)
      : TraceReader(c, std::move(in), TraceFormat::vscsi) {
    size_t n = in_->ensure(kRecord);
    if (n >= kRecord) {
      uint16_t ver;
      std::memcpy(&ver, in_->data() + 14, 2);
      if ((ver >> 8) != 1) {
        uint16_t v2;  // vscsi v2 puts cmd, ver first
        std::memcpy(&v2, in_->data() + 2, 2);
        throw InputError(name_, (v2 >> 8) == 2 ? std::string("is a vscsi version 2 trace; only version 1 is supported")
                                               : fmt::format("is not a vscsi v1 trace (record 1 has version field 0x{:04x})", ver),
                         "convert it, or pass the right {format}");
      }
    }
  }

  bool fill(Batch& b) override {
    return fill_records(b, kRecord, [this](const char* p, Record& rec) {
      uint16_t ver;
      std::memcpy(&rec.size, p + 4, 4);
      std::memcpy(&ver, p + 14, 2);
      std::memcpy(&rec.key, p + 16, 8);
      if ((ver >> 8) != 1) {
        bad(fmt::format("record {}", records_), "'ver'", fmt::format("0x{:04x} is not vscsi version 1", ver));
        return false;
      }
      return true;
    });
  }
};

}  // namespace

std::unique_ptr<TraceReader> make_vscsi_reader(const ReaderConfig& c, std::unique_ptr<BufferedInput> in) {
  return std::make_unique<VscsiReader>(c, std::move(in));
}

}  // namespace lite::cache::detail
