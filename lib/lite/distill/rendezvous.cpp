// Rendezvous of a data-parallel world over c10d::TCPStore and ProcessGroupGloo (see rendezvous.hpp).
// Keys under "lite/": claim/R (counter: a second claimant of rank R is refused), world/R (the world size
// rank R was started with). The Gloo group builds its full mesh under the "gloo/" prefix of the same store.
#include "lite/distill/rendezvous.hpp"

#include <fmt/format.h>
#include <glog/logging.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "lite/core/error.hpp"
#include "lite/core/options.hpp"
#include "lite/core/text.hpp"
#include "lite/distill/lost_peer.hpp"

namespace lite::distill {

namespace {

std::chrono::milliseconds millis(double seconds) { return std::chrono::milliseconds(int64_t(seconds * 1000.0)); }

std::vector<uint8_t> bytes(const std::string& s) { return {s.begin(), s.end()}; }
std::string text(const std::vector<uint8_t>& v) { return {v.begin(), v.end()}; }

std::string reason(const std::exception& e) { return c10d_reason(e); }

bool loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

// GLOO_SOCKET_IFNAME (as in PyTorch) picks the interface; a loopback master means one machine; otherwise
// Gloo's default device (the address this machine's hostname resolves to).
// The interfaces of this host that have an address (what GLOO_SOCKET_IFNAME may name).
std::vector<std::string> addressed_interfaces() {
  std::vector<std::string> names;
  for (const auto& a : interface_addresses())
    if (std::find(names.begin(), names.end(), a.interface) == names.end()) names.push_back(a.interface);
  return names;
}

// A GLOO_SOCKET_IFNAME this host lacks is refused before the rendezvous, naming the interfaces it has (Gloo's own
// message, "ifa != nullptr", reached the user through a timeout's words).
void check_gloo_interface(const World& w) {
  const char* ifname = std::getenv("GLOO_SOCKET_IFNAME");
  if (!ifname || !*ifname) return;
  const auto names = addressed_interfaces();
  if (std::find(names.begin(), names.end(), ifname) == names.end())
    throw UsageError(fmt::format("rank {}: GLOO_SOCKET_IFNAME: this host has no interface '{}' with an address (it "
                                 "has: {}); name one of them (the one that reaches rank 0's {}), or unset it",
                                 w.rank, escape_control(ifname), join(names, ", "), w.host));
}

std::shared_ptr<::gloo::transport::Device> gloo_device(const World& w) {
  if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname)
    return c10d::ProcessGroupGloo::createDeviceForInterface(ifname);
  if (loopback(w.host)) return c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1");
  return c10d::ProcessGroupGloo::createDefaultDevice();
}

c10::intrusive_ptr<c10d::Store> connect_store(const World& w) {
  c10d::TCPStoreOptions opts;
  opts.port = w.port;
  opts.isServer = w.rank == 0;
  opts.waitWorkers = false;  // lite waits itself, so that it can name the ranks that did not come
  opts.timeout = millis(w.timeout_s);
  try {
    return c10::make_intrusive<c10d::TCPStore>(w.host, opts);
  } catch (const std::exception& e) {
    if (w.rank == 0)
      throw OptionError("master", fmt::format("rank 0 cannot host the rendezvous at {}: {}", w.master(), reason(e)),
                        "pass a free port of this machine");
    throw OptionError("master",
                      fmt::format("rank {} cannot reach rank 0 at {} within {:g} s: {}", w.rank, w.master(),
                                  w.timeout_s, reason(e)),
                      "start rank 0 with the same master, check address and port, or raise {timeout_s}");
  }
}

std::string rank_list(const std::vector<int>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size(); ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  return out;
}

// Rank 0 waits for every rank's world/R key; on timeout it names the ranks that did not join.
void wait_for_everyone(c10d::Store& store, const World& w) {
  std::vector<std::string> keys;
  for (int r = 1; r < w.size; ++r) keys.push_back("lite/world/" + std::to_string(r));
  try {
    store.wait(keys, millis(w.timeout_s));
  } catch (const std::exception&) {
    std::vector<int> missing;
    for (int r = 1; r < w.size; ++r)
      if (!store.check({"lite/world/" + std::to_string(r)})) missing.push_back(r);
    throw InputError(fmt::format("rank 0: the rendezvous at {} did not complete within {:g} s: rank{} {} of {} did not "
                                 "join; start every rank with the same master and world size, or raise {{timeout_s}}",
                                 w.master(), w.timeout_s, missing.size() == 1 ? "" : "s", rank_list(missing), w.size));
  }
  for (int r = 1; r < w.size; ++r) {
    const std::string size = text(store.get("lite/world/" + std::to_string(r)));
    if (size != std::to_string(w.size))
      throw InputError(fmt::format("rank 0: rank {} joined a world of {} processes, this one has {}; start every rank "
                                   "with the same world size", r, size, w.size));
  }
}

void join(c10d::Store& store, const World& w) {
  const std::string me = std::to_string(w.rank);
  if (store.add("lite/claim/" + me, 1) > 1)
    throw InputError(fmt::format("rank {}: another process already joined {} as rank {}; give each process its own "
                                 "rank", w.rank, w.master(), w.rank));
  if (w.rank == 0) {
    store.set("lite/world/0", bytes(std::to_string(w.size)));
    wait_for_everyone(store, w);
    return;
  }
  // Read rank 0's world size before posting ours: rank 0 may end as soon as it sees a mismatch.
  std::string size;
  try {
    size = text(store.get("lite/world/0"));
  } catch (const std::exception& e) {
    throw InputError(fmt::format("rank {}: rank 0 at {} did not finish the rendezvous within {:g} s: {}; raise "
                                 "{{timeout_s}} or check rank 0", w.rank, w.master(), w.timeout_s, reason(e)));
  }
  store.set("lite/world/" + me, bytes(std::to_string(w.size)));
  if (size != std::to_string(w.size))
    throw InputError(fmt::format("rank {}: rank 0 has a world of {} processes, this one {}; start every rank with the "
                                 "same world size", w.rank, size, w.size));
}

// c10d and Gloo log their own account of every failure (a connect retry, a closed peer) to stderr through
// glog; lite reports each failure once, as one line naming the rank, so their logging is raised to FATAL.
void quiet_c10d_logging() { FLAGS_minloglevel = google::GLOG_FATAL; }

}  // namespace

std::string c10d_reason(const std::exception& e) {
  std::string line = first_line(e.what());
  if (!line.empty() && line.front() == '[') {
    const auto close = line.find("] ");
    if (close != std::string::npos) line = line.substr(close + 2);
  }
  return line;
}

Connection rendezvous(const World& w) {
  quiet_c10d_logging();
  check_gloo_interface(w);
  Connection c;
  c.store = connect_store(w);
  try {
    join(*c.store, w);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {  // the store's connection broke (rank 0 ended)
    throw InputError(fmt::format("rank {}: the rendezvous at {} failed: {}; check that every rank runs the same "
                                 "command", w.rank, w.master(), reason(e)));
  }
  try {
    auto options = c10d::ProcessGroupGloo::Options::create(millis(w.timeout_s));
    options->devices.push_back(gloo_device(w));
    auto prefixed = c10::make_intrusive<c10d::PrefixStore>("gloo", c.store);
    c.group = c10::make_intrusive<c10d::ProcessGroupGloo>(prefixed, w.rank, w.size, options);
    c.group->barrier()->wait();
  } catch (const std::exception& e) {
    throw InputError(fmt::format("rank {}: the Gloo process group of {} ranks did not connect within {:g} s: {}; "
                                 "check that the ranks can reach each other (GLOO_SOCKET_IFNAME picks the network "
                                 "interface)", w.rank, w.size, w.timeout_s, reason(e)));
  }
  return c;
}

}  // namespace lite::distill
