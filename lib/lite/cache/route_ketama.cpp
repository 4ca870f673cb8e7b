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
  }

  uint32_t node_of(uint64_t, uint64_t hash) const override {
    auto it = std::lower_bound(positions_.begin(), positions_.end(), hash);
    const size_t i = it == positions_.end() ? 0 : size_t(it - positions_.begin());
    return points_[i].second;
  }

 private:
  std::vector<std::pair<uint64_t, uint32_t>> points_;  // (ring position, node), ascending
  std::vector<uint64_t> positions_;                    // the positions alone: a denser binary search
};

}  // namespace

std::unique_ptr<Router> make_ketama_router(uint32_t nodes, uint32_t virtual_nodes) {
  return std::make_unique<KetamaRouter>(nodes, std::max<uint32_t>(1, virtual_nodes));
}

}  // namespace lite::cache::detail
