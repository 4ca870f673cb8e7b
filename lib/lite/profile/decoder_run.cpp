// lite profile on a decoder (docs/llm.md): generation timed as it serves (time to first token, time per token),
// warm-up apart, the KV cache's bytes, and on request the prefill-cost table cache-sim's prefix mode reads.
#include "lite/profile/decoder_run.hpp"

#include <fmt/format.h>
#include <torch/csrc/jit/passes/inliner.h>

#include <algorithm>

#include "lite/cache/prefix/prefill_table.hpp"
#include "lite/core/atomic_file.hpp"
#include "lite/core/error.hpp"
#include "lite/core/text.hpp"
#include "lite/llm/generation_timing.hpp"
#include "lite/llm/prefill_grid.hpp"
#include "lite/model/dataset.hpp"
#include "lite/model/facts_torch.hpp"
#include "lite/model/inputs.hpp"

namespace lite::profile {

namespace {

constexpr int64_t kGridContextWithoutLimit = 2048;

// The prompt ids of --prompts: int64 [N, T], the first `batch` rows.
torch::Tensor prompts_from_file(const std::filesystem::path& path, int64_t batch) {
  const model::Dataset d = model::load_dataset(path);
  if (d.x.scalar_type() != torch::kInt64 || d.x.dim() != 2)
    throw InputError(path.string(), fmt::format("holds {} {}; prompts are int64 token ids [N, T]",
                                                model::dtype_name(d.x.scalar_type()), fmt::join(d.x.sizes().vec(), "x")),
                     "save the token ids as an int64 tensor of one prompt per row");
  if (d.x.size(0) < batch)
    throw InputError(path.string(), fmt::format("holds {} prompts and the batch is {}", d.x.size(0), batch),
                     "give a smaller batch or more rows");
  return d.x.narrow(0, 0, batch).contiguous();
}

// The run's plan: the options, with the default lengths shrunk to fit a model that states its positions.
llm::GenerationPlan plan_of(const ProfileOptions& o, const llm::Decoder& d, ProfileResult& r) {
  llm::GenerationPlan p;
  p.batch = o.batch.value_or(1);
  p.seed = o.seed;
  if (!o.prompts.empty()) p.prompt = prompts_from_file(o.prompts, p.batch);
  p.prompt_file = o.prompts.string();
  return llm::timed_plan(std::move(p), o.timing, o.decoder, d, r.notes);
}

double slowest(const std::vector<double>& ms) { return ms.empty() ? 0 : *std::max_element(ms.begin(), ms.end()); }

// The warm-up findings: the first calls pay TorchScript's profiling runs and optimisation (the second call, where
// the profiling executor optimises, can be the slowest).
void diagnose_warmup(const llm::GenerationStats& s, ProfileResult& r) {
  const double prefill = slowest(s.warmup_ttft_ms), step = slowest(s.warmup_first_step_ms);
  if (s.ttft_ms.p50 > 0 && prefill > 2 * s.ttft_ms.p50)
    r.findings.push_back({"warning",
                          fmt::format("a warm-up prefill took {} ms, {:.1f}x the steady {} ms", format_ms(prefill),
                                      prefill / s.ttft_ms.p50, format_ms(s.ttft_ms.p50)),
                          "warm-up call > 2x steady TTFT",
                          "TorchScript profiles and optimises a graph in its first calls: send a few warm-up requests "
                          "before serving (a new prompt length costs no more than its size afterwards)"});
  if (s.tpot_ms.count && step > 2 * s.tpot_ms.p50)
    r.findings.push_back({"warning",
                          fmt::format("a warm-up first decode step took {} ms, {:.1f}x the steady {} ms", format_ms(step),
                                      step / s.tpot_ms.p50, format_ms(s.tpot_ms.p50)),
                          "warm-up step > 2x steady time per token",
                          "the one-token step is a new input shape: warm it up too (generate a few tokens per "
                          "warm-up request)"});
  if (s.cache_preallocated)
    r.findings.push_back({"info", "the KV cache's context did not grow with the tokens fed: a preallocated buffer",
                          "cache context != prompt + generated - 1",
                          "a context beyond the buffer fails late; size it for the longest prompt + generation"});
  const double formula = s.cache.formula_bytes_per_token();
  if (s.cache.layers && std::abs(s.cache.bytes_per_token - formula) > 0.01 * formula)
    r.findings.push_back({"info",
                          fmt::format("KV bytes per token measured {} against the shapes' {}",
                                      format_bytes(s.cache.bytes_per_token), format_bytes(formula)),
                          "measured != layers x kv_heads x head_dim x 2 x dtype size",
                          "K and V differ in shape or dtype: cache-sim should use the measured figure"});
}

bool calls_op(torch::jit::Block* block, const std::string& kind) {
  for (torch::jit::Node* n : block->nodes()) {
    if (n->kind().toQualString() == kind) return true;
    for (torch::jit::Block* b : n->blocks())
      if (calls_op(b, kind)) return true;
  }
  return false;
}

// oneDNN's dynamic int8 linear keeps its kernel for the first call's shape (docs/llm.md "Warm-up"): lite's loop
// warmed the decode shape first, and a server that starts with a prompt does not get the time per token measured.
void diagnose_first_shape(torch::jit::Module& module, const llm::Decoder& d, ProfileResult& r) {
  if (d.form() == llm::CacheForm::stateless || at::globalContext().qEngine() != at::QEngine::ONEDNN) return;
  auto graph = module.get_method("forward").graph()->copy();
  torch::jit::Inline(*graph);
  if (!calls_op(graph->block(), "quantized::linear_dynamic")) return;
  r.findings.push_back({"info",
                        "the model's dynamic int8 linears keep their oneDNN kernel for the first input shape they see; "
                        "lite's first call was one token per row, so the time per token above assumes the same",
                        "quantized::linear_dynamic on onednn",
                        "call the model once on one token per row before any prompt when serving (a prompt-first "
                        "start cost 1.5x per token on GPT-2-small; docs/llm.md#warm-up)"});
}

void write_prefill_cost(const ProfileOptions& o, llm::Decoder& d, const llm::GenerationStats& s, const std::string& sha,
                        ProfileResult& r, Progress& progress) {
  const int64_t context = d.max_positions().value_or(kGridContextWithoutLimit);
  llm::PrefillGridPlan plan = llm::prefill_grid_defaults(context);
  plan.vocab = s.vocab;
  plan.seed = o.seed;
  cache::prefix::PrefillTable table = llm::measure_prefill_grid(d, plan, context, progress);
  table.comments = {fmt::format("prefill ms of new_tokens uncached prompt tokens after cached_tokens cached ones, "
                                "batch 1, median of {} passes over the grid (one call a point each) after an untimed pass",
                                plan.repeats),
                    fmt::format("model {} (sha256 {}), {} decoder", o.models[0].string(), sha, s.form),
                    fmt::format("measured by lite {} on {}, {} threads", r.environment.lite_version,
                                r.environment.cpu_model, r.threads)};
  write_file_atomically(o.prefill_cost_out, cache::prefix::prefill_table_text(table));
  // The fit cache-sim will make: of the file as written (its times rounded to 6 digits), not of the doubles here.
  const auto fit = cache::prefix::fit_prefill_model(cache::prefix::read_prefill_table(o.prefill_cost_out));
  r.prefill_cost = PrefillCostOut{o.prefill_cost_out.string(), fit.points, fit.model, fit.max_relative_error};
}

}  // namespace

bool is_decoder_run(const ProfileOptions& o, const torch::jit::Module& module) {
  return o.decoder_asked() || llm::takes_kv_cache(module);
}

void run_decoder(const ProfileOptions& o, model::LoadedModel& model, ModelProfile& profile, ProfileResult& r,
                 Progress& progress) {
  validate_decoder(o);
  llm::Decoder decoder(model.module, model.path.string());
  const llm::GenerationPlan plan = plan_of(o, decoder, r);
  r.batch = plan.batch;
  r.decoder = llm::time_generation(decoder, plan, progress);
  model::count_model_tensors(model.module, profile.facts);
  profile.facts.file_bytes = model.file_bytes;
  diagnose_warmup(*r.decoder, r);
  diagnose_first_shape(model.module, decoder, r);
  if (!o.prefill_cost_out.empty()) write_prefill_cost(o, decoder, *r.decoder, model.sha256, r, progress);
}

}  // namespace lite::profile
