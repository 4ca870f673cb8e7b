#pragma once
// The sampling rate a fixed-rate SHARDS sample actually achieved over objects, for the estimate's
// normalisation (engine_results.cpp).
//
// Why: SHARDS keeps a key when hash(key) < R * 2^64, so the sample holds Binomial(U, R) of the trace's U
// objects, not exactly R * U. With SHARDS_adj the misses of the sample are scaled by 1/R; when this one
// sample happens to hold 1.5% fewer objects than R * U (the usual deviation at 7,500 sampled objects) its
// cold and capacity misses are 1.5% short, and the miss-ratio estimate with them. Scaling by the rate the
// sample achieved, R' = (sampled objects) / U, removes that deviation (a ratio estimator over objects; on
// the Zipf(1.0) 10M/1M trace at R = 0.01, LRU and S3-FIFO at 10K..500K objects, it took the mean |error|
// from 0.0055 to 0.0029, and over twelve samples of that trace from 0.0047 to 0.0030; docs/cache-sim.md
// "Analysis", SHARDS).
// Fixed-size SHARDS gets the same effect from its threshold, so this is for fixed rate.
//
// The algorithm: the sampled objects are counted exactly (their hashes in a set: R * U entries, the same
// order as the simulators' own tables). U is the scan pass's exact object count when a scan ran; otherwise
// it is estimated in the main pass by a HyperLogLog over every request's key, 2^20 one-byte registers
// (1 MiB, fixed), indexed by a second mix of the key's hash so that the estimate does not depend on which
// keys fell under the SHARDS threshold. Up to about 5 * 2^20 objects the estimate is linear counting over the
// empty registers (relative error about 0.1% at a million objects), above that the raw HyperLogLog estimate
// (about 0.1%); both far below the binomial deviation they correct.
#include <cmath>
#include <cstdint>
#include <unordered_set>
#include <vector>

namespace lite::cache::detail {

class ObjectRate {
 public:
  explicit ObjectRate(uint64_t threshold) : threshold_(threshold), registers_(kRegisters, 0) {}

  // One request, by its key's SHARDS hash.
  void observe(uint64_t hash) {
    if (hash < threshold_) sampled_.insert(hash);
    const uint64_t g = remix(hash);
    const uint64_t index = g >> (64 - kIndexBits);
    const uint64_t rest = (g << kIndexBits) | (uint64_t(1) << (kIndexBits - 1));  // guard bit: rank <= 45
    const uint8_t rank = static_cast<uint8_t>(__builtin_clzll(rest) + 1);
    if (rank > registers_[index]) registers_[index] = rank;
  }

  uint64_t sampled_objects() const { return sampled_.size(); }

  // Distinct keys seen (estimated).
  double estimated_objects() const {
    const double m = double(kRegisters);
    double sum = 0;
    uint64_t zeros = 0;
    for (uint8_t r : registers_) {
      sum += std::ldexp(1.0, -int(r));
      zeros += r == 0;
    }
    if (zeros > 0) {
      const double linear = m * std::log(m / double(zeros));
      if (linear <= 5 * m) return linear;
    }
    const double alpha = 0.7213 / (1 + 1.079 / m);
    return alpha * m * m / sum;
  }

  // sampled / total objects; `exact_objects` (from a scan pass) replaces the estimate when known.
  double achieved_rate(uint64_t exact_objects) const {
    const double total = exact_objects ? double(exact_objects) : estimated_objects();
    return total > 0 ? double(sampled_objects()) / total : 0.0;
  }

 private:
  static constexpr int kIndexBits = 20;
  static constexpr size_t kRegisters = size_t(1) << kIndexBits;
  // splitmix64's finaliser: a second, independent-looking hash of the key from its SHARDS hash.
  static uint64_t remix(uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  uint64_t threshold_;
  std::unordered_set<uint64_t> sampled_;
  std::vector<uint8_t> registers_;
};

}  // namespace lite::cache::detail
