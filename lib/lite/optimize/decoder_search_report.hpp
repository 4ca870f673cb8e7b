#pragma once
// The tables and notes of lite optimize's decoder search (decoder_search_report.cpp). Torch-free.
#include "lite/core/report.hpp"
#include "lite/optimize/optimize.hpp"

namespace lite::optimize {

void add_decoder_search_views(const OptimizeResult& r, report::Report& rep);

}  // namespace lite::optimize
