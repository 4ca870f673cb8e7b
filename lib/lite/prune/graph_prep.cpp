// The forward graph the dependency analysis walks: inlined, except attention, and with the branches that
// depend on the input decided by running it once.
//
// Modules whose contract the analysis states whole stay calls. Attention: nn.MultiheadAttention's forward (F.multi_head_attention_forward inlined) is a few
// hundred nodes of views, transposes and `is` checks that no channel rule follows, while the module as a
// whole has a simple contract the analysis states directly (rules_attention.cpp, `attention`). Swin's
// ShiftedWindowAttention likewise: windows, heads and the cyclic shift are reshapes and rolls around two
// linears whose widths follow the channels of its input (rules_attention.cpp, `window_attention`). torchvision's
// FrozenBatchNorm2d (detection backbones): its forward reshapes four [C] buffers to [1, C, 1, 1] and computes
// `x * scale + bias` from them, a per-channel affine map whose buffers follow x's channels, which the call states
// directly (rules_norms.cpp, `frozen_batch_norm`), as batch_norm's rule does for aten::batch_norm.
//
// Branches: nn.TransformerEncoderLayer and nn.TransformerEncoder choose between a fused fast path and the
// unfused layers on the input's rank, device, grad mode and nesting: after attribute folding ~130 `if`s
// remain in a two-layer encoder. They do not depend on channel counts, so lite runs the graph once on the
// example input with every `if` logging its decision, and replaces each condition that always went one way
// by that constant. Fused ops (the encoder layer's and attention's fast paths) read the same weights as the
// unfused branch and follow their shapes, so a branch that takes one is flipped to the unfused branch,
// whose ops the analysis can read.
//
// Loops: a scripted FeaturePyramidNetwork reads its features as `x = list(features.values())` and walks them with
// `for idx in range(len(x) - 2, -1, -1): ... x[idx] ...`, a loop whose trip count is the length of a list the
// graph itself builds, which folding cannot know but the same run measures. A for-loop (its conditions constant
// true) whose trip count is structural (computed from constants and the lengths of containers the graph builds
// and mutates only outside control flow, never from a tensor or an input) and that ran the same number of
// times on every visit, at most kMaxUnrolledTrips, is unrolled to that count: each copy reads its index as a
// constant, so `x[idx]` is a read at a constant position that the list rules follow, and the `if`s that
// compare the index fold. Any other loop stays, and the control rule fences what it reads.
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>

#include <optional>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "lite/model/fused_paths.hpp"
#include "lite/prune/prune_internal.hpp"

namespace lite::prune {

using torch::jit::Block;
using torch::jit::Node;
using torch::jit::Value;

bool is_window_attention_type(const c10::TypePtr& type) {
  auto cls = type->cast<c10::ClassType>();
  return cls && cls->name() && cls->name()->name() == "ShiftedWindowAttention";  // not V2 (its logit scale)
}

bool is_frozen_batch_norm_type(const c10::TypePtr& type) {
  auto cls = type->cast<c10::ClassType>();
  if (!cls || !cls->name() || cls->name()->name() != "FrozenBatchNorm2d") return false;
  const std::string prefix = cls->name()->prefix();  // a trace mangles it: __torch__.torchvision.ops.misc.___torch_mangle_N
  return prefix.rfind("__torch__.torchvision.ops.misc", 0) == 0;
}

bool is_attention_type(const c10::TypePtr& type) {
  auto cls = type->cast<c10::ClassType>();
  if (!cls || !cls->name()) return false;
  const std::string name = cls->name()->qualifiedName();
  return name.find("MultiheadAttention") != std::string::npos || is_window_attention_type(type);
}

namespace {

bool inline_once(Block* block) {
  bool changed = false;
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    Node* n = *it++;
    if (n->kind() == c10::prim::CallMethod) {
      auto cls = n->input(0)->type()->cast<c10::ClassType>();
      if (!cls || is_attention_type(cls) || is_frozen_batch_norm_type(cls)) continue;
      if (auto* fn = torch::jit::tryToGraphFunction(cls->getMethod(n->s(c10::attr::name)))) {
        torch::jit::inlineCallTo(n, fn, /*inline_optimized_graph=*/false);  // optimized graphs are inlined all through
        changed = true;
      }
    } else if (n->kind() == c10::prim::CallFunction) {
      auto fn_type = n->input(0)->type()->cast<c10::FunctionType>();
      auto* fn = fn_type ? torch::jit::tryToGraphFunction(*fn_type->function()) : nullptr;
      if (!fn) continue;
      n->removeInput(0);
      torch::jit::inlineCallTo(n, fn, /*inline_optimized_graph=*/false);
      changed = true;
    } else {
      for (Block* b : n->blocks()) changed = inline_once(b) || changed;
    }
  }
  return changed;
}

constexpr int64_t kMaxUnrolledTrips = 64;
constexpr int kMaxUnrollRounds = 4;  // an unrolled loop may expose the count of the next (FPN's results, then its dict)

// Whether the length of the container `c` is fixed by the graph: built empty or from listed items
// (ListConstruct, DictConstruct, `dict()`), or copied from such a one (list(), values(), keys()), and changed
// (append, insert, `d[k] = v`) only in the graph's own block, so each run does the same.
bool length_fixed(const torch::jit::Graph& graph, Value* c, int depth = 0) {
  Node* n = c->node();
  const auto kind = n->kind();
  const bool built = kind == c10::prim::ListConstruct || kind == c10::prim::DictConstruct ||
                     (kind == c10::aten::dict && n->inputs().empty());
  const bool copied = kind == c10::aten::list || kind == c10::aten::values || kind == c10::aten::keys;
  if (depth > 16 || !(built || copied)) return false;
  for (const torch::jit::Use& use : c->uses()) {
    const c10::FunctionSchema* schema = use.user->maybeSchema();
    if ((!schema || schema->is_mutable()) && use.user->owningBlock() != graph.block()) return false;
  }
  return copied ? length_fixed(graph, n->input(0), depth + 1) : true;
}

// `aten::len` of containers whose length the graph fixes, in graph order.
std::vector<Node*> fixed_lengths(const torch::jit::Graph& graph, Block* block) {
  std::vector<Node*> lens;
  for (Node* n : block->nodes()) {
    for (Block* b : n->blocks()) {
      auto inner = fixed_lengths(graph, b);
      lens.insert(lens.end(), inner.begin(), inner.end());
    }
    if (n->kind() == c10::aten::len && !torch::jit::toIValue(n->output()) && length_fixed(graph, n->input(0)))
      lens.push_back(n);
  }
  return lens;
}

// What one run on the example saw: per `if`, 1 or 0 when every visit went the same way; per fixed length, its
// value when every visit read the same; -1 when it was not reached or varied.
struct Observed {
  std::vector<int64_t> ifs, lengths;
};

// Appends, before or after each of `nodes`, its index to a new list and `value(node)` to another of `type`;
// returns the two lists.
std::pair<Value*, Value*> log_values(torch::jit::Graph& probe, const std::vector<Node*>& nodes, const c10::TypePtr& type,
                                     bool after, Value* (*value)(Node*)) {
  Value *ids, *values;
  {
    torch::jit::WithInsertPoint start(probe.block()->nodes().front());
    ids = probe.insertNode(probe.createList(c10::IntType::get(), {}))->output();
    values = probe.insertNode(probe.createList(type, {}))->output();
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    torch::jit::WithInsertPoint at(after ? nodes[i]->next() : nodes[i]);
    probe.insert(c10::aten::append, {ids, probe.insertConstant(int64_t(i))});
    probe.insert(c10::aten::append, {values, value(nodes[i])});
  }
  return {ids, values};
}

// Per index, the value every visit logged, -1 when none or several.
std::vector<int64_t> same_every_visit(size_t size, const c10::IValue& ids, const c10::IValue& values) {
  std::vector<int64_t> seen(size, -1);
  std::vector<bool> varied(size, false);
  const auto logged_ids = ids.toIntVector();
  const auto logged = values.toList();
  for (size_t k = 0; k < logged_ids.size(); ++k) {
    const size_t i = size_t(logged_ids[k]);
    const c10::IValue v = logged.get(k);
    const int64_t now = v.isBool() ? int64_t(v.toBool()) : v.toInt();
    if (seen[i] != -1 && seen[i] != now) varied[i] = true;
    seen[i] = now;
  }
  for (size_t i = 0; i < size; ++i)
    if (varied[i]) seen[i] = -1;
  return seen;
}

// Runs a copy of `graph` on `example` with each `if` logging its condition and each fixed length its value.
Observed observe(const std::shared_ptr<torch::jit::Graph>& graph, const torch::jit::Module& module,
                 const std::vector<c10::IValue>& example) {
  auto probe = graph->copy();
  const std::vector<Node*> ifs = model::ifs_in(probe->block());
  const std::vector<Node*> lens = fixed_lengths(*probe, probe->block());
  if (ifs.empty() && lens.empty()) return {};
  auto [if_ids, conditions] =
      log_values(*probe, ifs, c10::BoolType::get(), false, [](Node* n) { return n->input(0); });
  auto [len_ids, lengths] = log_values(*probe, lens, c10::IntType::get(), true, [](Node* n) { return n->output(); });
  std::vector<Value*> outputs(probe->outputs().begin(), probe->outputs().end());
  outputs.insert(outputs.end(), {if_ids, conditions, len_ids, lengths});
  torch::jit::WithInsertPoint end(probe->return_node());
  Value* tuple = probe->insertNode(probe->createTuple(outputs))->output();
  while (!probe->outputs().empty()) probe->eraseOutput(0);
  probe->registerOutput(tuple);

  torch::jit::GraphFunction run("lite_prune_probe", probe, nullptr);
  std::vector<c10::IValue> stack{module._ivalue()};
  stack.insert(stack.end(), example.begin(), example.end());
  c10::IValue result;
  {
    torch::NoGradGuard no_grad;
    result = run(std::move(stack));
  }
  const auto& items = result.toTupleRef().elements();
  const size_t n = items.size();
  return {same_every_visit(ifs.size(), items[n - 4], items[n - 3]),
          same_every_visit(lens.size(), items[n - 2], items[n - 1])};
}

// `for i in range(a, b, c)` scripts to a loop over aten::__range_length(a, b, c) trips with i =
// aten::__derive_index(k, a, c) in its body, which constant propagation leaves alone (they may raise): with
// constant operands they are Python's range length and a + k * c.
void fold_range_ops(torch::jit::Graph& graph, Block* block) {
  for (Node* n : block->nodes()) {
    for (Block* b : n->blocks()) fold_range_ops(graph, b);
    const bool length = n->kind() == c10::aten::__range_length, index = n->kind() == c10::aten::__derive_index;
    if (!(length || index) || n->inputs().size() != 3) continue;
    std::vector<int64_t> v;
    for (Value* in : n->inputs())
      if (auto c = torch::jit::toIValue(in); c && c->isInt()) v.push_back(c->toInt());
    if (v.size() != 3 || v[2] == 0) continue;
    int64_t folded = v[1] + v[0] * v[2];  // __derive_index(k, start, step)
    if (length) {
      const auto [lo, hi, step] = std::tuple(v[0], v[1], v[2]);
      folded = step > 0 ? (hi > lo ? (hi - lo + step - 1) / step : 0) : (lo > hi ? (lo - hi - step - 1) / -step : 0);
    }
    torch::jit::WithInsertPoint at(n);
    n->output()->replaceAllUsesWith(graph.insertConstant(folded));
  }
}

// A loop with no `break`: it starts and continues on a constant true, so its trip count alone decides it.
bool is_for_loop(Node* n) {
  if (n->kind() != c10::prim::Loop) return false;
  auto start = torch::jit::toIValue(n->input(1)), next = torch::jit::toIValue(n->blocks()[0]->outputs()[0]);
  return start && start->isBool() && start->toBool() && next && next->isBool() && next->toBool();
}

// For-loops with a constant trip count of at most kMaxUnrolledTrips, inner ones before the loops holding them.
std::vector<Node*> constant_loops(Block* block) {
  std::vector<Node*> loops;
  for (Node* n : block->nodes()) {
    for (Block* b : n->blocks()) {
      auto inner = constant_loops(b);
      loops.insert(loops.end(), inner.begin(), inner.end());
    }
    if (!is_for_loop(n)) continue;
    auto trips = torch::jit::toIValue(n->input(0));
    if (trips && trips->isInt() && trips->toInt() >= 0 && trips->toInt() <= kMaxUnrolledTrips) loops.push_back(n);
  }
  return loops;
}

// Replaces `loop` by `trips` copies of its body in order, each reading its iteration index as a constant and the
// values the previous one carried.
void unroll(torch::jit::Graph& graph, Node* loop, int64_t trips) {
  Block* body = loop->blocks()[0];
  std::vector<Value*> carried(loop->inputs().begin() + 2, loop->inputs().end());
  torch::jit::WithInsertPoint before(loop);
  for (int64_t i = 0; i < trips; ++i) {
    std::unordered_map<Value*, Value*> env{{body->inputs()[0], graph.insertConstant(i)}};
    for (size_t k = 0; k < carried.size(); ++k) env[body->inputs()[k + 1]] = carried[k];
    auto lookup = [&](Value* v) {
      auto it = env.find(v);
      return it == env.end() ? v : it->second;
    };
    for (Node* n : body->nodes()) {
      Node* copy = graph.insertNode(graph.createClone(n, lookup));
      for (size_t o = 0; o < n->outputs().size(); ++o) env[n->output(o)] = copy->output(o);
    }
    for (size_t k = 0; k < carried.size(); ++k) carried[k] = lookup(body->outputs()[k + 1]);
  }
  for (size_t k = 0; k < carried.size(); ++k) loop->output(k)->replaceAllUsesWith(carried[k]);
  loop->destroy();
}

// One round: the run's decisions and fixed lengths become constants, then the loops whose counts are now constant
// are unrolled. Returns (ifs decided, loops unrolled); nullopt when the graph does not run on the example.
std::optional<std::pair<int, int>> decide_once(std::shared_ptr<torch::jit::Graph>& graph,
                                               const torch::jit::Module& module, const std::vector<c10::IValue>& example) {
  Observed seen;
  try {
    seen = observe(graph, module, example);
  } catch (const std::exception&) {
    return std::nullopt;  // the graph as the analysis sees it does not run on this input: the rest stay undecided
  }
  int decided = 0, unrolled = 0;
  const std::vector<Node*> ifs = model::ifs_in(graph->block());
  for (size_t i = 0; i < seen.ifs.size(); ++i) {
    if (seen.ifs[i] < 0 || torch::jit::toIValue(ifs[i]->input(0))) continue;
    model::set_condition(*graph, ifs[i]->input(0), seen.ifs[i] == 1);
    ++decided;
  }
  const std::vector<Node*> lens = fixed_lengths(*graph, graph->block());
  for (size_t i = 0; i < seen.lengths.size(); ++i) {
    if (seen.lengths[i] < 0) continue;
    torch::jit::WithInsertPoint top(graph->block()->nodes().front());
    lens[i]->output()->replaceAllUsesWith(graph->insertConstant(seen.lengths[i]));
  }
  torch::jit::ConstantPropagation(graph);
  fold_range_ops(*graph, graph->block());
  for (Node* loop : constant_loops(graph->block())) {
    unroll(*graph, loop, torch::jit::toIValue(loop->input(0))->toInt());
    ++unrolled;
  }
  fold_range_ops(*graph, graph->block());
  torch::jit::ConstantPropagation(graph);
  torch::jit::EliminateDeadCode(graph);
  return std::make_pair(decided, unrolled);
}

}  // namespace

void inline_calls_except_whole_modules(torch::jit::Graph& graph) {
  while (inline_once(graph.block())) {
  }
}

int decide_branches(std::shared_ptr<torch::jit::Graph>& graph, const torch::jit::Module& module,
                    const std::vector<c10::IValue>& example) {
  if (example.empty()) return 0;
  // Fused fast paths first: what the run then logs follows from the unfused branch (an early return
  // through the fused op would otherwise decide the later `if did_return` the wrong way).
  int decided = model::take_unfused_branches(graph, model::transformer_fused_ops());
  for (int round = 0; round < kMaxUnrollRounds; ++round) {
    auto step = decide_once(graph, module, example);
    if (!step) break;
    decided += step->first + step->second;
    if (!step->second) break;  // nothing unrolled: no new `if` or length to observe
  }
  return decided;
}

}  // namespace lite::prune
