#include <doctest/doctest.h>

#include "lite/core/error.hpp"
#include "lite/profile/diagnosis.hpp"

using namespace lite;

namespace {
profile::ModelProfile with_samples(std::vector<double> samples) {
  profile::ModelProfile m;
  m.samples_ms = std::move(samples);
  m.latency_ms = stats::summarize(m.samples_ms);
  m.warmup_samples_ms = std::vector<double>(20, 1.0);
  m.frozen = true;
  return m;
}
bool mentions(const std::vector<report::Finding>& f, const std::string& needle) {
  for (const auto& x : f)
    if (x.what.find(needle) != std::string::npos) return true;
  return false;
}
}  // namespace

TEST_CASE("a steady run has no findings") {
  std::vector<double> s;
  for (int i = 0; i < 200; ++i) s.push_back(1.0 + 0.01 * (i % 5));
  CHECK(profile::diagnose_latency(with_samples(s), "").empty());
}

TEST_CASE("spikes, drift, noise and re-specialization are flagged with threshold and advice") {
  std::vector<double> spiky;
  for (int i = 0; i < 200; ++i) spiky.push_back(i % 40 == 0 ? 5.0 : 1.0 + 0.01 * (i % 5));
  auto f = profile::diagnose_latency(with_samples(spiky), "A");
  REQUIRE(mentions(f, "latency spikes"));
  CHECK(f[0].what.rfind("A: ", 0) == 0);
  CHECK_FALSE(f[0].threshold.empty());
  CHECK_FALSE(f[0].advice.empty());

  std::vector<double> drifting;
  for (int i = 0; i < 200; ++i) drifting.push_back(i < 20 ? 1.5 : 1.0 + 0.01 * (i % 5));
  CHECK(mentions(profile::diagnose_latency(with_samples(drifting), ""), "warm-up drift"));

  std::vector<double> noisy;
  for (int i = 0; i < 200; ++i) noisy.push_back(i % 2 ? 1.0 : 1.6);
  CHECK(mentions(profile::diagnose_latency(with_samples(noisy), ""), "noisy run"));

  std::vector<double> steady(100, 1.0);
  auto m = with_samples(steady);
  m.shape_change = profile::ShapeChangeCheck{{2, 1, 28, 28}, {9.0, 1.1, 1.0}, 2.0};
  CHECK(mentions(profile::diagnose_latency(m, ""), "re-specializes"));
  m.frozen = false;
  CHECK(mentions(profile::diagnose_latency(m, ""), "not frozen"));
}

TEST_CASE("page faults on every call are flagged with the allocator fix, a few are not") {
  std::vector<double> steady(100, 1.0);
  auto m = with_samples(steady);
  m.page_faults_per_call = 2900;  // MobileNetV2 int8 at batch 1 on glibc malloc
  auto f = profile::diagnose_latency(m, "");
  REQUIRE(mentions(f, "page faults per call"));
  CHECK(mentions(f, "11.3 MiB"));
  bool names_fix = false;
  for (const auto& x : f) names_fix = names_fix || x.advice.find("libtcmalloc") != std::string::npos;
  CHECK(names_fix);
  m.page_faults_per_call = 3;
  CHECK_FALSE(mentions(profile::diagnose_latency(m, ""), "page faults"));
}

TEST_CASE("host diagnosis: oversubscription and the reference BLAS") {
  profile::HostLoad h{2, 2, 1, "/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3", "/proc/stat"};
  auto f = profile::diagnose_host(h);
  REQUIRE(f.size() == 1);
  CHECK(f[0].what.find("oversubscribed machine: 2 intra-op threads + 1 runnable thread") != std::string::npos);
  CHECK(f[0].advice.find("{threads} 1") != std::string::npos);
  CHECK(profile::diagnose_host({2, 1, 0, "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3", ""}).empty());
  auto blas = profile::diagnose_host({2, 1, 0, "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3", ""});
  REQUIRE(blas.size() == 1);
  CHECK(blas[0].what.find("reference BLAS") != std::string::npos);
}

TEST_CASE("host diagnosis: OpenBLAS's pthread build above one thread") {
  const std::string pthread_build = "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3";
  auto f = profile::diagnose_host({2, 2, 0, pthread_build, ""});
  REQUIRE(f.size() == 1);
  CHECK(f[0].what.find("pthread build") != std::string::npos);
  CHECK(f[0].what.find("at 2 threads") != std::string::npos);
  CHECK(f[0].advice.find("libopenblas0-openmp") != std::string::npos);
  CHECK(profile::diagnose_host({2, 1, 0, pthread_build, ""}).empty());
  CHECK(profile::diagnose_host({2, 2, 0, "/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3", ""}).empty());
}
