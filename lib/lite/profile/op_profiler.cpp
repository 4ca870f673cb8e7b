#include "lite/profile/op_profiler.hpp"

#include <ATen/record_function.h>
#include <torch/csrc/jit/runtime/interpreter.h>

#include <algorithm>
#include <chrono>
#include <map>

#include "lite/core/atomic_file.hpp"
#include "lite/model/facts.hpp"

namespace lite::profile {

// The recorder's records live in a named namespace: OpRecorder::State (a member of a class with external
// linkage) holds them, and types from an anonymous namespace there would be -Wsubobject-linkage errors.
namespace op_records {
inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Totals {
  int64_t calls = 0;
  int64_t self_ns = 0;
  int64_t total_ns = 0;
};

struct Frame {
  std::string name;
  std::string module;
  int64_t start_ns = 0;
  int64_t child_ns = 0;
};

struct Event {
  std::string name, module;
  int64_t start_ns, dur_ns;
  int depth;
};
}  // namespace op_records
using namespace op_records;

struct OpRecorder::State {
  bool keep_events = false;
  std::vector<Frame> stack;
  std::map<std::string, Totals> by_op, by_module;
  std::vector<Event> events;
  int64_t origin_ns = now_ns();
};

namespace {
thread_local OpRecorder::State* t_state = nullptr;

std::string op_label(const at::RecordFunction& fn) {
  std::string name = fn.name();
  // TorchScript function frames ("forward") measure interpreter overhead between operators.
  if (fn.scope() == at::RecordScope::TORCHSCRIPT_FUNCTION) return "torchscript::" + name;
  return name;
}
}  // namespace

OpRecorder::OpRecorder(bool keep_events) : state_(std::make_unique<State>()) {
  state_->keep_events = keep_events;
  t_state = state_.get();
  handle_ = at::addThreadLocalCallback(at::RecordFunctionCallback(
      [](const at::RecordFunction& fn) -> std::unique_ptr<at::ObserverContext> {
        if (!t_state) return nullptr;
        Frame f;
        f.name = op_label(fn);
        auto [path, type] = model::module_from_hierarchy(torch::jit::currentModuleHierarchy());
        f.module = path.empty() ? "(top level)" : path + " (" + type + ")";
        f.start_ns = now_ns();
        t_state->stack.push_back(std::move(f));
        return nullptr;
      },
      [](const at::RecordFunction&, at::ObserverContext*) {
        if (!t_state || t_state->stack.empty()) return;
        int64_t end = now_ns();
        Frame f = std::move(t_state->stack.back());
        t_state->stack.pop_back();
        int64_t dur = end - f.start_ns;
        int64_t self = std::max<int64_t>(0, dur - f.child_ns);
        if (!t_state->stack.empty()) t_state->stack.back().child_ns += dur;
        auto& op = t_state->by_op[f.name];
        op.calls++;
        op.self_ns += self;
        op.total_ns += dur;
        auto& mod = t_state->by_module[f.module];
        mod.calls++;
        mod.self_ns += self;
        // Inclusive time counts once per outermost op of the module, not again for its nested ops.
        if (t_state->stack.empty() || t_state->stack.back().module != f.module) mod.total_ns += dur;
        if (t_state->keep_events)
          t_state->events.push_back({f.name, f.module, f.start_ns - t_state->origin_ns, dur,
                                     static_cast<int>(t_state->stack.size())});
      }));
}

OpRecorder::~OpRecorder() {
  at::removeCallback(handle_);
  t_state = nullptr;
}

OpProfile OpRecorder::summarize(int iterations, double forward_ms, int top) const {
  OpProfile p;
  p.iterations = iterations;
  p.forward_ms = forward_ms;
  double n = std::max(1, iterations);
  auto convert = [&](const std::map<std::string, Totals>& totals) {
    std::vector<OpStat> rows;
    double self_sum = 0;
    for (const auto& [name, t] : totals) self_sum += t.self_ns;
    for (const auto& [name, t] : totals) {
      OpStat s;
      s.name = name;
      s.calls = static_cast<int64_t>(std::llround(t.calls / n));
      s.self_ms = t.self_ns / 1e6 / n;
      s.total_ms = t.total_ns / 1e6 / n;
      s.share = self_sum > 0 ? t.self_ns / self_sum : 0;
      rows.push_back(std::move(s));
    }
    std::sort(rows.begin(), rows.end(), [](const OpStat& a, const OpStat& b) { return a.self_ms > b.self_ms; });
    if (top > 0 && rows.size() > static_cast<size_t>(top)) rows.resize(top);
    return rows;
  };
  p.by_op = convert(state_->by_op);
  p.by_module = convert(state_->by_module);
  return p;
}

void OpRecorder::write_chrome_trace(const std::filesystem::path& path) const {
  nlohmann::json events = nlohmann::json::array();
  for (const auto& e : state_->events)
    events.push_back({{"name", e.name},
                      {"cat", e.name.rfind("torchscript::", 0) == 0 ? "torchscript" : "op"},
                      {"ph", "X"},
                      {"ts", e.start_ns / 1000.0},
                      {"dur", e.dur_ns / 1000.0},
                      {"pid", 1},
                      {"tid", 1},
                      {"args", {{"module", e.module}, {"depth", e.depth}}}});
  nlohmann::json doc{{"traceEvents", events}, {"displayTimeUnit", "ms"}};
  write_file_atomically(path, doc.dump());
}

}  // namespace lite::profile
