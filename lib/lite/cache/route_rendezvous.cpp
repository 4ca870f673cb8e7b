// Rendezvous (highest random weight) hashing, Thaler & Ravishankar 1996: a key goes to the node with the
// largest weight mix64(key hash ^ node seed). Balanced without virtual nodes and minimal disruption like
// ketama (a new node takes ~1/(K+1) of the keys), at O(K) per request instead of a binary search.
#include "lite/cache/route.hpp"

#include <vector>

namespace lite::cache::detail {
namespace {

class RendezvousRouter final : public Router {
 public:
  explicit RendezvousRouter(uint32_t nodes) {
    for (uint32_t n = 0; n < nodes; ++n) seeds_.push_back(mix64(0x5bd1e995ULL * (uint64_t(n) + 1)));
  }

  uint32_t node_of(uint64_t, uint64_t hash) const override {
    uint32_t best = 0;
    uint64_t best_weight = 0;
    for (uint32_t n = 0; n < seeds_.size(); ++n) {
      const uint64_t w = mix64(hash ^ seeds_[n]);
      if (w > best_weight || n == 0) best_weight = w, best = n;
    }
    return best;
  }

 private:
  std::vector<uint64_t> seeds_;
};

}  // namespace

std::unique_ptr<Router> make_rendezvous_router(uint32_t nodes, uint32_t) { return std::make_unique<RendezvousRouter>(nodes); }

}  // namespace lite::cache::detail
