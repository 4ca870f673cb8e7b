#pragma once
// Helpers for the cache tests: request sequences written as "A B A C" or "A:4 B:3" (key:size),
// a deterministic Zipf-ish generator, and a temporary folder.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "../scratch_dir.hpp"
#include "lite/cache/cache_sim.hpp"

namespace cache_test {

using lite::cache::Counters;
using lite::cache::PolicySpec;
using lite::cache::Request;

// "A B A" -> keys 'A','B','A' with size 1; "A:4 B:3" -> sizes 4 and 3.
inline std::vector<Request> seq(const std::string& text) {
  std::vector<Request> out;
  std::istringstream in(text);
  std::string tok;
  while (in >> tok) {
    Request r;
    auto colon = tok.find(':');
    std::string name = tok.substr(0, colon);
    uint64_t key = 0;
    for (char c : name) key = key * 131 + static_cast<unsigned char>(c);
    r.key = key;
    r.size = colon == std::string::npos ? 1 : static_cast<uint32_t>(std::stoul(tok.substr(colon + 1)));
    out.push_back(r);
  }
  return out;
}

inline Counters run(const std::string& policy, uint64_t capacity, const std::string& text) {
  return lite::cache::simulate_requests(lite::cache::parse_policies(policy).at(0), capacity, seq(text));
}

inline uint64_t hits(const Counters& c) { return c.n_req - c.n_miss; }

// n requests over k keys, P(rank r) ~ 1/r^alpha, fixed size per key in [1, max_size].
inline std::vector<Request> zipf(size_t n, size_t k, double alpha, uint32_t max_size, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> cdf(k);
  double total = 0;
  for (size_t i = 0; i < k; ++i) cdf[i] = total += 1.0 / std::pow(double(i + 1), alpha);
  std::vector<uint32_t> sizes(k);
  std::uniform_int_distribution<uint32_t> size_dist(1, max_size);
  for (auto& s : sizes) s = size_dist(rng);
  std::uniform_real_distribution<double> u(0, total);
  std::vector<Request> out(n);
  for (auto& r : out) {
    size_t rank = static_cast<size_t>(std::lower_bound(cdf.begin(), cdf.end(), u(rng)) - cdf.begin());
    if (rank >= k) rank = k - 1;
    r.key = rank * 7919 + 13;
    r.size = sizes[rank];
  }
  return out;
}

using lite::test::ScratchDir;


}  // namespace cache_test
