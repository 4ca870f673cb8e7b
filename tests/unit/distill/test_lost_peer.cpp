// Naming the rank a failed collective lost: Gloo's error names an address only when a connection broke; the
// address names every other rank on that host, grouped by host; no address, or only this rank's, names no one.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "lite/distill/lost_peer.hpp"

using lite::distill::RankHost;
using lite::distill::ranks_at_address_in;

namespace {

const std::vector<RankHost> kRanks = {{"node01", {"127.0.0.1", "10.0.0.1"}},
                                      {"node01", {"127.0.0.1", "10.0.0.1"}},
                                      {"node02", {"127.0.0.1", "10.0.0.2", "fe80::2"}},
                                      {"node02", {"127.0.0.1", "10.0.0.2", "fe80::2"}},
                                      {"node03", {"127.0.0.1", "10.0.0.3"}}};

}  // namespace

TEST_CASE("a broken connection's address names the other ranks on that host") {
  CHECK(ranks_at_address_in("Connection closed by peer [10.0.0.3]:3773", kRanks, 0) == "rank 4 (host node03)");
  CHECK(ranks_at_address_in("Read error [10.0.0.2]:41234: Connection reset by peer", kRanks, 0) ==
        "ranks 2, 3 (host node02)");
  CHECK(ranks_at_address_in("Read error [10.0.0.2]:41234: Connection reset by peer", kRanks, 3) ==
        "rank 2 (host node02)");
  CHECK(ranks_at_address_in("Read error [fe80::2%eth0]:41234: Connection reset by peer", kRanks, 0) ==
        "ranks 2, 3 (host node02)");
}

TEST_CASE("a timeout or an unknown address names no one") {
  CHECK(ranks_at_address_in("Timed out waiting 15000ms for recv operation to complete", kRanks, 0).empty());
  CHECK(ranks_at_address_in("Connection closed by peer [10.9.9.9]:1", kRanks, 0).empty());
  CHECK(ranks_at_address_in("unbalanced [10.0.0.2", kRanks, 0).empty());
  const std::vector<RankHost> alone = {{"node01", {"10.0.0.1"}}};
  CHECK(ranks_at_address_in("Connection closed by peer [10.0.0.1]:1", alone, 0).empty());
}

TEST_CASE("a rank's host record survives the store") {
  const RankHost h{"node07", {"10.0.0.7", "::1"}};
  const RankHost back = lite::distill::from_wire(lite::distill::to_wire(h));
  CHECK(back.host == h.host);
  CHECK(back.addresses == h.addresses);
}
