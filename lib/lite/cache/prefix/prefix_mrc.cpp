// tail_first_lru_curve(): stack distances with a Fenwick tree over access stamps (prefix_mrc.hpp).
#include "lite/cache/prefix/prefix_mrc.hpp"

#include <algorithm>
#include <cmath>

#include "lite/core/interrupt.hpp"

namespace lite::cache::prefix {

namespace {

// Counts of live stamps, 1-based: a block's latest access holds one mark.
class Fenwick {
 public:
  explicit Fenwick(size_t n) : tree_(n + 1, 0) {}
  void add(size_t i, int32_t delta) {
    for (; i < tree_.size(); i += i & (~i + 1)) tree_[i] += delta;
  }
  uint64_t prefix(size_t i) const {  // marks at stamps 1..i
    int64_t s = 0;
    for (; i > 0; i -= i & (~i + 1)) s += tree_[i];
    return uint64_t(s);
  }

 private:
  std::vector<int32_t> tree_;
};

constexpr uint64_t kNever = UINT64_MAX;

// hist[d]: blocks (and their tokens) whose request's prefix first reaches them at stack distance d.
struct DistanceHistogram {
  std::vector<uint64_t> blocks, tokens;
};

DistanceHistogram histogram(const BlockTrace& t) {
  DistanceHistogram h;
  h.blocks.assign(t.blocks() + 1, 0);
  h.tokens.assign(t.blocks() + 1, 0);
  Fenwick marks(t.refs.size());
  std::vector<uint64_t> stamp(t.blocks(), 0);  // 0 = never used
  uint64_t now = 0, live = 0;
  for (size_t r = 0; r < t.requests(); ++r) {
    const uint32_t* b = t.blocks_of(r);
    const uint32_t n = t.block_count(r);
    uint64_t reach = 0;  // the largest distance of the prefix so far
    for (uint32_t j = 0; j < n; ++j) {
      const uint64_t d = stamp[b[j]] ? live - marks.prefix(stamp[b[j]] - 1) : kNever;
      reach = std::max(reach, d);
      if (reach == kNever) break;
      ++h.blocks[reach];
      h.tokens[reach] += t.hit_tokens(r, j + 1) - t.hit_tokens(r, j);
    }
    for (uint32_t j = n; j-- > 0;) {  // tail first: the head ends on top
      if (stamp[b[j]]) marks.add(stamp[b[j]], -1);
      else ++live;
      stamp[b[j]] = ++now;
      marks.add(now, +1);
    }
    if ((r & 4095) == 4095) throw_if_interrupted();
  }
  return h;
}

}  // namespace

PrefixCurve tail_first_lru_curve(const BlockTrace& t, const std::vector<uint64_t>& capacities, size_t grid) {
  const DistanceHistogram h = histogram(t);
  std::vector<uint64_t> at = capacities;
  const double most = double(std::max<size_t>(t.blocks(), 1));
  for (size_t i = 0; i < grid; ++i)
    at.push_back(uint64_t(std::llround(std::pow(most, double(i) / double(std::max<size_t>(grid - 1, 1))))));
  std::sort(at.begin(), at.end());
  at.erase(std::unique(at.begin(), at.end()), at.end());
  PrefixCurve curve;
  uint64_t blocks = 0, tokens = 0;
  size_t d = 0;
  for (uint64_t c : at) {
    for (; d <= std::min<uint64_t>(c, t.blocks()); ++d) {
      blocks += h.blocks[d];
      tokens += h.tokens[d];
    }
    curve.capacity_blocks.push_back(c);
    curve.hit_blocks.push_back(blocks);
    curve.hit_tokens.push_back(tokens);
  }
  return curve;
}

}  // namespace lite::cache::prefix
