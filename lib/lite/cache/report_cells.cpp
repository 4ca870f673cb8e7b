// Table cells shared by the cache reports (see report_cells.hpp).
#include "lite/cache/report_cells.hpp"

#include <fmt/format.h>

#include "lite/core/text.hpp"

namespace lite::cache::detail {

std::string ratio_cell(double r) { return fmt::format("{:.4f}", r); }

std::string ms_cell(double ms) { return ms == 0 ? std::string("0") : format_ms(ms); }

std::string ms_cell(const std::optional<double>& ms) { return ms ? ms_cell(*ms) : std::string("-"); }

}  // namespace lite::cache::detail
