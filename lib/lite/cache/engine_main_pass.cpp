// The main pass: the reader fills a 16K-request batch, every simulator (and the one-pass LRU
// profiler) consumes it. With threads > 1 the simulators run on a pool while the reader parses the
// next batch (double buffering), also when there is one simulator: reading and hashing cost a third
// of a fast policy's time, and a second core hides them. Each simulator is touched by one worker per
// batch, so simulators need no locks.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "lite/cache/engine_internal.hpp"
#include "lite/core/interrupt.hpp"

namespace lite::cache::detail {
namespace {

// Worker pool: every simulator consumes every batch.
class Pool {
 public:
  Pool(std::vector<Simulator*> sims, int threads) : sims_(std::move(sims)) {
    for (int i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lk(m_);
      stop_ = true;
    }
    cv_work_.notify_all();
    for (auto& t : workers_) t.join();
  }
  void start(const Batch* b) {
    {
      std::lock_guard<std::mutex> lk(m_);
      batch_ = b;
      next_.store(0);
      done_ = 0;
      ++generation_;
      running_ = true;
    }
    cv_work_.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> lk(m_);
    cv_done_.wait(lk, [&] { return !running_; });
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void work() {
    uint64_t seen = 0;
    while (true) {
      const Batch* b;
      {
        std::unique_lock<std::mutex> lk(m_);
        cv_work_.wait(lk, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        b = batch_;
      }
      try {
        for (size_t i; (i = next_.fetch_add(1)) < sims_.size();) sims_[i]->run(*b);
      } catch (...) {
        std::lock_guard<std::mutex> lk(m_);
        if (!error_) error_ = std::current_exception();
      }
      std::lock_guard<std::mutex> lk(m_);
      if (++done_ == workers_.size()) {
        running_ = false;
        cv_done_.notify_one();
      }
    }
  }

  std::vector<Simulator*> sims_;
  std::vector<std::thread> workers_;
  std::mutex m_;
  std::condition_variable cv_work_, cv_done_;
  const Batch* batch_ = nullptr;
  std::atomic<size_t> next_{0};
  size_t done_ = 0;
  uint64_t generation_ = 0;
  bool running_ = false, stop_ = false;
  std::exception_ptr error_;
};

// The request-level filter applied to every batch before the simulators see it.
struct BatchPrep {
  NextStream* next = nullptr;
  uint64_t threshold = UINT64_MAX;  // reader-level sampling
  ObjectRate* object_rate = nullptr;  // fixed-rate sampling: the rate achieved over objects
  uint64_t total_bytes = 0;
  double total_cost = 0;  // ms, every request read (the cost of no cache at all)

  void apply(Batch& b) {
    if (next) next->fill(b.next.data(), b.n);
    for (size_t i = 0; i < b.n; ++i) total_bytes += b.size[i];
    if (b.has_cost)
      for (size_t i = 0; i < b.n; ++i) total_cost += b.cost[i];
    if (threshold == UINT64_MAX) {
      for (size_t i = 0; i < b.n; ++i) b.hash[i] = hash_key(b.key[i]);
      if (object_rate)
        for (size_t i = 0; i < b.n; ++i) object_rate->observe(b.hash[i]);
      return;
    }
    size_t k = 0;
    for (size_t i = 0; i < b.n; ++i) {
      const uint64_t h = hash_key(b.key[i]);
      if (object_rate) object_rate->observe(h);
      if (h >= threshold) continue;
      b.key[k] = b.key[i];
      b.hash[k] = h;
      b.size[k] = b.size[i];
      b.cost[k] = b.cost[i];
      b.next[k] = b.next[i];
      ++k;
    }
    b.n = k;
  }
};

}  // namespace

MainPassResult run_main_pass(TraceReader& reader, const std::vector<Simulator*>& consumers, NextStream* next,
                             bool needs_next, uint64_t filter_threshold, ObjectRate* object_rate, int threads,
                             uint64_t source_size, const std::string& label, Progress& progress) {
  MainPassResult out;
  BatchPrep prep;
  prep.next = next;
  prep.threshold = filter_threshold;
  prep.object_rate = object_rate;
  const bool overlap = threads > 1 && !consumers.empty();  // the reader runs beside the workers
  const int workers = std::max(1, std::min<int>(threads, static_cast<int>(consumers.size())));
  out.threads = workers;
  const auto t_main = Clock::now();
  ProgressPhase phase(progress, label, source_size);
  uint64_t last_bytes = 0;
  auto report = [&] {
    const uint64_t b = reader.bytes_consumed();
    phase.advance(b - last_bytes);
    last_bytes = b;
    throw_if_interrupted();
  };
  Batch batches[2];
  batches[0].reserve(kBatch);
  if (overlap) batches[1].reserve(kBatch);  // double buffering only with a pool
  batches[0].has_cost = batches[1].has_cost = reader.has_cost();
  batches[0].has_next = batches[1].has_next = needs_next;
  auto read_batch = [&](Batch& b) {
    while (true) {
      b.n = 0;
      if (!reader.fill(b)) return false;
      prep.apply(b);
      if (b.n > 0) return true;
    }
  };
  if (!overlap) {
    while (read_batch(batches[0])) {
      for (Simulator* s : consumers) s->run(batches[0]);
      out.simulated_requests += batches[0].n;
      report();
    }
  } else {
    Pool pool(consumers, workers);
    int cur = 0;
    bool have = read_batch(batches[cur]);
    while (have) {
      pool.start(&batches[cur]);
      out.simulated_requests += batches[cur].n;
      bool more = read_batch(batches[1 - cur]);
      pool.wait();
      report();
      cur = 1 - cur;
      have = more;
    }
  }
  out.total_bytes = prep.total_bytes;
  out.total_cost_ms = prep.total_cost;
  out.seconds = seconds_since(t_main);
  return out;
}

}  // namespace lite::cache::detail
