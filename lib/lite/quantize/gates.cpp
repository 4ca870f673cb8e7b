// The gates on the chosen candidate (gates_internal.hpp): each says what it saw, the threshold, and what to try.
#include "lite/quantize/gates_internal.hpp"

#include <fmt/format.h>

#include "lite/measure/agreement.hpp"
#include "lite/measure/speed_claim.hpp"

namespace lite::quantize {

namespace {

// An explicit mode given no tolerance: the "agreement" gate fails when top-1 agreement with the float model
// fell by more than {agreement_floor} points and on more than one sample (auto and {tolerance} have their
// own gate).
void check_agreement_floor(const Candidate& chosen, const ModeEntry& requested, const QuantizeOptions& o,
                           QuantizeResult& r) {
  r.agreement_floor = o.agreement_floor;
  r.agreement_floor_applied = requested.scheme && !o.tolerance;
  if (!r.agreement_floor_applied) return;
  const measure::AgreementLoss loss = measure::agreement_loss(chosen.quality.agreement, o.agreement_floor);
  if (!loss.breaks_floor) return;
  const double lost = loss.points;
  r.gates.fail("agreement");
  r.findings.push_back(
      {"warning",
       fmt::format("{} mode agrees with the float model's top-1 on {:.2f}% of {} ({:.2f} points lost)", r.mode,
                   100.0 - lost, chosen.quality.data, lost),
       fmt::format("{{agreement_floor}} {:.2f} points", o.agreement_floor),
       "give {tolerance} POINTS to keep the most sensitive layers float, keep layers float with {skip}, try another "
       "{mode} (auto, fp16, bf16), or raise {agreement_floor}"});
}

// An explicit mode that changed nothing that matters (the file kept >= 95% of its size and the outputs are
// bit-identical to float) bought nothing: a fused fast path (nn.TransformerEncoderLayer's, nn.MultiheadAttention's)
// may still read the float weights. The "effect" gate fails, with a finding.
void check_material_effect(const Candidate& chosen, const ModeEntry& requested, uint64_t source_bytes,
                           QuantizeResult& r) {
  if (!requested.scheme) return;
  const auto& agreement = chosen.quality.agreement;
  const bool identical = chosen.evaluated && agreement.samples > 0 && agreement.max_abs_error == 0;
  const double size_ratio = source_bytes ? double(chosen.file_bytes) / double(source_bytes) : 1.0;
  if (!identical || size_ratio < 0.95) return;
  r.gates.fail("effect");
  r.findings.push_back(
      {"warning",
       fmt::format("{} mode changed nothing material: the file is {:.2f}x the input and the outputs are bit-identical "
                   "to the float model's on {}",
                   r.mode, size_ratio, chosen.quality.data),
       "a smaller file or a changed output",
       "most weights sit where this mode does not reach (the layer table lists what it quantized; outside dynamic "
       "mode Embedding, LSTM and GRU weights stay float) or run through a fused op that reads the float weights "
       "(a traced nn.TransformerEncoderLayer or nn.MultiheadAttention): try another {mode}"});
}

// The speed comparison cannot be trusted when it ran on an oversubscribed machine or found a speedup beyond belief:
// the "speed" gate, which judges it, fails then unless {allow_noisy}, and a finding names the cause.
void check_speed_trust(const Candidate& chosen, const QuantizeOptions& o, const measure::MachineLoad& load,
                       QuantizeResult& r) {
  r.load = load;
  r.allow_noisy = o.allow_noisy;
  bool untrusted = false;
  if (r.load.oversubscribed()) {
    untrusted = true;
    r.findings.push_back(measure::oversubscription_finding(
        r.load, "the speed comparison with frozen float",
        o.allow_noisy ? "its speedups are untrusted"
                      : "its speedups are untrusted, so the speed gate fails ({allow_noisy} accepts them)",
        o.allow_noisy));
  }
  for (size_t i = 0; i < chosen.speed.implausible.size(); ++i) {
    if (!chosen.speed.implausible[i]) continue;
    untrusted = true;
    r.findings.push_back(measure::implausible_speedup_finding(
        1 / chosen.speed.ratio[i], fmt::format("{} at batch {}", r.mode, chosen.speed.candidate[i].batch)));
  }
  if (untrusted && !o.allow_noisy) r.gates.fail("speed");
}

}  // namespace

void apply_gates(const Candidate& chosen, const ModeEntry& requested, const QuantizeOptions& o,
                 const measure::MachineLoad& load, uint64_t source_bytes, QuantizeResult& r) {
  if (!r.tolerance_met) r.gates.fail("tolerance");
  if (r.slower && !o.allow_slower) r.gates.fail("speed");
  check_speed_trust(chosen, o, load, r);
  check_agreement_floor(chosen, requested, o, r);
  check_material_effect(chosen, requested, source_bytes, r);
}

}  // namespace lite::quantize
