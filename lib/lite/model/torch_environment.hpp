#pragma once
// LibTorch facts and settings, behind a torch-free header so the CLI needs no torch includes.
#include <string>
#include <vector>

#include "lite/core/environment.hpp"
#include "lite/core/report.hpp"

namespace lite {

std::string libtorch_version();

// Adds libtorch version, thread counts and the quantized engine to `env`.
void add_torch_environment(Environment& env);
// This machine with libtorch's facts, read once per process: what a mode's CPU rule (Scheme::cpu_problem) judges
// (CPU features and oneDNN's ISA do not change while it runs; the thread counts are the first call's).
const Environment& cpu_rule_environment();
// A torch verb's report, opened: its command, this machine's environment with libtorch's facts, and its result
// record (everything --json prints); the verb adds its tables, findings and notes.
report::Report torch_verb_report(const std::string& command, nlohmann::json result);

// Quantized engines this libtorch supports, e.g. {"onednn", "qnnpack"}.
std::vector<std::string> quantized_engines();
// Selects the quantized engine by name; throws UsageError (with the known names) for an unknown one.
void select_quantized_engine(const std::string& name);
std::string current_quantized_engine();

// Sets intra-op threads; 0 keeps libtorch's default. Throws UsageError for negative values.
void set_intra_op_threads(int threads);

// While alive, intra-op threads are raised to every core (std::thread::hardware_concurrency) unless
// `pinned` (the user chose a thread count): work whose figures do not depend on the thread count
// (calibration, quality evaluation) then runs on all cores, and latency is still timed with the count the
// report states. Restores the previous count.
class AllCoresForWork {
 public:
  explicit AllCoresForWork(bool pinned);
  ~AllCoresForWork();
  AllCoresForWork(const AllCoresForWork&) = delete;
  AllCoresForWork& operator=(const AllCoresForWork&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace lite
