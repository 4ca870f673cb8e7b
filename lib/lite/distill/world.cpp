// Resolving the world of a data-parallel job from options and torchrun's (or Slurm's) environment (see world.hpp).
// Torch-free.
#include "lite/distill/world.hpp"

#include <fmt/format.h>

#include <cstdlib>

#include "lite/core/error.hpp"
#include "lite/core/options.hpp"

namespace lite::distill {

namespace {

// The whole-number value of an environment variable, or `fallback` when it is unset or empty.
int env_int(const EnvironmentLookup& env, const char* name, int fallback, bool& used) {
  const char* v = env(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(v, &end, 10);
  if (*end != '\0' || errno != 0 || n < 0 || n > 1 << 20)
    throw InputError(name, fmt::format("is '{}', not a whole number", v), "unset it or set it as torchrun does");
  used = true;
  return int(n);
}

// torchrun's variable, else Slurm's for the same fact (srun starts one task per rank and sets SLURM_NTASKS,
// SLURM_PROCID, SLURM_LOCALID): `slurm` says the second was read.
int env_int_or_slurm(const EnvironmentLookup& env, const char* name, const char* slurm_name, int fallback, bool& used,
                     bool& slurm) {
  bool torchrun = false;
  const int value = env_int(env, name, fallback, torchrun);
  if (torchrun) return used = true, value;
  bool from_slurm = false;
  const int s = env_int(env, slurm_name, fallback, from_slurm);
  if (from_slurm) used = slurm = true;
  return s;
}

uint16_t parse_port(const std::string& text, const std::string& key, const std::string& whole) {
  char* end = nullptr;
  errno = 0;
  const long port = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || port < 1 || port > 65535)
    throw OptionError(key, fmt::format("'{}' has no port from 1 to 65535", whole), "write ADDR:PORT, e.g. 10.0.0.1:29500");
  return uint16_t(port);
}

}  // namespace

void parse_master(const std::string& text, std::string& host, uint16_t& port) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0)
    throw OptionError("master", fmt::format("'{}' is not ADDR:PORT", text), "write ADDR:PORT, e.g. 10.0.0.1:29500");
  host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  port = parse_port(text.substr(colon + 1), "master", text);
}

World resolve_world(const DistillOptions& o, const EnvironmentLookup& env) {
  World w;
  w.timeout_s = o.timeout_s;
  bool from_env = false, from_options = false, slurm = false;
  if (o.world_size > 0) {
    w.size = o.world_size;
    from_options = true;
  } else {
    w.size = std::max(1, env_int_or_slurm(env, "WORLD_SIZE", "SLURM_NTASKS", 1, from_env, slurm));
  }
  if (o.rank >= 0) {
    w.rank = o.rank;
    from_options = true;
  } else {
    w.rank = env_int_or_slurm(env, "RANK", "SLURM_PROCID", 0, from_env, slurm);
  }
  w.local_rank = env_int_or_slurm(env, "LOCAL_RANK", "SLURM_LOCALID", w.rank, from_env, slurm);
  if (w.rank >= w.size)
    throw OptionError("rank", fmt::format("is {} but the world has {} process{}", w.rank, w.size, w.size == 1 ? "" : "es"),
                      fmt::format("give each process a rank from 0 to {} (or set {{world_size}})", w.size - 1));
  if (!o.master.empty()) {
    parse_master(o.master, w.host, w.port);
    from_options = true;
  } else if (const char* addr = env("MASTER_ADDR"); addr && *addr) {
    const char* port = env("MASTER_PORT");
    w.host = addr;
    w.port = parse_port(port ? port : "", "master", fmt::format("MASTER_ADDR={} MASTER_PORT={}", addr, port ? port : ""));
    from_env = true;
  } else if (w.size > 1) {
    throw OptionError("master", fmt::format("is needed to join a world of {} processes", w.size),
                      "pass ADDR:PORT where rank 0 listens (or set MASTER_ADDR and MASTER_PORT)");
  }
  if (w.size == 1) w.source = "one process";
  else
    w.source = from_env && from_options ? "options and environment"
               : from_env               ? (slurm ? "environment (Slurm)" : "environment (torchrun)")
                                        : "options";
  return w;
}

}  // namespace lite::distill
