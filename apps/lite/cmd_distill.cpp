// lite distill: flags bound straight onto DistillOptions -> validate() -> lite::distill::run -> report printer.
// The progress sink is distill's TrainingProgress: on a terminal a bar with epoch, step, loss, samples/s and
// ETA; otherwise one line per epoch on stderr; nothing with --json/--csv/--markdown or --quiet.
#include <CLI/CLI.hpp>

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "command.hpp"
#include "command_line.hpp"
#include "config_flags.hpp"
#include "error_line.hpp"
#include "flag_catalog.hpp"
#include "flag_wording.hpp"
#include "help_format.hpp"
#include "launch_local.hpp"
#include "number_flags.hpp"
#include "renamed_flags.hpp"
#include "lite/core/error.hpp"
#include "lite/core/options.hpp"
#include "lite/distill/distill.hpp"
#include "lite/distill/optimizers.hpp"
#include "lite/distill/verb.hpp"
#include "lite/distill/world.hpp"
#include "lite/prune/prune.hpp"

namespace lite::cli {

namespace {

std::string optimizer_help() {
  std::string text = "Optimizer:";
  for (const auto& e : distill::optimizers()) text += "\n  " + e.names.front() + ": " + e.summary;
  return text;
}

std::string prune_criterion_help() {
  std::string text = "Channel ranking of --student-from-prune:";
  for (const auto& c : prune::criterion_infos()) text += std::string("\n  ") + c.name + ": " + c.description;
  return text;
}

std::string clock_text(double seconds) {
  int s = seconds > 0 ? int(seconds + 0.5) : 0;
  return std::to_string(s / 60) + ":" + (s % 60 < 10 ? "0" : "") + std::to_string(s % 60);
}

// Training as it goes: on a terminal, the phases as TerminalProgress counts them and, while training, one line
// with epoch, step, loss, samples/s and ETA; on a terminal or not, a line per finished epoch.
class DistillProgress final : public distill::TrainingProgress {
 public:
  explicit DistillProgress(bool terminal) : terminal_(terminal) {}

  void begin(std::string_view phase, uint64_t total) override {
    if (terminal_) line_.begin(phase, total);
  }
  void advance(uint64_t steps) override {
    if (terminal_ && !training_) line_.advance(steps);
  }
  void end() override {
    training_ = false;
    if (terminal_) line_.end();
  }
  void step(const distill::StepStatus& s) override {
    training_ = true;
    if (!terminal_) return;
    const int width = 24;
    const int filled = s.steps ? int(width * double(s.step) / double(s.steps)) : 0;
    char line[256];
    std::snprintf(line, sizeof line, "epoch %d/%d [%s%s] step %lld/%lld loss %.4f %.0f samples/s ETA %s", s.epoch,
                  s.epochs, std::string(filled, '#').c_str(), std::string(width - filled, '.').c_str(),
                  (long long)s.step, (long long)s.steps, s.loss, s.samples_per_s, clock_text(s.eta_s).c_str());
    line_.show(line, s.step == s.steps);
  }
  void epoch_done(const distill::EpochRecord& e, int epochs) override {
    if (terminal_) line_.clear();
    std::fprintf(stderr, "epoch %d/%d: loss %.4f, validation %.2f%%%s, %.0f samples/s, %.1f s\n", e.epoch, epochs,
                 e.train_loss, e.metric, e.best ? " (best)" : "", e.samples_per_s, e.seconds);
    std::fflush(stderr);
  }

 private:
  bool terminal_;
  bool training_ = false;
  TerminalProgress line_{TerminalProgress::Style::count};
};

// Whether `text` names `rank` ("rank 1", not "rank 12").
bool mentions(const std::string& text, const std::string& rank) {
  for (auto at = text.find(rank); at != std::string::npos; at = text.find(rank, at + 1))
    if (at + rank.size() == text.size() || !std::isdigit(static_cast<unsigned char>(text[at + rank.size()]))) return true;
  return false;
}

// What a rank lost during training leaves to resume from, for its error line.
std::string kept_after_rank_lost(const distill::DistillOptions& o) {
  if (o.checkpoint_dir.empty()) return "no checkpoint was kept (--checkpoint-dir keeps one per epoch)";
  const std::string ck = (o.checkpoint_dir / "last.ckpt").string();
  std::error_code ec;
  if (std::filesystem::is_regular_file(ck, ec)) return "the last checkpoint is kept: continue with --resume " + ck;
  return "no epoch had finished, so " + o.checkpoint_dir.string() + " holds no checkpoint yet";
}

std::unique_ptr<Progress> make_distill_progress(const OutputOptions& output) {
  if (!progress_wanted(output)) return std::make_unique<NullProgress>();
  return std::make_unique<DistillProgress>(stderr_is_terminal());
}

struct DistillState {
  distill::DistillOptions options;
  OutputOptions output;
  ConfigFlags config;
};

// The data-parallel flags (world size, rank, rendezvous, launch on this machine).
void add_parallel_flags(CLI::App& app, distill::DistillOptions& o) {
  name_flag("timeout_s", "--timeout");
  not_zero(default_in_words(app.add_option("--world-size", o.world_size,
                                           "Data parallel: processes in the job (default: $WORLD_SIZE, else 1)")),
           "a number of processes, 1 or more");
  default_in_words(
      app.add_option("--rank", o.rank, "Data parallel: this process's rank (default: $RANK, else 0)"));
  app.add_option("--master", o.master,
                 "Data parallel: rank 0's ADDR:PORT (default: $MASTER_ADDR:$MASTER_PORT)");
  app.add_option("--timeout", o.timeout_s,
                 "Data parallel: rendezvous/collective timeout in seconds");
  not_zero(default_in_words(app.add_option("--launch-local", o.launch_local,
                                           "Data parallel on this machine: start N worker processes")),
           "a number of worker processes, 1 or more");
  app.add_option("--bucket-mb", o.bucket_mb, "Data parallel: MB of gradients all-reduced at a time");
}

// Runs the verb; in a data-parallel job rank 0 speaks for the job and the other ranks print only their own error line.
int run_distill(DistillState& s) {
  adopt_launch_assignment(s.options.launch_local, s.options.threads);  // a worker of --launch-local
  distill::validate(s.options);
  if (s.options.launch_local > 0)
    return launch_local({distill::verb().name, s.options.launch_local, s.options.threads, s.options.timeout_s});
  const int rank = distill::resolve_world(s.options).rank;
  const bool speaks = rank == 0;
  const bool launched_locally = launched_by_launch_local();
  const std::string own_rank = "rank " + std::to_string(rank);
  try {
    auto progress = speaks ? make_distill_progress(s.output) : std::make_unique<NullProgress>();
    auto result = distill::run(s.options, *progress, run_context());
    if (!speaks) return result.gates.passed() ? int(exit_ok) : int(exit_check_failed);
    return print_outcome({distill::to_report(result), result.gates.passed()}, s.output);
  } catch (const distill::RankLost& e) {
    // Every rank says which peer it lost (exit 1).
    throw distill::RankLost(first_line(e.what()) + "; " + kept_after_rank_lost(s.options));
  } catch (const Interrupted&) {
    if (!speaks) set_error_printing(false);  // rank 0 says it (and where its checkpoint is)
    throw;
  } catch (const Error& e) {
    // A --launch-local worker other than rank 0 reads the same files as rank 0, which reports their problems;
    // it prints only what concerns its own rank (the rendezvous, its options), so each fault is one line.
    if (!speaks && launched_locally && !mentions(e.what(), own_rank)) set_error_printing(false);
    throw;
  }
}

}  // namespace

Runner setup_distill(CLI::App& app) {
  auto s = std::make_shared<DistillState>();
  auto& o = s->options;
  name_flag("output", "-o");
  name_flag("prune_criterion", "--criterion");
  app.description(
      "Distill a TorchScript teacher into a TorchScript student: the student learns the teacher's softened outputs "
      "(and the labels, when the data has them), validated every epoch; the best epoch is written, and the report "
      "sets teacher against student. Exit 1 when the loss stopped being finite (the best epoch is still written). "
      "Details: docs/distill.md.");
  app.add_option("--teacher", o.teacher, "Teacher model (TorchScript); run in eval mode without gradients");
  app.add_option("--student", o.student, "Student model (TorchScript), trained from its current weights");
  app.add_option("--data", o.data, "Training data: tensor or {\"x\",\"y\"} dict file, .npy, or idx");
  app.add_option("--data-labels", o.data_labels, "Labels of --data when they are a file of their own (idx, .npy)");
  add_renamed_flag(app, "--labels", "data_labels", o.data_labels);
  app.add_option("--eval", o.eval, "Validation data (default: the training data)");
  app.add_option("--eval-labels", o.eval_labels, "Labels of an idx --eval file");
  app.add_option("--samples", o.samples, "Train on the first N samples of --data; 0 is all");
  app.add_option("--eval-samples", o.eval_samples, "Validate on the first N samples of --eval; 0 is all");
  app.add_option("--epochs", o.epochs, "Epochs");
  app.add_option("--train-batch", o.train_batch, "Training batch size: the global batch, split over the ranks");
  add_renamed_flag(app, "--batch", "train_batch", o.train_batch);
  app.add_option("--eval-batch", o.eval_batch, "Batch size of teacher and validation passes");
  app.add_option("--lr", o.lr, "Peak learning rate");
  with_values(app.add_option("--optimizer", o.optimizer, optimizer_help()),
              names_of(distill::optimizers(), [](const auto& e) { return e.names.front(); }));
  app.add_option("--momentum", o.momentum, "SGD momentum");
  app.add_option("--weight-decay", o.weight_decay, "Weight decay");
  app.add_option("--warmup-fraction", o.warmup_fraction,
                 "Share of all steps spent warming the learning rate up before the cosine decay");
  app.add_option("--temperature", o.temperature, "Softmax temperature T of the teacher term");
  app.add_option("--alpha", o.alpha,
                 "Weight of the teacher term in [0,1], 1 - alpha that of the labels' cross-entropy; 1 without labels");
  decimal_only(app.add_option("--seed", o.seed, "Seed of shuffling and dropout"),
               "a whole number from 0 to 18446744073709551615");
  app.add_option("--threads", o.threads, "Intra-op threads, or 0 for libtorch's default");
  app.add_option("--teacher-cache-mb", o.teacher_cache_mb,
                 "Cache the teacher's logits of the training set when they fit in this many MB; 0 recomputes them");
  app.add_option("--checkpoint-dir", o.checkpoint_dir,
                 "Write DIR/last.ckpt after every epoch and on Ctrl-C");
  app.add_option("--resume", o.resume, "Continue from a checkpoint (same options and files as its run)");
  app.add_option("-o,--output", o.output,
                 "Student artifact (default: STUDENT.distilled.pt, or TEACHER.pruned-distilled.pt)");
  app.add_option("--latency-iterations", o.latency_iterations,
                 "Forwards timed per model for the latency row; 0 skips it");
  app.add_option("--student-from-prune", o.student_from_prune,
                 "Instead of --student: prune the teacher at ratio R, then distill");
  with_values(app.add_option("--criterion", o.prune_criterion, word_options(prune_criterion_help())),
              names_of(prune::criterion_infos(), [](const auto& c) { return c.name; }));
  app.add_option("--data-memory-mb", o.data_memory_mb,
                 "Stream training data larger than this in chunks; 0 is half of MemAvailable");
  add_parallel_flags(app, o);
  add_shared_flags(app, s->output, s->config, /*verbose=*/true);

  return [s, &app] {
    resolve_format(s->output);  // a bad --output-format fails before any work
    if (resolve_config(app, s->config, s->options)) return int(exit_ok);
    return run_distill(*s);
  };
}

const SetupRegistration registered{distill::verb(), setup_distill};

}  // namespace lite::cli
