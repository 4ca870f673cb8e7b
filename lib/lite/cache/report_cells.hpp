#pragma once
// How a cache report writes a ratio and a latency in a table cell: one spelling for cache-sim's and the
// cluster study's tables, so the two read alike.
#include <optional>
#include <string>

namespace lite::cache::detail {

// A miss or hit ratio, four decimals.
std::string ratio_cell(double r);
// Milliseconds as core's format_ms writes them, but an exact 0 as "0"; no value as "-".
std::string ms_cell(double ms);
std::string ms_cell(const std::optional<double>& ms);

}  // namespace lite::cache::detail
