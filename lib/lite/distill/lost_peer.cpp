// Naming the rank a failed collective lost (lost_peer.hpp).
#include "lite/distill/lost_peer.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>

#include "lite/core/text.hpp"

namespace lite::distill {

namespace {

// "rank 2 (host a)" / "ranks 2, 3 (host a)" / "rank 2 (host a), rank 5 (host b)": the ranks grouped by host.
std::string describe(const std::vector<int>& ranks, const std::vector<RankHost>& hosts) {
  std::map<std::string, std::vector<std::string>> by_host;
  std::vector<std::string> order;
  for (int r : ranks) {
    const std::string& h = hosts.at(size_t(r)).host;
    if (!by_host.count(h)) order.push_back(h);
    by_host[h].push_back(std::to_string(r));
  }
  std::vector<std::string> parts;
  for (const auto& h : order)
    parts.push_back(fmt::format("rank{} {} (host {})", by_host[h].size() > 1 ? "s" : "", join(by_host[h], ", "), h));
  return join(parts, ", ");
}

}  // namespace

std::vector<InterfaceAddress> interface_addresses() {
  std::vector<InterfaceAddress> out;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return out;
  for (const ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr) continue;
    char text[INET6_ADDRSTRLEN] = {};
    if (a->ifa_addr->sa_family == AF_INET)
      ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr, text, sizeof text);
    else if (a->ifa_addr->sa_family == AF_INET6)
      ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(a->ifa_addr)->sin6_addr, text, sizeof text);
    if (text[0]) out.push_back({a->ifa_name, text});
  }
  ::freeifaddrs(list);
  return out;
}

RankHost this_rank_host() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  RankHost me{host, {}};
  for (const auto& a : interface_addresses())
    if (std::find(me.addresses.begin(), me.addresses.end(), a.address) == me.addresses.end())
      me.addresses.push_back(a.address);
  return me;
}

std::string to_wire(const RankHost& h) { return nlohmann::json{{"host", h.host}, {"addresses", h.addresses}}.dump(); }

RankHost from_wire(const std::string& text) {
  const auto j = nlohmann::json::parse(text);
  return {j.at("host").get<std::string>(), j.at("addresses").get<std::vector<std::string>>()};
}

std::string ranks_at_address_in(const std::string& reason, const std::vector<RankHost>& ranks, int self) {
  const size_t open = reason.find('[');
  const size_t close = open == std::string::npos ? open : reason.find(']', open);
  if (close == std::string::npos) return "";
  std::string address = reason.substr(open + 1, close - open - 1);
  if (const size_t zone = address.find('%'); zone != std::string::npos) address.resize(zone);  // fe80::1%eth0
  std::vector<int> at;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const auto& a = ranks[r].addresses;
    if (int(r) != self && std::find(a.begin(), a.end(), address) != a.end()) at.push_back(int(r));
  }
  return at.empty() ? "" : describe(at, ranks);
}

std::optional<std::string> roll_call(c10d::Store& store, const std::vector<RankHost>& ranks, int self, double wait_s) {
  const std::string prefix = "lite/roll_call/";
  std::optional<std::vector<int>> silent;  // as last seen
  try {
    store.set(prefix + std::to_string(self), std::vector<uint8_t>{'1'});
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
    while (true) {
      std::vector<int> now;
      for (size_t r = 0; r < ranks.size(); ++r)
        if (int(r) != self && !store.check({prefix + std::to_string(r)})) now.push_back(int(r));
      silent = std::move(now);
      if (silent->empty() || std::chrono::steady_clock::now() >= deadline) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  } catch (const std::exception&) {
    // The store went with rank 0. Before any answer was seen: rank 0 itself is the one lost. After: rank 0 ended
    // its own roll call first, and the ranks silent then are the answer.
    if (!silent) return std::nullopt;
  }
  return silent->empty() ? "" : describe(*silent, ranks);
}

}  // namespace lite::distill
