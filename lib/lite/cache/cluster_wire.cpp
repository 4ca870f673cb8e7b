// A cluster record, every field, as JSON and back: what a lite-mpi rank sends to rank 0 for the clusters it
// simulated (--nodes under MPI). The report's cluster JSON (cluster_report.cpp) is derived and lossy (shares,
// hit ratios instead of the counts), so the ranks exchange this one instead; counters travel as
// [n_req, n_miss, n_req_byte, n_miss_byte] and doubles in nlohmann's shortest round-trip form, so rank 0
// rebuilds the very record the rank computed and the joined report equals a single-process run's.
#include "lite/cache/sweep.hpp"

namespace lite::cache {
namespace {

nlohmann::json counters_wire(const Counters& c) { return {c.n_req, c.n_miss, c.n_req_byte, c.n_miss_byte}; }

Counters counters_from_wire(const nlohmann::json& j) {
  return {j.at(0).get<uint64_t>(), j.at(1).get<uint64_t>(), j.at(2).get<uint64_t>(), j.at(3).get<uint64_t>()};
}

nlohmann::json latency_wire(const LatencyFigures& f) { return {f.mean_ms, f.p50_ms, f.p99_ms}; }

LatencyFigures latency_from_wire(const nlohmann::json& j) {
  return {j.at(0).get<double>(), j.at(1).get<double>(), j.at(2).get<double>()};
}

template <typename T, typename F>
nlohmann::json optional_wire(const std::optional<T>& v, F to) {
  return v ? to(*v) : nlohmann::json();
}

std::optional<double> optional_double(const nlohmann::json& j) {
  return j.is_null() ? std::nullopt : std::optional<double>(j.get<double>());
}

}  // namespace

nlohmann::json cluster_record_wire(const ClusterRecord& r) {
  nlohmann::json variants = nlohmann::json::array(), nodes = nlohmann::json::array(),
                 node_latency = nlohmann::json::array();
  for (const auto& [label, fig] : r.variants) variants.push_back({label, latency_wire(fig)});
  for (const auto& c : r.per_node) nodes.push_back(counters_wire(c));
  for (const auto& l : r.per_node_latency) node_latency.push_back(optional_wire(l, latency_wire));
  auto number = [](double v) { return nlohmann::json(v); };
  return {{"policy", r.policy},
          {"size", r.size},
          {"size_text", r.size_text},
          {"nodes", r.nodes},
          {"node_size", r.node_size},
          {"counters", counters_wire(r.counters)},
          {"latency", optional_wire(r.latency, latency_wire)},
          {"variants", variants},
          {"miss_cost_s", optional_wire(r.miss_cost_s, number)},
          {"per_node", nodes},
          {"per_node_latency", node_latency},
          {"hottest", r.hottest},
          {"max_over_mean", r.max_over_mean},
          {"hottest_hit_ratio", r.hottest_hit_ratio},
          {"hottest_p99_ms", optional_wire(r.hottest_p99_ms, number)}};
}

ClusterRecord cluster_record_from_wire(const nlohmann::json& j) {
  ClusterRecord r;
  r.policy = j.at("policy").get<std::string>();
  r.size = j.at("size").get<uint64_t>();
  r.size_text = j.at("size_text").get<std::string>();
  r.nodes = j.at("nodes").get<uint32_t>();
  r.node_size = j.at("node_size").get<uint64_t>();
  r.counters = counters_from_wire(j.at("counters"));
  if (!j.at("latency").is_null()) r.latency = latency_from_wire(j.at("latency"));
  for (const auto& v : j.at("variants")) r.variants.emplace_back(v.at(0).get<std::string>(), latency_from_wire(v.at(1)));
  r.miss_cost_s = optional_double(j.at("miss_cost_s"));
  for (const auto& c : j.at("per_node")) r.per_node.push_back(counters_from_wire(c));
  for (const auto& l : j.at("per_node_latency"))
    r.per_node_latency.push_back(l.is_null() ? std::nullopt : std::optional<LatencyFigures>(latency_from_wire(l)));
  r.hottest = j.at("hottest").get<uint32_t>();
  r.max_over_mean = j.at("max_over_mean").get<double>();
  r.hottest_hit_ratio = j.at("hottest_hit_ratio").get<double>();
  r.hottest_p99_ms = optional_double(j.at("hottest_p99_ms"));
  return r;
}

}  // namespace lite::cache
