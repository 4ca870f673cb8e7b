#include <doctest/doctest.h>

#include <torch/script.h>

#include "../torch_fixtures.hpp"
#include "lite/core/error.hpp"
#include "lite/profile/profile.hpp"

using namespace lite;

namespace {
profile::ProfileOptions quick(std::vector<std::string> models) {
  profile::ProfileOptions o;
  o.models.assign(models.begin(), models.end());
  o.timing.warmup = 2;
  o.timing.iterations = 10;
  o.timing.threads = 1;
  return o;
}
}  // namespace

TEST_CASE("profile report carries every documented field") {
  auto o = quick({test::bundled_model().string()});
  o.eval = test::bundled_eval().string();
  o.ops = true;
  o.op_iterations = 2;
  o.qps = {200};
  o.requests = 20;
  auto r = profile::run(o);
  auto j = report::to_json(profile::to_report(r));
  const auto& res = j["result"];
  CHECK(j["schema_version"] == 1);
  CHECK(j["environment"]["libtorch_version"].get<std::string>().rfind("1.13", 0) == 0);
  CHECK(j["environment"]["intra_op_threads"] == 1);
  CHECK(j["environment"]["quantized_engine"] == "onednn");
  CHECK(res["model"]["path"] == test::bundled_model().string());
  CHECK(res["model"]["parameters"] == 390858);
  for (const char* k : {"min", "mean", "std", "cv", "p50", "p90", "p95", "p99", "p999", "max"})
    CHECK(res["latency_ms"].contains(k));
  CHECK(res["samples_ms"].size() == 10);
  CHECK(res["throughput_samples_per_s"].get<double>() > 0);
  CHECK(res["cold_start"]["load_ms"].get<double>() > 0);
  CHECK(res["cold_start"]["first_inference_ms"].get<double>() > 0);
  CHECK(res["memory"]["peak_rss_bytes"].get<uint64_t>() > 0);
  CHECK(res["accuracy"]["total"] == 1000);
  CHECK(res["accuracy"]["percent"].get<double>() > 85);
  CHECK(res["ops"]["by_op"].size() > 0);
  CHECK(res["load"][0]["requests"] == 20);
  CHECK(res["layers"].size() == 5);
}

TEST_CASE("comparing a model with itself: speedup near 1 and perfect agreement") {
  auto o = quick({test::bundled_model().string(), test::bundled_model().string()});
  o.timing.iterations = 30;
  auto r = profile::run(o);
  REQUIRE(r.comparison.has_value());
  CHECK(r.comparison->agreement.max_abs_error == 0);
  CHECK(r.comparison->agreement.top1_agreement == 1.0);
  CHECK(r.comparison->speedup.low <= r.comparison->speedup.estimate);
  CHECK(r.comparison->speedup.estimate <= r.comparison->speedup.high);
  CHECK(r.models.size() == 2);
}

TEST_CASE("bad profile options are usage errors") {
  auto o = quick({test::bundled_model().string()});
  o.chrome_trace = "/tmp/x.json";
  CHECK_THROWS_AS(profile::run(o), UsageError);
  o = quick({test::bundled_model().string()});
  o.qps = {100};
  CHECK_THROWS_AS(profile::run(o), UsageError);
  o = quick({});
  CHECK_THROWS_AS(profile::run(o), UsageError);
  o = quick({test::bundled_model().string()});
  o.qengine = "fbgemm";
  CHECK_THROWS_AS(profile::run(o), UsageError);
}

TEST_CASE("comparing two-input models runs both on every input and agrees on the profiled inputs") {
  test::ScratchDir dir("two_inputs");
  auto save = [&](const std::string& name, const std::string& body) {
    torch::jit::Module m("TwoInputs");
    m.define("def forward(self, a, b):\n  return " + body + "\n");
    const auto path = (dir.path / name).string();
    m.save(path);
    return path;
  };
  auto o = quick({save("a.pt", "a * 2.0 + b"), save("b.pt", "a + a + b")});
  o.inputs = {model::parse_input_spec("4x8"), model::parse_input_spec("4x8")};
  auto r = profile::run(o);
  REQUIRE(r.comparison.has_value());
  CHECK(r.comparison->agreement_data == "the profiled inputs (4 samples)");
  CHECK(r.comparison->agreement.max_abs_error < 1e-6);
  CHECK(r.comparison->agreement.top1_agreement == 1.0);
  CHECK(r.models[0].peak_rss_bytes == r.models[1].peak_rss_bytes);  // one process, one peak
}
