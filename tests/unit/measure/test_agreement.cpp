#include <doctest/doctest.h>
#include <torch/torch.h>

#include <cmath>

#include "lite/measure/evaluate.hpp"

using namespace lite;

TEST_CASE("identical outputs agree perfectly") {
  auto a = torch::randn({16, 10});
  auto g = measure::compare_outputs(a, a.clone());
  CHECK(g.samples == 16);
  CHECK(g.max_abs_error == 0);
  CHECK(g.top1_agreement == 1.0);
  CHECK(g.kl_divergence == doctest::Approx(0).epsilon(1e-12));
}

TEST_CASE("agreement on a hand-computed pair") {
  // Row 0: same argmax; row 1: argmax flips. Logits [0, ln 3] vs [0, 0]:
  // KL(p || q) with p = (1/4, 3/4), q = (1/2, 1/2) = 1/4 ln(1/2) + 3/4 ln(3/2) = 0.130812...
  auto ref = torch::tensor({{0.0, 1.0}, {0.0, std::log(3.0)}});
  auto cand = torch::tensor({{0.0, 2.0}, {0.0, 0.0}});
  auto g = measure::compare_outputs(ref, cand);
  CHECK(g.max_abs_error == doctest::Approx(std::log(3.0)));
  CHECK(g.top1_agreement == doctest::Approx(0.5));
  double kl_row1 = 0.25 * std::log(0.5) + 0.75 * std::log(1.5);
  double p0 = 1 / (1 + std::exp(1.0)), q0 = 1 / (1 + std::exp(2.0));
  double kl_row0 = p0 * std::log(p0 / q0) + (1 - p0) * std::log((1 - p0) / (1 - q0));
  CHECK(g.kl_divergence == doctest::Approx((kl_row0 + kl_row1) / 2));
  CHECK_THROWS_AS(measure::compare_outputs(ref, torch::zeros({3, 2})), InputError);
}

TEST_CASE("top-1 accuracy") {
  auto logits = torch::tensor({{0.1, 0.9}, {0.8, 0.2}, {0.3, 0.7}});
  auto acc = measure::top1_accuracy(logits, torch::tensor({1, 1, 1}));
  CHECK(acc.correct == 2);
  CHECK(acc.total == 3);
  CHECK(acc.percent() == doctest::Approx(66.6667));
}

TEST_CASE("the agreement floor breaks on more than the floor's points lost, on two samples or more") {
  lite::measure::Agreement a;
  a.samples = 200;
  a.top1_agreement = 0.97;  // 6 samples changed: 3 points
  auto loss = lite::measure::agreement_loss(a, 5.0);
  CHECK(loss.points == doctest::Approx(3.0));
  CHECK(loss.disagreeing == 6);
  CHECK_FALSE(loss.breaks_floor);
  CHECK(lite::measure::agreement_loss(a, 2.0).breaks_floor);
  a.samples = 10;
  a.top1_agreement = 0.9;  // one flip in 10: 10 points, but one sample is noise
  CHECK_FALSE(lite::measure::agreement_loss(a, 5.0).breaks_floor);
  a.top1_agreement = 0.8;
  CHECK(lite::measure::agreement_loss(a, 5.0).breaks_floor);
}
