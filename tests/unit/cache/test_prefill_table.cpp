// The prefill-cost table (cache/prefix/prefill_table.hpp): the text lite profile writes reads back, bad files are
// refused by FILE:LINE, and the fit recovers the coefficients of a table made from known ones.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "lite/cache/prefix/prefill_table.hpp"
#include "lite/core/error.hpp"

using namespace lite::cache::prefix;

namespace {

std::filesystem::path write_table(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("lite_test_prefill_" + name + ".csv");
  std::ofstream(path) << text;
  return path;
}

PrefillTable table_from(const PrefillModel& m) {
  PrefillTable t;
  for (uint64_t k : {0, 64, 256, 1024})
    for (uint64_t n : {16, 64, 256, 512}) t.points.push_back({n, k, m.ms(k, n)});
  return t;
}

std::string error_of(const std::string& name, const std::string& text) {
  try {
    read_prefill_table(write_table(name, text));
  } catch (const lite::InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("prefill table: what lite profile writes reads back, comments and points") {
  PrefillTable t = table_from({5, 0.25, 1e-4});
  t.comments = {"model m.pt", "2 threads"};
  const PrefillTable back = read_prefill_table(write_table("round", prefill_table_text(t)));
  CHECK(back.comments == t.comments);
  REQUIRE(back.points.size() == t.points.size());
  for (size_t i = 0; i < t.points.size(); ++i) {
    CHECK(back.points[i].new_tokens == t.points[i].new_tokens);
    CHECK(back.points[i].cached_tokens == t.points[i].cached_tokens);
    CHECK(back.points[i].ms == doctest::Approx(t.points[i].ms).epsilon(1e-5));
  }
}

TEST_CASE("prefill table: the fit recovers known coefficients and keeps every one >= 0") {
  const PrefillFit fit = fit_prefill_model(table_from({5, 0.25, 1e-4}));
  CHECK(fit.model.a_ms == doctest::Approx(5).epsilon(1e-6));
  CHECK(fit.model.b_ms_per_token == doctest::Approx(0.25).epsilon(1e-6));
  CHECK(fit.model.c_ms_per_token2 == doctest::Approx(1e-4).epsilon(1e-6));
  CHECK(fit.model.d_ms_per_cached_token == doctest::Approx(0).epsilon(1e-9));
  CHECK(fit.max_relative_error < 1e-6);
  CHECK(fit.points == 16);
  // A cost per cached token whatever the new ones (a cache copied by torch.cat): d, apart from attention's c.
  const PrefillFit copying = fit_prefill_model(table_from({5, 0.25, 1e-4, 0.02}));
  CHECK(copying.model.c_ms_per_token2 == doctest::Approx(1e-4).epsilon(1e-6));
  CHECK(copying.model.d_ms_per_cached_token == doctest::Approx(0.02).epsilon(1e-6));
  CHECK(copying.max_relative_error < 1e-6);
  // A constant time: the unconstrained fit could trade a negative c against b; the constrained one is a alone.
  PrefillTable flat;
  for (uint64_t n : {16, 64, 256}) flat.points.push_back({n, 0, 7.0});
  const PrefillFit f = fit_prefill_model(flat);
  CHECK(f.model.a_ms == doctest::Approx(7));
  CHECK(f.model.b_ms_per_token == doctest::Approx(0).epsilon(1e-9));
  CHECK(f.model.c_ms_per_token2 >= 0);
}

TEST_CASE("prefill table: bad files are refused with the line and the field") {
  const std::string header = "new_tokens,cached_tokens,ms\n";
  CHECK(error_of("missing", "").find("no 'new_tokens,cached_tokens,ms' header") != std::string::npos);
  CHECK(error_of("foreign", "a,b,c\n1,2,3\n").find(":1: the header is 'a,b,c'") != std::string::npos);
  CHECK(error_of("fields", header + "16,0\n").find(":2: 2 fields") != std::string::npos);
  CHECK(error_of("zero", header + "0,0,1\n").find(":2: new_tokens '0'") != std::string::npos);
  CHECK(error_of("hex", header + "16,0x10,1\n").find(":2: cached_tokens '0x10'") != std::string::npos);
  CHECK(error_of("negative", header + "16,0,-1\n").find(":2: ms '-1'") != std::string::npos);
  CHECK(error_of("few", header + "16,0,1\n32,0,2\n").find("holds 2 points") != std::string::npos);
  CHECK_THROWS_AS(read_prefill_table("/nonexistent/table.csv"), lite::InputError);
}
