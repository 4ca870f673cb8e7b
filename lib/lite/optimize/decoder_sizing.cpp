// lite optimize's decoder search, the torch-free half: which trace, which sizes and policies, each (weights, KV
// format) pair's prefix cache sized by cache-sim's prefix replay, and the choice.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "lite/cache/prefix/block_trace.hpp"
#include "lite/cache/prefix/capacity.hpp"
#include "lite/cache/prefix/prefix_run.hpp"
#include "lite/core/error.hpp"
#include "lite/core/text.hpp"
#include "lite/optimize/decoder_search_internal.hpp"

namespace lite::optimize::detail {

namespace prefix = cache::prefix;

bool is_prefix_search(const OptimizeOptions& o) {
  prefix::PrefixFormat f;
  return o.trace && prefix::detect_prefix_format(o.trace->string(), o.trace_format, f);
}

void validate_prefix_search(const OptimizeOptions& o) {
  const Target t = target_of(o);
  if (t.key != "target_p99_ms" && t.key != "target_p50_ms")
    throw OptionError(t.key, "is not a time-to-first-token target, which an LLM request trace is sized for",
                      "give {target_p99_ms} MS (TTFT p99) or {target_p50_ms} MS");
  if (o.hit_latency_ms)
    throw OptionError("hit_latency_ms", "prices a result cache's hits; with an LLM trace the decoder's measured "
                      "prefill prices the uncached tokens", "drop {hit_latency_ms}");
  // the default ratios are the classifier search's: a decoder search leaves them aside; given ones are refused
  for (double ratio : o.prune_ratios)
    if (ratio > 0 && o.prune_ratios != OptimizeOptions{}.prune_ratios)
      throw OptionError("prune_ratios", "prunes a classifier's channels; a decoder search tries weight modes and KV "
                        "formats", "pass {prune_ratios} 0");
  if (!o.plot.empty())
    throw OptionError("plot", "is not written for a decoder search yet",
                      "drop it: the report and --json hold every pair and the choice");
  if (o.prune_sensitivity || o.data)
    throw OptionError(o.data ? "data" : "prune_sensitivity", "belongs to pruning, which a decoder search does not do",
                      "drop it");
}

prefix::TraceFacts read_trace_facts(const OptimizeOptions& o) {
  prefix::PrefixConfig c;
  c.trace = o.trace->string();
  c.format = o.trace_format;
  c.block_tokens = o.block_tokens;
  c.policies = {"lru"};
  c.sizes = "1";
  c.threads = 1;
  c.bad_line_fix = "fix the line (lite optimize sizes caches on every line of the trace)";  // no {skip_bad_lines}
  return prefix::run_study(c).trace;
}

std::vector<std::string> prefix_policies(const OptimizeOptions& o) {
  if (o.cache_policies == OptimizeOptions{}.cache_policies) return {"lru"};
  return o.cache_policies;
}

std::vector<double> cache_sizes_in_bytes(const OptimizeOptions& o, const prefix::TraceFacts& trace,
                                         double bytes_per_token) {
  const double block_bytes = double(trace.block_tokens) * bytes_per_token;
  std::vector<prefix::CapacitySpec> specs;
  if (o.cache_sizes == OptimizeOptions{}.cache_sizes) {
    for (const auto& item : split(o.cache_sizes, ','))
      specs.push_back({prefix::CapacitySpec::Unit::share, item, std::stod(item)});
  } else {
    specs = prefix::parse_capacities(o.cache_sizes);
  }
  std::set<double> bytes;
  for (const auto& s : specs) {
    switch (s.unit) {
      case prefix::CapacitySpec::Unit::blocks: bytes.insert(s.value * block_bytes); break;
      case prefix::CapacitySpec::Unit::tokens: bytes.insert(s.value * bytes_per_token); break;
      case prefix::CapacitySpec::Unit::bytes: bytes.insert(s.value); break;
      case prefix::CapacitySpec::Unit::share:
        bytes.insert(std::max(1.0, std::ceil(s.value * double(trace.distinct_blocks))) * block_bytes);
        break;
    }
  }
  return {bytes.begin(), bytes.end()};
}

namespace {

double ttft_at(const prefix::PrefixRow& row, const std::string& percentile) {
  return percentile == "p50" ? row.ttft_p50_ms.value_or(0) : row.ttft_p99_ms.value_or(0);
}

}  // namespace

void size_prefix_cache(const OptimizeOptions& o, DecoderSearch& search, const prefix::PrefillModel& prefill,
                       DecoderChoice& choice) {
  const double block_bytes = double(search.block_tokens) * choice.kv_bytes_per_token;
  std::vector<std::pair<double, uint64_t>> sizes;  // (bytes bought, blocks they hold in this format)
  for (double bytes : search.cache_bytes)
    if (const double blocks = std::floor(bytes / block_bytes); blocks >= 1) sizes.push_back({bytes, uint64_t(blocks)});
  if (sizes.empty()) {
    choice.status = "not reached";
    return;
  }
  prefix::PrefixConfig c;
  c.trace = o.trace->string();
  c.format = o.trace_format;
  c.block_tokens = o.block_tokens;
  c.policies = search.policies;
  std::vector<std::string> blocks;
  for (const auto& s : sizes) blocks.push_back(std::to_string(s.second));
  c.sizes = join(blocks, ",");
  c.prefill = prefill;
  c.threads = o.threads;
  const prefix::PrefixResult study = prefix::run_study(c);
  ++search.simulations;
  std::map<uint64_t, const prefix::PrefixRow*> best;  // per capacity, the policy with the lowest TTFT
  for (const auto& row : study.rows) {
    const auto* current = best.count(row.capacity_blocks) ? best[row.capacity_blocks] : nullptr;
    if (!current || ttft_at(row, search.percentile) < ttft_at(*current, search.percentile)) best[row.capacity_blocks] = &row;
  }
  choice.ttft_by_size_ms.assign(search.cache_bytes.size(), 0);
  for (size_t i = 0; i < search.cache_bytes.size(); ++i)
    for (const auto& [bytes, capacity] : sizes)
      if (bytes == search.cache_bytes[i]) choice.ttft_by_size_ms[i] = ttft_at(*best.at(capacity), search.percentile);
  for (const auto& [bytes, capacity] : sizes) {
    const prefix::PrefixRow& row = *best.at(capacity);
    choice.policy = row.policy;
    choice.cache_bytes = bytes;
    choice.capacity_tokens = row.capacity_tokens;
    choice.token_hit_ratio = row.token_hit_ratio();
    choice.ttft_p50_ms = row.ttft_p50_ms.value_or(0);
    choice.ttft_p99_ms = row.ttft_p99_ms.value_or(0);
    if (ttft_at(row, search.percentile) <= search.target_ms) {
      choice.status = "met";
      return;
    }
  }
  choice.status = "not reached";
}

std::optional<size_t> size_a_fit_error_could_change(const DecoderSearch& search, const DecoderChoice& pair,
                                                    double largest_useful, double margin) {
  for (size_t i = 0; i < pair.ttft_by_size_ms.size() && search.cache_bytes[i] <= largest_useful; ++i)
    if (const double t = pair.ttft_by_size_ms[i];
        t > 0 && t >= (1 - margin) * search.target_ms && t <= (1 + margin) * search.target_ms)
      return i;
  return std::nullopt;
}

bool loses_a_tie_at_best(const DecoderSearch& search, const DecoderChoice& pair, size_t at, double band) {
  if (!search.chosen) return false;
  const DecoderChoice& chosen = search.choices[*search.chosen];
  if (pair.mode == chosen.mode || search.cache_bytes[at] < chosen.cache_bytes) return false;
  const double fastest = search.weights[weight_index(search, chosen.mode)].decode_tokens_per_s;
  return search.weights[weight_index(search, pair.mode)].decode_tokens_per_s < (1 - band) * fastest;
}

std::optional<double> refit_margin(const std::vector<double>& pass_total_ms, double screen_margin, double screen_share) {
  const size_t m = pass_total_ms.size();
  if (m < 2) return std::nullopt;
  double mean = 0, var = 0;
  for (double t : pass_total_ms) mean += t / double(m);
  for (double t : pass_total_ms) var += (t - mean) * (t - mean) / double(m - 1);
  const double from_calls = screen_margin * std::sqrt(screen_share / double(m));
  return std::max(from_calls, 2 * std::sqrt(var / double(m)) / mean);
}

size_t weight_index(const DecoderSearch& search, const std::string& mode) {
  const auto it = std::find_if(search.weights.begin(), search.weights.end(),
                               [&](const DecoderWeights& w) { return w.mode == mode; });
  return size_t(it - search.weights.begin());
}

std::vector<size_t> tied_weights(const DecoderSearch& search, double band) {
  if (!search.chosen) return {};
  const DecoderChoice& chosen = search.choices[*search.chosen];
  const double fastest = search.weights[weight_index(search, chosen.mode)].decode_tokens_per_s;
  std::vector<size_t> tied;
  for (const DecoderChoice& p : search.choices) {
    if (!p.feasible || p.cache_bytes != chosen.cache_bytes) continue;
    const size_t w = weight_index(search, p.mode);
    if (search.weights[w].decode_tokens_per_s >= (1 - band) * fastest &&
        std::find(tied.begin(), tied.end(), w) == tied.end())
      tied.push_back(w);
  }
  return tied;
}

std::optional<size_t> choose_pair(DecoderSearch& search) {
  auto decode_speed = [&](const DecoderChoice& c) {
    for (const auto& w : search.weights)
      if (w.mode == c.mode) return w.decode_tokens_per_s;
    return 0.0;
  };
  std::optional<size_t> chosen;
  for (size_t i = 0; i < search.choices.size(); ++i) {
    DecoderChoice& c = search.choices[i];
    c.chosen = false;  // chosen again after a race on decode speed
    c.feasible = c.status == "met" && c.quality_loss_pct <= search.budget_pct;
    if (!c.feasible) continue;
    if (!chosen) {
      chosen = i;
      continue;
    }
    const DecoderChoice& b = search.choices[*chosen];
    const auto key = [&](const DecoderChoice& x) {
      return std::make_tuple(x.cache_bytes, -decode_speed(x), x.quality_loss_pct);
    };
    if (key(c) < key(b)) chosen = i;
  }
  if (chosen) search.choices[*chosen].chosen = true;
  search.chosen = chosen;
  return chosen;
}

}  // namespace lite::optimize::detail
