// random: a uniformly random instance, drawn from a fixed seed by the request's index, so every run (and every
// thread count) routes alike.
#include "lite/cache/prefix/cluster_route.hpp"

namespace lite::cache::prefix {

uint32_t route_random(const ClusterView& view, size_t request) {
  constexpr uint64_t kSeed = 0x5eed;
  return uint32_t(mix64(kSeed ^ mix64(request)) % view.instances());
}

}  // namespace lite::cache::prefix
