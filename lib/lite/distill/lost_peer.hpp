#pragma once
// Which rank a failed collective lost, for the error line (distributed.cpp). Gloo's error names an address only
// when a connection broke ("Read error [10.0.0.2]:41234: Connection reset by peer"); every rank posts its host
// name and addresses at the rendezvous, so that address names the ranks on that host. A timeout names no one:
// then the ranks still there answer a roll call through the store, and those that do not answer are named.
#include <optional>
#include <string>
#include <vector>

namespace c10d {
class Store;
}

namespace lite::distill {

// This host's interfaces that have an IPv4 or IPv6 address, one entry per address.
struct InterfaceAddress {
  std::string interface;  // what GLOO_SOCKET_IFNAME names
  std::string address;    // as Gloo's errors print it
};
std::vector<InterfaceAddress> interface_addresses();

struct RankHost {
  std::string host;
  std::vector<std::string> addresses;  // every address of its host's interfaces
};

// This process's host name and addresses, and its record as posted to the store (and read back).
RankHost this_rank_host();
std::string to_wire(const RankHost& h);
RankHost from_wire(const std::string& text);

// "rank 2 (host node02)", "ranks 2, 3 (host node02)", or "" when `reason` names no address of another rank.
std::string ranks_at_address_in(const std::string& reason, const std::vector<RankHost>& ranks, int self);

// The roll call after a failed collective: this rank answers, then waits up to `wait_s` for the others' answers.
// Returns those that did not answer ("rank 5 (host node05)", joined; "" when all did), or nullopt when the store
// (rank 0's) fails before the first look at the answers; failing later, the last look's silent ranks.
std::optional<std::string> roll_call(c10d::Store& store, const std::vector<RankHost>& ranks, int self, double wait_s);

}  // namespace lite::distill
