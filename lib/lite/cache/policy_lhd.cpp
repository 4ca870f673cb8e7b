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
#include <cmath>
#include <limits>
#include <vector>

#include "lite/cache/policy_internal.hpp"

namespace lite::cache::detail {
namespace {

// key -> index in the tag array (libCacheSim: an unordered_map; here the flat object table).
struct IndexNode {
  uint64_t key = 0;
  uint64_t index = 0;
};

class Lhd {
 public:
  using age_t = uint64_t;
  using timestamp_t = uint64_t;
  using rank_t = float;

  explicit Lhd(const PolicyConfig& c) : capacity_(c.capacity), indices_(expected_objects(c)) {
    explorer_budget_ = static_cast<int64_t>(static_cast<int64_t>(c.capacity) * kExplorerBudgetFraction);
    classes_.resize(kNumClasses);
    for (uint32_t cl = 0; cl < kNumClasses; cl++) {
      classes_[cl].hits.assign(kMaxAge, 0);
      classes_[cl].evictions.assign(kMaxAge, 0);
      classes_[cl].hit_densities.resize(kMaxAge);
      for (age_t a = 0; a < kMaxAge; a++) classes_[cl].hit_densities[a] = 1. * (cl + 1) / (a + 1);
    }
  }

  bool find(const Access& a) {
    ++n_req_;
    const uint32_t n = indices_.find(a.key, a.hash);
    if (n == kNil) return false;
    Tag& tag = tags_[indices_[n].index];
    if (tag.bytes != a.size) {
      occupied_ -= tag.bytes;
      occupied_ += a.size;
      tag.bytes = a.size;
    }
    update(a.key, a.size);
    return true;
  }
  bool can_insert(const Access& a) const { return a.size <= capacity_; }
  void insert(const Access& a) {
    update(a.key, a.size);
    tags_.back().bytes = a.size;  // update() appended its tag
    occupied_ += a.size;
  }
  void evict(const Access&) {
    const uint64_t victim = rank();
    const uint32_t n = indices_.find(victim, hash_key(victim));
    occupied_ -= tags_[indices_[n].index].bytes;
    replaced(n);
  }
  uint64_t occupied() const { return occupied_ > 0 ? uint64_t(occupied_) : 0; }
  uint64_t capacity() const { return capacity_; }
  void prefetch(uint64_t hash) const { indices_.prefetch(hash); }
  size_t memory_bytes() const {
    return tags_.capacity() * sizeof(Tag) + indices_.memory_bytes() + classes_.size() * kMaxAge * 3 * sizeof(rank_t);
  }

 private:
  static constexpr rank_t kExplorerBudgetFraction = 0.01;
  static constexpr uint32_t kExploreInverseProbability = 32;
  static constexpr uint32_t kHitAgeClasses = 16;
  static constexpr uint32_t kAppClasses = 16;
  static constexpr uint32_t kNumClasses = kHitAgeClasses * kAppClasses;
  static constexpr rank_t kAgeCoarseningErrorTolerance = 0.01;
  static constexpr age_t kMaxAge = 20000;
  static constexpr timestamp_t kAccessesPerReconfiguration = (1 << 20);
  static constexpr rank_t kEwmaDecay = 0.9;
  static constexpr uint32_t kAssociativity = 32, kAdmissions = 8;
  static constexpr uint32_t kApp = 1 % kAppClasses;  // libCacheSim's DEFAULT_APP_ID

  struct Tag {
    age_t timestamp = 0, last_hit_age = 0, last_last_hit_age = 0;
    uint64_t id = 0;
    rank_t size = 0;
    bool explorer = false;
    uint32_t bytes = 0;  // the cached size (libCacheSim's sizeMap)
  };
  struct Class {
    std::vector<rank_t> hits, evictions, hit_densities;
    rank_t total_hits = 0, total_evictions = 0;
  };

  uint64_t next_rand() {
    rand_ = 6364136223846793005ULL * rand_ + 1442695040888963407ULL;
    return rand_;
  }
  uint32_t hit_age_class(age_t age) const {
    if (age == 0) return kHitAgeClasses - 1;
    uint32_t log = 0;
    while (age < kMaxAge && log < kHitAgeClasses - 1) {
      age <<= 1;
      log += 1;
    }
    return log;
  }
  Class& class_of(const Tag& tag) {
    return classes_[kApp * kHitAgeClasses + hit_age_class(tag.last_hit_age + tag.last_last_hit_age)];
  }
  age_t age_of(const Tag& tag) const {
    const timestamp_t age = (timestamp_ - tag.timestamp) >> coarsening_shift_;
    return age >= kMaxAge ? kMaxAge - 1 : age;
  }
  rank_t hit_density(const Tag& tag) {
    const age_t age = age_of(tag);
    if (age == kMaxAge - 1) return std::numeric_limits<rank_t>::lowest();
    rank_t density = class_of(tag).hit_densities[age] / tag.size;
    if (tag.explorer) density += 1.;
    return density;
  }

  uint64_t rank() {
    uint64_t victim = uint64_t(-1);
    rank_t victim_rank = std::numeric_limits<rank_t>::max();
    const uint32_t candidates = reconfigurations_ > 50 ? kAssociativity : 8;
    for (uint32_t i = 0; i < candidates; i++) {
      const uint64_t idx = next_rand() % tags_.size();
      const rank_t r = hit_density(tags_[idx]);
      if (r < victim_rank) {
        victim = idx;
        victim_rank = r;
      }
    }
    for (uint32_t i = 0; i < kAdmissions; i++) {
      if (!recent_valid_[i]) continue;
      const uint32_t n = indices_.find(recent_[i], hash_key(recent_[i]));
      if (n == kNil) continue;
      const rank_t r = hit_density(tags_[indices_[n].index]);
      if (r < victim_rank) {
        victim = indices_[n].index;
        victim_rank = r;
      }
    }
    ewma_victim_density_ = kEwmaDecay * ewma_victim_density_ + (1 - kEwmaDecay) * victim_rank;
    return tags_[victim].id;
  }

  void update(uint64_t id, uint32_t size) {
    const uint64_t h = hash_key(id);
    const uint32_t n = indices_.find(id, h);
    const bool inserted = n == kNil;
    Tag* tag;
    if (inserted) {
      tags_.push_back(Tag{});
      tag = &tags_.back();
      indices_[indices_.insert(id, h)].index = tags_.size() - 1;
      tag->last_last_hit_age = kMaxAge;
      tag->last_hit_age = 0;
      tag->id = id;
    } else {
      tag = &tags_[indices_[n].index];
      const age_t age = age_of(*tag);
      class_of(*tag).hits[age] += 1;
      if (tag->explorer) explorer_budget_ += tag->size;
      tag->last_last_hit_age = tag->last_hit_age;
      tag->last_hit_age = age;
    }
    tag->timestamp = timestamp_;
    tag->size = size;
    const bool explore = (next_rand() % kExploreInverseProbability) == 0;
    if (explore && explorer_budget_ > 0 && reconfigurations_ < 50) {
      tag->explorer = true;
      explorer_budget_ -= tag->size;
    } else {
      tag->explorer = false;
    }
    if (inserted && !explore && hit_density(*tag) < ewma_victim_density_) {
      const int slot = recent_head_++ % int(kAdmissions);
      recent_[slot] = id;
      recent_valid_[slot] = true;
    }
    ++timestamp_;
    if (--next_reconfiguration_ == 0) {
      reconfigure();
      next_reconfiguration_ = kAccessesPerReconfiguration;
      ++reconfigurations_;
    }
  }

  void replaced(uint32_t n) {
    const uint64_t index = indices_[n].index;
    Tag& tag = tags_[index];
    const age_t age = age_of(tag);
    class_of(tag).evictions[age] += 1;
    if (tag.explorer) explorer_budget_ += tag.size;
    indices_.erase(n);
    tags_[index] = tags_.back();
    tags_.pop_back();
    if (index < tags_.size()) {
      const uint64_t moved = tags_[index].id;
      indices_[indices_.find(moved, hash_key(moved))].index = index;
    }
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
    ewma_objects_ += indices_.size();  // libCacheSim: sizeMap.size(), the same objects
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
  int64_t n_req_ = 0;
  uint64_t rand_ = 0;
  std::vector<Tag> tags_;
  ObjectTable<IndexNode> indices_;
  std::vector<Class> classes_;
  timestamp_t timestamp_ = 0;
  timestamp_t next_reconfiguration_ = kAccessesPerReconfiguration;
  int reconfigurations_ = 0;
  timestamp_t coarsening_shift_ = 10;
  rank_t ewma_objects_ = 0, ewma_objects_mass_ = 0.;
  uint64_t recent_[kAdmissions] = {};
  bool recent_valid_[kAdmissions] = {};
  int recent_head_ = 0;
  rank_t ewma_victim_density_ = 0;
  int64_t explorer_budget_ = 0;
};

}  // namespace

std::unique_ptr<Simulator> make_lhd(const PolicyConfig& c) { return make_simulator<Lhd>(c); }

}  // namespace lite::cache::detail
