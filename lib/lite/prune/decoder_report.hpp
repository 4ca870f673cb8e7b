#pragma once
// The views of lite prune on a decoder (docs/prune.md "Decoders"). Torch-free.
#include "lite/core/report.hpp"
#include "lite/prune/prune.hpp"

namespace lite::prune {

// The before/after figures table, the per-module cuts table and their notes.
void add_decoder_views(const PruneResult& r, report::Report& rep);

}  // namespace lite::prune
