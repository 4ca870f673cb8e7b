// DistillOptions: JSON round trip, unknown keys, and validate()'s rules, each keyed by the option.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "lite/core/options.hpp"
#include "lite/distill/optimizers.hpp"
#include "lite/distill/options.hpp"

using lite::OptionError;
using lite::distill::DistillOptions;

namespace {

DistillOptions valid() {
  DistillOptions o;
  o.teacher = "t.pt";
  o.student = "s.pt";
  o.data = "d.pt";
  return o;
}

std::string rejected_key(const DistillOptions& o) {
  try {
    lite::distill::validate(o);
  } catch (const OptionError& e) {
    return e.key();
  }
  return "";
}

}  // namespace

TEST_CASE("distill options round-trip through JSON and reject unknown keys by name") {
  DistillOptions o = valid();
  o.lr = 0.05;
  o.optimizer = "sgd";
  o.alpha = 0.5;
  nlohmann::json j = o;
  DistillOptions back = j.get<DistillOptions>();
  CHECK(back.lr == 0.05);
  CHECK(back.optimizer == "sgd");
  CHECK(back.alpha == 0.5);
  CHECK(back.teacher == "t.pt");
  nlohmann::json bad = {{"temprature", 2}};
  try {
    bad.get<DistillOptions>();
    FAIL("no error");
  } catch (const OptionError& e) {
    CHECK(e.key() == "temprature");
    CHECK(std::string(e.what()).find("did you mean 'temperature'") != std::string::npos);
  }
  nlohmann::json wrong = {{"epochs", "three"}};
  CHECK_THROWS_AS(wrong.get<DistillOptions>(), OptionError);
}

TEST_CASE("validate names the option that cannot work") {
  CHECK(rejected_key(valid()) == "");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto with = [](auto change) {
    DistillOptions o = valid();
    change(o);
    return rejected_key(o);
  };
  CHECK(with([](DistillOptions& o) { o.teacher.clear(); }) == "teacher");
  CHECK(with([](DistillOptions& o) { o.data.clear(); }) == "data");
  CHECK(with([](DistillOptions& o) { o.lr = 0; }) == "lr");
  CHECK(with([](DistillOptions& o) { o.lr = -1; }) == "lr");
  CHECK(with([&](DistillOptions& o) { o.lr = nan; }) == "lr");
  CHECK(with([](DistillOptions& o) { o.temperature = 0; }) == "temperature");
  CHECK(with([&](DistillOptions& o) { o.temperature = nan; }) == "temperature");
  CHECK(with([](DistillOptions& o) { o.alpha = 1.5; }) == "alpha");
  CHECK(with([](DistillOptions& o) { o.alpha = -0.1; }) == "alpha");
  CHECK(with([](DistillOptions& o) { o.epochs = 0; }) == "epochs");
  CHECK(with([](DistillOptions& o) { o.train_batch = 0; }) == "train_batch");
  CHECK(with([](DistillOptions& o) { o.weight_decay = -1; }) == "weight_decay");
  CHECK(with([](DistillOptions& o) { o.warmup_fraction = 2; }) == "warmup_fraction");
  CHECK(with([](DistillOptions& o) { o.momentum = 1; }) == "momentum");
  CHECK(with([](DistillOptions& o) { o.optimizer = "adm"; }) == "optimizer");
  CHECK(with([](DistillOptions& o) { o.eval_labels = "l.gz"; }) == "eval_labels");
  CHECK(with([](DistillOptions& o) { o.alpha = 0; }) == "");
  CHECK(with([](DistillOptions& o) { o.alpha = 1; }) == "");
}

TEST_CASE("every optimizer of the table is found by its name") {
  for (const auto& e : lite::distill::optimizers()) {
    CHECK(&lite::distill::find_optimizer(e.names.front()) == &e);
    CHECK(bool(e.make));
    CHECK_FALSE(e.summary.empty());
  }
  CHECK(lite::distill::find_optimizer("SGD").names.front() == "sgd");
}
