// least-loaded: the instance that has computed the fewest prefill tokens so far (the trace's work, not a queue
// length, so the study needs no timing), the lowest index among equals.
#include "lite/cache/prefix/cluster_route.hpp"

namespace lite::cache::prefix {

uint32_t route_least_loaded(const ClusterView& view, size_t) { return least_loaded(view); }

}  // namespace lite::cache::prefix
