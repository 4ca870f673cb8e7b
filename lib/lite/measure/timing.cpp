#include "lite/measure/timing.hpp"

#include <algorithm>
#include <chrono>
#include <functional>
#include <limits>

#include <fmt/format.h>
#include <sys/resource.h>

#include "lite/core/deadline.hpp"
#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/core/stats.hpp"
#include "lite/model/inputs.hpp"

namespace lite::measure {

namespace {
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Minor page faults of the calling thread so far (the forward runs on it; intra-op workers touch
// memory the caller allocated, so its faults are the ones an allocator returning memory causes).
int64_t minor_faults() {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  return u.ru_minflt;
}

// One timed call. The argument vector is built once by the caller so that nothing but forward is timed;
// the page-fault count (`faults`, when given) is read outside the timed span.
inline double timed_forward(torch::jit::Module& m, std::vector<c10::IValue>& args, int64_t* faults = nullptr) {
  const int64_t faults_before = faults ? minor_faults() : 0;
  auto start = Clock::now();
  auto out = m.forward(args);
  double ms = ms_since(start);
  (void)out;
  if (faults) *faults += minor_faults() - faults_before;
  return ms;
}

// Page faults are counted on every kFaultSampleEvery-th timed call only, so that two getrusage system calls
// do not sit beside every forward of a fast model; the average over the sampled calls is the figure.
constexpr int64_t kFaultSampleEvery = 16;

struct FaultSample {
  int64_t faults = 0, calls = 0;
  // The counter to pass to timed_forward for timed call number `timed_index`, or nullptr.
  int64_t* counter(bool timed, int64_t timed_index) {
    if (!timed || timed_index % kFaultSampleEvery != 0) return nullptr;
    ++calls;
    return &faults;
  }
  double per_call() const { return calls == 0 ? 0 : double(faults) / double(calls); }
};

}  // namespace

StallDeadline hard_budget_deadline(const TimingOptions& o) {
  const double hard_s = o.hard_budget && o.budget_s > 0 ? o.budget_s * 2 + 30 : 0;
  return StallDeadline(hard_s,
                       fmt::format("{{budget_s}}: still running {:.0f} s into one measurement under a budget of {:g} s "
                                   "(a forward that never returns?); check the model with {{iterations}} 1, or give a "
                                   "larger {{budget_s}}",
                                   hard_s, o.budget_s),
                       exit_bad_input);
}

namespace {

// Runs `step` warm-up + timed times; each call of step(timed) returns its latency. Under a budget, fills
// `out`'s note, skipped flag and cost estimate (see timing.hpp). In duration mode, `settled()` (when given)
// is asked after each timed call from kMinSettleCalls on whether the measurement has decided what it is for.
template <typename Step>
void run_loop(const TimingOptions& o, Progress& progress, LatencySamples& out, Step step,
              const std::function<bool()>& settled = {}) {
  const auto loop_start = Clock::now();
  const double budget_ms = o.budget_s * 1000;
  const StallDeadline stall = hard_budget_deadline(o);
  double cheapest = std::numeric_limits<double>::infinity();
  int warmup = o.warmup, warmed = 0;
  bool warm_settled = false;
  const int least_warmup = std::min(o.warmup, kMinWarmup);
  {
    ProgressPhase phase(progress, "warm-up", static_cast<uint64_t>(o.warmup));
    for (; warmed < warmup; ++warmed) {
      throw_if_interrupted();
      const double before = cheapest, ms = step(false);
      cheapest = std::min(cheapest, ms);
      phase.advance();
      // Settling: the executor has specialized (kMinWarmup calls) and the last call costs what the best did.
      if (settled && warmed + 1 > kMinWarmup && ms <= 1.1 * before) {
        warm_settled = true;
        ++warmed;
        break;
      }
      if (budget_ms <= 0) continue;
      if (o.may_skip && cheapest * (least_warmup + kMinTimed) > budget_ms) {
        out.skipped = true;
        out.call_ms = cheapest;
        out.note = fmt::format("one call takes {:.0f} ms, so even {} warm-up and {} timed calls overrun the "
                               "{:.3g} s a measurement may take",
                               cheapest, least_warmup, kMinTimed, o.budget_s);
        return;
      }
      warmup = std::min(o.warmup, std::max(least_warmup, static_cast<int>(budget_ms / 3 / cheapest)));
    }
  }
  // The bar counts iterations, or elapsed milliseconds in duration mode.
  bool by_count = o.iterations > 0;
  ProgressPhase phase(progress, "measuring",
                      by_count ? static_cast<uint64_t>(o.iterations) : static_cast<uint64_t>(o.duration_s * 1000));
  auto start = Clock::now();
  uint64_t reported_ms = 0;
  bool cut = false;
  int64_t timed = 0;
  for (;; ++timed) {
    if (by_count) {
      if (timed >= o.iterations) break;
    } else if (timed >= o.min_iterations && ms_since(start) >= o.duration_s * 1000) {
      break;
    } else if (settled && timed >= kMinSettleCalls && settled()) {
      break;
    }
    if (budget_ms > 0 && timed >= kMinTimed && ms_since(loop_start) + cheapest > budget_ms) {
      cut = true;
      break;
    }
    if ((timed & 7) == 0) throw_if_interrupted();
    cheapest = std::min(cheapest, step(true));
    if (by_count) {
      phase.advance();
    } else if ((timed & 7) == 0) {
      auto elapsed = static_cast<uint64_t>(ms_since(start));
      if (elapsed > reported_ms) phase.advance(elapsed - reported_ms);
      reported_ms = elapsed;
    }
  }
  out.call_ms = cheapest;
  if (cut || (warmed < o.warmup && !warm_settled))
    out.note = fmt::format("measured with {} warm-up and {} timed calls instead of {} and {}{}: one call takes "
                           "{:.0f} ms and a measurement may take {:.3g} s",
                           warmed, timed, o.warmup, by_count ? "" : "at least ",
                           by_count ? int64_t(o.iterations) : int64_t(o.min_iterations), cheapest, o.budget_s);
}

std::vector<c10::IValue> as_args(const std::vector<torch::Tensor>& inputs) {
  return std::vector<c10::IValue>(inputs.begin(), inputs.end());
}
}  // namespace

LatencySamples time_forward(torch::jit::Module& module, const std::vector<torch::Tensor>& inputs,
                            const TimingOptions& o, const std::filesystem::path& model_path, Progress& progress) {
  validate(o);
  torch::NoGradGuard no_grad;
  // One checked call first: a wrong input shape becomes a one-line error instead of a crash mid-loop.
  model::run_forward(module, inputs, model_path);
  auto args = as_args(inputs);
  LatencySamples s;
  FaultSample faults;
  run_loop(o, progress, s, [&](bool timed) {
    double ms = timed_forward(module, args, faults.counter(timed, static_cast<int64_t>(s.ms.size())));
    (timed ? s.ms : s.warmup_ms).push_back(ms);
    return ms;
  });
  s.page_faults_per_call = faults.per_call();
  return s;
}

std::pair<LatencySamples, LatencySamples> time_interleaved(torch::jit::Module& a, const std::filesystem::path& a_path,
                                                           torch::jit::Module& b, const std::filesystem::path& b_path,
                                                           const std::vector<torch::Tensor>& inputs,
                                                           const TimingOptions& o, Progress& progress) {
  validate(o);
  torch::NoGradGuard no_grad;
  model::run_forward(a, inputs, a_path);
  model::run_forward(b, inputs, b_path);
  auto args = as_args(inputs);
  LatencySamples sa, sb, loop;
  int64_t pair = 0;
  FaultSample faults_a, faults_b;
  std::function<bool()> settled;
  if (o.settle_width > 0 || o.settled_by)
    settled = [&] {
      if (o.settled_by && o.settled_by(sa.ms, sb.ms)) return true;
      if (o.settle_width <= 0) return false;
      if (sa.ms.size() > 16 && sa.ms.size() % 4 != 0) return false;  // a bootstrap every call is dear
      auto ci = stats::bootstrap_median_ratio(sa.ms, sb.ms, 500);
      return (ci.low > 1 || ci.high < 1) && ci.high - ci.low <= o.settle_width * ci.estimate;
    };
  run_loop(o, progress, loop, [&](bool timed) {
    // Alternate which model goes first so neither always runs on a cache the other warmed.
    bool a_first = (pair++ & 1) == 0;
    const auto index = static_cast<int64_t>(sa.ms.size());
    double first = timed_forward(a_first ? a : b, args, (a_first ? faults_a : faults_b).counter(timed, index));
    double second = timed_forward(a_first ? b : a, args, (a_first ? faults_b : faults_a).counter(timed, index));
    double ta = a_first ? first : second, tb = a_first ? second : first;
    (timed ? sa.ms : sa.warmup_ms).push_back(ta);
    (timed ? sb.ms : sb.warmup_ms).push_back(tb);
    return ta + tb;
  }, settled);
  sa.page_faults_per_call = faults_a.per_call();
  sb.page_faults_per_call = faults_b.per_call();
  for (auto* s : {&sa, &sb}) {
    s->note = loop.note;
    s->skipped = loop.skipped;
    s->call_ms = loop.call_ms;
  }
  return {sa, sb};
}

}  // namespace lite::measure
