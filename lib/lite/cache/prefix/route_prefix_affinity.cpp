// prefix-affinity: the instance whose cache holds the longest prefix of the prompt, ties (a cold prompt: every
// instance) to the least loaded, as cache-aware routers do (SGLang's router, Mooncake's Conductor).
#include "lite/cache/prefix/cluster_route.hpp"

namespace lite::cache::prefix {

uint32_t route_prefix_affinity(const ClusterView& view, size_t request) {
  const BlockTrace& t = *view.trace;
  std::vector<uint32_t> best;
  uint32_t longest = 0;
  for (uint32_t i = 0; i < view.instances(); ++i) {
    const BlockCache& cache = *(*view.caches)[i];
    const uint32_t k = cached_prefix(t, request, [&](uint32_t b) { return cache.cached(b); });
    if (k > longest) {
      longest = k;
      best.clear();
    }
    if (k == longest) best.push_back(i);
  }
  return least_loaded(view, &best);
}

}  // namespace lite::cache::prefix
