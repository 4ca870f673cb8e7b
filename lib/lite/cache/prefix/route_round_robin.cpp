// round-robin: the r-th request of the trace goes to instance r mod K.
#include "lite/cache/prefix/cluster_route.hpp"

namespace lite::cache::prefix {

uint32_t route_round_robin(const ClusterView& view, size_t request) { return uint32_t(request % view.instances()); }

}  // namespace lite::cache::prefix
