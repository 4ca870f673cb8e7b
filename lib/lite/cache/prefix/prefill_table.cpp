#include "lite/cache/prefix/prefill_table.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <fstream>
#include <limits>
#include <optional>

#include "lite/core/error.hpp"
#include "lite/core/text.hpp"

namespace lite::cache::prefix {

namespace {

constexpr const char* kHeader = "new_tokens,cached_tokens,ms";
constexpr uintmax_t kMaxTableBytes = 16u << 20;

std::string fix_text() {
  return "write it with lite profile MODEL --prefill-cost-out FILE, or as CSV rows new_tokens,cached_tokens,ms "
         "under that header";
}

std::optional<uint64_t> whole(const std::string& text) {
  const auto v = parse_decimal(text);
  if (!v || *v < 0 || *v != std::floor(*v) || *v > 9.0e15) return std::nullopt;
  return static_cast<uint64_t>(*v);
}

PrefillPoint parse_row(const std::string& line, const std::string& where) {
  const auto cells = split(line, ',');
  if (cells.size() != 3)
    throw InputError(where, fmt::format("{} fields where the header names 3", cells.size()), fix_text());
  PrefillPoint p;
  const auto n = whole(cells[0]), k = whole(cells[1]);
  const auto ms = parse_decimal(cells[2]);
  if (!n || *n == 0) throw InputError(where, fmt::format("new_tokens '{}' is not a whole number >= 1", trim(cells[0])), fix_text());
  if (!k) throw InputError(where, fmt::format("cached_tokens '{}' is not a whole number >= 0", trim(cells[1])), fix_text());
  if (!ms || !std::isfinite(*ms) || *ms < 0)
    throw InputError(where, fmt::format("ms '{}' is not a decimal time >= 0", trim(cells[2])), fix_text());
  p.new_tokens = *n;
  p.cached_tokens = *k;
  p.ms = *ms;
  return p;
}

constexpr int kCoefficients = 4;
using Coefficients = std::array<double, kCoefficients>;

// The regressors of PrefillModel::ms: 1, new, new x (cached + new/2), cached.
Coefficients regressors(const PrefillPoint& p) {
  const double n = double(p.new_tokens), k = double(p.cached_tokens);
  return {1.0, n, n * (k + n / 2), k};
}

// Weighted least squares over the coefficients in `used` (a bit per coefficient), the others 0; weights 1/ms^2 so the
// fit minimises relative error (short prompts count as much as long ones). nullopt when singular.
std::optional<Coefficients> solve_subset(const std::vector<PrefillPoint>& points, unsigned used) {
  std::vector<int> idx;
  for (int i = 0; i < kCoefficients; ++i)
    if (used & (1u << i)) idx.push_back(i);
  const size_t m = idx.size();
  std::vector<std::vector<double>> a(m, std::vector<double>(m + 1, 0.0));
  for (const auto& p : points) {
    const auto x = regressors(p);
    const double w = 1.0 / std::max(p.ms * p.ms, 1e-12);
    for (size_t r = 0; r < m; ++r) {
      for (size_t c = 0; c < m; ++c) a[r][c] += w * x[idx[r]] * x[idx[c]];
      a[r][m] += w * x[idx[r]] * p.ms;
    }
  }
  for (size_t col = 0; col < m; ++col) {  // Gaussian elimination, partial pivoting
    size_t pivot = col;
    for (size_t r = col + 1; r < m; ++r)
      if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
    if (std::abs(a[pivot][col]) < 1e-300) return std::nullopt;
    std::swap(a[col], a[pivot]);
    for (size_t r = 0; r < m; ++r) {
      if (r == col) continue;
      const double f = a[r][col] / a[col][col];
      for (size_t c = col; c <= m; ++c) a[r][c] -= f * a[col][c];
    }
  }
  Coefficients coef{};
  for (size_t r = 0; r < m; ++r) coef[idx[r]] = a[r][m] / a[r][r];
  return coef;
}

double relative_error(const PrefillModel& model, const PrefillPoint& p) {
  const double predicted = model.ms(p.cached_tokens, p.new_tokens);
  return std::abs(predicted - p.ms) / std::max(p.ms, 1e-9);
}

}  // namespace

nlohmann::json prefill_model_json(const PrefillModel& m) {
  return {{"a_ms", m.a_ms}, {"b_ms_per_token", m.b_ms_per_token}, {"c_ms_per_token2", m.c_ms_per_token2},
          {"d_ms_per_cached_token", m.d_ms_per_cached_token}};
}

std::string prefill_model_text(const PrefillModel& m) {
  return fmt::format("{:.4g} + {:.4g} x new + {:.4g} x new x (cached + new/2) + {:.4g} x cached ms", m.a_ms,
                     m.b_ms_per_token, m.c_ms_per_token2, m.d_ms_per_cached_token);
}

std::string prefill_table_text(const PrefillTable& table) {
  std::string out;
  for (const auto& c : table.comments) out += "# " + c + "\n";
  out += std::string(kHeader) + "\n";
  for (const auto& p : table.points) out += fmt::format("{},{},{:.6g}\n", p.new_tokens, p.cached_tokens, p.ms);
  return out;
}

PrefillTable read_prefill_table(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw InputError(path.string(), "no such file (the prefill-cost table)", fix_text());
  if (std::filesystem::file_size(path, ec) > kMaxTableBytes)
    throw InputError(path.string(), "is larger than 16 MiB, which no prefill-cost table needs", fix_text());
  std::ifstream in(path);
  if (!in) throw InputError(path.string(), "cannot be read", "check its permissions");
  PrefillTable t;
  std::string line;
  bool header = false;
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string where = fmt::format("{}:{}", path.string(), number);
    if (!line.empty() && line[0] == '#') {
      t.comments.push_back(trim(line.substr(1)));
      continue;
    }
    if (trim(line).empty()) continue;
    if (!header) {
      if (trim(line) != kHeader)
        throw InputError(where, fmt::format("the header is '{}', not '{}'", shorten(trim(line), 60), kHeader), fix_text());
      header = true;
      continue;
    }
    t.points.push_back(parse_row(line, where));
  }
  if (!header) throw InputError(path.string(), fmt::format("has no '{}' header", kHeader), fix_text());
  if (t.points.size() < 3)
    throw InputError(path.string(), fmt::format("holds {} points; a fit of the cost model needs at least 3", t.points.size()),
                     "measure a grid of prompt lengths and cached prefixes (lite profile MODEL --prefill-cost-out FILE)");
  return t;
}

PrefillFit fit_prefill_model(const PrefillTable& table) {
  PrefillFit best;
  best.points = table.points.size();
  double best_error = std::numeric_limits<double>::infinity();
  for (unsigned used = 1; used < (1u << kCoefficients); ++used) {  // every subset of {a, b, c, d}: the best fit with
    const auto coef = solve_subset(table.points, used);                // no negative coefficient
    if (!coef || std::any_of(coef->begin(), coef->end(), [](double v) { return v < 0; })) continue;
    const PrefillModel model{(*coef)[0], (*coef)[1], (*coef)[2], (*coef)[3]};
    double sum = 0, worst = 0;
    for (const auto& p : table.points) {
      const double e = relative_error(model, p);
      sum += e * e;
      worst = std::max(worst, e);
    }
    if (sum < best_error) {
      best_error = sum;
      best.model = model;
      best.max_relative_error = worst;
    }
  }
  if (!std::isfinite(best_error))
    throw InputError("the prefill-cost table", "no cost model with non-negative coefficients fits its points",
                     "measure points that differ in new and cached tokens");
  return best;
}

}  // namespace lite::cache::prefix
