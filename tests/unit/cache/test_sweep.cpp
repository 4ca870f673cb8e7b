// Sweeps split over processes and resumed from a results folder (sweep.hpp, record_store.hpp), without MPI:
// the cost balancing, the record store's keys and files, and a sweep simulated in parts and joined equal to
// the whole sweep in one process.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "cache_test_util.hpp"
#include "lite/cache/options.hpp"
#include "lite/cache/policies.hpp"
#include "lite/cache/record_store.hpp"
#include "lite/cache/sweep.hpp"
#include "lite/core/error.hpp"
#include "lite/core/options.hpp"

using namespace cache_test;
using namespace lite::cache;

namespace {

std::string write_keys(const ScratchDir& d, const std::vector<Request>& trace, const std::string& name = "t.txt") {
  std::ostringstream s;
  for (const auto& r : trace) s << r.key << "\n";
  return d.file(name, s.str()).string();
}

SimulationConfig config_for(const std::string& path, const std::string& policies, const std::string& sizes) {
  SimulationConfig c;
  c.trace = path;
  c.policies = parse_policies(policies);
  c.sizes = parse_sizes(sizes, false);
  c.threads = 1;
  return c;
}

nlohmann::json records_json(const CacheSimResult& r) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& rec : r.records) {
    nlohmann::json j = rec;
    j.erase("memory_bytes");  // a simulator's allocation, not a result
    out.push_back(j);
  }
  return out;
}

double max_load(const std::vector<double>& loads) { return *std::max_element(loads.begin(), loads.end()); }

}  // namespace

TEST_CASE("balance: LPT by cost keeps every part within the dearest slot of the mean") {
  std::vector<SweepSlot> slots;
  const std::vector<double> policy_cost = {1.0, 4.0, 2.5, 1.2};
  for (size_t p = 0; p < policy_cost.size(); ++p)
    for (size_t k = 0; k < 8; ++k) slots.push_back({p, k, policy_cost[p]});
  for (int parts : {1, 2, 3, 4, 7}) {
    CAPTURE(parts);
    const auto owner = balance_slots(slots, {}, parts);
    REQUIRE(owner.size() == slots.size());
    for (int o : owner) CHECK((o >= 0 && o < parts));
    const auto loads = part_loads(slots, {}, owner, parts);
    double total = 0;
    for (double l : loads) total += l;
    CHECK(total == doctest::Approx(8 * (1.0 + 4.0 + 2.5 + 1.2)));
    CHECK(max_load(loads) <= total / parts + 4.0 + 1e-9);  // LPT: at most one slot over the mean
    CHECK(balance_slots(slots, {}, parts) == owner);        // deterministic: every rank computes the same
  }
}

TEST_CASE("balance: by cost, not count (the dear policy's slots spread, the cheap ones fill in)") {
  // 2 parts, 4 slots of cost 3 and 4 of cost 1: by count each part gets 4 slots whatever they cost; by cost
  // each gets two dear and two cheap ones (load 8 each).
  std::vector<SweepSlot> slots;
  for (size_t k = 0; k < 4; ++k) slots.push_back({0, k, 3.0});
  for (size_t k = 0; k < 4; ++k) slots.push_back({1, k, 1.0});
  const auto loads = part_loads(slots, {}, balance_slots(slots, {}, 2), 2);
  CHECK(loads[0] == doctest::Approx(8.0));
  CHECK(loads[1] == doctest::Approx(8.0));
}

TEST_CASE("balance: a policy's setup cost (Belady's backward pass) is paid once per part that runs it") {
  // policy 0: 4 slots of cost 1 with a setup of 10; policy 1: 8 slots of cost 1. Spreading policy 0 would
  // pay its setup twice (loads 12 + 8 and 12: the sweep takes 20 instead of 14); it stays on one part.
  std::vector<SweepSlot> slots;
  for (size_t k = 0; k < 4; ++k) slots.push_back({0, k, 1.0});
  for (size_t k = 0; k < 8; ++k) slots.push_back({1, k, 1.0});
  const std::vector<double> setup = {10.0, 0.0};
  const auto owner = balance_slots(slots, setup, 2);
  std::set<int> parts_with_policy0;
  for (size_t i = 0; i < 4; ++i) parts_with_policy0.insert(owner[i]);
  CHECK(parts_with_policy0.size() == 1);
  const auto loads = part_loads(slots, setup, owner, 2);
  CHECK(loads[0] + loads[1] == doctest::Approx(22.0));
  // preload (the curve on rank 0) counts as work already there
  CHECK(max_load(loads) == doctest::Approx(14.0));
  const auto with_curve = part_loads(slots, setup, balance_slots(slots, setup, 2, {5.0, 0.0}), 2, {5.0, 0.0});
  CHECK(max_load(with_curve) <= 14.0 + 1e-9);
  // many parts and a small setup: the policy is cut into chunks, each paying it, which shortens the sweep
  std::vector<SweepSlot> many;
  for (size_t k = 0; k < 16; ++k) many.push_back({0, k, 1.0});
  for (size_t k = 0; k < 16; ++k) many.push_back({1, k, 1.0});
  const auto cut = balance_slots(many, {1.0, 0.0}, 8);
  std::set<int> parts_with_cut_policy;
  for (size_t i = 0; i < 16; ++i) parts_with_cut_policy.insert(cut[i]);
  CHECK(parts_with_cut_policy.size() > 1);
  CHECK(max_load(part_loads(many, {1.0, 0.0}, cut, 8)) <= 6.0 + 1e-9);  // together it would be 17
}

TEST_CASE("balance: the measured costs differ by policy, Belady alone has a setup, every policy has a cost") {
  double cheapest = 1e9, dearest = 0;
  for (const auto& e : policy_table()) {
    const PolicySpec p{e.name, {}};
    CAPTURE(e.name);
    CHECK(slot_cost(p, false) > 0);
    CHECK(slot_cost(p, true) == doctest::Approx(2 * slot_cost(p, false)));
    CHECK((policy_setup_cost(p) > 0) == e.needs_next_access);
    cheapest = std::min(cheapest, slot_cost(p, false));
    dearest = std::max(dearest, slot_cost(p, false));
  }
  CHECK(dearest / cheapest >= 3.0);
}

TEST_CASE("sweep: simulated in three parts and joined, the records equal one process's") {
  ScratchDir d;
  const auto path = write_keys(d, zipf(60000, 3000, 0.9, 1, 7));
  SimulationConfig c = config_for(path, "lru,fifo,belady,lhd,s3fifo", "50,300,1000,2500");
  c.target_hit_ratio = 0.5;
  const CacheSimResult whole = simulate(c);
  const int parts = 3;
  std::vector<double> setup;
  for (const auto& p : c.policies) setup.push_back(policy_setup_cost(p));
  const auto owner = balance_slots(sweep_slots(c), setup, parts);
  std::vector<CacheSimResult> pieces;
  for (int rank = 0; rank < parts; ++rank) {
    SweepControl control;
    control.assigned = [&, rank](size_t p, size_t k) { return owner[p * 4 + k] == rank; };
    control.run_curve = rank == 0;
    pieces.push_back(simulate(c, lite::no_progress(), control));
    CHECK_FALSE(pieces.back().recommendation.has_value());  // left to the join
  }
  CacheSimResult joined = std::move(pieces[0]);
  SweepPart others;
  for (int rank = 1; rank < parts; ++rank) {
    for (auto& r : pieces[size_t(rank)].records) others.records.push_back(r);
    others.simulated += pieces[size_t(rank)].simulations;
  }
  merge_sweep(joined, c, others);
  CHECK(records_json(joined) == records_json(whole));
  CHECK(joined.simulations == whole.simulations);
  REQUIRE(joined.recommendation.has_value());
  CHECK(nlohmann::json(*joined.recommendation) == nlohmann::json(*whole.recommendation));
  CHECK(joined.trace.n_req == whole.trace.n_req);
}

// The pieces of a sweep, each simulated as one rank of `parts` would (lite-mpi's split), joined as rank 0 joins
// them; the other ranks' clusters travel through their wire form as they do over MPI.
CacheSimResult simulate_in_parts(const SimulationConfig& c, int parts) {
  std::vector<double> setup;
  for (const auto& p : c.policies) setup.push_back(policy_setup_cost(p));
  const auto owner = balance_slots(sweep_slots(c), setup, parts);
  std::vector<CacheSimResult> pieces;
  for (int rank = 0; rank < parts; ++rank) {
    SweepControl control;
    control.assigned = [&, rank](size_t p, size_t k) { return owner.at(slot_index(c, p, k)) == rank; };
    control.assigned_cluster = [&, rank](size_t p, size_t k, size_t n) {
      return owner.at(cluster_slot_index(c, p, k, n)) == rank;
    };
    control.run_curve = rank == 0;
    pieces.push_back(simulate(c, lite::no_progress(), control));
  }
  CacheSimResult joined = std::move(pieces[0]);
  SweepPart others;
  for (int rank = 1; rank < parts; ++rank) {
    for (auto& r : pieces[size_t(rank)].records) others.records.push_back(r);
    if (pieces[size_t(rank)].cluster)
      for (const auto& r : pieces[size_t(rank)].cluster->records)
        others.clusters.push_back(cluster_record_from_wire(nlohmann::json::parse(cluster_record_wire(r).dump())));
    others.simulated += pieces[size_t(rank)].simulations;
  }
  merge_sweep(joined, c, std::move(others));
  return joined;
}

TEST_CASE("sweep with --nodes: clusters spread over three parts and joined equal one process's") {
  ScratchDir d;
  const auto path = write_keys(d, zipf(40000, 3000, 0.9, 1, 17));
  SimulationConfig c = config_for(path, "lru,belady,sieve", "3,300,1000");  // 3 over 4 nodes: skipped
  c.cluster.nodes = {4, 2, 7};  // in the given order, not sorted
  c.cluster.route = "rendezvous";
  c.hit_latency_ms = 1;
  c.miss_latency_ms = 10;
  c.target_hit_ratio = 0.45;
  c.cluster.max_node_load = 1.3;
  const CacheSimResult whole = simulate(c);
  REQUIRE(whole.cluster.has_value());
  const size_t n_clusters = whole.cluster->records.size();
  CHECK(n_clusters == 3 * 3 * 3 - 3 * 2);  // size 3: neither 4 nor 7 nodes
  std::vector<double> setup;
  for (const auto& p : c.policies) setup.push_back(policy_setup_cost(p));
  for (int parts : {2, 3, 5}) {
    CAPTURE(parts);
    const auto slots = sweep_slots(c);
    const auto owner = balance_slots(slots, setup, parts);
    std::set<int> cluster_owners;
    for (size_t i = 0; i < slots.size(); ++i)
      if (slots[i].cluster) cluster_owners.insert(owner[i]);
    CHECK(cluster_owners.size() == size_t(parts));  // the clusters are spread, not left to one part
    const CacheSimResult joined = simulate_in_parts(c, parts);
    REQUIRE(joined.cluster.has_value());
    CHECK(nlohmann::json(*joined.cluster) == nlohmann::json(*whole.cluster));
    CHECK(records_json(joined) == records_json(whole));
    CHECK(joined.notes == whole.notes);
    CHECK(joined.gates.failed == whole.gates.failed);
  }
}

TEST_CASE("cluster wire form: every field survives the trip") {
  ScratchDir d;
  const auto path = write_keys(d, zipf(5000, 400, 0.9, 1, 2));
  SimulationConfig c = config_for(path, "lru", "100");
  c.cluster.nodes = {3};
  c.miss_latency_ms = 7.25;
  const CacheSimResult r = simulate(c);
  REQUIRE(r.cluster.has_value());
  const ClusterRecord& rec = r.cluster->records.at(0);
  const ClusterRecord back = cluster_record_from_wire(nlohmann::json::parse(cluster_record_wire(rec).dump()));
  CHECK(cluster_record_wire(back) == cluster_record_wire(rec));
  CHECK(back.per_node.size() == 3);
  REQUIRE(back.per_node_latency.at(1).has_value());
  CHECK(back.per_node_latency[1]->p99_ms == rec.per_node_latency[1]->p99_ms);
  CHECK(back.max_over_mean == rec.max_over_mean);
}

TEST_CASE("balance: a cluster costs its policy plus the routing, rendezvous more with every node") {
  const PolicySpec lru{"lru", {}};
  for (const char* route : {"ketama", "rendezvous", "modulo"}) {
    CAPTURE(route);
    CHECK(cluster_slot_cost(lru, route, 4) > slot_cost(lru, false));
  }
  CHECK(cluster_slot_cost(lru, "rendezvous", 64) > cluster_slot_cost(lru, "rendezvous", 4));
  CHECK(cluster_slot_cost(lru, "ketama", 64) == doctest::Approx(cluster_slot_cost(lru, "ketama", 4)));
  SimulationConfig c;
  c.policies = parse_policies("lru,gdsf");
  c.sizes = parse_sizes("10,20", false);
  c.cluster.nodes = {2, 8};
  const auto slots = sweep_slots(c);
  REQUIRE(slots.size() == 4 + 8);
  CHECK(slots[slot_index(c, 1, 1)].cluster == 0);
  const SweepSlot& last = slots.at(cluster_slot_index(c, 1, 1, 1));
  CHECK((last.policy == 1 && last.size == 1 && last.cluster == 2));
}

TEST_CASE("record store: a record written is found with the same key, not with another trace, option or size") {
  ScratchDir d;
  const auto path = write_keys(d, zipf(20000, 1000, 0.9, 1, 3));
  SimulationConfig c = config_for(path, "lru,sieve", "100,400");
  const CacheSimResult first = simulate(c);
  const auto dir = d.path / "results";
  RecordStore store(dir, path, record_options_key(c));
  for (const auto& r : first.records) store.put(r);
  CHECK(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()) == 4);
  const auto found = store.find("sieve", 400);
  REQUIRE(found.has_value());
  CHECK(nlohmann::json(*found) == nlohmann::json(first.records[3]));
  CHECK_FALSE(store.find("sieve", 401).has_value());
  CHECK_FALSE(store.find("sieve:x=1", 400).has_value());
  SimulationConfig bytes_mode = c;
  bytes_mode.bytes = true;
  CHECK_FALSE(RecordStore(dir, path, record_options_key(bytes_mode)).find("sieve", 400).has_value());
  const auto other = write_keys(d, zipf(20000, 1000, 0.9, 1, 4), "other.txt");
  CHECK_FALSE(RecordStore(dir, other, record_options_key(c)).find("sieve", 400).has_value());
}

TEST_CASE("record store: a damaged file is recomputed, a folder that is a file is refused") {
  ScratchDir d;
  const auto path = write_keys(d, zipf(5000, 300, 0.9, 1, 5));
  SimulationConfig c = config_for(path, "lru", "50");
  const CacheSimResult r = simulate(c);
  const auto dir = d.path / "results";
  RecordStore store(dir, path, record_options_key(c));
  store.put(r.records[0]);
  for (const auto& e : std::filesystem::directory_iterator(dir)) std::ofstream(e.path()) << "{\"key\": 1";
  CHECK_FALSE(store.find("lru", 50).has_value());
  store.put(r.records[0]);
  CHECK(store.find("lru", 50).has_value());
  CHECK_THROWS_AS(check_results_dir(dir.string(), "-"), lite::OptionError);  // a stream: nothing to hash
  CHECK_NOTHROW(check_results_dir((d.path / "new" / "deeper").string(), path));
  // where the folder may be is the path check's (FileRoles::writes_folder), run by validate()
  CacheSimOptions o;
  o.trace = path;
  o.sizes = "50";
  for (const auto& bad : {path, (std::filesystem::path(path) / "under_a_file").string()}) {
    o.results_dir = bad;
    CHECK_THROWS_AS(validate(o), lite::OptionError);
  }
  // created with the first record, not before
  RecordStore later(d.path / "later", path, record_options_key(c));
  CHECK_FALSE(later.find("lru", 50).has_value());
  CHECK_FALSE(std::filesystem::exists(d.path / "later"));
  later.put(r.records[0]);
  CHECK(later.find("lru", 50).has_value());
}

TEST_CASE("record store: run() reuses every record on a re-run and simulates nothing") {
  ScratchDir d;
  CacheSimOptions o;
  o.trace = write_keys(d, zipf(30000, 2000, 0.9, 1, 9));
  o.policies = {"lru", "belady", "lfu"};
  o.sizes = "100,1000";
  o.threads = 1;
  o.results_dir = (d.path / "results").string();
  const CacheSimResult first = run(o);
  CHECK(first.reused_records == 0);
  CHECK(first.simulations == 6);
  const CacheSimResult again = run(o);
  CHECK(again.reused_records == 6);
  CHECK(again.simulations == 0);
  CHECK(records_json(again) == records_json(first));
  o.sizes = "100,1000,1500";  // one more size: only its slots are simulated
  const CacheSimResult more = run(o);
  CHECK(more.reused_records == 6);
  CHECK(more.simulations == 3);
}

TEST_CASE("sweep slots: with a store and absolute sizes, records already there cost nothing") {
  ScratchDir d;
  const auto path = write_keys(d, zipf(20000, 1000, 0.9, 1, 3));
  SimulationConfig c = config_for(path, "lru,belady", "400,100,100");  // resolved: 100, 400
  RecordStore store(d.path / "results", path, record_options_key(c));
  SweepControl control;
  control.store = &store;
  control.assigned = [](size_t p, size_t) { return p == 1; };  // belady only
  simulate(c, lite::no_progress(), control);
  const auto slots = sweep_slots(c, &store);
  REQUIRE(slots.size() == 6);
  CHECK(slots[0].cost > 0);   // lru @ 100
  CHECK(slots[1].cost > 0);   // lru @ 400
  CHECK(slots[2].cost == 0);  // past the resolved list
  CHECK(slots[3].cost == 0);  // belady @ 100, stored
  CHECK(slots[4].cost == 0);  // belady @ 400, stored
  // without a store, or with sizes that need the working set, every slot keeps its cost
  for (const auto& s : sweep_slots(c)) CHECK((s.cost > 0));
  SimulationConfig fractions = config_for(path, "lru,belady", "10%,40%");
  for (const auto& s : sweep_slots(fractions, &store)) CHECK((s.cost > 0));
  // a re-run's split: the stored Belady slots pay no setup, the two LRU slots go one to each part
  const auto owner = balance_slots(slots, {0.0, policy_setup_cost(c.policies[1])}, 2);
  CHECK(owner[0] != owner[1]);
}

TEST_CASE("content hash: equal bytes equal hashes, one byte or the length changes it") {
  std::string a(100003, 'x');
  for (size_t i = 0; i < a.size(); ++i) a[i] = char('a' + (i * 7919) % 26);
  std::string b = a;
  b[50001] ^= 1;
  CHECK(content_hash(a.data(), a.size()) == content_hash(a.data(), a.size()));
  CHECK(content_hash(a.data(), a.size()) != content_hash(b.data(), b.size()));
  CHECK(content_hash(a.data(), a.size()) != content_hash(a.data(), a.size() - 1));
  ScratchDir d;
  CHECK(trace_content_hash(d.file("a", a).string()) == content_hash(a.data(), a.size()));
}

TEST_CASE("record JSON round trip keeps every field (sampled, cost model, sample check)") {
  ScratchDir d;
  const auto trace = zipf(40000, 4000, 0.9, 1, 11);
  SimulationConfig c = config_for(write_keys(d, trace), "lru,arc", "200,1000");
  c.sample_rate = 0.5;
  c.sample_check = true;
  c.miss_latency_ms = 10;
  c.hit_latency_ms = 0.5;
  const CacheSimResult r = simulate(c);
  for (const auto& rec : r.records) CHECK(nlohmann::json(record_from_json(nlohmann::json(rec))) == nlohmann::json(rec));
}
