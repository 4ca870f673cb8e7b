#pragma once
// lite optimize's decoder search (decoder_search.hpp): measuring the weight modes (decoder_search.cpp, torch) and
// sizing the prefix cache for each (weights, KV format) pair (decoder_sizing.cpp, torch-free). Internal to
// lib/lite/optimize.
#include <string>
#include <vector>

#include "lite/cache/prefix/prefix_cache.hpp"
#include "lite/optimize/decoder_search.hpp"
#include "lite/optimize/optimize.hpp"

namespace lite::optimize::detail {

// A trace of LLM requests (cache-sim's prefix mode: Mooncake JSONL or token ids) was given as {trace}.
bool is_prefix_search(const OptimizeOptions& o);
// The rules of a decoder search, before any work: a TTFT target (p99 or p50), no {hit_latency_ms} (the prefill model
// prices the misses), no prune ratios beyond 0. OptionError by key.
void validate_prefix_search(const OptimizeOptions& o);

// What the trace holds (one read, no replay).
cache::prefix::TraceFacts read_trace_facts(const OptimizeOptions& o);
// The prefix policies to replay: {cache_policies} as given, or tail-first LRU (vLLM's order) for the default list.
std::vector<std::string> prefix_policies(const OptimizeOptions& o);
// The cache sizes in bytes, ascending: {cache_sizes} as cache-sim's prefix --sizes (blocks, tokens, bytes, shares),
// or for the default list its fractions as shares of the trace's distinct blocks; blocks and tokens priced at
// `bytes_per_token`, the cache as the model returns it.
std::vector<double> cache_sizes_in_bytes(const OptimizeOptions& o, const cache::prefix::TraceFacts& trace,
                                         double bytes_per_token);
// Replays the trace at every size of `search` (each size's blocks at this pair's bytes per token) with the weights'
// prefill model: the smallest size whose best policy meets the target ("met"), else the largest ("not reached").
void size_prefix_cache(const OptimizeOptions& o, DecoderSearch& search, const cache::prefix::PrefillModel& prefill,
                       DecoderChoice& choice);
// The index in search.weights of `mode`'s weights (search.weights.size() when it has none).
size_t weight_index(const DecoderSearch& search, const std::string& mode);
// The first of the search's sizes (index into cache_bytes), no larger than `largest_useful` bytes, where `pair`'s
// TTFT is within `margin` of the target: a prefill fit off by that much could size it differently there.
std::optional<size_t> size_a_fit_error_could_change(const DecoderSearch& search, const DecoderChoice& pair,
                                                    double largest_useful, double margin);
// Whether `pair`, its prefill refitted, could at best reach the chosen pair's cache (`at`, its first size within a
// fit error's reach, is the chosen one's) and would lose the tie there: decoding more than `band` slower than the
// chosen mode, so that no race would line it up. The chosen mode's own pairs never do (an error could lose its size).
bool loses_a_tie_at_best(const DecoderSearch& search, const DecoderChoice& pair, size_t at, double band);
// How far from the target a refit's TTFT may still be its error after the passes over the full grid timed so far
// (each pass's total ms): `screen_margin` for the screen's calls, shrinking as 1/sqrt(calls) (`screen_share`: the
// screen's calls over one pass's), but never under twice the standard error of the passes' mean total: the
// machine's drift moves whole passes together (on a VM here consecutive passes of one grid took 445 to 801 ms),
// which more calls a pass do not average out. None before two passes.
std::optional<double> refit_margin(const std::vector<double>& pass_total_ms, double screen_margin, double screen_share);
// The weights (indices into search.weights) of the feasible pairs that need the chosen pair's cache and decode
// within `band` of the chosen's speed: those a short timing cannot tell apart. Empty without a choice.
std::vector<size_t> tied_weights(const DecoderSearch& search, double band);
// Marks the feasible pairs and the chosen one: the smallest cache, then the fastest decoding, then the least quality
// lost. Returns the chosen index.
std::optional<size_t> choose_pair(DecoderSearch& search);

// The whole decoder search; fills r.decoder, r.output, the gates (decoder_search.cpp).
void run_decoder_search(const OptimizeOptions& o, Progress& progress, const RunContext& context, OptimizeResult& r);

}  // namespace lite::optimize::detail
