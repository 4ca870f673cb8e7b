#include "lite/profile/load_test.hpp"

#include <fmt/format.h>

#include <algorithm>

#include <chrono>
#include <random>
#include <thread>

#include "lite/core/error.hpp"
#include "lite/core/options.hpp"
#include "lite/core/interrupt.hpp"

namespace lite::profile {

std::vector<double> poisson_arrivals_ms(double qps, int64_t n, uint64_t seed) {
  if (!(qps > 0)) throw OptionError("qps", "must be more than 0 requests per second", "give a rate above 0");
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(qps / 1000.0);  // per millisecond
  std::vector<double> t;
  t.reserve(static_cast<size_t>(n));
  double now = 0;
  for (int64_t i = 0; i < n; ++i) {
    now += gap(rng);
    t.push_back(now);
  }
  return t;
}

LoadRun summarize_load(double offered_qps, const std::vector<double>& arrivals, const std::vector<double>& start,
                       const std::vector<double>& finish) {
  LoadRun r;
  r.offered_qps = offered_qps;
  r.requests = static_cast<int64_t>(arrivals.size());
  if (arrivals.empty()) return r;
  std::vector<double> latency, queue;
  double busy = 0;
  int64_t waited = 0;
  for (size_t i = 0; i < arrivals.size(); ++i) {
    latency.push_back(finish[i] - arrivals[i]);
    queue.push_back(start[i] - arrivals[i]);
    busy += finish[i] - start[i];
    // Waiting more than 50 us means the worker was still busy with an earlier request.
    if (start[i] - arrivals[i] > 0.05) ++waited;
  }
  double wall = finish.back() - arrivals.front();
  r.achieved_qps = wall > 0 ? 1000.0 * double(arrivals.size()) / wall : 0;
  r.utilization = wall > 0 ? busy / wall : 0;
  r.waited_fraction = double(waited) / double(arrivals.size());
  r.latency_ms = stats::summarize(latency);
  r.queue_ms = stats::summarize(queue);
  // Saturation: the worker cannot keep up, so the queue grows through the run. Compare the queueing
  // delay of the last quarter with the first quarter.
  size_t q = arrivals.size() / 4;
  double first = 0, last = 0;
  for (size_t i = 0; i < q; ++i) {
    first += queue[i];
    last += queue[arrivals.size() - 1 - i];
  }
  bool growing = q >= 5 && last > 4 * first + 1.0 * q;  // at least 1 ms more per request, and 4x
  r.saturated = r.utilization > 0.95 || growing;
  return r;
}

LoadRun run_load(torch::jit::Module& module, const std::vector<torch::Tensor>& inputs, double qps, int64_t requests,
                 uint64_t seed, Progress& progress) {
  if (requests <= 0) throw OptionError("requests", "must be at least 1 with {qps}", "give {requests} N (N >= 1)");
  using Clock = std::chrono::steady_clock;
  auto arrivals = poisson_arrivals_ms(qps, requests, seed);
  std::vector<double> start(arrivals.size()), finish(arrivals.size());
  std::vector<c10::IValue> args(inputs.begin(), inputs.end());
  torch::NoGradGuard no_grad;
  // The arrivals are drawn before the run, so its length is known up front (--qps 0.001 --requests 3 is ~50 min).
  const double planned_s = arrivals.empty() ? 0.0 : arrivals.back() / 1000;
  progress.announce(fmt::format("lite profile: load test: {} requests at {:g} req/s (Poisson arrivals): {} until the "
                                "last arrival, plus its service",
                                requests, qps, planned_s >= 120 ? fmt::format("{:.0f} min", planned_s / 60)
                                                                : fmt::format("{:.0f} s", planned_s)));
  ProgressPhase phase(progress, fmt::format("load {:g} req/s, ~{:.0f} s", qps, planned_s),
                      static_cast<uint64_t>(requests));
  auto origin = Clock::now();
  auto ms_now = [&] { return std::chrono::duration<double, std::milli>(Clock::now() - origin).count(); };
  for (size_t i = 0; i < arrivals.size(); ++i) {
    if ((i & 15) == 0) throw_if_interrupted();
    double now = ms_now();
    if (now < arrivals[i]) {
      // Sleep until shortly before the arrival, then spin: sleep alone overshoots by ~60 us.
      // Slices of at most 50 ms, so a signal during a long gap (--qps 0.01) ends the run at once.
      for (double slack; (slack = arrivals[i] - ms_now() - 0.2) > 0;) {
        std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(std::min(slack, 50.0)));
        throw_if_interrupted();
      }
      while ((now = ms_now()) < arrivals[i]) {
      }
    }
    start[i] = now;
    module.forward(args);
    finish[i] = ms_now();
    phase.advance();
  }
  return summarize_load(qps, arrivals, start, finish);
}

}  // namespace lite::profile
