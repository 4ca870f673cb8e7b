#pragma once
// The views of lite quantize on a decoder (docs/llm.md). Torch-free.
#include "lite/core/report.hpp"
#include "lite/quantize/quantize.hpp"

namespace lite::quantize {

// The table of frozen float and every mode, and the notes.
void add_decoder_views(const QuantizeResult& r, report::Report& rep);

}  // namespace lite::quantize
