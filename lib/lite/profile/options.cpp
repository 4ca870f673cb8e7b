// lite profile's options as data: JSON both ways and the value rules (the options pattern of
// lite/core/options.hpp). Torch-free, so the CLI and recipes check options without loading libtorch.
#include <fmt/format.h>

#include "lite/core/atomic_file.hpp"
#include "lite/profile/options.hpp"

namespace lite::profile {

namespace {
constexpr double kMaxQps = 1e6;              // above any rate one process serves
constexpr int64_t kMaxRequests = 10'000'000; // per rate: each keeps two timestamps (160 MB at the bound)
constexpr double kMaxLoadSeconds = 24 * 3600;  // of offered arrivals, summed over the rates
}  // namespace

using namespace option_rules;

measure::TimingOptions timing_of(const ProfileOptions& o) {
  measure::TimingOptions t = measure::timing_options(o.timing);
  // Iterations given and no budget: the user asked for exactly that many calls.
  t.budget_s = o.budget_s.value_or(o.timing.iterations ? 0.0 : measure::kDefaultProfileBudget);
  t.hard_budget = o.budget_s.has_value();
  return t;
}

// The one field list of ProfileOptions: to_json writes it, from_json reads it (unknown keys rejected).
template <class Fields, class O>
void profile_fields(Fields& f, O& o) {
  model::eval_data_fields(f, o)
      .field("models", o.models)
      .field("input_files", o.input_files)
      .field("batch", o.batch);
  measure::timing_knob_fields(f, o.timing)
      .field("qengine", o.qengine)
      .field("ops", o.ops)
      .field("top", o.top)
      .field("op_iterations", o.op_iterations)
      .field("chrome_trace", o.chrome_trace)
      .field("qps", o.qps)
      .field("requests", o.requests)
      .field("seed", o.seed)
      .field("budget_s", o.budget_s);
  llm::decoder_knob_fields(f, o.decoder)
      .field("prompts", o.prompts)
      .field("prefill_cost_out", o.prefill_cost_out);
}

void validate_decoder(const ProfileOptions& o) {
  if (o.models.size() != 1)
    throw OptionError("models", "two models are compared as one forward call each; a decoder is profiled alone",
                      "profile each decoder on its own");
  if (!o.inputs.empty() || !o.input_files.empty() || o.eval || !o.qps.empty() || o.ops)
    throw OptionError(o.ops ? "ops" : !o.qps.empty() ? "qps" : o.eval ? "eval" : "inputs",
                      "applies to one forward call, and a decoder is profiled by generation",
                      "drop it: {prompt_tokens} and {generate} shape the decoder's run");
  llm::validate(o.decoder);
  if (o.decoder.prompt_tokens && !o.prompts.empty())
    throw OptionError("prompt_tokens", "cannot be combined with {prompts}", "the file's rows give the prompt length");
  std::vector<std::filesystem::path> inputs(o.models.begin(), o.models.end());
  if (!o.prompts.empty()) inputs.push_back(o.prompts);
  if (!o.prefill_cost_out.empty()) check_output(o.prefill_cost_out, inputs, "prefill_cost_out");
}

void to_json(nlohmann::json& j, const ProfileOptions& o) {
  OptionWriter w(j);
  profile_fields(w, o);
}

void from_json(const nlohmann::json& j, ProfileOptions& o) {
  OptionReader r(j);
  profile_fields(r, o);
  r.renamed("trace", "chrome_trace", o.chrome_trace);  // "trace" is a request trace in optimize
  r.finish();
}

void validate(const ProfileOptions& o) {
  if (o.models.empty() || o.models.size() > 2)
    throw OptionError("models", fmt::format("{} models given", o.models.size()),
                      "pass one model to profile, or two (A B) to compare");
  if (o.batch) {
    at_least("batch", double(*o.batch), 1, "omit it to keep the model's input shapes");
    for (const auto& spec : o.inputs) model::check_input_size(spec, o.batch);
  }
  validate(o.timing);
  if (o.budget_s) in_range("budget_s", *o.budget_s, 0.1, 1e6, "seconds the timed measurement may take");
  at_least("top", o.top, 1);
  in_range("op_iterations", o.op_iterations, 1, 10000);
  if (!o.chrome_trace.empty() && !o.ops) throw OptionError("chrome_trace", "needs the per-op profile", "add {ops}");
  if (!o.chrome_trace.empty()) {
    std::vector<std::filesystem::path> inputs(o.models.begin(), o.models.end());
    inputs.insert(inputs.end(), o.input_files.begin(), o.input_files.end());
    for (const auto& f : {o.eval, o.labels})
      if (f) inputs.push_back(*f);
    check_output(o.chrome_trace, inputs, "chrome_trace");
  }
  if (!o.qps.empty() && o.requests <= 0)
    throw OptionError("qps", "needs a number of requests per rate", "add {requests} N (N >= 1)");
  if (o.qps.empty() && o.requests > 0) throw OptionError("requests", "needs offered rates", "add {qps} RATE");
  for (double q : o.qps)
    if (!(q > 0) || !(q <= kMaxQps))
      throw OptionError("qps",
                        fmt::format("must be a finite rate above 0 and at most {:g} requests per second, got {:g}",
                                    kMaxQps, q),
                        "give rates in that range, e.g. {qps} 10,50");
  if (!o.qps.empty()) {
    in_range("requests", double(o.requests), 1, double(kMaxRequests), "give {requests} N, at most 10000000 per rate");
    // The run's length is known before it starts: the arrivals alone take about requests / qps per rate.
    double arrival_s = 0;
    for (double q : o.qps) arrival_s += double(o.requests) / q;
    if (arrival_s > kMaxLoadSeconds)
      throw OptionError("requests", fmt::format("{} requests per rate at {{qps}} {} take about {:.0f} s of arrivals, "
                                                "above the bound of {:.0f} s", o.requests, fmt::join(o.qps, ","),
                                                arrival_s, kMaxLoadSeconds),
                        "give fewer {requests} or higher rates");
  }
  if (o.decoder_asked()) validate_decoder(o);
  model::validate(o);
}

}  // namespace lite::profile
