#pragma once
// How lite quantize judges the quality of its candidates without running every one over every sample: the
// number of samples judged (scaled to what the float model costs a sample), the chunks they are evaluated in,
// the order candidates are evaluated in, and the rule that stops evaluating a candidate once its drop cannot
// fit the tolerance. Torch-free, so the rules are unit-tested on plain counts.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "lite/core/stats.hpp"

namespace lite::quantize {

struct Candidate;

// Auto mode judges candidates on as many samples as the float model evaluates in this many seconds (the whole
// set when it fits), never fewer than kMinJudgedSamples (or the whole set when smaller). With {budget_s}, on at
// most what it evaluates in a tenth of the budget.
inline constexpr double kJudgeSeconds = 30.0;
inline constexpr int64_t kMinJudgedSamples = 32;
// Without {budget_s}, auto runs a tolerance search only when it is estimated to take at most this long (a build and
// an evaluation per quantized layer to rank them by sensitivity): on a large model it would take longer than
// everything else together.
inline constexpr double kSearchSeconds = 120.0;
// The first chunk a candidate is evaluated on: a candidate far over the tolerance is dropped after this many.
inline constexpr int64_t kFirstChunk = 16;

// How many of `available` samples to judge on, the float model taking `float_seconds_per_sample` a sample;
// `requested` (the {eval_samples} option) overrides the scaling.
int64_t judged_samples(int64_t available, double float_seconds_per_sample, double allowance_s,
                       std::optional<int64_t> requested);

// Where the chunk after [0, done) ends: kFirstChunk (at most `max_chunk`) first, then chunks that double what
// was judged, at most `max_chunk` samples each, never past `total`.
int64_t next_chunk_end(int64_t done, int64_t total, int64_t max_chunk);

// Counts over the samples a candidate was judged on so far, paired with the float model's on the same samples.
// With labels: `lost` samples the float model gets right and the candidate wrong, `gained` the reverse. Without:
// `lost` samples whose top-1 differs from the float model's (the reference is then right by definition).
struct JudgedCounts {
  int64_t samples = 0;
  int64_t lost = 0, gained = 0;
  int64_t reference_hits = 0;  // samples the float model gets right (all of them without labels)
  bool labels = false;
};

// The drop in points (the float model's percent minus the candidate's, on the same samples) and its interval at
// normal quantile `z`. Without labels, the Wilson interval of the share of changed top-1s; with labels, Newcombe's
// square-and-add of the Wilson intervals of `lost` and `gained` (a paired difference: samples both get right or
// both get wrong do not widen it, so 3 changed predictions in 1000 give a drop interval of about a point, not the
// three points of two separate accuracies).
stats::Interval drop_interval(const JudgedCounts& counts, double z = stats::kZ95);

// Whether a candidate judged on part of its samples can stop: its drop is over `tolerance` even at the low end of
// the 99% interval (a stricter interval than the reported 95% one, since the rule looks after every chunk).
bool cannot_meet(const JudgedCounts& counts, double tolerance);

// The built candidates in the order auto evaluates them: those not slower than frozen float first, then by their
// speed score (choice.hpp), fastest first (the order choose_candidate prefers). Once one meets the
// tolerance, none after it can be chosen.
std::vector<size_t> evaluation_order(const std::vector<Candidate>& candidates);

}  // namespace lite::quantize
