// The subcommand table (see command.hpp): names and one-line summaries, and which side runs each.
#include "command.hpp"

namespace lite::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"profile", "Measure latency, throughput, memory and per-op cost of a TorchScript model; compare two", true},
      {"quantize", "Quantize a TorchScript model (int8 static/dynamic, fp16, bf16, weight-only) and prove the gain",
       true},
      {"prune", "Prune channels or weights of a TorchScript model", true},
      {"distill", "Distill a TorchScript teacher into a smaller student", true},
      {"cache-sim", "Replay a request trace through cache policies and sizes; recommend a size", false},
      {"run", "Run a recipe (steps in order, then CI gates); exit 1 when a gate fails", true},
  };
  return table;
}

const Command* find_command(std::string_view name) {
  for (const auto& c : commands())
    if (name == c.name) return &c;
  return nullptr;
}

}  // namespace lite::cli
