#pragma once
// The gates lite quantize applies to the candidate it chose (gates.cpp). Torch-free: they read the result's records
// only. Not installed.
#include <cstdint>

#include "lite/measure/machine_load.hpp"
#include "lite/quantize/options.hpp"
#include "lite/quantize/quantize.hpp"
#include "lite/quantize/scheme.hpp"

namespace lite::quantize {

// Fails r.gates' "tolerance" (the choice missed it), "speed" (slower than frozen float without {allow_slower}, or a
// comparison that cannot be trusted without {allow_noisy}), "agreement" (an explicit mode given no tolerance that
// lost more than {agreement_floor}) and "effect" (an explicit mode that changed nothing material), each with its
// finding; `load` is the machine's load around the latency measurements.
void apply_gates(const Candidate& chosen, const ModeEntry& requested, const QuantizeOptions& o,
                 const measure::MachineLoad& load, uint64_t source_bytes, QuantizeResult& r);

}  // namespace lite::quantize
