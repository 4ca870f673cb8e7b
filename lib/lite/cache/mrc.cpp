// One-pass LRU miss-ratio curve with SHARDS sampling; see mrc_internal.hpp for the algorithm.
#include <algorithm>
#include <cmath>

#include "lite/cache/mrc_internal.hpp"
#include "lite/cache/prefetch.hpp"

namespace lite::cache::detail {

namespace {
constexpr uint32_t kMinPositions = 1u << 16;
}  // namespace

LruProfiler::LruProfiler(bool bytes, std::vector<uint64_t> query_sizes, double sample_rate, uint64_t max_objects)
    : bytes_(bytes),
      rate_(max_objects ? 1.0 : sample_rate),
      threshold_(max_objects ? UINT64_MAX : threshold_for(sample_rate)),
      max_objects_(max_objects),
      queries_(std::move(query_sizes)) {
  slots_.assign(1 << 14, Entry{0, kNil, 0});
  mask_ = slots_.size() - 1;
  cap_ = kMinPositions;
  bits_.assign(cap_ / 64, 0);
  if (bytes_) {
    tree_.assign(cap_ + 1, 0);
    for (int k = 0; k <= 32 * 50; ++k) edges_.push_back(static_cast<uint64_t>(std::floor(std::pow(2.0, k / 32.0))));
    for (uint64_t q : queries_) edges_.push_back(q);
    std::sort(edges_.begin(), edges_.end());
    edges_.erase(std::unique(edges_.begin(), edges_.end()), edges_.end());
    hist_req_.assign(edges_.size() + 1, 0);  // last bin: beyond every edge
    hist_bytes_.assign(edges_.size() + 1, 0);
  } else {
    word_tree_.assign(cap_ / 64 + 1, 0);
    hist_req_.assign(2, 0);
  }
}

// ---- positions ----------------------------------------------------------------------------------

uint64_t LruProfiler::weight_after(uint32_t pos) const {
  uint64_t prefix = 0;
  if (bytes_) {
    for (size_t i = pos + 1; i > 0; i -= i & (~i + 1)) prefix += tree_[i];
  } else {
    const uint32_t word = pos >> 6;
    for (size_t i = word; i > 0; i -= i & (~i + 1)) prefix += word_tree_[i];
    const uint32_t bit = pos & 63;
    const uint64_t mask = bit == 63 ? ~uint64_t(0) : ((uint64_t(1) << (bit + 1)) - 1);
    prefix += static_cast<uint64_t>(__builtin_popcountll(bits_[word] & mask));
  }
  return total_weight_ - prefix;
}

void LruProfiler::add_weight(uint32_t pos, int64_t w) {
  total_weight_ += static_cast<uint64_t>(w);
  const uint32_t word = pos >> 6;
  bits_[word] ^= uint64_t(1) << (pos & 63);
  if (bytes_) {
    for (size_t i = pos + 1; i < tree_.size(); i += i & (~i + 1)) tree_[i] += static_cast<uint64_t>(w);
  } else {
    for (size_t i = word + 1; i < word_tree_.size(); i += i & (~i + 1)) word_tree_[i] += static_cast<uint32_t>(w);
  }
}

// ---- the object table --------------------------------------------------------------------------

LruProfiler::Entry* LruProfiler::find(uint64_t key, uint64_t hash) {
  for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
    Entry& e = slots_[i];
    if (e.pos == kNil) return nullptr;
    if (e.key == key) return &e;
  }
}

LruProfiler::Entry* LruProfiler::insert(uint64_t key, uint64_t hash) {
  if ((live_ + 1) * 2 > slots_.size()) grow();
  size_t i = hash & mask_;
  while (slots_[i].pos != kNil) i = (i + 1) & mask_;
  slots_[i].key = key;
  ++live_;
  return &slots_[i];
}

void LruProfiler::erase(Entry* e) {
  size_t i = static_cast<size_t>(e - slots_.data());
  size_t j = i;
  while (true) {
    j = (j + 1) & mask_;
    if (slots_[j].pos == kNil) break;
    const size_t home = hash_key(slots_[j].key) & mask_;
    if (((j - home) & mask_) >= ((j - i) & mask_)) {
      slots_[i] = slots_[j];
      i = j;
    }
  }
  slots_[i].pos = kNil;
  --live_;
}

void LruProfiler::grow() {
  BigVector<Entry> old;
  old.swap(slots_);
  slots_.assign(old.size() * 2, Entry{0, kNil, 0});
  mask_ = slots_.size() - 1;
  for (const Entry& e : old) {
    if (e.pos == kNil) continue;
    size_t i = hash_key(e.key) & mask_;
    while (slots_[i].pos != kNil) i = (i + 1) & mask_;
    slots_[i] = e;
  }
}

void LruProfiler::compact() {
  // An object's new position is the number of live positions before its old one, so the order is
  // kept and the live positions become 0 .. live-1.
  std::vector<uint32_t> rank(bits_.size() + 1, 0);
  for (size_t w = 0; w < bits_.size(); ++w) rank[w + 1] = rank[w] + static_cast<uint32_t>(__builtin_popcountll(bits_[w]));
  for (Entry& e : slots_) {
    if (e.pos == kNil) continue;
    const uint32_t w = e.pos >> 6, b = e.pos & 63;
    e.pos = rank[w] + static_cast<uint32_t>(__builtin_popcountll(bits_[w] & ((uint64_t(1) << b) - 1)));
  }
  const size_t live = live_;
  uint32_t new_cap = std::max<uint32_t>(cap_, kMinPositions);
  while (new_cap < live * 4) new_cap <<= 1;
  cap_ = new_cap;
  now_ = static_cast<uint32_t>(live);
  bits_.assign(cap_ / 64, 0);
  for (uint32_t w = 0; w < now_ / 64; ++w) bits_[w] = ~uint64_t(0);
  if (now_ % 64) bits_[now_ / 64] = (uint64_t(1) << (now_ % 64)) - 1;
  // rebuild the trees in O(n)
  if (bytes_) {
    tree_.assign(cap_ + 1, 0);
    for (const Entry& e : slots_)
      if (e.pos != kNil) tree_[e.pos + 1] = e.size;
    for (size_t i = 1; i < tree_.size(); ++i) {
      size_t j = i + (i & (~i + 1));
      if (j < tree_.size()) tree_[j] += tree_[i];
    }
  } else {
    word_tree_.assign(cap_ / 64 + 1, 0);
    for (size_t w = 0; w < bits_.size(); ++w) word_tree_[w + 1] = static_cast<uint32_t>(__builtin_popcountll(bits_[w]));
    for (size_t i = 1; i < word_tree_.size(); ++i) {
      size_t j = i + (i & (~i + 1));
      if (j < word_tree_.size()) word_tree_[j] += word_tree_[i];
    }
  }
}

// ---- sampling -----------------------------------------------------------------------------------

void LruProfiler::drop_largest_hash() {
  const auto [hash, key] = by_hash_.top();
  by_hash_.pop();
  Entry* e = find(key, hash);
  add_weight(e->pos, -static_cast<int64_t>(bytes_ ? e->size : 1));
  erase(e);
  const double old_rate = rate_;
  threshold_ = hash;  // keep iff hash < threshold
  rate_ = rate_for(threshold_);
  // Rescale what was counted at the old rate (lazily: new counts are worth more instead).
  scale_ *= rate_ / old_rate;
}

void LruProfiler::keep_hashes(uint64_t lo, uint64_t width) {
  lo_ = lo;
  threshold_ = width;
  rate_ = rate_for(width);
}

// ---- histogram ----------------------------------------------------------------------------------

size_t LruProfiler::bin_of(double distance) const {
  const double d = std::ceil(distance);
  if (d >= 1.8e19) return edges_.size();
  const uint64_t v = static_cast<uint64_t>(d);
  return static_cast<size_t>(std::lower_bound(edges_.begin(), edges_.end(), v) - edges_.begin());
}

void LruProfiler::record(double distance, uint32_t request_size) {
  const double w = 1.0 / scale_;
  if (bytes_) {
    const size_t b = bin_of(distance);
    hist_req_[b] += w;
    hist_bytes_[b] += w * request_size;
  } else {
    const double r = std::round(distance);
    const size_t idx = r < 1 ? 1 : static_cast<size_t>(r);
    if (idx >= hist_req_.size()) hist_req_.resize(std::max(idx + 1, hist_req_.size() * 2), 0);
    hist_req_[idx] += w;
  }
}

double LruProfiler::access(uint64_t key, uint64_t hash, uint32_t size) {
  if (hash - lo_ >= threshold_ && threshold_ != UINT64_MAX) return 0;
  const double w = 1.0 / scale_;
  sampled_req_ += w;
  sampled_bytes_ += w * size;
  if (size > max_object_size_) max_object_size_ = size;
  const uint32_t weight = bytes_ ? size : 1;
  Entry* e = find(key, hash);
  if (!e) {
    cold_req_ += w;
    cold_bytes_ += w * size;
    if (now_ == cap_) compact();
    e = insert(key, hash);
    e->pos = now_;
    e->size = size;
    add_weight(now_, weight);
    ++now_;
    if (max_objects_) {
      by_hash_.push({hash, key});
      if (live_ > max_objects_) drop_largest_hash();
    }
    return 0;
  }
  const uint32_t stored = bytes_ ? e->size : 1;
  const double distance = static_cast<double>(weight_after(e->pos) + stored) / rate_;
  if (bytes_ && size != e->size) sizes_vary_ = true;
  if (now_ == cap_) compact();  // entries stay in place; their positions change
  add_weight(e->pos, -static_cast<int64_t>(stored));
  e->pos = now_;
  e->size = size;
  add_weight(now_, weight);
  ++now_;
  return distance;
}

void LruProfiler::run(const Batch& b) {
  const bool deferred = !bytes_ && max_objects_ == 0;  // the weight of a count stays 1/scale_ = 1
  if (deferred) pending_.clear();
  for (size_t i = 0; i < b.n; ++i) {
    // only the keys this profiler keeps (a key partition keeps 1/N of them)
    if (i + 8 < b.n && b.hash[i + 8] - lo_ < threshold_) prefetch_line(&slots_[b.hash[i + 8] & mask_]);
    const double d = access(b.key[i], b.hash[i], b.size[i]);
    if (d <= 0) continue;
    if (!deferred) {
      record(d, b.size[i]);
      continue;
    }
    const double r = std::round(d);
    pending_.push_back(r < 1 ? 1u : static_cast<uint32_t>(std::min(r, 4e9)));
  }
  if (!deferred) return;
  // Object mode: the histogram is as large as the working set, so its updates are random misses;
  // a separate loop with prefetching overlaps them.
  uint32_t top = 0;
  for (uint32_t idx : pending_) top = std::max(top, idx);
  if (top >= hist_req_.size()) hist_req_.resize(std::max<size_t>(top + 1, hist_req_.size() * 2), 0);
  const size_t n = pending_.size();
  double* h = hist_req_.data();
  for (size_t i = 0; i < n; ++i) {
    if (i + 16 < n) prefetch_line_for_write(h + pending_[i + 16]);
    h[pending_[i]] += 1.0;
  }
}

size_t LruProfiler::memory_bytes() const {
  return slots_.capacity() * sizeof(Entry) + bits_.capacity() * 8 + word_tree_.capacity() * 4 +
         tree_.capacity() * 8 + hist_req_.capacity() * 16 + edges_.capacity() * 8;
}

// ---- results ------------------------------------------------------------------------------------

size_t LruProfiler::largest_distance_index() const {
  if (bytes_) {
    size_t last = 0;
    for (size_t i = 0; i < edges_.size(); ++i)
      if (hist_req_[i] != 0) last = i;
    return last;
  }
  for (size_t i = hist_req_.size(); i-- > 1;)
    if (hist_req_[i] != 0) return i;
  return 1;
}

std::vector<uint64_t> LruProfiler::default_grid() const {
  const size_t top = largest_distance_index();
  std::vector<uint64_t> sizes;
  if (bytes_) {  // the last edge that any distance reached, plus one beyond
    sizes.assign(edges_.begin(), edges_.begin() + std::ptrdiff_t(std::min(top + 1, edges_.size() - 1) + 1));
  } else if (top <= 4096) {  // dense points: every size up to 4096, then log-spaced
    for (uint64_t s = 1; s <= top; ++s) sizes.push_back(s);
  } else {
    for (int k = 0; k < 4096; ++k) {
      uint64_t s = static_cast<uint64_t>(std::llround(std::pow(double(top), k / 4095.0)));
      if (sizes.empty() || s > sizes.back()) sizes.push_back(s);
    }
  }
  return sizes;
}

std::vector<uint64_t> LruProfiler::shared_grid() const {
  if (bytes_) return default_grid();  // the edges do not depend on the trace
  const uint64_t top = largest_distance_index();
  std::vector<uint64_t> sizes;
  for (uint64_t s = 1; s <= std::min<uint64_t>(top, 4096); ++s) sizes.push_back(s);
  for (int k = 1; sizes.back() < top; ++k) {
    const uint64_t s = static_cast<uint64_t>(std::llround(4096.0 * std::pow(2.0, k / 64.0)));
    if (s > sizes.back()) sizes.push_back(s);
  }
  return sizes;
}

MrcCurve LruProfiler::finish(uint64_t total_requests, std::optional<double> target_hit_ratio) const {
  return finish(total_requests, target_hit_ratio, default_grid());
}

MrcCurve LruProfiler::finish(uint64_t total_requests, std::optional<double> target_hit_ratio,
                             const std::vector<uint64_t>& grid) const {
  // everything in full-trace units: counts * scale_
  std::vector<double> hr(hist_req_.size()), hb(hist_req_.size());
  for (size_t i = 0; i < hr.size(); ++i) hr[i] = hist_req_[i] * scale_;
  for (size_t i = 0; i < hb.size(); ++i) hb[i] = (bytes_ ? hist_bytes_[i] : hist_req_[i]) * scale_;
  double total = sampled_req_ * scale_;
  double total_bytes = sampled_bytes_ * scale_;
  if (total_requests && max_objects_ == 0 && rate_ < 1.0) {
    // SHARDS_adj: the first bucket absorbs the difference between expected and sampled requests
    const double expected = double(total_requests) * rate_;
    const double diff = expected - total;
    hr[bytes_ ? 0 : 1] += diff;
    hb[bytes_ ? 0 : 1] += diff * (total > 0 ? total_bytes / total : 1.0);
    total_bytes += diff * (total > 0 ? total_bytes / total : 1.0);
    total = expected;
  }
  // cumulative hits
  std::vector<double> ch(hr.size()), cb(hb.size());
  double a = 0, c = 0;
  for (size_t i = 0; i < hr.size(); ++i) {
    a += hr[i];
    c += hb[i];
    ch[i] = a;
    cb[i] = c;
  }
  auto point = [&](uint64_t size, size_t idx) {
    MrcPoint p;
    p.size = size;
    p.miss_ratio = total > 0 ? std::clamp(1.0 - ch[idx] / total, 0.0, 1.0) : 0.0;
    p.byte_miss_ratio = total_bytes > 0 ? std::clamp(1.0 - cb[idx] / total_bytes, 0.0, 1.0) : 0.0;
    return p;
  };
  // the cumulative slot of a size: byte mode the first edge at or above it, object mode the size itself
  auto slot = [&](uint64_t size) {
    if (bytes_) return static_cast<size_t>(std::lower_bound(edges_.begin(), edges_.end(), size) - edges_.begin());
    return std::min<size_t>(size, ch.size() - 1);
  };

  MrcCurve curve;
  curve.bytes = bytes_;
  curve.n_req = static_cast<uint64_t>(std::llround(total));
  curve.sizes_vary = sizes_vary_;
  curve.exact_from_size = bytes_ ? max_object_size_ : 1;
  for (uint64_t s : grid) curve.points.push_back(point(s, slot(s)));
  for (uint64_t q : queries_) curve.at_sizes.push_back(point(q, slot(q)));
  if (target_hit_ratio && total > 0) {
    const size_t first = bytes_ ? 0 : 1, end = bytes_ ? edges_.size() : ch.size();
    for (size_t i = first; i < end; ++i)
      if (ch[i] / total >= *target_hit_ratio - 1e-12) {
        curve.smallest_size_for_target = bytes_ ? edges_[i] : i;
        break;
      }
  }
  return curve;
}

std::vector<Counters> LruProfiler::counters_at_queries(uint64_t total_requests) const {
  MrcCurve c = finish(total_requests, std::nullopt);
  std::vector<Counters> out;
  const double total = sampled_req_ * scale_;
  const double total_bytes = sampled_bytes_ * scale_;
  for (const auto& p : c.at_sizes) {
    Counters k;
    k.n_req = static_cast<uint64_t>(std::llround(total));
    k.n_req_byte = static_cast<uint64_t>(std::llround(total_bytes));
    k.n_miss = static_cast<uint64_t>(std::llround(p.miss_ratio * total));
    k.n_miss_byte = static_cast<uint64_t>(std::llround(p.byte_miss_ratio * total_bytes));
    out.push_back(k);
  }
  return out;
}

}  // namespace lite::cache::detail
