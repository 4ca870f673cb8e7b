// lite run's orchestration (see runner.hpp): check everything first (inputs exist, every step's options read
// and validate under its key path, outputs are not inputs), then run the steps in order with each reference to an
// earlier step replaced by the file it wrote, measure the gates, and write the final artifact last, after the
// final interruption point, so Ctrl-C leaves no final artifact behind (intermediates stay in the work folder).
#include "lite/recipe/runner.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <cctype>
#include <chrono>

#include "lite/core/atomic_file.hpp"
#include "lite/core/error.hpp"
#include "lite/core/file_roles.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/model/load.hpp"
#include "lite/model/torch_environment.hpp"
#include "lite/recipe/runner_internal.hpp"
#include "lite/verbs/verbs.hpp"

namespace lite::recipe {

namespace fs = std::filesystem;
using namespace detail;

namespace {

// The recipe's name as a file-name tag ("emergency int8" -> "emergency-int8").
std::string name_tag(const std::string& name) {
  std::string tag;
  for (char c : name) tag += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '-';
  return tag.empty() ? "run" : tag;
}

// Replaces "@steps[I]" / "@steps[I].report" in a step's path values by what `file` returns for each.
nlohmann::json substitute(const Step& step, const std::function<std::string(const StepReference&)>& file) {
  const RecipeStepShape& verb = *find_step_verb(step.verb)->recipe_step;
  nlohmann::json out = step.options;
  auto replace = [&](nlohmann::json& value) {
    if (!value.is_string()) return;
    if (auto ref = parse_step_reference(value.get<std::string>())) value = file(*ref);
  };
  for (const auto& key : verb.path_keys)
    if (out.contains(key)) replace(out[key]);
  for (const auto& key : verb.path_list_keys)
    if (out.contains(key) && out[key].is_array())
      for (auto& v : out[key]) replace(v);
  return out;
}

fs::path step_file(const fs::path& folder, const Step& step, const char* extension) {
  return folder / fmt::format("step{}-{}{}", step.index, step.verb, extension);
}

void check_inputs_exist(const Recipe& recipe) {
  std::error_code ec;
  if (!fs::is_regular_file(recipe.model, ec))
    throw InputError(recipe.model.string(), "no such model file (the recipe's \"model\")",
                     "give the TorchScript model relative to the recipe's folder");
  model::check_torchscript_archive(recipe.model);  // before anything is created (a work folder beside it)
  for (const auto& [name, path] : recipe.data)
    if (!fs::exists(path, ec))
      throw InputError(path.string(), fmt::format("no such file (the recipe's data.{})", name),
                       "give the file relative to the recipe's folder");
  // Every other file a step or the evaluation reads, so a typo fails before the first step, not after it.
  for (const auto& path : recipe.input_files())
    if (!fs::exists(path, ec))
      throw InputError(path.string(), "no such file (named in the recipe)", "give it relative to the recipe's folder");
}

void check_work_dir(const Recipe& recipe, const fs::path& work) {
  std::error_code ec;
  if (fs::exists(work, ec) && !fs::is_directory(work, ec))
    throw OptionError("work_dir", fmt::format("{}: exists and is not a folder", work.string()),
                      "give a folder for the intermediate artifacts");
  const fs::path parent = work.parent_path().empty() ? fs::path(".") : work.parent_path();
  if (!fs::is_directory(parent, ec))
    throw OptionError("work_dir", fmt::format("{}: its folder does not exist", work.string()),
                      "create it, or give another {work_dir}");
  if (::access(fs::is_directory(work, ec) ? work.c_str() : parent.c_str(), W_OK) != 0)
    throw OptionError("work_dir", fmt::format("{}: cannot write there", work.string()),
                      "give a writable folder with {work_dir}");
  for (const auto& input : recipe.input_files())
    if (same_file(input, work))
      throw OptionError("work_dir", fmt::format("{}: is an input of the recipe", work.string()), "give another folder");
}

// The file rule (core/file_roles.hpp) over everything lite run reads (the recipe, its model, data and every file
// a step names) and writes (the final artifact, the markdown report, and each work file: step artifacts and
// reports, the frozen original).
void check_outputs(const Recipe& recipe, const RunOptions& options) {
  const fs::path work = work_dir_path(recipe, options);
  check_work_dir(recipe, work);
  FileRoles roles;
  roles.reads("the recipe", recipe.file);
  for (const auto& input : recipe.input_files()) roles.reads("", input);
  if (recipe.last_model_step() >= 0) roles.writes("output", output_path(recipe, options));
  if (!options.report_md.empty()) roles.writes("report_md", options.report_md);
  if (!options.junit.empty()) roles.writes("junit", options.junit);
  std::error_code ec;
  if (fs::is_directory(work, ec)) {  // a folder lite creates holds no input yet
    for (const auto& step : recipe.steps) {
      roles.writes("work_dir", step_file(work, step, ".pt"), "a work file");
      roles.writes("work_dir", step_file(work, step, ".json"), "a work file");
    }
    roles.writes("work_dir", work / "original.frozen.pt", "a work file");
  }
  roles.check();
}

}  // namespace

fs::path output_path(const Recipe& recipe, const RunOptions& options) {
  return options.output.empty() ? derive_output_path(recipe.model, name_tag(recipe.name)) : options.output;
}

fs::path work_dir_path(const Recipe& recipe, const RunOptions& options) {
  if (!options.work_dir.empty()) return options.work_dir;
  const fs::path out = output_path(recipe, options);
  return out.parent_path() / (out.stem().string() + ".work");
}

void check(const Recipe& recipe, const RunOptions& options) {
  check_inputs_exist(recipe);
  check_outputs(recipe, options);
  // Options are validated as they will run, with every earlier step's artifact stood in for by the recipe's
  // model (the files do not exist yet) and outputs in a folder that exists.
  const fs::path work = work_dir_path(recipe, options);
  std::error_code ec;
  const fs::path out_folder = fs::is_directory(work, ec) ? work : work.parent_path().empty() ? fs::path(".")
                                                                                              : work.parent_path();
  for (const auto& step : recipe.steps) {
    StepContext c;
    c.prefix = step.key_path() + ".";
    c.artifact_path = step_file(out_folder, step, ".pt");
    c.check_only = true;
    const nlohmann::json opts = substitute(step, [&](const StepReference& ref) {
      return ref.report ? step_reference(ref.step, true) : recipe.model.string();
    });
    step_runner(step.verb)(opts, c);
  }
  if (recipe.last_model_step() < 0) return;
  if (is_decoder_recipe(recipe))
    check_decoder_evaluation(recipe);
  else
    evaluate(evaluation_options(recipe, recipe.model.string(), recipe.model.string()), true, no_progress());
}

namespace {

// The steps in order, then the evaluation and the gates. Returns the final model's path in the work folder ("" when
// no step writes a model).
std::string run_steps(const Recipe& recipe, const RunOptions& options, const RunContext& context, Progress& progress,
                      RunResult& result) {
  Measured measured;
  measured.allow_noisy = options.allow_noisy;
  for (const auto& step : recipe.steps) {
    throw_if_interrupted();
    const auto step_start = std::chrono::steady_clock::now();
    StepContext c;
    c.prefix = step.key_path() + ".";
    c.artifact_path = step_file(result.work_dir, step, ".pt");
    c.run_context = context;
    c.allow_noisy = options.allow_noisy;
    c.progress = &progress;
    const nlohmann::json opts = substitute(step, [&](const StepReference& ref) {
      const StepRecord& made = result.steps.at(size_t(ref.step));
      return ref.report ? made.report_file : made.artifact;
    });
    StepOutcome outcome = step_runner(step.verb)(opts, c);
    StepRecord record;
    record.index = step.index;
    record.verb = step.verb;
    record.key_path = step.key_path();
    record.options = outcome.options;
    record.report = report::to_json(outcome.report);
    record.gates = outcome.gates;
    record.artifact = outcome.artifact;
    record.report_file = step_file(result.work_dir, step, ".json").string();
    write_file_atomically(record.report_file, record.report.dump(2) + "\n");
    record.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - step_start).count();
    if (outcome.cache_sim) {
      measured.cache_sim = std::move(outcome.cache_sim);
      measured.cache_sim_step = step.key_path();
    }
    result.steps.push_back(std::move(record));
  }
  const int last = recipe.last_model_step();
  std::string final_model = last >= 0 ? result.steps[size_t(last)].artifact : std::string();
  if (!final_model.empty()) {
    throw_if_interrupted();
    std::error_code ec;
    const auto bytes = fs::file_size(final_model, ec);
    measured.final_bytes = ec ? 0 : uint64_t(bytes);
    const fs::path baseline = frozen_original(recipe, result.work_dir, context.command_line, result.notes);
    if (is_decoder_recipe(recipe)) {
      measured.decoder = evaluate_decoder(recipe, baseline, final_model, progress);
      result.evaluation = nlohmann::json(*measured.decoder);
      measured.load = measured.decoder->load;
      result.notes.insert(result.notes.end(), measured.decoder->notes.begin(), measured.decoder->notes.end());
    } else {
      const nlohmann::json eval_options = evaluation_options(recipe, baseline.string(), final_model);
      measured.evaluation = evaluate(eval_options, false, progress);
      result.evaluation = nlohmann::json(*measured.evaluation);
      measured.load = measured.evaluation->load;
      if (recipe.gates.min_speedup)
        measured.speedup = speedup_over_fastest_float(recipe, final_model, eval_options, *measured.evaluation,
                                                      result.notes, progress, measured.load);
    }
  }
  check_gates(result, measured);
  return final_model;
}

// Creates the work folder after every check passed; a run that fails other than by a signal (which keeps what
// finished, as docs/run.md says) removes a folder it created, so bad input found late leaves nothing behind.
class WorkFolder {
 public:
  explicit WorkFolder(const fs::path& path) : path_(path) {
    std::error_code ec;
    created_ = !fs::exists(path_, ec);
    fs::create_directories(path_, ec);
    if (ec)
      throw InputError(path_.string(), "cannot create the work folder: " + ec.message(),
                       "give a writable folder with --work-dir");
  }
  WorkFolder(const WorkFolder&) = delete;
  WorkFolder& operator=(const WorkFolder&) = delete;
  ~WorkFolder() {
    std::error_code ec;
    if (created_ && !kept_) fs::remove_all(path_, ec);
  }
  void keep() { kept_ = true; }

 private:
  fs::path path_;
  bool created_ = false, kept_ = false;
};

}  // namespace

RunResult run(const Recipe& recipe, const RunOptions& options, Progress& progress, const RunContext& context) {
  const auto start = std::chrono::steady_clock::now();
  check(recipe, options);
  RunResult result;
  result.recipe = recipe;
  result.output = output_path(recipe, options);
  result.work_dir = work_dir_path(recipe, options);
  WorkFolder work_folder(result.work_dir);
  std::string final_model;
  try {
    final_model = run_steps(recipe, options, context, progress, result);
  } catch (const Interrupted&) {
    work_folder.keep();
    throw;
  }
  work_folder.keep();
  result.environment = host_environment();
  add_torch_environment(result.environment);
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  throw_if_interrupted();  // the last point where Ctrl-C leaves no final artifact
  if (!final_model.empty()) {
    write_final_artifact(result, result.output, context);
    result.wrote_artifact = true;
  } else {
    result.notes.push_back("no step writes a model, so there is no final artifact");
  }
  return result;
}

}  // namespace lite::recipe
