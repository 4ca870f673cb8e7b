// Plain-text traces: one key per line (a decimal id or any string), every request size 1; blank
// lines are skipped (as libCacheSim's txt reader does). A UTF-8 byte-order mark at the start is skipped.
#include "lite/cache/trace_internal.hpp"

namespace lite::cache::detail {
namespace {

class TxtReader final : public TraceReader {
 public:
  TxtReader(const ReaderConfig& c, std::unique_ptr<BufferedInput> in) : TraceReader(c, std::move(in), TraceFormat::txt) {
    skip_utf8_bom(*in_);
  }

  bool fill(Batch& b) override {
    const size_t start = b.n;
    std::string_view line;
    while (b.n < b.capacity() && in_->next_line(line)) {
      uint64_t key;
      if (!parse_key(line, key)) continue;  // blank line
      b.key[b.n] = key;
      b.size[b.n] = 1;
      b.cost[b.n] = 0;
      b.next[b.n] = kNoNextAccess;
      ++b.n;
      ++stats_.n_read;
    }
    return b.n > start;
  }
};

}  // namespace

std::unique_ptr<TraceReader> make_txt_reader(const ReaderConfig& c, std::unique_ptr<BufferedInput> in) {
  return std::make_unique<TxtReader>(c, std::move(in));
}

}  // namespace lite::cache::detail
