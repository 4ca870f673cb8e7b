// How lite quantize's auto mode judges candidates (judging.hpp), on plain counts: the judged sample count scaled
// to the float model's cost, the chunk sizes, the early stop and the evaluation order.
#include <doctest/doctest.h>

#include <cmath>

#include "lite/quantize/choice.hpp"
#include "lite/quantize/judging.hpp"

using namespace lite::quantize;

TEST_CASE("judged samples: all when they fit the allowance, else what fits, never under the minimum") {
  CHECK(judged_samples(256, 0.001, kJudgeSeconds, std::nullopt) == 256);    // 0.26 s: all
  CHECK(judged_samples(64, 0.66, kJudgeSeconds, std::nullopt) == 45);       // vit_b_16 on 2 cores: 30 s / 0.66 s
  CHECK(judged_samples(64, 5.0, kJudgeSeconds, std::nullopt) == kMinJudgedSamples);
  CHECK(judged_samples(20, 5.0, kJudgeSeconds, std::nullopt) == 20);        // fewer than the minimum: all
  CHECK(judged_samples(10000, 0.01, 3.0, std::nullopt) == 300);             // a budget's smaller allowance
  CHECK(judged_samples(10000, 0.01, 1e300, std::nullopt) == 10000);         // an explicit mode: no allowance
  CHECK(judged_samples(64, 0.66, kJudgeSeconds, 60) == 60);                 // {eval_samples} overrides
  CHECK(judged_samples(64, 0.66, kJudgeSeconds, 1000) == 64);
  CHECK(judged_samples(64, 0.0, kJudgeSeconds, std::nullopt) == 64);        // no cost measured: all
}

TEST_CASE("chunks: the first is small, then each doubles what was judged, capped by the batch and the total") {
  std::vector<int64_t> ends;
  for (int64_t done = 0; done < 300;) ends.push_back(done = next_chunk_end(done, 300, 64));
  CHECK(ends == std::vector<int64_t>{16, 32, 64, 128, 192, 256, 300});
  CHECK(next_chunk_end(0, 5, 64) == 5);
  CHECK(next_chunk_end(0, 100, 4) == 4);  // --eval-batch 4
  CHECK(next_chunk_end(4, 100, 4) == 8);
}

TEST_CASE("drop interval: the point estimate inside a 95% interval that narrows with samples") {
  JudgedCounts few{50, 2, 0, 50, false};  // agreement: 2 of 50 top-1s changed
  auto d = drop_interval(few);
  CHECK(d.estimate == doctest::Approx(4.0));
  CHECK(d.low < 4.0);
  CHECK(d.high > 4.0);
  CHECK(d.low >= 0);  // without labels nothing can be gained
  JudgedCounts many{5000, 200, 0, 5000, false};
  auto m = drop_interval(many);
  CHECK(m.estimate == doctest::Approx(4.0));
  CHECK(m.high - m.low < (d.high - d.low) / 5);
}

TEST_CASE("drop interval with labels is paired: only the changed predictions widen it") {
  // 1000 samples, float right on 933; the candidate loses 2 and gains 0 (the bundled CNN's static int8).
  JudgedCounts paired{1000, 2, 0, 933, true};
  auto d = drop_interval(paired);
  CHECK(d.estimate == doctest::Approx(0.2));
  CHECK(d.low < 0.0);   // gaining a few cannot be ruled out
  CHECK(d.low > -0.5);
  CHECK(d.high < 1.0);  // two separate accuracy intervals would span about +-1.6 points
  // Newcombe's square-and-add by hand: Wilson(0.2%, 1000) = [0.0549, 0.7262], Wilson(0, 1000) = [0, 0.3827].
  CHECK(d.low == doctest::Approx(0.2 - std::hypot(0.2 - 0.0549, 0.3827)).epsilon(1e-3));
  CHECK(d.high == doctest::Approx(0.2 + 0.7262 - 0.2).epsilon(1e-3));
  JudgedCounts both{100, 10, 5, 90, true};  // lost 10, gained 5: 5 points, wider both ways
  auto b = drop_interval(both);
  CHECK(b.estimate == doctest::Approx(5.0));
  CHECK(b.low < 0.0);
  CHECK(b.high > 10.0);
}

TEST_CASE("early stop: only when the drop is over the tolerance at the low end of the 99% interval") {
  CHECK_FALSE(cannot_meet({16, 0, 0, 16, false}, 1.0));  // agrees everywhere so far
  CHECK_FALSE(cannot_meet({16, 1, 0, 16, false}, 1.0));  // one flip in 16: 6 points, but could be noise
  CHECK(cannot_meet({16, 12, 0, 16, false}, 1.0));       // 12 of 16 flipped: far out of reach
  CHECK(cannot_meet({256, 26, 0, 256, false}, 1.0));     // 10 points on 256
  CHECK_FALSE(cannot_meet({256, 26, 0, 256, false}, 15.0));
  CHECK_FALSE(cannot_meet({0, 0, 0, 0, false}, 1.0));
  // The 99% rule is stricter than the reported 95% interval: a drop whose 95% low end is just over the tolerance
  // is not yet stopped.
  JudgedCounts edge{64, 6, 0, 64, false};  // 9.4 points: 4.37 at the 95% low end, 3.48 at the 99% one
  CHECK(drop_interval(edge).low > 4.0);
  CHECK_FALSE(cannot_meet(edge, 4.0));
  CHECK(cannot_meet(edge, 3.0));
}

TEST_CASE("evaluation order: built candidates not slower than frozen float first, fastest first") {
  auto make = [](const char* mode, bool built, bool slower, std::vector<double> ratio) {
    Candidate c;
    c.mode = mode;
    c.built = built;
    c.speed.slower = slower;
    c.speed.ratio = std::move(ratio);
    return c;
  };
  std::vector<Candidate> cands = {make("static", true, false, {0.6, 0.5}), make("dynamic", true, false, {0.5, 0.6}),
                                  make("fp16", true, true, {1.3}), make("bf16", true, false, {0.4, 0.5}),
                                  make("weight-int8", false, false, {}), make("weight-int4", true, false, {0.9, 1.0})};
  // fp16 was timed at the first batch size only, so all are compared there: bf16 0.4, dynamic 0.5, static 0.6.
  CHECK(evaluation_order(cands) == std::vector<size_t>{3, 1, 0, 5, 2});
  cands[2].speed.ratio = {1.3, 1.2};  // every candidate timed at both: static and dynamic tie, table order
  CHECK(evaluation_order(cands) == std::vector<size_t>{3, 0, 1, 5, 2});
}
