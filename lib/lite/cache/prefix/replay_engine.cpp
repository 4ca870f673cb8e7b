// replay_engine(): the trace through an engine's block pool in time (engine.hpp). Requests are admitted in file
// order, none before the one ahead of it (FCFS: vLLM's and SGLang's schedulers stop at the first waiting request
// that does not fit). A request runs from admission until its first token (the prefill model's time, queued over
// the instances when given; none without a model) plus output_length x decode_ms; then its blocks are released.
// When its blocks do not fit beside the pinned ones it waits for the next running request to finish.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>

#include "lite/cache/prefix/engine.hpp"
#include "lite/cache/prefix/replay.hpp"
#include "lite/core/clock.hpp"
#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"

namespace lite::cache::prefix {
namespace {

struct Running {
  double finish_ms;
  size_t request;
  bool operator>(const Running& o) const {
    return finish_ms > o.finish_ms || (finish_ms == o.finish_ms && request > o.request);
  }
};

class EngineReplay {
 public:
  explicit EngineReplay(const ReplaySetup& s)
      : s_(s), t_(*s.trace), cache_(s.engine->make({s.trace, s.capacity_blocks})), row_(start_row(s)) {
    row_.policy = s.engine->name;
    counters_.decode_ms = s.decode_ms;
    if (s.prefill) {
      clock_.emplace(*s.prefill, s.instances);
      ttft_.reserve(t_.requests());
    }
  }

  PrefixRow run() {
    for (size_t r = 0; r < t_.requests(); ++r) {
      serve(r);
      if ((r & 8191) == 8191) throw_if_interrupted();
    }
    finish_until(std::numeric_limits<double>::infinity());  // the trace ends: every request completes
    if (counters_.waited) counters_.wait_mean_ms = wait_sum_ms_ / double(counters_.waited);
    counters_.evicted_blocks = cache_->evicted();
    row_.engine = counters_;
    const EngineCache& cache = *cache_;
    finish_row(row_, t_, cache.occupied(), count_orphans(t_, [&cache](uint32_t b) { return cache.cached(b); }),
               ttft_);
    return row_;
  }

 private:
  void serve(size_t r) {
    const double arrival = double(t_.arrival_ms[r]);
    double now = std::max(arrival, last_admission_ms_);
    finish_until(now);
    if (cache_->blocks_needed(r) > s_.capacity_blocks) {  // never fits: computed without the cache
      ++counters_.too_large;
      if (clock_) ttft_.push_back(now - arrival + clock_->serve(int64_t(now), 0, t_.input_tokens[r]));
      return;
    }
    uint64_t hit = 0;
    while (!cache_->admit(r, hit)) {
      if (running_.empty()) throw InternalError(fmt::format("engine {}: request {} fits no empty pool", row_.policy, r));
      now = std::max(now, running_.top().finish_ms);
      finish_until(now);
    }
    last_admission_ms_ = now;
    if (now > arrival) {
      ++counters_.waited;
      wait_sum_ms_ += now - arrival;
      counters_.wait_max_ms = std::max(counters_.wait_max_ms, now - arrival);
    }
    row_.hit_tokens += hit;
    row_.hit_blocks += (hit + t_.block_tokens - 1) / t_.block_tokens;  // a block partly hit counts
    double first_token = now;
    if (clock_) {
      first_token += clock_->serve(int64_t(now), hit, t_.input_tokens[r] - hit);
      ttft_.push_back(first_token - arrival);
    }
    running_.push({first_token + double(t_.output_tokens[r]) * s_.decode_ms, r});
  }

  // Releases every running request that has finished by `now`, earliest first.
  void finish_until(double now) {
    while (!running_.empty() && running_.top().finish_ms <= now) {
      cache_->finish(running_.top().request);
      running_.pop();
    }
  }

  const ReplaySetup& s_;
  const BlockTrace& t_;
  std::unique_ptr<EngineCache> cache_;
  PrefixRow row_;
  EngineCounters counters_;
  std::optional<TtftClock> clock_;
  std::vector<double> ttft_;
  std::priority_queue<Running, std::vector<Running>, std::greater<>> running_;
  double last_admission_ms_ = -std::numeric_limits<double>::infinity(), wait_sum_ms_ = 0;
};

}  // namespace

PrefixRow replay_engine(const ReplaySetup& s) {
  const auto start = Clock::now();
  PrefixRow row = EngineReplay(s).run();
  row.seconds = seconds_since(start);
  return row;
}

}  // namespace lite::cache::prefix
