// The objective of lite optimize (objective.hpp): feasibility, ranking, screening, frontier and the verdicts.
#include "lite/optimize/objective.hpp"

#include "lite/core/stats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>

namespace lite::optimize {

std::string Objective::describe() const {
  std::string words = fmt::format("meet {} with at most {:g} points of accuracy lost; then ", target.describe(),
                                  accuracy_budget);
  if (cost_cache_gib && cost_core_ms)
    return words + fmt::format("minimise {:g} x cache GiB + {:g} x core-ms per request", *cost_cache_gib, *cost_core_ms);
  return words + fmt::format("minimise the cache's {}, then the mean request latency", cache_unit);
}

Quality make_quality(const std::string& metric, int64_t samples, double reference, double value) {
  Quality q;
  q.metric = metric;
  q.samples = samples;
  q.reference = reference;
  q.value = value;
  q.drop = reference - value;
  const auto interval = stats::wilson_interval(value, samples);
  q.drop_low = reference - interval.high;
  q.drop_high = reference - interval.low;
  return q;
}

double target_figure(const Latency& l, const Target& t) {
  if (t.key == "target_p99_ms") return l.p99_ms;
  if (t.key == "target_p50_ms") return l.p50_ms;
  if (t.key == "target_throughput") return l.mean_ms > 0 ? 1000.0 * double(t.batch) / l.mean_ms : 0.0;
  return l.speedup;
}

bool meets(double figure, const Target& t) {
  const bool higher_is_better = t.key == "target_throughput" || t.key == "target_speedup";
  return higher_is_better ? figure >= t.value : figure <= t.value;
}

namespace {

bool higher_is_better(const Target& t) { return t.key == "target_throughput" || t.key == "target_speedup"; }

double cache_figure(const CacheFit& c, const Target& t) { return t.key == "target_p50_ms" ? c.p50_ms : c.p99_ms; }

bool needs_cache(const Variant& v) { return !v.meets_latency_alone && v.cache && v.cache->reached; }

// How far a figure misses the target, as a fraction of the target (0 when it meets it).
double latency_miss(double figure, const Target& t) {
  if (meets(figure, t)) return 0;
  if (higher_is_better(t)) return figure > 0 ? t.value / figure - 1 : std::numeric_limits<double>::infinity();
  return figure / t.value - 1;
}

double mean_request_ms(const Variant& v) { return needs_cache(v) ? v.cache->mean_ms : v.latency->mean_ms; }

bool fully_measured(const Variant& v) { return v.status == "measured" && v.quality && v.latency; }

std::string figure_text(double figure, const Target& t) {
  if (t.key == "target_throughput") return fmt::format("{:.0f} samples/s", figure);
  if (t.key == "target_speedup") return fmt::format("{:.2f}x", figure);
  return fmt::format("{} {:.3g} ms", t.key == "target_p50_ms" ? "p50" : "p99", figure);
}

}  // namespace

double served_figure(const Variant& v, const Target& t) {
  if (!v.latency) return higher_is_better(t) ? 0 : std::numeric_limits<double>::infinity();
  const double own = target_figure(*v.latency, t);
  if (meets(own, t) || !v.cache || !v.cache->reached) return own;
  return cache_figure(*v.cache, t);
}

uint64_t cache_size_needed(const Variant& v) { return needs_cache(v) ? v.cache->size : 0; }

void judge(Variant& v, const Objective& o) {
  v.meets_accuracy = v.quality && v.quality->drop <= o.accuracy_budget + 1e-9;
  v.meets_latency_alone = v.latency && meets(target_figure(*v.latency, o.target), o.target);
  v.feasible = fully_measured(v) && v.meets_accuracy && (v.meets_latency_alone || (v.cache && v.cache->reached));
  if (!v.latency) return;
  if (o.cost_cache_gib && o.cost_core_ms) {
    const double gib = o.cache_unit == "bytes" ? double(cache_size_needed(v)) / double(1ull << 30) : 0.0;
    const double miss = needs_cache(v) ? 1.0 - v.cache->hit_ratio : 1.0;
    const double core_ms = miss * v.latency->mean_ms * double(std::max(1, o.cores)) / double(o.target.batch);
    v.cost = gib * *o.cost_cache_gib + core_ms * *o.cost_core_ms;
  } else {
    v.cost = mean_request_ms(v);
  }
}

bool cheaper(const Variant& a, const Variant& b, const Objective& o) {
  if (!(o.cost_cache_gib && o.cost_core_ms)) {
    const uint64_t ca = cache_size_needed(a), cb = cache_size_needed(b);
    if (ca != cb) return ca < cb;
  }
  if (a.cost != b.cost) return a.cost < b.cost;
  if (a.file_bytes != b.file_bytes) return a.file_bytes < b.file_bytes;
  return a.key < b.key;  // a total order, so a resumed search picks the same variant
}

std::string screen_out_reason(const Variant& v, const Objective& o, const std::vector<Variant>& measured,
                              bool cache_available, double baseline_p50_ms) {
  if (v.screen_quality && v.screen_quality->drop_low > o.accuracy_budget)
    return fmt::format("loses {:.2f} points of {} on {} samples (at least {:.2f} at 95% confidence; budget {:g})",
                       v.screen_quality->drop, v.screen_quality->metric, v.screen_quality->samples,
                       v.screen_quality->drop_low, o.accuracy_budget);
  if (!v.screen_latency) return "";
  const Latency& l = *v.screen_latency;
  const Target& t = o.target;
  if (!(cache_available && t.is_latency())) {
    // p99 >= p50, so a screened p50 well over a p99 target already misses it. The p50 is the lower of the one
    // timed and the one the speedup implies from the original's quiet baseline, so one slow moment drops nothing.
    double figure = t.key == "target_p99_ms" ? l.p50_ms : target_figure(l, t);
    if (t.is_latency() && baseline_p50_ms > 0 && l.speedup_high > 0)
      figure = std::min(figure, baseline_p50_ms / l.speedup_high);
    const bool far = higher_is_better(t) ? figure * kScreenNoise < t.value : figure > t.value * kScreenNoise;
    if (far)
      return fmt::format("misses the target by more than the screen's noise: {} (screened, {} calls)",
                         t.key == "target_p99_ms" ? fmt::format("p50 {:.3g} ms, over the p99 target alone", figure)
                                                  : figure_text(figure, t),
                         l.calls);
  }
  // Speeds are compared as ratios to the original, each timed interleaved with it: a slow moment of the machine
  // slows both sides of a ratio alike, where absolute times taken minutes apart would differ by it.
  for (const Variant& m : measured) {
    if (!m.meets_accuracy || !m.latency || m.status != "measured") continue;
    if (m.latency->speedup_low > kScreenNoise * l.speedup_high)
      return fmt::format("cannot be cheaper than {} (within the accuracy budget, {:.2f}x [{:.2f}-{:.2f}] the "
                         "original's speed): screened at {:.2f}x [{:.2f}-{:.2f}]",
                         m.spec.label(), m.latency->speedup, m.latency->speedup_low, m.latency->speedup_high,
                         l.speedup, l.speedup_low, l.speedup_high);
  }
  return "";
}

std::optional<size_t> choose(std::vector<Variant>& variants, const Objective& o) {
  std::optional<size_t> best;
  for (size_t i = 0; i < variants.size(); ++i) {
    Variant& v = variants[i];
    v.chosen = false;
    if (v.feasible && (!best || cheaper(v, variants[*best], o))) best = i;
  }
  if (best) variants[*best].chosen = true;
  // The frontier over accuracy drop, the served latency figure, cache size and artifact size.
  auto dims = [&](const Variant& v) {
    const double figure = served_figure(v, o.target);
    return std::array<double, 4>{v.quality->drop, higher_is_better(o.target) ? -figure : figure,
                                 double(cache_size_needed(v)), double(v.file_bytes)};
  };
  for (Variant& v : variants) {
    v.on_frontier = false;
    if (!fully_measured(v)) continue;
    const auto a = dims(v);
    bool dominated = false;
    for (const Variant& w : variants) {
      if (&w == &v || !fully_measured(w)) continue;
      const auto b = dims(w);
      bool no_worse = true, better = false;
      for (size_t k = 0; k < a.size(); ++k) {
        no_worse = no_worse && b[k] <= a[k];
        better = better || b[k] < a[k];
      }
      if (no_worse && better) dominated = true;
    }
    v.on_frontier = !dominated;
  }
  return best;
}

namespace {

std::string lost_words(const std::vector<const Variant*>& members, const Variant* choice, const Objective& o) {
  std::vector<const Variant*> measured, feasible;
  int screened = 0, skipped = 0, failed = 0;
  for (const Variant* v : members) {
    if (fully_measured(*v)) measured.push_back(v);
    if (v->feasible) feasible.push_back(v);
    screened += v->status == "screened out";
    skipped += v->status == "skipped";
    failed += v->status == "failed";
  }
  const std::string tail = fmt::format("{}{}{}", screened ? fmt::format("; {} screened out", screened) : "",
                                       skipped ? fmt::format("; {} skipped", skipped) : "",
                                       failed ? fmt::format("; {} failed to build", failed) : "");
  if (!feasible.empty() && choice) {
    const Variant* best = *std::min_element(feasible.begin(), feasible.end(),
                                            [&](const Variant* a, const Variant* b) { return cheaper(*a, *b, o); });
    if (o.cost_cache_gib && o.cost_core_ms)
      return fmt::format("meets the target but costs more: its best, {}, costs {:.4g} (the choice: {:.4g}){}",
                         best->spec.label(), best->cost, choice->cost, tail);
    if (cache_size_needed(*best) == 0 && cache_size_needed(*choice) == 0)
      return fmt::format("meets the target but is slower: its best, {}, takes {:.3g} ms per request (the choice: "
                         "{:.3g} ms){}", best->spec.label(), mean_request_ms(*best), mean_request_ms(*choice), tail);
    return fmt::format("meets the target but costs more: its best, {}, needs a cache of {} {} and {:.3g} ms per "
                       "request (the choice: {} {}, {:.3g} ms){}",
                       best->spec.label(), cache_size_needed(*best), o.cache_unit, mean_request_ms(*best),
                       cache_size_needed(*choice), o.cache_unit, mean_request_ms(*choice), tail);
  }
  const bool any_accurate =
      std::any_of(measured.begin(), measured.end(), [](const Variant* v) { return v->meets_accuracy; });
  if (!measured.empty() && !any_accurate) {
    double least = std::numeric_limits<double>::infinity();
    for (const Variant* v : measured) least = std::min(least, v->quality->drop);
    return fmt::format("loses too much accuracy: at best {:.2f} points (budget {:g}){}", least, o.accuracy_budget, tail);
  }
  if (!measured.empty()) {
    double best = higher_is_better(o.target) ? 0 : std::numeric_limits<double>::infinity();
    for (const Variant* v : measured)
      if (v->meets_accuracy) {
        const double f = served_figure(*v, o.target);
        best = higher_is_better(o.target) ? std::max(best, f) : std::min(best, f);
      }
    return fmt::format("misses the target: at best {} within the accuracy budget{}", figure_text(best, o.target),
                       tail);
  }
  // Nothing of the family was measured fully: the first reason it was stopped says why.
  for (const Variant* v : members)
    if (!v->reason.empty()) return fmt::format("{} {}: {}{}", v->spec.label(), v->status, v->reason, tail);
  return fmt::format("none measured fully{}", tail.empty() ? "" : ":" + tail.substr(1));
}

}  // namespace

std::vector<std::string> family_verdicts(const std::vector<Variant>& variants, const Objective& o) {
  const Variant* choice = nullptr;
  for (const Variant& v : variants)
    if (v.chosen) choice = &v;
  std::map<std::string, std::vector<const Variant*>> by_prune, by_mode;
  std::vector<std::string> prune_order, mode_order;
  for (const Variant& v : variants) {
    auto& p = by_prune[v.spec.prune_family()];
    if (p.empty()) prune_order.push_back(v.spec.prune_family());
    p.push_back(&v);
    auto& m = by_mode[v.spec.mode];
    if (m.empty()) mode_order.push_back(v.spec.mode);
    m.push_back(&v);
  }
  std::vector<std::string> lines;
  for (const auto& name : prune_order)
    if (!choice || choice->spec.prune_family() != name)
      lines.push_back(name + ": " + lost_words(by_prune[name], choice, o));
  for (const auto& name : mode_order)
    if (!choice || choice->spec.mode != name) lines.push_back(name + ": " + lost_words(by_mode[name], choice, o));
  return lines;
}

std::vector<std::string> nearest_misses(const std::vector<Variant>& variants, const Objective& o, size_t count) {
  struct Miss {
    double distance;
    std::string line;
  };
  std::vector<Miss> misses;
  for (const Variant& v : variants) {
    // A fully measured variant by its figures; one screened out by its screen's (said so).
    const bool full = fully_measured(v);
    const std::optional<Quality>& quality = full ? v.quality : v.screen_quality;
    const std::optional<Latency>& latency = full ? v.latency : v.screen_latency;
    if (!quality || !latency) continue;
    const double figure = full ? served_figure(v, o.target) : target_figure(*latency, o.target);
    const double lat = latency_miss(figure, o.target);
    const double acc = std::max(0.0, quality->drop - o.accuracy_budget);
    std::string lat_words = fmt::format("{} (meets it)", figure_text(figure, o.target));
    if (lat > 1)
      lat_words = fmt::format("{} ({:.1f}x off {:g})", figure_text(figure, o.target), lat + 1, o.target.value);
    else if (lat > 0)
      lat_words = fmt::format("{} ({:.0f}% short of {:g})", figure_text(figure, o.target), 100 * lat, o.target.value);
    const std::string acc_words =
        acc > 0 ? fmt::format("loses {:.2f} points ({:.2f} over the budget)", quality->drop, acc)
                : fmt::format("loses {:.2f} points (within the budget)", quality->drop);
    // Latency misses count by their logarithm (10x off is one step more than 1x off, however absurd the target),
    // accuracy beyond the budget by budgets: a variant within the budget ranks before one far over it.
    misses.push_back({std::log1p(lat) + acc / std::max(1.0, o.accuracy_budget),
                      v.spec.label() + ": " + lat_words + ", " + acc_words + (full ? "" : " (screened)")});
  }
  std::stable_sort(misses.begin(), misses.end(), [](const Miss& a, const Miss& b) { return a.distance < b.distance; });
  std::vector<std::string> lines;
  for (size_t i = 0; i < misses.size() && i < count; ++i) lines.push_back(misses[i].line);
  return lines;
}

}  // namespace lite::optimize
