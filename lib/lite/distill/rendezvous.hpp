#pragma once
// Joining a data-parallel world: rank 0 hosts a c10d::TCPStore at the master address, every rank connects
// to it, claims its rank, states its world size, and waits (within the timeout) for all ranks; then a
// c10d::ProcessGroupGloo is built over the store. Every way this can fail ends in one line naming this
// rank and the cause (nobody listens at the master address, a rank did not join in time, two processes
// claim one rank, world sizes differ), as InputError/OptionError: exit 2, before any training.
// The c10d types stay behind this header (forward declarations only): only rendezvous.cpp and
// distributed.cpp are compiled with USE_C10D_GLOO and the Gloo headers.
#include <c10/util/intrusive_ptr.h>

#include <exception>
#include <string>

#include "lite/distill/world.hpp"

namespace c10d {
class Store;
class ProcessGroupGloo;
}  // namespace c10d

namespace lite::distill {

struct Connection {
  c10::intrusive_ptr<c10d::Store> store;            // the rendezvous store (also carries per-rank figures)
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group;  // collectives
};

Connection rendezvous(const World& world);

// The first line of a c10d/Gloo error, without its "[file:line]" prefix and C++ backtrace.
std::string c10d_reason(const std::exception& e);

}  // namespace lite::distill
