// Modulo routing: node = key mod K on the trace's own integer key (not its hash), what a naive client
// does. Even on keys spread uniformly, it moves almost every key when K changes, and sequential or strided
// key spaces map straight onto node imbalance, which the benchmark shows against ketama.
#include "lite/cache/route.hpp"

namespace lite::cache::detail {
namespace {

class ModuloRouter final : public Router {
 public:
  explicit ModuloRouter(uint32_t nodes) : nodes_(nodes) {}
  uint32_t node_of(uint64_t key, uint64_t) const override { return uint32_t(key % nodes_); }

 private:
  uint64_t nodes_;
};

}  // namespace

std::unique_ptr<Router> make_modulo_router(uint32_t nodes, uint32_t) { return std::make_unique<ModuloRouter>(nodes); }

}  // namespace lite::cache::detail
