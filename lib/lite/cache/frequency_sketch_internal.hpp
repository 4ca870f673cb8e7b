#pragma once
// The frequency sketch W-TinyLFU admits by: a counting Bloom filter ("count-min" in the TinyLFU
// paper) with k hash positions per key, an estimate that is the minimum of a key's k counters, and
// aging that halves every counter after a sample of requests. Optional doorkeeper (TinyLFU, Einziger
// et al. 2017; Caffeine): a plain Bloom filter in front that absorbs a key's first occurrence, so
// one-hit wonders never reach the counters; the estimate adds 1 for a key it holds; aging clears it.
//
// Follows libCacheSim's minimalIncrementCBF.c bit for bit (so W-TinyLFU's counts equal libCacheSim's):
// sizing from (entries, error=0.001): bits per entry -ln(e)/ln(2)^2, k = ceil(ln 2 * bpe), counters
// = min(ceil(bpe * entries), INT_MAX); positions (a + i*b) mod counters in 32-bit arithmetic from two
// XXH64 hashes of the 8-byte key (seeds 0x12345678 and 0x12344321), truncated to 32 bits; an add
// increments all k counters (libCacheSim's "minimal increment" check only guards a debug print).
// libCacheSim has no doorkeeper; it is off by default.
//
// Storage: counters are dense when there are at most 2^24 of them, else an open-addressing map of
// the non-zero ones (SparseCounters: flat, no node per counter). libCacheSim sizes by bytes in byte mode (entries = main cache bytes: up to 2^31 counters,
// 8 GiB it leaves to lazy zero pages); the map holds only what k positions per seen key touch.
// Counters stay 32-bit (libCacheSim's are unbounded ints, and the counts depend on them), so speed
// comes from elsewhere: positions reduce by a multiply instead of k divisions (Lemire's fastmod, exact
// for every 32-bit value), prefetch() fetches a coming request's k counters ahead of its add, and the
// positions it computed wait in a small memo for that add (and for a victim's estimate and add), so a
// key's two hashes and k reductions run once where they ran up to three times (a pure function of the
// key, so the memo cannot change a count).
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <unordered_set>
#include <vector>

#include "lite/cache/prefetch.hpp"

namespace lite::cache::detail {

// position -> counter for the non-zero counters of a large sketch: linear probing over one flat
// array of (position, count) pairs, doubled at 1/2 load; halve() rebuilds it without the zeros.
class SparseCounters {
 public:
  SparseCounters() : slots_(16, Slot{kEmpty, 0}), mask_(15) {}
  void increment(uint32_t p) {
    Slot& s = slots_[probe(p)];
    if (s.pos == kEmpty) {
      s = Slot{p, 1};
      if (++live_ * 2 > slots_.size()) rebuild(slots_.size() * 2, false);
      return;
    }
    ++s.count;
  }
  uint32_t get(uint32_t p) const { return slots_[probe(p)].count; }  // an empty slot counts 0
  void halve() { rebuild(slots_.size(), true); }
  size_t size() const { return live_; }
  size_t memory_bytes() const { return slots_.capacity() * sizeof(Slot); }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;  // positions are < INT_MAX
  struct Slot {
    uint32_t pos, count;
  };
  size_t probe(uint32_t p) const {
    size_t i = (p * 0x9E3779B1u) & mask_;
    while (slots_[i].pos != kEmpty && slots_[i].pos != p) i = (i + 1) & mask_;
    return i;
  }
  void rebuild(size_t n_slots, bool halve) {
    std::vector<Slot> old(n_slots, Slot{kEmpty, 0});
    old.swap(slots_);
    mask_ = n_slots - 1;
    live_ = 0;
    for (const Slot& s : old) {
      if (s.pos == kEmpty) continue;
      const uint32_t c = halve ? s.count >> 1 : s.count;
      if (c == 0) continue;
      slots_[probe(s.pos)] = Slot{s.pos, c};
      ++live_;
    }
  }

  std::vector<Slot> slots_;
  size_t mask_;
  size_t live_ = 0;
};

// XXH64 of one 8-byte little-endian value (the xxHash specification, input length 8).
inline uint64_t xxh64_u64(uint64_t v, uint64_t seed) {
  constexpr uint64_t P1 = 0x9E3779B185EBCA87ULL, P2 = 0xC2B2AE3D27D4EB4FULL, P3 = 0x165667B19E3779F9ULL,
                     P4 = 0x85EBCA77C2B2AE63ULL, P5 = 0x27D4EB2F165667C5ULL;
  auto rotl = [](uint64_t x, int r) { return (x << r) | (x >> (64 - r)); };
  uint64_t h = seed + P5 + 8;
  uint64_t k = v * P2;
  k = rotl(k, 31) * P1;
  h ^= k;
  h = rotl(h, 27) * P1 + P4;
  h ^= h >> 33;
  h *= P2;
  h ^= h >> 29;
  h *= P3;
  h ^= h >> 32;
  return h;
}

class FrequencySketch {
 public:
  static constexpr uint64_t kSeed0 = 0x12345678, kSeed1 = 0x12344321;
  static constexpr uint32_t kDenseMax = 1u << 24;

  FrequencySketch(int64_t entries, double error, bool doorkeeper = false) : doorkeeper_(doorkeeper) {
    const double bpe = -std::log(error) / 0.480453013918201;
    hashes_ = static_cast<int>(std::ceil(0.693147180559945 * bpe));
    const double n = std::ceil(bpe * double(entries > INT_MAX ? INT_MAX : entries));
    counters_ = static_cast<uint32_t>(std::fmin(n, double(INT_MAX)));
    if (counters_ < uint32_t(hashes_)) counters_ = uint32_t(hashes_) * 2;
    mod_magic_ = UINT64_MAX / counters_ + 1;
    if (counters_ <= kDenseMax) dense_.assign(counters_, 0);
  }

  // Starts loading the counters a coming add() or estimate() of `key` reads (dense storage only).
  void prefetch(uint64_t key) const {
    if (dense_.empty()) return;
    const uint32_t* pos = positions(key);
    for (int i = 0; i < hashes_; ++i) prefetch_line(&dense_[pos[i]]);
  }

  // Counts one occurrence of `key` (all k counters; with the doorkeeper the first goes there).
  void add(uint64_t key) {
    const uint32_t* pos = positions(key);
    if (doorkeeper_ && !door_contains(pos)) {
      for (int i = 0; i < hashes_; ++i) door_.insert(pos[i]);
      return;
    }
    for (int i = 0; i < hashes_; ++i) {
      if (!dense_.empty()) ++dense_[pos[i]];
      else sparse_.increment(pos[i]);
    }
  }
  // Minimum of the key's counters (+1 when the doorkeeper holds it).
  uint32_t estimate(uint64_t key) const {
    const uint32_t* pos = positions(key);
    uint32_t m = UINT_MAX;
    for (int i = 0; i < hashes_; ++i) m = std::min(m, counter(pos[i]));
    if (doorkeeper_ && door_contains(pos)) ++m;
    return m;
  }
  // Aging: every counter halves; the doorkeeper forgets (the positions memo stays: it depends on keys only).
  void decay() {
    for (auto& c : dense_) c >>= 1;
    if (sparse_.size() != 0) sparse_.halve();
    door_.clear();
  }
  int hashes() const { return hashes_; }
  uint32_t counters() const { return counters_; }
  size_t memory_bytes() const {
    return dense_.capacity() * sizeof(uint32_t) + sparse_.memory_bytes() + door_.size() * 16 +
           memo_.capacity() * sizeof(Memo);
  }

 private:
  static constexpr int kMaxHashes = 64;
  static constexpr int kMemoHashes = 16;  // libCacheSim's sizing gives k = 10; a larger k skips the memo
  static constexpr int kMemoBits = 8;     // 256 keys: the 16 prefetched requests and the victims, rarely colliding
  struct Memo {
    uint64_t key = 0;
    bool valid = false;
    uint32_t pos[kMemoHashes];
  };
  // The key's k counter positions, from the memo when a recent call computed them. The pointer is valid
  // until the next call.
  const uint32_t* positions(uint64_t key) const {
    if (hashes_ > kMemoHashes) {
      compute_positions(key, scratch_);
      return scratch_;
    }
    Memo& m = memo_[(key * 0x9E3779B97F4A7C15ULL) >> (64 - kMemoBits)];
    if (!m.valid || m.key != key) {
      compute_positions(key, m.pos);
      m.key = key;
      m.valid = true;
    }
    return m.pos;
  }
  void compute_positions(uint64_t key, uint32_t* pos) const {
    const uint32_t a = static_cast<uint32_t>(xxh64_u64(key, kSeed0));
    const uint32_t b = static_cast<uint32_t>(xxh64_u64(key, kSeed1));
    for (int i = 0; i < hashes_; ++i) pos[i] = mod(a + uint32_t(i) * b);
  }
  // x % counters_ for any 32-bit x, without a division (Lemire, Kaser & Kurz 2019).
  uint32_t mod(uint32_t x) const {
    const uint64_t low = mod_magic_ * x;
    return static_cast<uint32_t>((static_cast<unsigned __int128>(low) * counters_) >> 64);
  }
  uint32_t counter(uint32_t p) const {
    if (!dense_.empty()) return dense_[p];
    return sparse_.get(p);
  }
  bool door_contains(const uint32_t* pos) const {
    for (int i = 0; i < hashes_; ++i)
      if (!door_.count(pos[i])) return false;
    return true;
  }

  bool doorkeeper_;
  int hashes_ = 1;
  uint32_t counters_ = 1;
  uint64_t mod_magic_ = 0;  // ceil(2^64 / counters_), mod()'s multiplier
  std::vector<uint32_t> dense_;
  mutable std::vector<Memo> memo_ = std::vector<Memo>(size_t(1) << kMemoBits);  // a cache of a pure function
  mutable uint32_t scratch_[kMaxHashes];
  SparseCounters sparse_;
  std::unordered_set<uint32_t> door_;
};

}  // namespace lite::cache::detail
