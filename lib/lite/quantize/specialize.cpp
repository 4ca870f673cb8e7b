// Eval specialization before observers, and float regions for branches that still depend on data.
//
// torch::jit::InsertObservers sees every path of a method graph, training-only ones included: torchvision's
// stochastic depth (`if not training or p == 0: return input` else `input * noise`) gives an `if` whose
// branches are observed differently, and the pass fails ("branches for `if` should return values that are
// observed consistently"); PyTorch's own quantize_jit fails the same way. An eval-mode model never takes
// those paths. So when InsertObservers rejects the model as given (the graph quantize_jit sees: models it
// takes are built exactly as PyTorch builds them), every method graph of every module type is specialized
// before observers go in again:
//   1. `prim::GetAttr[name="training"](self)` becomes the constant false (the clone being built is in
//      eval mode, and every instance of a type is, so editing the type's shared graph is right);
//   2. a free function called with that constant (stochastic_depth(input, p, mode, training),
//      F.dropout(..., training)) is inlined, so that the constant reaches its branches (repeated for calls
//      the inlined body makes with it);
//   3. constant propagation folds `not training` and inlines the `if` on it; dead-code elimination drops
//      the training-only branch with its bernoulli_/dropout ops;
//   4. likewise a bool attribute that every instance of the type holds with the same value (inception's
//      `if self.transform_input` in the root's own forward) reads as that constant: freezing, which
//      Finalize does anyway, would fold it the same way. A flag instances differ in (mobilenet's
//      use_res_connect) stays a read, and its `if` a float region (below);
//   5. an optional argument that every call of a submodule's method passes as None reads as None in that method
//      (nn.TransformerEncoder's masks, left at their default by its caller: `src_key_padding_mask is not None`
//      decides whether the layers run on a nested tensor, an `if` that otherwise keeps the whole encoder float).
//      The quantized artifact is frozen, so only forward's own calls exist in it.
// Only calls that receive the constant are inlined: quantization recognizes calls like F.relu by name, and
// the rest of the graph is left exactly as PyTorch's passes expect it.
//
// A branch that depends on data (an `if` on a tensor's value or shape) cannot be specialized away. When
// InsertObservers still rejects an `if`, the module whose method holds it is kept float (a nullopt qconfig
// for its path), named with the source location, and the build is retried: the rest of the model is still
// quantized. A nullopt qconfig alone does not satisfy the pass (the caller observed the value one branch
// passes through, the other branch computes an unobserved one), so each branch's tensor outputs are made
// fresh copies made in that branch (aten::clone): both sides are then unobserved.
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/passes/constant_propagation.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>

#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include "lite/quantize/quantize_internal.hpp"

namespace lite::quantize {

namespace {

// Bool attributes (other than `training`) that every instance of a module type holds with the same value,
// per type: a read of one is a constant of the model (step 4 above).
using UniformFlags = std::map<const c10::ClassType*, std::map<std::string, bool>>;

UniformFlags uniform_flags(const torch::jit::Module& module) {
  std::map<const c10::ClassType*, std::map<std::string, std::optional<bool>>> seen;
  for (const auto& named : module.named_modules()) {
    const auto type = named.value.type();
    auto& flags = seen[type.get()];
    for (size_t i = 0; i < type->numAttributes(); ++i) {
      const std::string& name = type->getAttributeName(i);
      if (name == "training" || type->getAttribute(i)->kind() != c10::TypeKind::BoolType) continue;
      const bool value = named.value.attr(name).toBool();
      auto [it, first] = flags.emplace(name, value);
      if (!first && it->second != value) it->second = std::nullopt;  // instances differ: not a constant
    }
  }
  UniformFlags out;
  for (const auto& [type, flags] : seen)
    for (const auto& [name, value] : flags)
      if (value) out[type][name] = *value;
  return out;
}

// Replaces self.training reads with `false_value` and reads of the type's uniform flags with their value;
// returns whether any was replaced.
bool replace_attribute_reads(torch::jit::Block* block, torch::jit::Value* self, torch::jit::Value* false_value,
                             const std::map<std::string, bool>& flags) {
  bool changed = false;
  for (auto it = block->nodes().begin(); it != block->nodes().end();) {
    torch::jit::Node* n = *it++;
    for (auto* b : n->blocks()) changed = replace_attribute_reads(b, self, false_value, flags) || changed;
    if (n->kind() != c10::prim::GetAttr || n->input(0) != self ||
        n->output()->type()->kind() != c10::TypeKind::BoolType)
      continue;
    const std::string& name = n->s(c10::attr::name);
    auto flag = flags.find(name);
    if (name == "training") {
      n->output()->replaceAllUsesWith(false_value);
    } else if (flag != flags.end()) {
      torch::jit::WithInsertPoint at(n);
      n->output()->replaceAllUsesWith(n->owningGraph()->insertConstant(flag->second));
    } else {
      continue;
    }
    n->destroy();
    changed = true;
  }
  return changed;
}

// The first prim::CallFunction (in any block) that takes `value` as an argument.
torch::jit::Node* call_taking(torch::jit::Block* block, torch::jit::Value* value) {
  for (auto* n : block->nodes()) {
    for (auto* b : n->blocks())
      if (auto* found = call_taking(b, value)) return found;
    if (n->kind() != c10::prim::CallFunction || n->input(0)->node()->kind() != c10::prim::Constant) continue;
    for (size_t i = 1; i < n->inputs().size(); ++i)
      if (n->input(i) == value) return n;
  }
  return nullptr;
}

// Inlines the function call `call` (Inliner's rule for prim::CallFunction); false when it is not a graph
// function (a builtin).
bool inline_function_call(torch::jit::Node* call) {
  auto fn_type = call->input(0)->type()->cast<c10::FunctionType>();
  if (!fn_type) return false;
  torch::jit::GraphFunction* fn = torch::jit::tryToGraphFunction(*fn_type->function());
  if (!fn) return false;
  call->removeInput(0);
  torch::jit::inlineCallTo(call, fn);
  return true;
}

bool specialize_graph(const std::shared_ptr<torch::jit::Graph>& graph, const std::map<std::string, bool>& flags) {
  torch::jit::Value* self = graph->inputs().at(0);
  torch::jit::Node* constant = graph->create(c10::prim::Constant);
  constant->i_(c10::attr::value, 0);  // bool constants hold their value as an int
  constant->output()->setType(c10::BoolType::get());
  graph->block()->prependNode(constant);
  torch::jit::Value* false_value = constant->output();
  if (!replace_attribute_reads(graph->block(), self, false_value, flags)) {
    false_value->node()->destroy();
    return false;
  }
  // Calls inlined into the graph may pass the constant on; 1000 bounds a pathological recursion.
  for (int i = 0; i < 1000; ++i) {
    torch::jit::Node* call = call_taking(graph->block(), false_value);
    if (!call || !inline_function_call(call)) break;
  }
  auto g = graph;
  torch::jit::ConstantPropagation(g);
  torch::jit::EliminateDeadCode(g);
  return true;
}

// "file.py:32" of a node's source range, or "" when it has none.
std::string source_line(const torch::jit::Node* n) {
  // What the node's printed "# file:line:col" comment says: for a loaded model, the original source that
  // generated the serialized code (as InsertObservers' error names it).
  auto range = n->sourceRange();
  if (auto original = range.findSourceRangeThatGenerated()) range = *original;
  auto where = range.file_line_col();
  if (!where) return {};
  return std::get<0>(*where) + ":" + std::to_string(std::get<1>(*where));
}

// Whether `block` holds an `if` at `where`.
bool holds_if_at(torch::jit::Block* block, const std::string& where) {
  for (auto* n : block->nodes()) {
    if (n->kind() == c10::prim::If && source_line(n) == where) return true;
    for (auto* b : n->blocks())
      if (holds_if_at(b, where)) return true;
  }
  return false;
}

// Inlines every call of a graph function in `block` (and its sub-blocks), and the calls those bring in.
void inline_all_calls(torch::jit::Block* block) {
  for (int i = 0; i < 10000; ++i) {  // each round inlines one call; 10000 bounds a pathological graph
    torch::jit::Node* target = nullptr;
    std::function<void(torch::jit::Block*)> find = [&](torch::jit::Block* b) {
      for (auto* n : b->nodes()) {
        if (target) return;
        for (auto* sub : n->blocks()) find(sub);
        if (!target && n->kind() == c10::prim::CallFunction && n->input(0)->type()->cast<c10::FunctionType>())
          target = n;
      }
    };
    find(block);
    if (!target || !inline_function_call(target)) return;
  }
}

// Whether `graph` holds the `if` at `where` once its function calls are inlined, as InsertObservers sees it.
// (The `if` is matched on the inlined copy: a loaded function's own graph carries the source ranges of its
// serialized code, the inlined nodes those of the original file that the error message names.)
bool holds_if_when_inlined(const std::shared_ptr<torch::jit::Graph>& graph, const std::string& where) {
  auto copy = graph->copy();
  inline_all_calls(copy->block());
  return holds_if_at(copy->block(), where);
}

// Every method graph of the module's types, once each (instances of one type share their method graphs).
std::vector<std::shared_ptr<torch::jit::Graph>> method_graphs(const torch::jit::Module& module) {
  std::vector<std::shared_ptr<torch::jit::Graph>> out;
  std::set<const torch::jit::Graph*> seen;
  for (const auto& named : module.named_modules())
    for (const auto& method : named.value.get_methods())
      if (seen.insert(method.graph().get()).second) out.push_back(method.graph());
  return out;
}

// The submodule method graph a prim::CallMethod calls, or null.
std::shared_ptr<torch::jit::Graph> called_graph(const torch::jit::Node* call) {
  auto type = call->input(0)->type()->cast<c10::ClassType>();
  if (!type) return nullptr;
  auto* fn = type->findMethod(call->s(c10::attr::name));
  auto* graph_fn = fn ? torch::jit::tryToGraphFunction(*fn) : nullptr;
  return graph_fn ? graph_fn->graph() : nullptr;
}

// Per called method graph, whether each argument (after self) is None at every call seen: step 5.
using NoneArguments = std::map<const torch::jit::Graph*, std::vector<bool>>;
void collect_none_arguments(torch::jit::Block* block, NoneArguments& out) {
  for (auto* n : block->nodes()) {
    for (auto* b : n->blocks()) collect_none_arguments(b, out);
    if (n->kind() != c10::prim::CallMethod) continue;
    auto callee = called_graph(n);
    if (!callee || callee->inputs().size() != n->inputs().size()) continue;
    auto [it, first] = out.emplace(callee.get(), std::vector<bool>(n->inputs().size(), true));
    for (size_t i = 1; i < n->inputs().size(); ++i)
      it->second[i] = it->second[i] && n->input(i)->type()->kind() == c10::TypeKind::NoneType;
  }
}

// Step 5 on every method graph; returns how many arguments now read as None.
int specialize_none_arguments(const std::vector<std::shared_ptr<torch::jit::Graph>>& graphs) {
  NoneArguments none;
  for (const auto& g : graphs) collect_none_arguments(g->block(), none);
  int replaced = 0;
  for (auto g : graphs) {
    auto it = none.find(g.get());
    if (it == none.end()) continue;
    bool changed = false;
    for (size_t i = 1; i < g->inputs().size(); ++i) {
      torch::jit::Value* arg = g->inputs()[i];
      if (!it->second[i] || !arg->hasUses() || arg->type()->kind() == c10::TypeKind::NoneType) continue;
      torch::jit::WithInsertPoint top(g->block()->nodes().front());
      arg->replaceAllUsesWith(g->insertConstant(c10::IValue()));
      changed = true;
      ++replaced;
    }
    if (changed) {
      torch::jit::ConstantPropagation(g);
      torch::jit::EliminateDeadCode(g);
    }
  }
  return replaced;
}

}  // namespace

int specialize_for_inference(torch::jit::Module& module) {
  int changed = 0;
  const UniformFlags flags = uniform_flags(module);
  const std::map<std::string, bool> no_flags;
  std::set<const torch::jit::Graph*> done;  // instances of one type share their method graphs
  for (const auto& named : module.named_modules()) {
    auto type_flags = flags.find(named.value.type().get());
    for (const auto& method : named.value.get_methods()) {
      auto graph = method.graph();
      if (!done.insert(graph.get()).second) continue;
      changed += specialize_graph(graph, type_flags == flags.end() ? no_flags : type_flags->second) ? 1 : 0;
    }
  }
  // A None that reaches a nested call only once its caller is folded takes another round; 8 bounds the depth.
  const auto graphs = method_graphs(module);
  for (int round = 0; round < 8; ++round) {
    const int replaced = specialize_none_arguments(graphs);
    if (replaced == 0) break;
    changed += replaced;
  }
  return changed;
}

std::string rejected_if_location(const std::string& error) {
  if (error.find("observed consistently") == std::string::npos) return {};
  // The message prints the `if` node, whose source comment reads "# /path/file.py:32:8".
  static const std::regex location(R"(prim::If\([^)]*\)\s*#\s*(\S+?):(\d+):\d+)");
  std::smatch m;
  if (!std::regex_search(error, m, location)) return {};
  return m[1].str() + ":" + m[2].str();
}

namespace {

// Makes every tensor a branch of the region's `if`s returns a copy made in that branch (aten::clone, an op
// quantization neither quantizes nor propagates observation through; x * 1.0 would inherit x's): both
// branches' outputs are then unobserved in a module without qconfig, instead of a pass-through value the
// caller observed on one side and a fresh one on the other.
void fresh_branch_outputs(torch::jit::Block* block) {
  for (auto* n : block->nodes()) {
    for (auto* sub : n->blocks()) fresh_branch_outputs(sub);
    // Every `if` of the region, not only the one at `where`: inlining may have rewritten its source range,
    // and in a float region a copy costs next to nothing.
    if (n->kind() != c10::prim::If) continue;
    for (auto* branch : n->blocks()) {
      auto* graph = branch->owningGraph();
      torch::jit::WithInsertPoint at_end(branch->return_node());
      for (size_t i = 0; i < branch->outputs().size(); ++i) {
        torch::jit::Value* out = branch->outputs()[i];
        if (!out->type()->cast<c10::TensorType>()) continue;
        torch::jit::Value* fresh = graph->insert(c10::aten::clone, {out});
        branch->return_node()->replaceInput(i, fresh);
      }
    }
  }
}

}  // namespace

std::vector<FloatRegion> isolate_if(torch::jit::Module& module, const std::string& where) {
  std::vector<FloatRegion> regions;
  std::set<const torch::jit::Graph*> rewritten;  // instances of one type share their method graphs
  for (const auto& named : module.named_modules()) {
    bool holds = false;
    for (const auto& method : named.value.get_methods()) {
      auto graph = method.graph();
      if (!rewritten.count(graph.get()) && !holds_if_when_inlined(graph, where)) continue;
      holds = true;
      if (!rewritten.insert(graph.get()).second) continue;
      inline_all_calls(graph->block());
      fresh_branch_outputs(graph->block());
    }
    if (holds)
      regions.push_back({named.name, "an `if` on data or on a per-instance attribute (" + where + ")"});
  }
  return regions;
}

}  // namespace lite::quantize
