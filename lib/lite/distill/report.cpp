// DistillResult -> JSON and -> Report (tables, notes) for the printers. Torch-free.
#include <fmt/format.h>

#include "lite/core/environment.hpp"
#include "lite/core/options.hpp"
#include "lite/core/text.hpp"
#include "lite/distill/distill.hpp"
#include "lite/model/torch_environment.hpp"

namespace lite::distill {

void to_json(nlohmann::json& j, const StepStatus& s) {
  j = {{"epoch", s.epoch}, {"epochs", s.epochs}, {"step", s.step}, {"steps", s.steps},
       {"loss", s.loss},   {"samples_per_s", s.samples_per_s}, {"lr", s.lr}, {"eta_s", s.eta_s}};
}

namespace {
// The records' one field list each, read and written through it (lite/core/options.hpp's OptionReader and
// OptionWriter), so what a checkpoint or a peer rank wrote is read back by the same keys.
template <class Fields, class E>
Fields& epoch_record_fields(Fields& f, E& e) {
  return f.field("epoch", e.epoch)
      .field("train_loss", e.train_loss)
      .field("metric_percent", e.metric)
      .field("lr_end", e.lr_end)
      .field("samples_per_s", e.samples_per_s)
      .field("seconds", e.seconds)
      .field("best", e.best);
}

template <class Fields, class F>
Fields& rank_figures_fields(Fields& f, F& r) {
  return f.field("rank", r.rank)
      .field("host", r.host)
      .field("samples", r.samples)
      .field("train_s", r.train_s)
      .field("allreduce_s", r.allreduce_s)
      .field("samples_per_s", r.samples_per_s)
      .field("allreduce_share", r.allreduce_share)
      .field("weights_sha256", r.weights_sha256);
}
}  // namespace

void to_json(nlohmann::json& j, const EpochRecord& e) {
  OptionWriter w(j);
  epoch_record_fields(w, e);
}

void from_json(const nlohmann::json& j, EpochRecord& e) {
  OptionReader r(j);
  epoch_record_fields(r, e);
  r.finish();
}

void to_json(nlohmann::json& j, const ModelSummary& m) {
  j = {{"path", m.path},
       {"sha256", m.sha256},
       {"file_bytes", m.file_bytes},
       {"parameters", m.parameters},
       {"macs", m.macs},
       {"metric_percent", m.metric},
       {"latency_ms_batch1", m.latency_ms ? nlohmann::json(*m.latency_ms) : nlohmann::json(nullptr)}};
}

void to_json(nlohmann::json& j, const PruneStage& p) {
  j = {{"ratio", p.ratio},
       {"criterion", p.criterion},
       {"groups", p.groups},
       {"groups_pruned", p.groups_pruned},
       {"channels_before", p.channels_before},
       {"channels_after", p.channels_after},
       {"parameters", {{"before", p.parameters_before}, {"after", p.parameters_after}}},
       {"macs", {{"before", p.macs_before}, {"after", p.macs_after}}},
       {"metric_teacher_percent", p.metric_teacher},
       {"metric_pruned_percent", p.metric_pruned},
       {"metric_recovered_percent", p.metric_recovered}};
}

void to_json(nlohmann::json& j, const DistillResult& r) {
  nlohmann::json options;
  to_json(options, r.options);
  j = {{"metric", r.metric},
       {"validation_data", r.validation_data},
       {"train_samples", r.train_samples},
       {"validation_samples", r.validation_samples},
       {"labels_used", r.labels},
       {"alpha", r.alpha},
       {"teacher_logits", r.teacher_logits},
       {"teacher_logits_reason", r.teacher_logits_reason},
       {"teacher", r.teacher},
       {"student_before", r.student_before},
       {"student", r.student},
       {"epochs", r.epochs},
       {"best_epoch", r.best_epoch},
       {"best_metric_percent", r.best_metric},
       {"start_epoch", r.start_epoch},
       {"resumed_from", r.resumed_from},
       {"train_samples_per_s", r.train_samples_per_s},
       {"train_seconds", r.train_seconds},
       {"output", r.output},
       {"checkpoints", r.checkpoints},
       {"stopped", r.stopped},
       {"gates", r.gates},
       {"notes", r.notes},
       {"options", options},
       {"wall_s", r.wall_s},
       {"distributed", r.distributed ? nlohmann::json(*r.distributed) : nlohmann::json(nullptr)}};
  j["prune"] = r.prune ? nlohmann::json(*r.prune) : nlohmann::json(nullptr);
  j["data_path"] = r.data_path;
  j["data_path_reason"] = r.data_path_reason;
  j["data_chunk_samples"] = r.data_chunk_samples;
}

void to_json(nlohmann::json& j, const RankFigures& f) {
  OptionWriter w(j);
  rank_figures_fields(w, f);
}

void from_json(const nlohmann::json& j, RankFigures& f) {
  OptionReader r(j);
  rank_figures_fields(r, f);
  r.finish();
}

void to_json(nlohmann::json& j, const DistributedSummary& d) {
  j = {{"world_size", d.world_size},
       {"rank", d.rank},
       {"master", d.master},
       {"source", d.source},
       {"backend", d.backend},
       {"buckets", d.buckets},
       {"allreduce_bytes_per_step", d.allreduce_bytes_per_step},
       {"ranks", d.ranks},
       {"samples_per_s", d.samples_per_s},
       {"allreduce_share", d.allreduce_share},
       {"scaling_efficiency", d.scaling_efficiency},
       {"weights_identical", d.weights_identical},
       {"batchnorm", d.batchnorm}};
}

namespace {

std::string percent(double v) { return fmt::format("{:.2f}%", v); }

std::string latency(const std::optional<double>& ms) { return ms ? format_ms(*ms) : std::string("-"); }

std::string ratio(double num, double den) { return den > 0 ? fmt::format("{:.2f}x", num / den) : std::string("-"); }

report::Table models_table(const DistillResult& r) {
  report::Table t;
  const std::string student =
      r.prune ? fmt::format("{} pruned at {:g}", r.teacher.path, r.prune->ratio) : r.student_before.path;
  t.title = fmt::format("lite distill {} -> {} (teacher {}; {} on {} samples)", student, r.output, r.teacher.path,
                        r.metric, r.validation_samples);
  t.columns = {"", "teacher", "student before", "student after", "student / teacher"};
  t.rows.push_back({r.metric, percent(r.teacher.metric), percent(r.student_before.metric), percent(r.student.metric),
                    fmt::format("{:+.2f} points", r.student.metric - r.teacher.metric)});
  t.rows.push_back({"parameters", format_count(r.teacher.parameters), format_count(r.student_before.parameters),
                    format_count(r.student.parameters), ratio(double(r.student.parameters), double(r.teacher.parameters))});
  t.rows.push_back({"MACs per sample", format_count(r.teacher.macs), format_count(r.student_before.macs),
                    format_count(r.student.macs), ratio(double(r.student.macs), double(r.teacher.macs))});
  t.rows.push_back({"file size", format_bytes(double(r.teacher.file_bytes)),
                    format_bytes(double(r.student_before.file_bytes)), format_bytes(double(r.student.file_bytes)),
                    ratio(double(r.student.file_bytes), double(r.teacher.file_bytes))});
  t.rows.push_back({"latency batch 1 (median ms)", latency(r.teacher.latency_ms), "-", latency(r.student.latency_ms),
                    r.teacher.latency_ms && r.student.latency_ms ? ratio(*r.student.latency_ms, *r.teacher.latency_ms)
                                                                 : std::string("-")});
  return t;
}

report::Table epochs_table(const DistillResult& r) {
  report::Table t;
  t.title = fmt::format("training: {} samples, batch {}, {} lr {:g}, T {:g}, alpha {:g}; teacher logits {}; {:.0f} samples/s",
                        r.train_samples, r.options.train_batch, r.options.optimizer, r.options.lr, r.options.temperature,
                        r.alpha, r.teacher_logits, r.train_samples_per_s);
  t.columns = {"epoch", "train loss", r.metric, "lr at end", "samples/s", "seconds", "best"};
  for (const auto& e : r.epochs)
    t.rows.push_back({std::to_string(e.epoch), fmt::format("{:.4f}", e.train_loss), percent(e.metric),
                      fmt::format("{:.3g}", e.lr_end), fmt::format("{:.0f}", e.samples_per_s),
                      fmt::format("{:.2f}", e.seconds), e.best ? "*" : ""});
  return t;
}

// Prune, then recover: the pruning stage's cost and what distillation won back.
report::Table prune_table(const DistillResult& r) {
  const PruneStage& p = *r.prune;
  report::Table t;
  t.title = fmt::format("student from pruning: ratio {:g}, criterion {}, {} of {} channel groups pruned ({} -> {} channels)",
                        p.ratio, p.criterion, p.groups_pruned, p.groups, p.channels_before, p.channels_after);
  t.columns = {"", "teacher", "pruned", "pruned + distilled", "recovered"};
  t.rows.push_back({r.metric, percent(p.metric_teacher), percent(p.metric_pruned), percent(p.metric_recovered),
                    fmt::format("{:+.2f} points", p.metric_recovered - p.metric_pruned)});
  t.rows.push_back({"parameters", format_count(p.parameters_before), format_count(p.parameters_after),
                    format_count(p.parameters_after), ratio(double(p.parameters_after), double(p.parameters_before))});
  t.rows.push_back({"MACs per sample", format_count(p.macs_before), format_count(p.macs_after),
                    format_count(p.macs_after), ratio(double(p.macs_after), double(p.macs_before))});
  return t;
}

// Data parallel: one row per rank (throughput, all-reduce time and share, weights checksum).
report::Table ranks_table(const DistillResult& r, const DistributedSummary& d) {
  report::Table t;
  t.title = fmt::format("data parallel: {} processes over {} ({}, rendezvous {}); global batch {} split over the ranks; "
                        "{} gradient bucket{} ({}) all-reduced per step; {:.0f} samples/s in all, all-reduce {:.1f}% of "
                        "training time, scaling efficiency {:.2f}",
                        d.world_size, d.backend, d.source, d.master, r.options.train_batch, d.buckets, d.buckets == 1 ? "" : "s",
                        format_bytes(double(d.allreduce_bytes_per_step)), d.samples_per_s, 100.0 * d.allreduce_share,
                        d.scaling_efficiency);
  t.columns = {"rank", "host", "samples", "samples/s", "train s", "all-reduce s", "all-reduce share", "weights sha256"};
  for (const auto& f : d.ranks)
    t.rows.push_back({std::to_string(f.rank), f.host, std::to_string(f.samples), fmt::format("{:.0f}", f.samples_per_s),
                      fmt::format("{:.2f}", f.train_s), fmt::format("{:.2f}", f.allreduce_s),
                      fmt::format("{:.1f}%", 100.0 * f.allreduce_share), f.weights_sha256.substr(0, 16)});
  return t;
}

}  // namespace

report::Report to_report(const DistillResult& r) {
  report::Report rep = torch_verb_report("distill", r);
  rep.tables.push_back(models_table(r));
  if (r.prune) rep.tables.push_back(prune_table(r));
  rep.tables.push_back(epochs_table(r));
  if (r.distributed) rep.tables.push_back(ranks_table(r, *r.distributed));
  rep.notes = r.notes;
  rep.notes.push_back(fmt::format("best epoch: {} ({} {})", r.best_epoch ? std::to_string(r.best_epoch) : "0 (initial weights)",
                                  r.metric, percent(r.best_metric)));
  rep.notes.push_back("teacher logits " + r.teacher_logits + ": " + r.teacher_logits_reason);
  if (!r.data_path.empty()) rep.notes.push_back("data: " + r.data_path + " (" + r.data_path_reason + ")");
  if (!r.resumed_from.empty()) rep.notes.push_back(fmt::format("resumed from {} at epoch {}", r.resumed_from, r.start_epoch));
  for (const auto& c : r.checkpoints) rep.notes.push_back("checkpoint: " + c + " (continue with resume)");
  if (r.distributed) {
    rep.notes.push_back("batch norm: " + r.distributed->batchnorm);
    rep.notes.push_back(fmt::format("weights identical on every rank: {}", r.distributed->weights_identical ? "yes" : "NO"));
  }
  for (const auto& g : r.gates.failed) rep.notes.push_back("gate failed: " + g);
  return rep;
}

}  // namespace lite::distill
