// Request latency per policy and size: constant miss latency, a per-request cost column, and model
// variants read from `lite profile --json` reports.
#include <cmath>

#include "cache_test_util.hpp"
#include "lite/cache/latency_internal.hpp"
#include "lite/core/error.hpp"

using namespace lite::cache;
using cache_test::ScratchDir;

namespace {
Counters counts(uint64_t req, uint64_t miss) {
  Counters c;
  c.n_req = req;
  c.n_miss = miss;
  return c;
}
std::string input_error(const std::string& path) {
  try {
    load_profile_variant(path);
  } catch (const lite::InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("constant miss latency: mean and inverse-CDF percentiles") {
  auto f = detail::latency_constant(counts(100, 30), 1.0, 50.0);
  CHECK(f.mean_ms == doctest::Approx(0.7 * 1 + 0.3 * 50));
  CHECK(f.p50_ms == 1.0);
  CHECK(f.p99_ms == 50.0);
  // exactly 1% misses: the 99th percentile is still a hit; 2% is a miss
  CHECK(detail::latency_constant(counts(100, 1), 1.0, 50.0).p99_ms == 1.0);
  CHECK(detail::latency_constant(counts(100, 2), 1.0, 50.0).p99_ms == 50.0);
  CHECK(detail::latency_constant(counts(100, 60), 1.0, 50.0).p50_ms == 50.0);
}

TEST_CASE("cost column: per-request miss costs, percentiles within 0.5%") {
  detail::MissCostStats m;
  for (double c : {10.0, 20.0, 30.0, 40.0}) m.add(c);
  auto f = detail::latency_from_costs(counts(10, 4), 0.5, m);
  CHECK(f.mean_ms == doctest::Approx((6 * 0.5 + 100) / 10.0));
  CHECK(f.p50_ms == 0.5);  // 6 of 10 are hits
  CHECK(f.p99_ms == doctest::Approx(40.0).epsilon(0.005));
  auto all_miss = detail::latency_from_costs(counts(4, 4), 0.5, m);
  CHECK(all_miss.p50_ms == doctest::Approx(20.0).epsilon(0.005));
}

TEST_CASE("model variant: no cache reproduces the model's own p50/p99, hits pull them down") {
  ModelVariant v{"int8.pt", "x.json", 12.0, 10.0, 30.0};
  auto none = detail::latency_from_variant(counts(1000, 1000), 0.1, v);
  CHECK(none.mean_ms == doctest::Approx(12.0));
  CHECK(none.p50_ms == doctest::Approx(10.0).epsilon(1e-6));
  CHECK(none.p99_ms == doctest::Approx(30.0).epsilon(1e-6));
  auto half = detail::latency_from_variant(counts(1000, 500), 0.0, v);
  CHECK(half.mean_ms == doctest::Approx(6.0));
  CHECK(half.p50_ms == 0.0);
  // p99 of the mixture is the model's 98th percentile: exp(mu + sigma * z_0.98)
  const double sigma = (std::log(30.0) - std::log(10.0)) / 2.3263478740408408;
  CHECK(half.p99_ms == doctest::Approx(std::exp(std::log(10.0) + sigma * 2.0537489106318225)).epsilon(1e-6));
}

TEST_CASE("--miss-latency-from reads result.latency_ms and labels by the model file name") {
  ScratchDir d;
  auto ok = d.file("fp32.json", R"({"schema_version":1,"tool":"lite","command":"profile","environment":{},
    "result":{"model":{"path":"/models/resnet_fp32.pt"},"latency_ms":{"p50":8.5,"mean":9.25,"p99":14.0,"min":8.0}}})");
  auto v = load_profile_variant(ok);
  CHECK(v.label == "resnet_fp32.pt");
  CHECK(v.mean_ms == 9.25);
  CHECK(v.p50_ms == 8.5);
  CHECK(v.p99_ms == 14.0);
  CHECK(v.source == ok);

  auto other = d.file("q.json", R"({"tool":"lite","command":"quantize","result":{}})");
  auto m = input_error(other);
  CHECK(m.find("q.json") != std::string::npos);
  CHECK(m.find("not a lite profile report") != std::string::npos);
  CHECK(input_error(d.file("bad.json", "{not json")).find("not valid JSON") != std::string::npos);
  CHECK(input_error(d.file("nolat.json", R"({"tool":"lite","command":"profile","result":{"model":{"path":"m.pt"}}})"))
            .find("latency_ms") != std::string::npos);
  CHECK(input_error((d.path / "absent.json").string()).find("absent.json") != std::string::npos);
}

TEST_CASE("--miss-latency-from refuses a report nested 100k deep or with a key twice, naming the file") {
  ScratchDir d;
  const std::string deep = input_error(d.file("deep.json", R"({"tool": "lite", "x": )" + std::string(100000, '[') +
                                                                std::string(100000, ']') + "}"));
  CHECK(deep.find("deep.json: nests arrays and objects deeper than 256 levels") != std::string::npos);
  const std::string twice = input_error(d.file("twice.json", R"({"tool": "lite", "command": "profile", "tool": "x"})"));
  CHECK(twice.find("twice.json: has the key 'tool' twice") != std::string::npos);
  CHECK(input_error("/dev/zero").find("/dev/zero") != std::string::npos);
}
