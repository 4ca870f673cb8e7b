// LHD, least hit density (Beckmann, Chen & Cidon, NSDI'18): evict the object with the lowest
// expected hits per byte-time, estimated from per-class histograms of the ages at which objects were
// hit or evicted. Objects are classed by the sum of their last two hit ages (16 classes); ages are
// coarsened by a shift that adapts to the object count; every 2^20 accesses the histograms decay
// (EWMA 0.9) and each class's hit density by age is recomputed. Eviction samples candidates at
// random (8, or 32 after 50 reconfigurations) plus the 8 most recent admissions whose density fell
// below the running victim density; 1 in 32 new objects is an "explorer" (+1 density) while the
// explorer budget (1% of the capacity) lasts, so classes that would otherwise never be kept get data.
//
// Follows libCacheSim's LHD/ port of the authors' code (lhd.cpp, LHD_Interface.cpp) line for line,
// with its float arithmetic (rank_t = float) and its random numbers (the seeded MMIX generator shared
// with LeCaR), so the counts are libCacheSim's: candidates are drawn from the tag array, whose order
// follows insertions and swap-with-last removals exactly.
//
// Why this layout: the time goes to cache misses (an eviction reads 8, later 32, tags at random), so
// the tag is the object table's node itself (key, timestamp, size, class, explorer, last hit age: 24
// bytes), and the nodes are kept dense in libCacheSim's tag-array order (a new tag is the next node;
// an evicted node's place is taken by the last node, ObjectTable::move): a hit is one slot probe and
// one tag read, and a candidate is tags_[random % size] with no indirection. The class is stored (it
// changes only on a hit) rather than recomputed from the two last hit ages; the candidates are drawn
// first and their tags prefetched together, so their misses overlap. Only app
// class 1 is ever used (libCacheSim passes DEFAULT_APP_ID), so only its 16 hit-age classes are kept:
// the other 240 would stay all-zero (61 MB of histograms in libCacheSim, 3.8 MB here).
#include <limits>
#include <vector>

#include "lite/cache/policy_internal.hpp"

namespace lite::cache::detail {
namespace {

class Lhd {
 public:
  using age_t = uint64_t;
  using timestamp_t = uint64_t;
  using rank_t = float;

  explicit Lhd(const PolicyConfig& c) : capacity_(c.capacity), tags_(expected_objects(c)) {
    explorer_budget_ = static_cast<int64_t>(static_cast<int64_t>(c.capacity) * kExplorerBudgetFraction);
    classes_.resize(kHitAgeClasses);
    for (uint32_t cl = 0; cl < kHitAgeClasses; cl++) {
      const uint32_t global = kApp * kHitAgeClasses + cl;  // libCacheSim's class index seeds the prior
      classes_[cl].hits.assign(kMaxAge, 0);
      classes_[cl].evictions.assign(kMaxAge, 0);
      classes_[cl].hit_densities.resize(kMaxAge);
      for (age_t a = 0; a < kMaxAge; a++) classes_[cl].hit_densities[a] = 1. * (global + 1) / (a + 1);
    }
  }

  bool find(const Access& a) {
    const uint32_t n = tags_.find(a.key, a.hash);
    if (n == kNil) return false;
    touch(tags_[n], a.size);
    return true;
  }
  bool can_insert(const Access& a) const { return a.size <= capacity_; }
  void insert(const Access& a) {
    admit(a.key, a.hash, a.size);
    occupied_ += a.size;
  }
  void evict(const Access&) {
    const uint32_t victim = rank();
    occupied_ -= tags_[victim].bytes;
    replaced(victim);
  }
  uint64_t occupied() const { return occupied_ > 0 ? uint64_t(occupied_) : 0; }
  uint64_t capacity() const { return capacity_; }
  void prefetch(uint64_t hash) const { tags_.prefetch(hash); }
  size_t memory_bytes() const {
    return tags_.memory_bytes() + classes_.size() * kMaxAge * 3 * sizeof(rank_t);
  }

 private:
  static constexpr rank_t kExplorerBudgetFraction = 0.01;
  static constexpr uint32_t kExploreInverseProbability = 32;
  static constexpr uint32_t kHitAgeClasses = 16;
  static constexpr uint32_t kAppClasses = 16;
  static constexpr rank_t kAgeCoarseningErrorTolerance = 0.01;
  static constexpr age_t kMaxAge = 20000;
  static constexpr timestamp_t kAccessesPerReconfiguration = (1 << 20);
  static constexpr rank_t kEwmaDecay = 0.9;
  static constexpr uint32_t kAssociativity = 32, kAdmissions = 8;
  static constexpr uint32_t kApp = 1 % kAppClasses;  // libCacheSim's DEFAULT_APP_ID

  // libCacheSim's tag, as the object table's node. libCacheSim's tag also holds the last-but-one hit
  // age, but reads it only through the class (a function of the two last hit ages), which is kept
  // instead; its float size is always float(bytes) when read.
  struct Tag {
    uint64_t key = 0;
    timestamp_t timestamp = 0;
    uint32_t bytes = 0;
    uint16_t last_hit_age = 0;  // < kMaxAge
    uint8_t hit_class = 0;      // hit_age_class(last_hit_age + last_last_hit_age)
    bool explorer = false;
  };
  static_assert(kMaxAge <= 0xffff, "last_hit_age is 16-bit");
  struct Class {
    std::vector<rank_t> hits, evictions, hit_densities;
    rank_t total_hits = 0, total_evictions = 0;
  };

  static uint64_t lcg(uint64_t x) { return 6364136223846793005ULL * x + 1442695040888963407ULL; }
  uint64_t next_rand() {
    rand_ = lcg(rand_);
    --window_;
    return rand_;
  }
  uint32_t candidates() const { return reconfigurations_ > 50 ? kAssociativity : 8; }
  // The generator is deterministic, so the next eviction's candidates are known before it happens
  // whenever no hit comes first: the tags of the next candidates() draws are prefetched as soon as a
  // draw is consumed (each hit consumes one and shifts the window by one), usually several requests
  // before they are read. ahead_ is the generator state window_ draws after rand_.
  void refill_window() {
    const uint64_t n = tags_.size();
    while (window_ < int64_t(candidates())) {
      ahead_ = lcg(ahead_);
      ++window_;
      if (n != 0) prefetch_line(&tags_[static_cast<uint32_t>(ahead_ % n)]);
    }
  }
  static uint32_t hit_age_class(age_t age) {
    if (age == 0) return kHitAgeClasses - 1;
    uint32_t log = 0;
    while (age < kMaxAge && log < kHitAgeClasses - 1) {
      age <<= 1;
      log += 1;
    }
    return log;
  }
  age_t age_of(const Tag& tag) const {
    const timestamp_t age = (timestamp_ - tag.timestamp) >> coarsening_shift_;
    return age >= kMaxAge ? kMaxAge - 1 : age;
  }
  rank_t hit_density(const Tag& tag) const {
    const age_t age = age_of(tag);
    if (age == kMaxAge - 1) return std::numeric_limits<rank_t>::lowest();
    rank_t density = classes_[tag.hit_class].hit_densities[age] / rank_t(tag.bytes);
    if (tag.explorer) density += 1.;
    return density;
  }

  // The node of a recent admission if its key is still cached: the remembered node when it still holds
  // the key (one read), else a lookup (the key may have been evicted and admitted again).
  uint32_t recent_node(uint32_t i) const {
    const uint32_t hint = recent_node_[i];
    if (hint < tags_.size() && tags_[hint].key == recent_[i]) return hint;  // nodes 0..size()-1 are live
    return tags_.find(recent_[i], hash_key(recent_[i]));
  }

  // libCacheSim's rank(): the lowest density among random candidates and the recent admissions.
  uint32_t rank() {
    uint32_t victim = kNil;
    rank_t victim_rank = std::numeric_limits<rank_t>::max();
    const uint32_t candidates = this->candidates();
    uint32_t drawn[kAssociativity];  // nodes
    const uint64_t n_tags = tags_.size();
    for (uint32_t i = 0; i < candidates; i++) drawn[i] = static_cast<uint32_t>(next_rand() % n_tags);
    for (uint32_t i = 0; i < kAdmissions; i++)
      if (recent_valid_[i]) prefetch_line(&tags_[recent_node_[i]]);
    for (uint32_t i = 0; i < candidates; i++) {
      const rank_t r = hit_density(tags_[drawn[i]]);
      if (r < victim_rank) {
        victim = drawn[i];
        victim_rank = r;
      }
    }
    for (uint32_t i = 0; i < kAdmissions; i++) {
      if (!recent_valid_[i]) continue;
      const uint32_t n = recent_node(i);
      if (n == kNil) continue;
      const rank_t r = hit_density(tags_[n]);
      if (r < victim_rank) {
        victim = n;
        victim_rank = r;
      }
    }
    ewma_victim_density_ = kEwmaDecay * ewma_victim_density_ + (1 - kEwmaDecay) * victim_rank;
    refill_window();
    return victim == kNil ? drawn[0] : victim;  // kNil only if every density were NaN or +inf
  }

  // libCacheSim's update() for a cached object (a hit).
  void touch(Tag& tag, uint32_t size) {
    const uint32_t old_bytes = tag.bytes;
    if (old_bytes != size) {
      occupied_ -= old_bytes;
      occupied_ += size;
    }
    const age_t age = age_of(tag);
    classes_[tag.hit_class].hits[age] += 1;
    if (tag.explorer) explorer_budget_ += rank_t(old_bytes);
    tag.hit_class = static_cast<uint8_t>(hit_age_class(tag.last_hit_age + age));
    tag.last_hit_age = static_cast<uint16_t>(age);
    tag.bytes = size;
    stamp(tag, kNil);
  }
  // libCacheSim's update() for a new object: a tag at the end of the array.
  void admit(uint64_t id, uint64_t hash, uint32_t size) {
    const uint32_t n = tags_.insert(id, hash);  // == the old size(): the free list holds only the top nodes
    Tag& tag = tags_[n];
    tag.last_hit_age = 0;
    tag.hit_class = static_cast<uint8_t>(hit_age_class(0 + kMaxAge));  // last_last_hit_age = kMaxAge
    tag.bytes = size;
    stamp(tag, n);
  }
  // The rest of update(), common to hits and new objects (`node` is kNil for a hit).
  void stamp(Tag& tag, uint32_t node) {
    const bool inserted = node != kNil;
    tag.timestamp = timestamp_;
    const bool explore = (next_rand() % kExploreInverseProbability) == 0;
    if (explore && explorer_budget_ > 0 && reconfigurations_ < 50) {
      tag.explorer = true;
      explorer_budget_ -= rank_t(tag.bytes);
    } else {
      tag.explorer = false;
    }
    if (inserted && !explore && hit_density(tag) < ewma_victim_density_) {
      const int slot = recent_head_++ % int(kAdmissions);
      recent_[slot] = tag.key;
      recent_node_[slot] = node;
      recent_valid_[slot] = true;
    }
    ++timestamp_;
    if (--next_reconfiguration_ == 0) {
      reconfigure();
      next_reconfiguration_ = kAccessesPerReconfiguration;
      ++reconfigurations_;
    }
    refill_window();
  }

  // Evicts node n: the last node moves into its place, as in libCacheSim's tag array.
  void replaced(uint32_t n) {
    Tag& tag = tags_[n];
    const age_t age = age_of(tag);
    classes_[tag.hit_class].evictions[age] += 1;
    if (tag.explorer) explorer_budget_ += rank_t(tag.bytes);
    tags_.erase(n);
    const uint32_t last = static_cast<uint32_t>(tags_.size());
    if (n < last) tags_.move(last, n);
  }

  void reconfigure() {
    for (auto& cl : classes_) {
      cl.total_hits = 0;
      cl.total_evictions = 0;
      for (age_t age = 0; age < kMaxAge; age++) {
        cl.hits[age] *= kEwmaDecay;
        cl.evictions[age] *= kEwmaDecay;
        cl.total_hits += cl.hits[age];
        cl.total_evictions += cl.evictions[age];
      }
    }
    adapt_age_coarsening();
    model_hit_density();
  }

  void adapt_age_coarsening() {
    ewma_objects_ *= kEwmaDecay;
    ewma_objects_mass_ *= kEwmaDecay;
    ewma_objects_ += tags_.size();  // libCacheSim: sizeMap.size(), the same objects
    ewma_objects_mass_ += 1.;
    const rank_t objects = ewma_objects_ / ewma_objects_mass_;
    const rank_t optimal = 1. * objects / (kAgeCoarseningErrorTolerance * kMaxAge);
    if (reconfigurations_ != 5 && reconfigurations_ != 25) return;
    uint32_t log2 = 1;
    while ((1 << log2) < optimal) log2 += 1;
    const int32_t delta = int32_t(log2 - coarsening_shift_);
    coarsening_shift_ = log2;
    ewma_objects_ *= 8;
    ewma_objects_mass_ *= 8;
    if (delta < 0) {
      for (auto& cl : classes_) {
        for (age_t a = kMaxAge >> (-delta); a < kMaxAge - 1; a++) {
          cl.hits[kMaxAge - 1] += cl.hits[a];
          cl.evictions[kMaxAge - 1] += cl.evictions[a];
        }
        for (age_t a = kMaxAge - 2; a < kMaxAge; a--) {
          cl.hits[a] = cl.hits[a >> (-delta)] / (1 << (-delta));
          cl.evictions[a] = cl.evictions[a >> (-delta)] / (1 << (-delta));
        }
      }
    } else if (delta > 0) {
      for (auto& cl : classes_) {
        for (age_t a = 0; a < kMaxAge >> delta; a++) {
          cl.hits[a] = cl.hits[a << delta];
          cl.evictions[a] = cl.evictions[a << delta];
          for (int i = 1; i < (1 << delta); i++) {
            cl.hits[a] += cl.hits[(a << delta) + i];
            cl.evictions[a] += cl.evictions[(a << delta) + i];
          }
        }
        for (age_t a = (kMaxAge >> delta); a < kMaxAge - 1; a++) {
          cl.hits[a] = 0;
          cl.evictions[a] = 0;
        }
      }
    }
  }

  void model_hit_density() {
    for (auto& cl : classes_) {
      rank_t total_events = cl.hits[kMaxAge - 1] + cl.evictions[kMaxAge - 1];
      rank_t total_hits = cl.hits[kMaxAge - 1];
      rank_t lifetime_unconditioned = total_events;
      for (age_t a = kMaxAge - 2; a < kMaxAge; a--) {
        total_hits += cl.hits[a];
        total_events += cl.hits[a] + cl.evictions[a];
        lifetime_unconditioned += total_events;
        cl.hit_densities[a] = total_events > 1e-5 ? total_hits / lifetime_unconditioned : 0.;
      }
    }
  }

  uint64_t capacity_;
  int64_t occupied_ = 0;
  uint64_t rand_ = 0;
  uint64_t ahead_ = 0;  // the candidate window (refill_window)
  int64_t window_ = 0;
  ObjectTable<Tag> tags_;
  std::vector<Class> classes_;  // app class kApp's hit-age classes
  timestamp_t timestamp_ = 0;
  timestamp_t next_reconfiguration_ = kAccessesPerReconfiguration;
  int reconfigurations_ = 0;
  timestamp_t coarsening_shift_ = 10;
  rank_t ewma_objects_ = 0, ewma_objects_mass_ = 0.;
  uint64_t recent_[kAdmissions] = {};
  uint32_t recent_node_[kAdmissions] = {};
  bool recent_valid_[kAdmissions] = {};
  int recent_head_ = 0;
  rank_t ewma_victim_density_ = 0;
  int64_t explorer_budget_ = 0;
};

}  // namespace

std::unique_ptr<Simulator> make_lhd(const PolicyConfig& c) { return make_simulator<Lhd>(c); }

}  // namespace lite::cache::detail
