// The prefill-cost grid's points (lite/llm/prefill_grid.hpp): lite profile's full grid, and the checkerboard half that
// lite optimize's decoder search screens with, which keeps every length it measures.
#include <doctest/doctest.h>

#include <set>
#include <utility>
#include <vector>

#include <torch/script.h>

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

namespace {
// A decoder that updates its cache in place and refuses a context another call has already updated: the grid must
// give each call of a row its own copy of the row's context.
torch::jit::Module in_place_decoder() {
  torch::jit::Module m("InPlace");
  m.define(R"(
def forward(self, ids: Tensor, cache: List[Tensor]) -> Tuple[Tensor, List[Tensor]]:
    kv = torch.zeros(ids.size(0), 1, ids.size(1), 4)
    if len(cache) > 0:
        assert not bool(cache[0].ne(0.0).any()), "this context was already extended"
        cache[0].add_(1.0)
        cache = [torch.cat([cache[0], kv], 2), torch.cat([cache[1], kv], 2)]
    else:
        cache = [kv, kv]
    return torch.zeros(ids.size(0), ids.size(1), 8), cache
)");
  return m;
}
}  // namespace

TEST_CASE("each call of a row extends its own copy of the row's context, and a settled grid stops after that pass") {
  torch::jit::Module module = in_place_decoder();
  llm::Decoder decoder(module, "in_place.pt", 128);
  llm::PrefillGridPlan plan = llm::prefill_grid_defaults(128);  // 16..124 new x 0 cached, 16..44 x 64: 8 points
  plan.vocab = 8;
  std::vector<size_t> asked;  // passes timed when asked
  const auto table = llm::measure_prefill_grid(decoder, plan, 128, no_progress(),
                                               [&](const cache::prefix::PrefillTable& so_far,
                                                   const std::vector<double>& pass_total_ms) {
                                                 CHECK(so_far.points.size() == 8);
                                                 asked.push_back(pass_total_ms.size());
                                                 return pass_total_ms.size() == 3;
                                               });
  CHECK(asked == std::vector<size_t>{1, 2, 3});
  CHECK(table.points.size() == 8);
  for (const auto& p : table.points) CHECK(p.ms > 0);
  asked.clear();
  llm::measure_prefill_grid(decoder, plan, 128, no_progress(), [&](const auto&, const std::vector<double>& totals) {
    asked.push_back(totals.size());
    return false;
  });
  CHECK(asked == std::vector<size_t>{1, 2, 3, 4});  // never asked after the last pass
}
