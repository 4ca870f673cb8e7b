#pragma once
// Who takes part in a data-parallel lite distill job: world size, this process's rank, and where rank 0
// hosts the rendezvous. Options set explicitly win; unset ones come from the variables torchrun (and most
// job schedulers) export: WORLD_SIZE, RANK, LOCAL_RANK, MASTER_ADDR, MASTER_PORT; with neither, the job is
// one process. Torch-free, so the CLI resolves the world (rank 0 prints, the others stay quiet) before
// anything loads, and an environment lookup can be injected in tests.
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>

#include "lite/distill/options.hpp"

namespace lite::distill {

struct World {
  int size = 1;
  int rank = 0;
  int local_rank = 0;        // rank among the processes of this machine (LOCAL_RANK; informative)
  std::string host;          // rendezvous host (rank 0's machine)
  uint16_t port = 0;
  double timeout_s = 300;
  std::string source;        // "one process", "options", "environment (torchrun)", "environment (Slurm)", or "options and environment"
  bool distributed() const { return size > 1; }
  std::string master() const { return host + ":" + std::to_string(port); }
};

using EnvironmentLookup = std::function<const char*(const char*)>;

// Throws OptionError (keyed by world_size, rank or master) or InputError (naming the environment variable)
// for values that cannot describe a job.
World resolve_world(const DistillOptions& o, const EnvironmentLookup& env = [](const char* name) {
  return static_cast<const char*>(std::getenv(name));
});

// "ADDR:PORT" (ADDR may be a bracketed IPv6 address) -> host and port; throws OptionError keyed by master.
void parse_master(const std::string& text, std::string& host, uint16_t& port);

}  // namespace lite::distill
