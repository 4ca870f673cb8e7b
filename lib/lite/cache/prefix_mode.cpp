// cache-sim's two modes share one options struct: an object trace goes to the sweep engine, a prefix (LLM
// request) trace to the prefix study (lib/lite/cache/prefix/). Here: which mode a trace is, the prefix study's
// configuration, and the rule that an option of one mode is refused in the other (named, with its mode), so no
// flag is silently ignored.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "lite/cache/options.hpp"
#include "lite/cache/prefix/block_trace.hpp"
#include "lite/cache/prefix/prefill_table.hpp"
#include "lite/cache/prefix/cluster_route.hpp"
#include "lite/cache/route.hpp"
#include "lite/core/options.hpp"
#include "lite/core/text.hpp"

namespace lite::cache {

bool is_prefix_trace(const CacheSimOptions& o) {
  prefix::PrefixFormat f;
  return prefix::detect_prefix_format(o.trace, o.format, f);
}

namespace {

// Options that only an object trace uses, by key, and whether each was given.
std::vector<std::pair<const char*, bool>> object_only(const CacheSimOptions& o) {
  const CacheSimOptions d;
  return {{"csv_columns", !o.csv_columns.empty()},
          {"has_header", o.has_header},
          {"bytes", o.bytes},
          {"mrc_partitions", o.mrc_partitions.has_value()},
          {"sample_rate", o.sample_rate != d.sample_rate},
          {"sample_objects", o.sample_objects.has_value()},
          {"sample_check", o.sample_check},
          {"hit_latency_ms", o.hit_latency_ms != d.hit_latency_ms},
          {"miss_latency_ms", o.miss_latency_ms.has_value()},
          {"miss_latency_from", !o.miss_latency_from.empty()},
          {"target_p99_ms", o.target_p99_ms.has_value()},
          {"nodes", !o.nodes.empty()}};
}

std::vector<std::pair<const char*, bool>> prefix_only(const CacheSimOptions& o) {
  return {{"block_tokens", o.block_tokens != 0},
          {"kv_bytes_per_token", o.kv_bytes_per_token.has_value()},
          {"kv_layout", !o.kv_layout.empty()},
          {"kv_dtypes", !o.kv_dtypes.empty()},
          {"prefill_ms_per_token", o.prefill_ms_per_token.has_value()},
          {"prefill_cost", !o.prefill_cost.empty()},
          {"prefill_cost_from", !o.prefill_cost_from.empty()},
          {"instances", o.instances != 0},
          {"tiers", !o.tiers.empty()},
          {"target_ttft_p99_ms", o.target_ttft_p99_ms.has_value()},
          {"engine", to_lower(trim(o.engine)) != "ideal"}};
}

// "a=20,b=0.05,c=2e-6,d=0.04" (any of the four; the others 0).
prefix::PrefillModel parse_prefill_cost(const std::string& text) {
  prefix::PrefillModel m;
  for (const auto& item : split(text, ',')) {
    const auto eq = item.find('=');
    const std::string key = to_lower(trim(item.substr(0, eq)));
    const auto v = eq == std::string::npos ? std::nullopt : parse_decimal(item.substr(eq + 1));
    double* slot = key == "a"   ? &m.a_ms
                   : key == "b" ? &m.b_ms_per_token
                   : key == "c" ? &m.c_ms_per_token2
                   : key == "d" ? &m.d_ms_per_cached_token
                                : nullptr;
    if (!slot || !v)
      throw OptionError("prefill_cost",
                        fmt::format("'{}' is not a=MS, b=MS_PER_TOKEN, c=MS_PER_TOKEN2 or d=MS_PER_CACHED_TOKEN", trim(item)),
                        "e.g. a=20,b=0.05,c=2e-6: TTFT = a + b x new + c x new x (cached + new/2) + d x cached ms");
    *slot = *v;
  }
  return m;
}

// At most one of the three prefill models; a measured table is fitted to the polynomial model, and the report says
// how well it fits.
void set_prefill_model(const CacheSimOptions& o, prefix::PrefixConfig& c) {
  const int given = int(o.prefill_ms_per_token.has_value()) + int(!o.prefill_cost.empty()) + int(!o.prefill_cost_from.empty());
  if (given > 1)
    throw OptionError(o.prefill_ms_per_token ? "prefill_ms_per_token" : "prefill_cost",
                      "is a second prefill model", "give one of {prefill_ms_per_token}, {prefill_cost}, {prefill_cost_from}");
  if (o.prefill_ms_per_token) {
    option_rules::in_range("prefill_ms_per_token", *o.prefill_ms_per_token, 0, 1e6, "milliseconds of prefill a token");
    c.prefill = prefix::PrefillModel{0, *o.prefill_ms_per_token, 0};
  }
  if (!o.prefill_cost.empty()) c.prefill = parse_prefill_cost(o.prefill_cost);
  if (o.prefill_cost_from.empty()) return;
  const prefix::PrefillFit fit = prefix::fit_prefill_model(prefix::read_prefill_table(o.prefill_cost_from));
  c.prefill = fit.model;
  c.prefill_source = fmt::format("fitted to {} ({} measured points, largest error {:.1f}%)", o.prefill_cost_from,
                                 fit.points, 100 * fit.max_relative_error);
}

// --route holds one mode's routers: an object trace's --nodes (route.hpp) or a prefix trace's --instances
// (cluster_route.hpp); a name of the other mode's is refused by name. ketama, the default, is also what --route
// holds when not given, so a prefix trace takes it as no cluster study.
void refuse_other_routes(const std::string& routes, bool prefix_trace) {
  const std::vector<std::string> object_routes = route_names();
  const std::string object_names = join(object_routes, ", "), prefix_names = join(prefix::prefix_route_names(), ", ");
  for (const auto& item : split(routes, ',')) {
    const std::string name = trim(item);
    if (!prefix_trace && (prefix::is_prefix_route(name) || name == "all"))
      throw OptionError("route", fmt::format("'{}' routes a prefix (LLM request) trace's {{instances}}, and this "
                                             "trace is an object trace", name), "object routes: " + object_names);
    if (prefix_trace && name != "ketama" && !prefix::is_prefix_route(name) && name != "all" &&
        std::find(object_routes.begin(), object_routes.end(), name) != object_routes.end())
      throw OptionError("route", fmt::format("'{}' routes an object trace's {{nodes}}, and this trace is a prefix "
                                             "(LLM request) trace", name), "prefix routes: " + prefix_names + ", all");
  }
}

}  // namespace

void refuse_prefix_options(const CacheSimOptions& o) {
  for (const auto& [key, given] : prefix_only(o))
    if (given)
      throw OptionError(key, "applies to prefix (LLM request) traces, and this trace is an object trace",
                        "drop it, or give a trace with hash_ids or tokens per line (docs/cache-sim.md)");
  refuse_other_routes(o.route, false);
}

prefix::PrefixConfig prefix_config(const CacheSimOptions& o) {
  for (const auto& [key, given] : object_only(o))
    if (given)
      throw OptionError(key, "applies to object traces, and this trace is a prefix (LLM request) trace",
                        "drop it (the prefix mode's options are in docs/cache-sim.md \"Prefix KV cache\")");
  prefix::PrefixConfig c;
  c.trace = o.trace;
  c.format = o.format;
  c.block_tokens = o.block_tokens;
  c.skip_bad_lines = o.skip_bad_lines;
  for (const auto& given : o.policies)  // "lru,radix-lru" as in the object mode; empty: the default (lru, radix-lru)
    for (const auto& name : split(given, ','))
      if (!trim(name).empty()) c.policies.push_back(trim(name));
  c.sizes = o.sizes;
  c.kv_bytes_per_token = o.kv_bytes_per_token;
  c.kv_layout = o.kv_layout;
  c.kv_dtypes = o.kv_dtypes;
  set_prefill_model(o, c);
  c.instances = o.instances;
  c.tiers = o.tiers;
  refuse_other_routes(o.route, true);
  if (trim(o.route) != "ketama") c.routes = o.route;
  c.mrc = o.mrc;
  c.target_hit_ratio = o.target_hit_ratio;
  c.target_ttft_p99_ms = o.target_ttft_p99_ms;
  c.threads = o.threads;
  c.engine = o.engine;
  c.results_dir = o.results_dir;
  return c;
}

}  // namespace lite::cache
