// session: a hash of the request's first block, so requests sharing a system prompt (or a conversation's turns)
// meet on one instance; a request without blocks goes by its index.
#include "lite/cache/prefix/cluster_route.hpp"

namespace lite::cache::prefix {

uint32_t route_session(const ClusterView& view, size_t request) {
  const BlockTrace& t = *view.trace;
  const uint64_t key = t.block_count(request) ? uint64_t(t.blocks_of(request)[0]) : ~uint64_t(request);
  return uint32_t(mix64(key) % view.instances());
}

}  // namespace lite::cache::prefix
