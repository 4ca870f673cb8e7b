// The distillation loss against values worked out by hand, and the learning-rate schedule.
#include <doctest/doctest.h>
#include <torch/torch.h>

#include <cmath>
#include <vector>

#include "lite/distill/loss.hpp"
#include "lite/distill/schedule.hpp"

using lite::distill::distillation_loss;
using lite::distill::LossWeights;
using lite::distill::soft_loss;

namespace {

// softmax(v / T) in doubles.
std::vector<double> softmax(const std::vector<double>& v, double T) {
  double z = 0;
  std::vector<double> p;
  for (double x : v) z += std::exp(x / T);
  for (double x : v) p.push_back(std::exp(x / T) / z);
  return p;
}

// KL(p || q) = sum p log(p / q)
double kl(const std::vector<double>& p, const std::vector<double>& q) {
  double s = 0;
  for (size_t i = 0; i < p.size(); ++i) s += p[i] * std::log(p[i] / q[i]);
  return s;
}

torch::Tensor row(const std::vector<float>& v) { return torch::tensor(v).reshape({1, int64_t(v.size())}); }

}  // namespace

TEST_CASE("soft loss is T^2 KL(softmax(teacher/T) || softmax(student/T)), averaged over the batch") {
  const std::vector<double> s1 = {1, 2, 3}, t1 = {3, 2, 1}, s2 = {0.5, -1, 2}, t2 = {0, 0, 4};
  const double T = 2;
  // By hand: sample 1: p = softmax([1.5, 1, 0.5]) = [0.5065, 0.3072, 0.1863], q = its reverse;
  // KL = (0.5065 - 0.1863) * ln(0.5065 / 0.1863) = 0.3202 * 1.0 = 0.3202 (the middle term is 0).
  const double kl1 = kl(softmax(t1, T), softmax(s1, T));
  CHECK(kl1 == doctest::Approx(0.3202).epsilon(1e-3));
  const double kl2 = kl(softmax(t2, T), softmax(s2, T));
  auto student = torch::cat({row({1, 2, 3}), row({0.5f, -1, 2})});
  auto teacher = torch::cat({row({3, 2, 1}), row({0, 0, 4})});
  const double expected = T * T * (kl1 + kl2) / 2;
  CHECK(soft_loss(student, teacher, T).item<double>() == doctest::Approx(expected).epsilon(1e-5));
  CHECK(soft_loss(teacher, teacher, T).item<double>() == doctest::Approx(0).epsilon(1e-7));
}

TEST_CASE("the full loss mixes the soft term and cross-entropy by alpha, without labels it is the soft term") {
  auto student = row({1, 2, 3}), teacher = row({3, 2, 1});
  auto labels = torch::tensor({int64_t(2)});
  const double T = 4;
  const double soft = T * T * kl(softmax({3, 2, 1}, T), softmax({1, 2, 3}, T));
  const double ce = -std::log(softmax({1, 2, 3}, 1)[2]);  // = 0.4076
  CHECK(ce == doctest::Approx(0.4076).epsilon(1e-3));
  CHECK(distillation_loss(student, teacher, labels, {T, 0.25}).item<double>() ==
        doctest::Approx(0.25 * soft + 0.75 * ce).epsilon(1e-5));
  CHECK(distillation_loss(student, teacher, labels, {T, 0.0}).item<double>() == doctest::Approx(ce).epsilon(1e-5));
  CHECK(distillation_loss(student, teacher, std::nullopt, {T, 0.25}).item<double>() ==
        doctest::Approx(soft).epsilon(1e-5));
}

TEST_CASE("the loss has gradients for the student only") {
  auto student = row({1, 2, 3}).requires_grad_(true);
  auto teacher = row({3, 2, 1});
  distillation_loss(student, teacher, torch::tensor({int64_t(0)}), {2, 0.5}).backward();
  REQUIRE(student.grad().defined());
  // Softmax gradients sum to zero over the classes.
  CHECK(student.grad().sum().item<double>() == doctest::Approx(0).epsilon(1e-6));
  CHECK(student.grad().abs().sum().item<double>() > 0);
}

TEST_CASE("cosine schedule: linear warm-up to the base rate, then a half cosine to zero") {
  auto s = lite::distill::make_schedule(0.1, 100, 0.1);
  CHECK(s.warmup_steps == 10);
  CHECK(s.lr_at(0) == doctest::Approx(0.01));
  CHECK(s.lr_at(4) == doctest::Approx(0.05));
  CHECK(s.lr_at(9) == doctest::Approx(0.1));
  CHECK(s.lr_at(10) == doctest::Approx(0.1));
  CHECK(s.lr_at(55) == doctest::Approx(0.05));  // half way through the cosine
  CHECK(s.lr_at(100) == doctest::Approx(0.0));
  for (int64_t i = 10; i < 99; ++i) CHECK(s.lr_at(i + 1) <= s.lr_at(i));
  auto none = lite::distill::make_schedule(0.1, 10, 0);
  CHECK(none.lr_at(0) == doctest::Approx(0.1));
  auto all = lite::distill::make_schedule(0.1, 10, 1.0);
  CHECK(all.warmup_steps == 9);  // the cosine part keeps a step
}
