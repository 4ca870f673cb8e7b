// ketama consistent hashing, as memcached clients (libketama, libmemcached) route keys: every node puts
// `virtual_nodes` points (160 by default, libketama's 40 MD5 digests x 4 points) on a ring of hash values,
// and a key goes to the first point at or after its own hash, wrapping around. A node's points depend only
// on the node's index, so adding node K+1 moves only the keys that now land on its points: ~1/(K+1) of them.
// lite draws the points from splitmix64 of (node, replica) on a 64-bit ring rather than MD5 on a 32-bit one:
// the same placement law without an MD5 dependency, and no 32-bit point collisions at thousands of nodes.
#include <algorithm>
#include <utility>
#include <vector>

#include "lite/cache/route.hpp"

namespace lite::cache::detail {
namespace {

class KetamaRouter final : public Router {
 public:
  KetamaRouter(uint32_t nodes, uint32_t virtual_nodes) {
    points_.reserve(size_t(nodes) * virtual_nodes);
    for (uint32_t n = 0; n < nodes; ++n)
      for (uint32_t r = 0; r < virtual_nodes; ++r)
        points_.push_back({mix64((uint64_t(n) << 32) | r), n});
    std::sort(points_.begin(), points_.end());
    positions_.reserve(points_.size());
    for (const auto& p : points_) positions_.push_back(p.first);
    // about two buckets per point: a key's bucket holds ~0.5 points to step over instead of a binary search
    while (bucket_bits_ < 20 && (size_t(1) << bucket_bits_) < 2 * points_.size()) ++bucket_bits_;
    bucket_start_.resize((size_t(1) << bucket_bits_) + 1);
    size_t i = 0;
    for (size_t b = 0; b + 1 < bucket_start_.size(); ++b) {
      while (i < positions_.size() && bucket_of(positions_[i]) < b) ++i;
      bucket_start_[b] = uint32_t(i);
    }
    bucket_start_.back() = uint32_t(positions_.size());
  }

  // The first point at or after `hash`: it lies in the hash's bucket or is the first point after it.
  uint32_t node_of(uint64_t, uint64_t hash) const override {
    const size_t b = bucket_of(hash);
    size_t i = bucket_start_[b];
    const size_t end = bucket_start_[b + 1];
    while (i < end && positions_[i] < hash) ++i;
    return points_[i == positions_.size() ? 0 : i].second;
  }

 private:
  size_t bucket_of(uint64_t position) const { return size_t(position >> (64 - bucket_bits_)); }

  std::vector<std::pair<uint64_t, uint32_t>> points_;  // (ring position, node), ascending
  std::vector<uint64_t> positions_;                    // the positions alone
  int bucket_bits_ = 1;
  std::vector<uint32_t> bucket_start_;                 // first point of each bucket of the ring's top bits
};

}  // namespace

std::unique_ptr<Router> make_ketama_router(uint32_t nodes, uint32_t virtual_nodes) {
  return std::make_unique<KetamaRouter>(nodes, std::max<uint32_t>(1, virtual_nodes));
}

}  // namespace lite::cache::detail
