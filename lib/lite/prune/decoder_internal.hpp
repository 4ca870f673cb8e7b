#pragma once
// lite prune on a decoder: the parts it cuts (decoder_parts.cpp), the cut itself (decoder_surgery.cpp) and the
// verb's path (decoder_prune.cpp). The parts are found by module structure, not by the channel dependency graph:
// a head is a slice of q's rows that a view splits off by a head count, which the graph walk cannot follow, so the
// attention module is taken whole, as rules_attention.cpp takes nn.MultiheadAttention.
#include <torch/script.h>

#include <string>
#include <vector>

#include "lite/core/progress.hpp"
#include "lite/core/run_context.hpp"
#include "lite/model/load.hpp"
#include "lite/prune/decoder_result.hpp"
#include "lite/prune/options.hpp"

namespace lite::prune {

struct PruneResult;

// Child names an attention or MLP module may use (one table each in decoder_parts.cpp).
struct AttentionNames {
  const char *q, *k, *v, *o;
};
struct MlpNames {
  const char *up, *down, *gate;  // gate nullptr: a plain MLP (up, activation, down)
};

// Where a traced (or constant-folded) graph states a head count: input `index` of a size list.
struct HeadSite {
  torch::jit::Node* list = nullptr;
  size_t index = 0;
  enum class Counts { heads, kv_heads, width } counts = Counts::heads;  // width: heads x head_dim
};

struct AttentionPart {
  AttentionCut cut;  // module, heads, kv_heads, head_dim, counts_in; skipped when lite cannot cut it
  AttentionNames names{};
  std::string heads_attr, kv_heads_attr;  // int attributes holding the counts ("" when absent)
};

struct MlpPart {
  MlpCut cut;
  MlpNames names{};
};

struct DecoderParts {
  std::vector<AttentionPart> attention;
  std::vector<MlpPart> mlp;
};

// Every attention (q, k, v, o linears, head counts in int attributes or in the constants of its graph's size lists)
// and every MLP (up, down and maybe gate linears) in `module`, in module order.
DecoderParts find_decoder_parts(const torch::jit::Module& module);

// The size-list inputs that hold attention `part`'s head counts in every method of `attention` (empty when the
// counts are attributes the graph reads).
std::vector<HeadSite> head_sites(const torch::jit::Module& attention, const AttentionNames& names);

// Decides each part's kept counts from the options (heads, ratio, layer ratios, exclude, round_to).
void plan_decoder_cut(DecoderParts& parts, const PruneOptions& o);

// Removes the lowest-scoring KV groups and MLP units (criterion l1 or l2) from a copy of `module`; returns the copy
// serialized. `module` is untouched.
std::string cut_decoder(const torch::jit::Module& module, const DecoderParts& parts, const std::string& criterion);

// Parameters the plan leaves, and a module's parameters with shared tensors (a tied lm head) counted once.
uint64_t planned_decoder_parameters(const torch::jit::Module& module, const DecoderParts& parts);
uint64_t count_unique_parameters(const torch::jit::Module& module);

// A decoder's run: asked for (heads, prompt_tokens, generate) or a module that takes a KV cache (docs/llm.md).
bool is_decoder_run(const PruneOptions& o, const torch::jit::Module& module);
// Plans, cuts, judges, times and writes a decoder (decoder_prune.cpp); fills r.decoder.
void run_decoder(const PruneOptions& o, model::LoadedModel& source, Progress& progress, const RunContext& context,
                 PruneResult& r);

}  // namespace lite::prune
