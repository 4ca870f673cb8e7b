// lite optimize's objective on hand-made variants: feasibility, the ranking (cache first, then latency; or the
// user's prices), screening, the frontier, the verdicts and the nearest misses; the cache fit from records; the
// options' rules; the emitted recipe.
#include <doctest/doctest.h>

#include "lite/cache/cache_sim.hpp"
#include "lite/core/options.hpp"
#include "lite/optimize/cache_fit.hpp"
#include "lite/optimize/objective.hpp"
#include "lite/optimize/outputs.hpp"

using namespace lite::optimize;

namespace {

Objective p99_objective(double target_ms, double budget = 1.0) {
  Objective o;
  o.target = {"target_p99_ms", target_ms, 1};
  o.accuracy_budget = budget;
  return o;
}

Variant measured(double ratio, const std::string& mode, double drop, double p50, double p99, uint64_t bytes = 1000) {
  Variant v;
  v.spec = {ratio, mode};
  v.key = v.spec.label();
  v.status = "measured";
  v.file_bytes = bytes;
  v.quality = make_quality("top-1 accuracy", 1000, 90.0, 90.0 - drop);
  Latency l;
  l.calls = 200;
  l.p50_ms = p50;
  l.mean_ms = p50 * 1.05;
  l.p99_ms = p99;
  l.speedup = l.speedup_low = l.speedup_high = 1;
  v.latency = l;
  return v;
}

CacheFit cache_of(uint64_t size, double p99, double hit_ratio = 0.5) {
  CacheFit c;
  c.reached = true;
  c.policy = "lru";
  c.size = size;
  c.p99_ms = p99;
  c.p50_ms = p99 / 4;
  c.mean_ms = p99 / 3;
  c.hit_ratio = hit_ratio;
  return c;
}

}  // namespace

TEST_CASE("objective: without a cache the fastest variant within the budget wins") {
  Objective o = p99_objective(5.0);
  std::vector<Variant> vs = {measured(0, "float", 0, 6, 7), measured(0, "static", 0.4, 2, 3),
                             measured(0.5, "static", 3.0, 1, 1.5), measured(0, "dynamic", 0.5, 4, 4.8)};
  for (auto& v : vs) judge(v, o);
  CHECK_FALSE(vs[0].feasible);  // too slow
  CHECK(vs[1].feasible);
  CHECK_FALSE(vs[2].feasible);  // over the accuracy budget
  CHECK(vs[3].feasible);
  auto chosen = choose(vs, o);
  REQUIRE(chosen);
  CHECK(*chosen == 1);
  CHECK(vs[1].chosen);
  CHECK(vs[1].on_frontier);
  CHECK(vs[2].on_frontier);  // fastest, though least accurate
  CHECK_FALSE(vs[3].on_frontier);  // slower and less accurate than static, no smaller
}

TEST_CASE("objective: a variant that needs no cache beats one that needs a cache, however fast") {
  Objective o = p99_objective(5.0);
  std::vector<Variant> vs = {measured(0, "float", 0, 6, 8), measured(0, "static", 0.2, 3, 4.5)};
  vs[0].cache = cache_of(1000, 4.0);
  for (auto& v : vs) judge(v, o);
  CHECK(vs[0].feasible);
  CHECK(cache_size_needed(vs[0]) == 1000);
  CHECK(cache_size_needed(vs[1]) == 0);
  CHECK(choose(vs, o) == std::optional<size_t>(1));
}

TEST_CASE("objective: among cached variants the smaller cache wins, and prices can overrule it") {
  Objective o = p99_objective(5.0);
  std::vector<Variant> vs = {measured(0, "float", 0, 20, 30), measured(0, "static", 0.2, 10, 15)};
  vs[0].cache = cache_of(4ull << 30, 4.0, 0.9);
  vs[1].cache = cache_of(1ull << 30, 4.5, 0.6);
  for (auto& v : vs) judge(v, o);
  CHECK(choose(vs, o) == std::optional<size_t>(1));
  // Cache is nearly free, core time is dear: the variant whose bigger cache leaves fewer misses wins.
  o.cost_cache_gib = 1e-9;
  o.cost_core_ms = 1.0;
  for (auto& v : vs) judge(v, o);
  CHECK(vs[0].cost == doctest::Approx(0.1 * 21.0).epsilon(0.01));
  CHECK(vs[1].cost == doctest::Approx(0.4 * 10.5).epsilon(0.01));
  CHECK(choose(vs, o) == std::optional<size_t>(0));
}

TEST_CASE("objective: screening drops a variant sure to lose accuracy, far too slow, or dominated") {
  Objective o = p99_objective(5.0);
  Variant bad;
  bad.spec = {0.5, "float"};
  bad.screen_quality = make_quality("top-1 accuracy", 256, 90, 80);
  CHECK(screen_out_reason(bad, o, {}, false).find("loses 10.00 points") != std::string::npos);
  Variant close = bad;
  close.screen_quality = make_quality("top-1 accuracy", 256, 90, 88.5);  // 1.5 points on 256: could be noise
  CHECK(screen_out_reason(close, o, {}, false).empty());
  Variant slow = close;
  Latency l;
  l.p50_ms = 9;
  l.p99_ms = 12;
  l.calls = 10;
  l.speedup = 0.5;
  l.speedup_low = 0.4;
  l.speedup_high = 0.6;
  slow.screen_latency = l;
  CHECK(screen_out_reason(slow, o, {}, false).find("misses the target") != std::string::npos);
  CHECK(screen_out_reason(slow, o, {}, true).empty());  // a cache may still make it
  // Timed in a slow moment: the original's quiet p50 (2 ms) over the screened speedup says 3.3 ms, within reach.
  CHECK(screen_out_reason(slow, o, {}, false, 2.0).empty());
  std::vector<Variant> done = {measured(0, "static", 0.1, 2, 3)};
  done[0].latency->speedup = 2.0;
  done[0].latency->speedup_low = 1.8;
  done[0].latency->speedup_high = 2.2;
  judge(done[0], o);
  CHECK(screen_out_reason(slow, o, done, true).find("cannot be cheaper than no pruning + static") != std::string::npos);
  // Speedups whose intervals come within the noise allowance of each other: both are measured.
  done[0].latency->speedup_low = 0.7;
  CHECK(screen_out_reason(slow, o, done, true).empty());
}

TEST_CASE("objective: verdicts name why each family lost, and misses are ranked by distance") {
  Objective o = p99_objective(2.0);
  std::vector<Variant> vs = {measured(0, "float", 0, 6, 7), measured(0, "static", 0.4, 2.5, 3),
                             measured(0.5, "float", 4.0, 3, 3.5), measured(0.5, "static", 5.0, 1, 1.5)};
  for (auto& v : vs) judge(v, o);
  CHECK_FALSE(choose(vs, o));
  const auto misses = nearest_misses(vs, o);
  REQUIRE(misses.size() == 3);
  CHECK(misses[0].rfind("no pruning + static: p99 3 ms (50% short of 2)", 0) == 0);
  // However far off an absurd target, a variant within the accuracy budget ranks before one far over it.
  const auto absurd = nearest_misses(vs, p99_objective(0.0001));
  CHECK(absurd[0].rfind("no pruning + static", 0) == 0);
  CHECK(absurd[1].rfind("no pruning + float", 0) == 0);
  const auto lines = family_verdicts(vs, o);
  bool prune_line = false;
  for (const auto& l : lines)
    if (l.rfind("prune 0.5: loses too much accuracy: at best 4.00 points", 0) == 0) prune_line = true;
  CHECK(prune_line);
}

TEST_CASE("cache_fit: the smallest size of any policy meeting the target, per variant") {
  std::vector<lite::cache::SimRecord> records;
  auto add = [&](const std::string& policy, uint64_t size, double miss, double p99_a, double p99_b) {
    lite::cache::SimRecord r;
    r.policy = policy;
    r.size = size;
    r.size_text = std::to_string(size);
    r.counters.n_req = 100;
    r.counters.n_miss = uint64_t(miss * 100);
    r.variants = {{"a", {1, 0.5, p99_a}}, {"b", {2, 1.0, p99_b}}};
    records.push_back(r);
  };
  add("lru", 10, 0.8, 9, 19);
  add("lru", 100, 0.4, 6, 12);
  add("lru", 1000, 0.1, 2, 4);
  add("s3fifo", 10, 0.7, 8, 18);
  add("s3fifo", 100, 0.3, 4, 9);
  add("s3fifo", 1000, 0.05, 1, 3);
  const lite::optimize::Target t{"target_p99_ms", 5.0, 1};
  const CacheFit a = fit_from_records(records, "a", t);
  CHECK(a.reached);
  CHECK(a.policy == "s3fifo");
  CHECK(a.size == 100);
  CHECK(a.hit_ratio == doctest::Approx(0.7));
  const CacheFit b = fit_from_records(records, "b", t);
  CHECK(b.size == 1000);
  CHECK(b.policy == "s3fifo");
  const CacheFit none = fit_from_records(records, "b", {"target_p99_ms", 2.0, 1});
  CHECK_FALSE(none.reached);
  CHECK(none.best_ms == doctest::Approx(3));
}

TEST_CASE("options: one target, a trace with its hit latency, a budget with data to judge it") {
  OptimizeOptions o;
  o.model = LITE_SOURCE_DIR "/data/fmnist_cnn.pt";
  o.output = "/tmp/lite-optimize-unit.pt";
  auto rejected_key = [&](const OptimizeOptions& x) {
    try {
      validate(x);
    } catch (const lite::OptionError& e) {
      return e.key();
    }
    return std::string("accepted");
  };
  CHECK(rejected_key(o) == "target_p99_ms");
  o.target_p99_ms = 5;
  CHECK(rejected_key(o) == "accepted");
  OptimizeOptions two = o;
  two.target_speedup = 2;
  CHECK(rejected_key(two) == "target_speedup");
  OptimizeOptions negative = o;
  negative.target_p99_ms = -1;
  CHECK(rejected_key(negative) == "target_p99_ms");
  OptimizeOptions trace = o;
  trace.trace = LITE_SOURCE_DIR "/data/inference_requests.csv";
  CHECK(rejected_key(trace) == "hit_latency_ms");
  OptimizeOptions budget = o;
  budget.max_accuracy_drop = 1;
  CHECK(rejected_key(budget) == "max_accuracy_drop");
  OptimizeOptions mode = o;
  mode.modes = {"int3"};
  CHECK(rejected_key(mode) == "modes");
}

TEST_CASE("emit_recipe: the choice's levers as steps and the same target as gates") {
  OptimizeOptions o;
  o.model = "/models/m.pt";
  o.eval = "/data/eval.pt";
  o.target_p99_ms = 5;
  OptimizeResult r;
  r.target = {"target_p99_ms", 5, 1};
  r.accuracy_budget = 1;
  r.metric = "top-1 accuracy";
  r.variants = {measured(0.25, "static", 0.3, 2, 3)};
  r.chosen = 0;
  const auto recipe = emitted_recipe(r, o);
  REQUIRE(recipe["steps"].size() == 2);
  CHECK(recipe["steps"][0]["prune"]["ratio"] == 0.25);
  CHECK(recipe["steps"][1]["quantize"]["mode"] == "static");
  CHECK(recipe["steps"][1]["quantize"]["calib"] == "@data.calib");
  CHECK(recipe["data"]["calib"] == "/data/eval.pt");
  CHECK(recipe["gates"]["max_p99_ms"] == 5.0);
  CHECK(recipe["gates"]["max_accuracy_drop"] == 1.0);
  // Behind a cache: a profile of the final model pays for the misses of a cache-sim step at the chosen size.
  o.trace = "/traces/t.csv";
  o.hit_latency_ms = 0.05;
  r.variants[0].cache = cache_of(4096, 4.0);
  r.variants[0].latency->p99_ms = 9;
  const auto cached = emitted_recipe(r, o);
  REQUIRE(cached["steps"].size() == 4);
  CHECK(cached["steps"][2]["profile"]["models"][0] == "@steps[1]");
  CHECK(cached["steps"][3]["cache-sim"]["sizes"] == "4096");
  CHECK(cached["steps"][3]["cache-sim"]["miss_latency_from"][0] == "@steps[2].report");
  CHECK(cached["gates"]["max_cache_p99_ms"] == 5.0);
  CHECK(cached["gates"]["min_hit_ratio"] == doctest::Approx(0.5));
  // A recovered variant: prune, then distill on the training data, then quantize.
  o.data = "/data/train.gz";
  r.variants[0].spec.recovered = true;
  const auto recovered = emitted_recipe(r, o);
  CHECK(recovered["steps"][1].contains("distill"));
  CHECK(recovered["steps"][1]["distill"]["data"] == "@data.train");
  CHECK(recovered["steps"][2].contains("quantize"));
  CHECK(recovered["data"]["train"] == "/data/train.gz");
  // Pruned by the sensitivity analysis: the per-group ratios it chose, not a re-run of the analysis.
  r.variants[0].spec = {0, "static", false, true};
  r.variants[0].layer_ratios = {{{"glob", "features.0"}, {"ratio", 0.3}}};
  const auto sensitive = emitted_recipe(r, o);
  CHECK_FALSE(sensitive["steps"][0]["prune"].contains("ratio"));
  CHECK(sensitive["steps"][0]["prune"]["layer_ratios"][0]["glob"] == "features.0");
  CHECK_FALSE(cached["gates"].contains("max_p99_ms"));
}
