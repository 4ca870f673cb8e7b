// The chosen candidate written: its provenance (lite.json inside the artifact: mode, engine, layer table, scheme
// details, calibration record, tolerance search, size and quality), the artifact through model::save_artifact after
// the last interruption point, and the calibration sidecar when asked for. Nothing is written before this.
#include "lite/core/atomic_file.hpp"
#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/core/text.hpp"
#include "lite/model/artifact.hpp"
#include "lite/model/inputs.hpp"
#include "lite/quantize/choice.hpp"
#include "lite/quantize/run_internal.hpp"

namespace fs = std::filesystem;

namespace lite::quantize {

namespace {

// Provenance of the chosen candidate (lite.json inside the artifact) and its calibration record.
model::ArtifactInfo describe_artifact(const Context& c, const ModeEntry& mode, const Candidate& chosen,
                                      const Built& artifact, const CalibMethodEntry& method,
                                      const std::optional<CalibrationStats>& reused, const fs::path& out,
                                      QuantizeResult& r) {
  const auto& o = c.o;
  model::ArtifactInfo info;
  info.transform = "quantize";
  info.command_line = c.run_context.command_line;
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& l : chosen.plan.layers)
    layers.push_back({{"name", l.layer.name},
                      {"kind", l.layer.kind},
                      {"scheme", l.scheme},
                      {"quantized", l.quantized},
                      {"reason", l.reason}});
  info.details = {
      {"mode", r.mode},     {"requested_mode", r.requested_mode},
      {"engine", r.engine}, {"consumer_engine_setting", "torch.backends.quantized.engine = '" + r.engine + "'"},
      {"layers", layers},   {"scheme", artifact.details}};
  if (mode.scheme->needs_calibration() && c.calibrator) {
    CalibrationInfo ci;
    ci.method = method.name;
    ci.reused = reused.has_value() && c.calibrator->passes() == 0;
    ci.source = ci.reused ? o.calib_stats->string() : c.calibrator->stats().source;
    ci.samples = c.calibrator->stats().samples;
    ci.observed_values = static_cast<int64_t>(c.calibrator->stats().values.size());
    if (o.write_calib_json) {
      fs::path stats_file = out;
      stats_file.replace_extension(".calib.json");
      ci.stats_file = stats_file.string();
    }
    r.calibration = ci;
    info.details["calibration"] = ci;
  }
  if (chosen.search) info.details["tolerance_search"] = *chosen.search;
  // Latencies stay in the report: they vary run to run, the artifact may not.
  info.figures = {{"size_bytes", {{"before", c.source.file_bytes}, {"after", chosen.file_bytes}}},
                  {"quality", chosen.quality}};
  // Declared inputs carry over by themselves (make_provenance); otherwise the ones timed here.
  if (c.source.declared_inputs.empty()) info.inputs = model::describe_inputs(c.inputs.begin()->second);
  return info;
}

}  // namespace

// Picks the candidate (choice.cpp), writes its artifact (and the calibration sidecar) after the last
// interruption point; returns the chosen candidate.
const Candidate& write_chosen(Context& c, QuantizeResult& r, const std::map<std::string, Built>& built,
                              const CalibMethodEntry& method, const std::optional<CalibrationStats>& reused) {
  const QuantizeOptions& o = c.o;
  const model::LoadedModel& source = c.source;
  const Choice choice = choose_candidate(r.candidates);
  if (choice.index < 0) {
    std::vector<std::string> why;
    for (const auto& cand : r.candidates) why.push_back(cand.mode + " " + cand.problem);
    throw InputError(source.path.string(), "no quantization mode works on this model (" + join(why, "; ") + ")",
                     "keep the failing layers float with {skip} LAYER, or pass {mode} with one mode to see its error");
  }
  Candidate& chosen = r.candidates[size_t(choice.index)];
  chosen.chosen = true;
  r.tolerance_met = choice.tolerance_met;
  r.mode = chosen.mode;
  r.slower = chosen.speed.slower;
  const ModeEntry& mode = find_mode(r.mode);
  const Built& artifact = built.at(r.mode);
  const fs::path out = output_path(o, mode.tag);
  model::ArtifactInfo info = describe_artifact(c, mode, chosen, artifact, method, reused, out, r);
  throw_if_interrupted();  // the last moment a Ctrl-C leaves every file untouched
  timed(c, "write", "", [&] { model::save_artifact(deserialize(artifact.file), out, source, info); });
  r.output = out.string();
  r.output_bytes = fs::file_size(out);
  if (r.calibration && !r.calibration->stats_file.empty())
    write_file_atomically(r.calibration->stats_file,
                          calibration_document(c.calibrator->stats(), method).dump(1) + "\n");
  return chosen;
}

}  // namespace lite::quantize
