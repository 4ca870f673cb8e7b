// Observers and the calibration run.
//
// torch::jit::InsertObservers accepts any TorchScript module with forward(x) -> x, calculate_qparams()
// -> (scale, zero_point) and integer attributes dtype and qscheme (and ch_axis per channel). Lite
// builds its own in C++ with define():
//   - the activation observer records nothing until told to: in phase 1 the min and max of every value
//     it sees, in phase 2 a histogram over the range phase 1 found. When the calibration data is one batch
//     (the usual few samples), phase 3 does both in one pass: the histogram of a value over its own range,
//     the same figures as phases 1 and 2 over that batch, for half the forward passes. calculate_qparams returns the scale
//     and zero point that the Calibrator computed with the chosen method and stored on it; so every
//     calibration method is plain C++ over the recorded statistics (calib_<name>.cpp).
//   - the weight observer is PyTorch's min-max observer for int8 weights, symmetric, per output channel
//     (onednn) or per tensor (qnnpack): scale = max|w| / 127.5, zero point 0.
#include <ATen/core/qualified_name.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/model/inputs.hpp"
#include "lite/model/torch_errors.hpp"
#include "lite/quantize/quantize_internal.hpp"

namespace lite::quantize {

namespace {

constexpr int64_t kQUInt8 = 13, kQInt8 = 12;
constexpr int64_t kPerTensorAffine = 0, kPerTensorSymmetric = 2, kPerChannelSymmetric = 3;

const char* kActivationSource = R"JIT(
def forward(self, x: Tensor) -> Tensor:
    if self.phase == 1:
        y = x.detach().float()
        if y.numel() > 0:
            mn, mx = torch.aminmax(y)
            if self.seen:
                self.min_val = torch.min(self.min_val, mn)
                self.max_val = torch.max(self.max_val, mx)
            else:
                self.min_val = mn
                self.max_val = mx
                self.seen = True
    elif self.phase == 2:
        y = x.detach().float()
        if y.numel() > 0:
            self.hist = self.hist + torch.histc(y, self.bins, self.hist_lo, self.hist_hi).double()
    elif self.phase == 3:
        y = x.detach().float()
        if y.numel() > 0:
            mn, mx = torch.aminmax(y)
            self.calls += 1
            self.min_val = mn
            self.max_val = mx
            self.seen = True
            lo = min(float(mn), 0.0)
            hi = max(float(mx), 0.0)
            if not hi > lo:
                hi = lo + 1.0
            self.hist_lo = lo
            self.hist_hi = hi
            self.hist = torch.histc(y, self.bins, lo, hi).double()
    return x

def calculate_qparams(self) -> Tuple[Tensor, Tensor]:
    return self.scale, self.zero_point
)JIT";

const char* kWeightSource = R"JIT(
def forward(self, x: Tensor) -> Tensor:
    y = x.detach().float()
    if self.per_channel:
        y = y.flatten(1)
        self.min_val = torch.amin(y, 1)
        self.max_val = torch.amax(y, 1)
    else:
        self.min_val = torch.min(y)
        self.max_val = torch.max(y)
    return x

def calculate_qparams(self) -> Tuple[Tensor, Tensor]:
    min_neg = torch.clamp(self.min_val, max=0.0)
    max_pos = torch.clamp(self.max_val, min=0.0)
    amax = torch.max(-min_neg, max_pos)
    scale = torch.clamp(amax / 127.5, min=1.1920928955078125e-07)
    zero_point = torch.zeros(scale.size(), dtype=4)
    return scale, zero_point
)JIT";

bool is_activation_observer(const torch::jit::Module& m) { return m.hasattr("lite_activation_observer"); }

// Calls visit(owner, method, call, child) for every forward call of a child module of `owner`
// (prim::CallMethod on a prim::GetAttr of self), in every method of every module of `observed` and in
// every block (observers of values used in an `if` or a loop sit in that block).
using ChildCallVisitor = std::function<void(const torch::jit::NameModule& owner, const torch::jit::Method& method,
                                            torch::jit::Node* call, const torch::jit::Module& child)>;
void for_each_child_call(const torch::jit::Module& observed, const ChildCallVisitor& visit) {
  for (const auto& named : observed.named_modules()) {
    const auto& owner = named.value;
    // Every method: observers sit in helper methods too (resnet's _forward_impl).
    for (const auto& method : owner.get_methods()) {
      auto graph = method.graph();
      torch::jit::Value* self = graph->inputs().at(0);
      std::function<void(torch::jit::Block*)> walk = [&](torch::jit::Block* block) {
        for (auto* n : block->nodes()) {
          for (auto* b : n->blocks()) walk(b);
          if (n->kind() != c10::prim::CallMethod || n->s(c10::attr::name) != "forward") continue;
          auto* obj = n->input(0)->node();
          if (obj->kind() != c10::prim::GetAttr || obj->input(0) != self) continue;
          auto child = owner.attr(obj->s(c10::attr::name));
          if (child.isModule()) visit(named, method, n, child.toModule());
        }
      };
      walk(graph->block());
    }
  }
}

// The name part of an observed value's key. Values of the method's top-level block keep their debug
// name, which is the same in every build. Inside an `if` or a loop, InsertObservers (PyTorch 1.13)
// renames a variable in a different order on each build (y.2 in one, y.6 in the next), so such a
// value is named by where the source computes it: "y@3:12" (line:column of the producing expression).
std::string value_name(const torch::jit::Value* v) {
  const torch::jit::Node* producer = v->node();
  // A copy: sourceRange() returns by value, so a reference to its source() dangles (ASan: stack-use-after-scope).
  const std::shared_ptr<torch::jit::Source> source = producer->sourceRange().source();
  if (producer->owningBlock() == v->owningGraph()->block() || producer->kind() == c10::prim::Param || !source)
    return v->debugName();
  const size_t offset = producer->sourceRange().start();
  const size_t line = source->lineno_for_offset(offset);
  const std::string base = v->hasDebugName() ? v->debugNameBase() : "";
  return base + "@" + std::to_string(line + 1) + ":" + std::to_string(offset - source->offset_for_line(line) + 1);
}

// Activation observers of an observed module, each with the key of the value it observes:
// "<module path>:<value name>", found from the prim::CallMethod that calls it. Two values computed by
// the same expression (an inlined function called twice) get "#2", "#3", ... in graph order.
std::vector<std::pair<std::string, torch::jit::Module>> activation_observers(const torch::jit::Module& observed) {
  std::vector<std::pair<std::string, torch::jit::Module>> found;
  // Instances of one module class share its method graphs, so a value is identified by the module
  // path and method it is seen in as well as by the graph value.
  std::set<std::pair<std::string, const torch::jit::Value*>> seen;
  std::map<std::string, int> uses;
  for_each_child_call(observed, [&](const torch::jit::NameModule& owner, const torch::jit::Method& method,
                                    torch::jit::Node* call, const torch::jit::Module& child) {
    if (!is_activation_observer(child)) return;
    const torch::jit::Value* value = call->input(1);
    const std::string scope = owner.name + ":" + (method.name() == "forward" ? "" : method.name() + "/");
    if (!seen.emplace(scope, value).second) return;  // one entry per observed value
    std::string key = scope + value_name(value);
    if (int n = ++uses[key]; n > 1) key += "#" + std::to_string(n);
    found.emplace_back(key, child);
  });
  return found;
}

// Runs every weight observer on the weight it observes (prim::GetAttr of the owning module), so that
// weights get their qparams even when no calibration pass runs (statistics reused from an earlier
// build or from --calib-stats).
void run_weight_observers(const torch::jit::Module& observed) {
  torch::NoGradGuard no_grad;
  for_each_child_call(observed, [&](const torch::jit::NameModule& owner, const torch::jit::Method& method,
                                    torch::jit::Node* call, const torch::jit::Module& child) {
    if (!child.hasattr("per_channel")) return;
    auto* w = call->input(1)->node();
    if (w->kind() != c10::prim::GetAttr || w->input(0) != method.graph()->inputs().at(0)) return;
    auto weight = owner.value.attr(w->s(c10::attr::name));
    if (weight.isTensor()) torch::jit::Module(child).forward({weight});
  });
}

// What an activation observer recorded: its range, and its histogram when `histogram`.
ObservedStats recorded(const torch::jit::Module& obs, bool histogram) {
  ObservedStats s;
  if (obs.attr("seen").toBool()) {
    s.min = obs.attr("min_val").toTensor().item<double>();
    s.max = obs.attr("max_val").toTensor().item<double>();
  }
  if (histogram) {
    auto hist = obs.attr("hist").toTensor().contiguous();
    s.histogram.lo = obs.attr("hist_lo").toDouble();
    s.histogram.hi = obs.attr("hist_hi").toDouble();
    s.histogram.counts.assign(hist.data_ptr<double>(), hist.data_ptr<double>() + hist.numel());
  }
  return s;
}

}  // namespace

torch::jit::Module make_activation_observer() {
  torch::jit::Module m{c10::QualifiedName("__torch__.lite.ActivationObserver")};
  m.register_attribute("dtype", c10::IntType::get(), kQUInt8);
  m.register_attribute("qscheme", c10::IntType::get(), kPerTensorAffine);
  m.register_attribute("lite_activation_observer", c10::BoolType::get(), true);
  m.register_attribute("phase", c10::IntType::get(), int64_t{0});
  m.register_attribute("seen", c10::BoolType::get(), false);
  m.register_attribute("calls", c10::IntType::get(), int64_t{0});  // phase 3 calls
  m.register_attribute("bins", c10::IntType::get(), int64_t{kHistogramBins});
  m.register_attribute("hist_lo", c10::FloatType::get(), 0.0);
  m.register_attribute("hist_hi", c10::FloatType::get(), 1.0);
  m.register_buffer("min_val", torch::zeros({}));
  m.register_buffer("max_val", torch::zeros({}));
  m.register_buffer("hist", torch::zeros({kHistogramBins}, torch::kFloat64));
  m.register_buffer("scale", torch::ones({1}));
  m.register_buffer("zero_point", torch::zeros({1}, torch::kInt64));
  m.define(kActivationSource);
  m.eval();
  return m;
}

torch::jit::Module make_weight_observer(bool per_channel) {
  torch::jit::Module m{
      c10::QualifiedName(per_channel ? "__torch__.lite.PerChannelWeightObserver" : "__torch__.lite.WeightObserver")};
  m.register_attribute("dtype", c10::IntType::get(), kQInt8);
  m.register_attribute("qscheme", c10::IntType::get(), per_channel ? kPerChannelSymmetric : kPerTensorSymmetric);
  m.register_attribute("ch_axis", c10::IntType::get(), int64_t{0});
  m.register_attribute("per_channel", c10::BoolType::get(), per_channel);
  m.register_buffer("min_val", torch::zeros({}));
  m.register_buffer("max_val", torch::zeros({}));
  m.define(kWeightSource);
  m.eval();
  return m;
}

Calibrator::Calibrator(const model::Dataset* data, int64_t batch, const CalibMethodEntry& method,
                       std::filesystem::path model_path, Progress& progress)
    : data_(data),
      batch_(batch),
      method_(method),
      model_path_(std::move(model_path)),
      progress_(progress) {
  if (batch_ < 1) throw InternalError("Calibrator needs a batch of at least 1 sample");  // else no progress
}

void Calibrator::preload(CalibrationStats stats) { stats_ = std::move(stats); }

void Calibrator::run_data(torch::jit::Module& observed, const char* phase) {
  torch::NoGradGuard no_grad;
  // An observed module runs a few batches, once per pass: the profiling executor would instrument the first
  // calls and then optimize the whole graph (every observer call inlined) for nothing. The plain plan runs
  // the graph as it is: the same ops, so the same statistics.
  torch::jit::GraphOptimizerEnabledGuard plain(false);
  ProgressPhase bar(progress_, phase, static_cast<uint64_t>(data_->size()));
  for (int64_t begin = 0; begin < data_->size(); begin += batch_) {
    throw_if_interrupted();
    const auto inputs = model::batch_inputs(*data_, begin, batch_);
    const torch::Tensor& x = inputs.front();
    try {
      observed.forward(std::vector<c10::IValue>(inputs.begin(), inputs.end()));
    } catch (const std::exception& e) {
      throw InputError(data_->source.string(),
                       "calibration samples of shape " + c10::str(x.sizes()) + (inputs.size() > 1 ? " (and more inputs)" : "") +
                           " do not fit " + model_path_.string() +
                           ": " + model::torch_error_reason(e),
                       "pass calibration data shaped like the model's input");
    }
    bar.advance(static_cast<uint64_t>(x.size(0)));
  }
  ++passes_;
}

void Calibrator::calibrate(torch::jit::Module& observed) {
  run_weight_observers(observed);
  auto observers = activation_observers(observed);
  // Every observer InsertObservers placed must have been found: one left out would quantize its value
  // with the default scale of 1.
  size_t placed = 0;
  for (const auto& named : observed.named_modules()) placed += is_activation_observer(named.value);
  if (placed != observers.size())
    throw InternalError("calibration found " + std::to_string(observers.size()) + " of the " + std::to_string(placed) +
                        " activation observers in the model");
  // Only values no earlier build (or --calib-stats) observed need a pass over the data.
  std::vector<std::pair<std::string, torch::jit::Module>> missing;
  for (const auto& [key, obs] : observers) {
    auto it = stats_.values.find(key);
    if (it == stats_.values.end() || (method_.needs_histogram && it->second.histogram.counts.empty()))
      missing.emplace_back(key, obs);
  }
  if (!missing.empty()) {
    if (!data_)
      throw InputError(stats_.source.empty() ? model_path_.string() : stats_.source,
                       "the calibration statistics do not cover every value this model observes",
                       "pass {calib} FILE to calibrate");
    auto todo = missing;
    if (method_.needs_histogram && data_->size() <= batch_) {
      // One batch: ranges and histograms in one pass (phase 3), the figures of phases 1 and 2. An observer
      // called more than once in the pass (a value inside a loop) saw several tensors: it takes two passes.
      for (auto& [key, obs] : todo) obs.setattr("phase", int64_t{3});
      run_data(observed, "calibrating");
      std::vector<std::pair<std::string, torch::jit::Module>> again;
      for (auto& [key, obs] : todo) {
        if (obs.attr("calls").toInt() <= 1) {
          stats_.values[key] = recorded(obs, true);
          continue;
        }
        obs.setattr("seen", false);
        obs.setattr("hist", torch::zeros({kHistogramBins}, torch::kFloat64));
        again.emplace_back(key, obs);
      }
      todo = std::move(again);
    }
    if (!todo.empty()) {
      // Phase 1: min and max of every observed value.
      for (auto& [key, obs] : todo) obs.setattr("phase", int64_t{1});
      run_data(observed, "calibrating (ranges)");
      for (auto& [key, obs] : todo) {
        ObservedStats s = recorded(obs, false);
        stats_.values[key] = s;
        // The histogram spans the range with zero in it; a constant value gets a unit-wide range.
        double lo = std::min(s.min, 0.0), hi = std::max(s.max, 0.0);
        if (!(hi > lo)) hi = lo + 1;
        obs.setattr("hist_lo", lo);
        obs.setattr("hist_hi", hi);
        obs.setattr("phase", int64_t{method_.needs_histogram ? 2 : 0});
      }
      // Phase 2: histograms over those ranges (not needed by min-max).
      if (method_.needs_histogram) {
        run_data(observed, "calibrating (histograms)");
        for (auto& [key, obs] : todo) stats_.values[key] = recorded(obs, true);
      }
    }
    stats_.samples = data_->size();
    stats_.source = data_->source.string();
  }
  for (auto& [key, obs] : observers) {
    obs.setattr("phase", int64_t{0});
    const ObservedStats& s = stats_.values.at(key);
    Range r = method_.range(s);
    QParams q = affine_qparams(r);
    obs.setattr("scale", torch::tensor({q.scale}, torch::kFloat32));
    obs.setattr("zero_point", torch::tensor({q.zero_point}, torch::kInt64));
  }
}

}  // namespace lite::quantize
