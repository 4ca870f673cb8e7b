// The prefill-cost grid's points (lite/llm/prefill_grid.hpp): lite profile's full grid, and the checkerboard half that
// lite optimize's decoder search screens with, which keeps every length it measures.
#include <doctest/doctest.h>

#include <set>
#include <utility>
#include <vector>

#include "lite/llm/prefill_grid.hpp"

using namespace lite;

namespace {
using Points = std::vector<std::pair<int64_t, int64_t>>;

std::set<int64_t> new_lengths(const Points& p) {
  std::set<int64_t> out;
  for (const auto& [n, k] : p) out.insert(n);
  return out;
}
}  // namespace

TEST_CASE("the full grid of a 1024-position model is 9 new lengths x 0, 64, 256 and 512 cached, the screen half of it") {
  llm::PrefillGridPlan plan = llm::prefill_grid_defaults(1024);
  CHECK(plan.cached_tokens == std::vector<int64_t>{0, 64, 256, 512});  // 1024 does not fit; half the context does
  const Points full = llm::prefill_grid_points(plan, 1024);
  CHECK(full.size() == 36);
  plan.checkerboard = true;
  const Points screen = llm::prefill_grid_points(plan, 1024);
  CHECK(screen.size() == 18);
  CHECK(new_lengths(screen) == new_lengths(full));  // every length stays
  std::set<int64_t> cached;
  for (const auto& [n, k] : screen) cached.insert(k);
  CHECK(cached == std::set<int64_t>{0, 64, 256, 512});
}

TEST_CASE("the cached axis reaches half the context up to 4096, and adds nothing where a rung already covers it") {
  CHECK(llm::prefill_grid_defaults(2048).cached_tokens == std::vector<int64_t>{0, 64, 256, 1024});
  CHECK(llm::prefill_grid_defaults(4096).cached_tokens == std::vector<int64_t>{0, 64, 256, 1024, 2048});
  CHECK(llm::prefill_grid_defaults(32768).cached_tokens == std::vector<int64_t>{0, 64, 256, 1024, 4096});
}

TEST_CASE("a 128-position model's grid keeps the points that fit, the checkerboard alternating along both axes") {
  llm::PrefillGridPlan plan = llm::prefill_grid_defaults(128);
  CHECK(llm::prefill_grid_points(plan, 128) ==
        Points{{16, 0}, {28, 0}, {44, 0}, {76, 0}, {124, 0}, {16, 64}, {28, 64}, {44, 64}});
  plan.checkerboard = true;
  CHECK(llm::prefill_grid_points(plan, 128) == Points{{16, 0}, {44, 0}, {124, 0}, {28, 64}});
}
