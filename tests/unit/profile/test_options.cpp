// The options pattern on lite's verbs: to_json -> from_json round-trips every key, unknown keys and wrong
// types are rejected by key, and validate() names the key of every rule it enforces.
#include <doctest/doctest.h>

#include "lite/core/options.hpp"
#include "lite/profile/options.hpp"
#include "lite/quantize/options.hpp"

using namespace lite;

namespace {
template <class F>
std::string rejected_key(F f) {
  try {
    f();
  } catch (const OptionError& e) {
    return e.key();
  }
  return "(nothing thrown)";
}
}  // namespace

TEST_CASE("profile options round-trip through JSON") {
  profile::ProfileOptions o;
  o.models = {"a.pt", "b.pt"};
  o.inputs = {model::parse_input_spec("1x3x8x8"), model::parse_input_spec("4x16:int64")};
  o.batch = 4;
  o.timing.iterations = 50;
  o.ops = true;
  o.chrome_trace = "t.json";
  o.qps = {100, 200};
  o.requests = 30;
  nlohmann::json j = o;
  auto back = j.get<profile::ProfileOptions>();
  CHECK(nlohmann::json(back) == j);
  CHECK(back.inputs == o.inputs);
  CHECK(*back.batch == 4);
  // defaults survive an empty object
  auto defaults = nlohmann::json::object().get<profile::ProfileOptions>();
  CHECK(nlohmann::json(defaults) == nlohmann::json(profile::ProfileOptions{}));
}

TEST_CASE("profile options: the old key trace is read as chrome_trace") {
  const auto o = nlohmann::json{{"trace", "t.json"}}.get<profile::ProfileOptions>();
  CHECK(o.chrome_trace == "t.json");
  CHECK(nlohmann::json(o).contains("chrome_trace"));
  CHECK_FALSE(nlohmann::json(o).contains("trace"));
}

TEST_CASE("profile options: unknown keys, wrong types and rules are reported by key") {
  CHECK(rejected_key([] { nlohmann::json{{"iteratons", 3}}.get<profile::ProfileOptions>(); }) == "iteratons");
  CHECK(rejected_key([] { nlohmann::json{{"batch", "8"}}.get<profile::ProfileOptions>(); }) == "batch");
  CHECK(rejected_key([] { nlohmann::json{{"inputs", {"1x0"}}}.get<profile::ProfileOptions>(); }) == "inputs");
  profile::ProfileOptions o;
  CHECK(rejected_key([&] { profile::validate(o); }) == "models");
  o.models = {"m.pt"};
  CHECK_NOTHROW(profile::validate(o));
  auto with = [&](auto change) {
    profile::ProfileOptions c = o;
    change(c);
    return rejected_key([&] { profile::validate(c); });
  };
  CHECK(with([](auto& c) { c.batch = 0; }) == "batch");
  CHECK(with([](auto& c) { c.timing.iterations = 0; }) == "iterations");
  CHECK(with([](auto& c) { c.timing.duration_s = std::numeric_limits<double>::infinity(); }) == "duration_s");
  CHECK(with([](auto& c) { c.timing.threads = 1 << 20; }) == "threads");
  CHECK(with([](auto& c) { c.chrome_trace = "t.json"; }) == "chrome_trace");
  CHECK(with([](auto& c) { c.qps = {10}; }) == "qps");
  CHECK(with([](auto& c) { c.labels = "l.idx"; }) == "labels");
  CHECK(with([](auto& c) { c.budget_s = 0.0; }) == "budget_s");
  CHECK(with([](auto& c) { c.budget_s = std::nan(""); }) == "budget_s");
  CHECK(with([](auto& c) {
          c.inputs = {model::parse_input_spec("1x3x224x224")};
          c.batch = int64_t(1) << 40;
        }) == "batch");
}

TEST_CASE("quantize options round-trip and validate by key") {
  quantize::QuantizeOptions o;
  o.model = "m.pt";
  o.calib = "c.pt";
  o.tolerance = 0.5;
  o.batches = {1, 32};
  o.skip = {"features.*"};
  o.write_calib_json = false;
  nlohmann::json j = o;
  auto back = j.get<quantize::QuantizeOptions>();
  CHECK(nlohmann::json(back) == j);
  CHECK(*back.tolerance == 0.5);
  CHECK_NOTHROW(quantize::validate(o));
  auto with = [&](auto change) {
    quantize::QuantizeOptions c = o;
    change(c);
    return rejected_key([&] { quantize::validate(c); });
  };
  CHECK(with([](auto& c) { c.mode = "statc"; }) == "mode");
  CHECK(with([](auto& c) { c.mode = "Weight_Int8"; }) == "(nothing thrown)");
  CHECK(with([](auto& c) { c.calib_method = "entropi"; }) == "calib_method");
  CHECK(with([](auto& c) { c.tolerance = std::nan(""); }) == "tolerance");
  CHECK(with([](auto& c) { c.batches = {1, 0}; }) == "batches");
  CHECK(with([](auto& c) { c.timing.iterations = 0; }) == "iterations");
  CHECK(with([](auto& c) { c.output = "c.pt"; }) == "output");
  CHECK(with([](auto& c) { c.output = "m.pt"; }) == "output");
  CHECK(with([](auto& c) { c.labels = "l.idx"; }) == "labels");
  CHECK(with([](auto& c) { c.agreement_floor = -1; }) == "agreement_floor");
  CHECK(with([](auto& c) { c.agreement_floor = 100.5; }) == "agreement_floor");
  CHECK(with([](auto& c) { c.budget_s = 0.5; }) == "budget_s");
  CHECK(with([](auto& c) { c.budget_s = std::nan(""); }) == "budget_s");
  CHECK(with([](auto& c) { c.budget_s = 30.0; }) == "(nothing thrown)");
  CHECK(rejected_key([] { nlohmann::json{{"model", "m.pt"}, {"tolerence", 1}}.get<quantize::QuantizeOptions>(); }) ==
        "tolerence");
}
