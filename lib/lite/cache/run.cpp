// lite cache-sim's entry point run(): the checked configuration, the results folder, the sweep, then the plot
// and the notes; open_record_store() and finish_run() are its steps for a caller that simulates its own way.
#include <fmt/format.h>

#include <algorithm>

#include "lite/cache/options.hpp"
#include "lite/cache/prefix/prefix_run.hpp"
#include "lite/cache/record_store.hpp"
#include "lite/cache/sweep.hpp"
#include "lite/core/atomic_file.hpp"
#include "lite/core/interrupt.hpp"

namespace lite::cache {

std::unique_ptr<RecordStore> open_record_store(const CacheSimOptions& o, const SimulationConfig& config) {
  if (o.results_dir.empty()) return nullptr;
  return std::make_unique<RecordStore>(o.results_dir, o.trace, record_options_key(config));
}

void finish_run(const CacheSimOptions& o, SimulationConfig config, CacheSimResult& result) {
  throw_if_interrupted();  // a signal after the last poll still writes and prints nothing
  if (!o.plot.empty()) {
    write_file_atomically(o.plot, render_svg(result));
    result.plot = o.plot;
    result.notes.push_back("plot written to " + o.plot);
  }
  if (!o.results_dir.empty())
    result.notes.push_back(fmt::format("{{results_dir}} {}: {} record{} reused, {} simulated and written there",
                                       o.results_dir, result.reused_records, result.reused_records == 1 ? "" : "s",
                                       result.records.size() - std::min(result.records.size(), result.reused_records)));
  result.config = std::move(config);
}

CacheSimResult run_prefix_study(const CacheSimOptions& o, Progress& progress, const prefix::StudyShare& share) {
  validate(o);
  CacheSimResult result;
  result.prefix = prefix::run_study(prefix_config(o), progress, share);
  if (share.size > 1 && share.rank != 0) return result;  // rank 0 finishes the study
  const auto& rec = result.prefix->recommendation;
  if (rec && !rec->met) result.gates.fail("target");
  throw_if_interrupted();  // a signal after the last poll writes and prints nothing
  if (!o.plot.empty()) {
    write_file_atomically(o.plot, prefix::render_prefix_svg(*result.prefix));
    result.plot = o.plot;
    result.prefix->notes.push_back("plot written to " + o.plot);
  }
  if (!o.results_dir.empty()) {
    const prefix::PrefixResult& p = *result.prefix;
    result.prefix->notes.push_back(fmt::format("{{results_dir}} {}: {} record{} reused, {} replayed and written there",
                                               o.results_dir, p.reused_records, p.reused_records == 1 ? "" : "s",
                                               p.rows.size() - std::min(p.rows.size(), p.reused_records)));
  }
  return result;
}

CacheSimResult run(const CacheSimOptions& o, Progress& progress) {
  if (is_prefix_trace(o)) return run_prefix_study(o, progress);
  SimulationConfig config = prepare(o);
  std::unique_ptr<RecordStore> store = open_record_store(o, config);
  SweepControl control;
  control.store = store.get();
  CacheSimResult result = simulate(config, progress, control);
  finish_run(o, std::move(config), result);
  return result;
}

}  // namespace lite::cache
