// zstd framing: a ByteSource that decompresses another one as a stream (ZSTD_decompressStream), so a .zst
// trace of any length is read with two fixed buffers. A stream that ends inside a frame is reported as
// truncated, corrupt data as corrupt: both InputError naming the trace.
#include <zstd.h>

#include <vector>

#include "lite/cache/trace_internal.hpp"
#include "lite/core/error.hpp"

namespace lite::cache::detail {
namespace {

class ZstdSource final : public ByteSource {
 public:
  ZstdSource(std::unique_ptr<ByteSource> inner, std::string name)
      : inner_(std::move(inner)), name_(std::move(name)), stream_(ZSTD_createDStream()), in_buf_(ZSTD_DStreamInSize()) {
    if (!stream_) throw InternalError("ZSTD_createDStream failed");
    ZSTD_initDStream(stream_);
    in_ = {in_buf_.data(), 0, 0};
  }
  ~ZstdSource() override { ZSTD_freeDStream(stream_); }
  size_t read(char* dst, size_t n) override {
    ZSTD_outBuffer out{dst, n, 0};
    while (out.pos == 0) {
      if (in_.pos == in_.size) {
        if (inner_done_) {
          if (last_hint_ != 0)
            throw InputError(name_, "the zstd stream is truncated", "recompress the trace or pass the complete file");
          return 0;
        }
        size_t got = inner_->read(in_buf_.data(), in_buf_.size());
        in_ = {in_buf_.data(), got, 0};
        if (got == 0) {
          inner_done_ = true;
          continue;
        }
      }
      size_t hint = ZSTD_decompressStream(stream_, &out, &in_);
      if (ZSTD_isError(hint))
        throw InputError(name_, std::string("corrupt zstd data: ") + ZSTD_getErrorName(hint),
                         "check the file (zstd -t) or pass it uncompressed");
      last_hint_ = hint;
    }
    return out.pos;
  }
  uint64_t consumed() const override { return inner_->consumed(); }

 private:
  std::unique_ptr<ByteSource> inner_;
  std::string name_;
  ZSTD_DStream* stream_;
  std::vector<char> in_buf_;
  ZSTD_inBuffer in_;
  bool inner_done_ = false;
  size_t last_hint_ = 0;
};

}  // namespace

std::unique_ptr<ByteSource> make_zstd_source(std::unique_ptr<ByteSource> inner, const std::string& name) {
  return std::make_unique<ZstdSource>(std::move(inner), name);
}

}  // namespace lite::cache::detail
