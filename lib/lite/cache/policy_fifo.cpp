// FIFO: objects leave in insertion order; a hit changes nothing. Follows libCacheSim's FIFO.c
// (prepend on insert, evict q_tail, find without update).
#include "lite/cache/policy_internal.hpp"

namespace lite::cache::detail {
namespace {

struct FifoNode {
  uint64_t key = 0;
  uint32_t prev = kNil, next = kNil;
  uint32_t size = 0;
};

class Fifo : public PolicyBase<FifoNode> {
 public:
  using PolicyBase::PolicyBase;

  bool find(const Access& a) { return table_.find(a.key, a.hash) != kNil; }
  void insert(const Access& a) { insert_front(queue_, a); }
  void evict(const Access&) { drop(queue_, queue_.tail); }
  uint64_t occupied() const { return queue_.bytes; }

 private:
  List queue_;
};

}  // namespace

std::unique_ptr<Simulator> make_fifo(const PolicyConfig& c) { return make_simulator<Fifo>(c); }

}  // namespace lite::cache::detail
