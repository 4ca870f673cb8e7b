// The world of a data-parallel run: options win over torchrun's environment, which wins over one process;
// bad values are refused by key (or by the variable's name); the data-parallel option rules; and the
// steps-per-epoch rule that keeps at least two samples per rank in the last batch.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "lite/core/error.hpp"
#include "lite/core/options.hpp"
#include "lite/distill/trainer.hpp"
#include "lite/distill/world.hpp"

using lite::distill::DistillOptions;
using lite::distill::resolve_world;

namespace {

struct FakeEnvironment {
  std::map<std::string, std::string> vars;
  lite::distill::EnvironmentLookup lookup() const {
    return [this](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

std::string rejected_key(const DistillOptions& o, const FakeEnvironment& env = {}) {
  try {
    resolve_world(o, env.lookup());
  } catch (const lite::OptionError& e) {
    return e.key();
  }
  return "";
}

DistillOptions valid() {
  DistillOptions o;
  o.teacher = "t.pt";
  o.student = "s.pt";
  o.data = "d.pt";
  return o;
}

}  // namespace

TEST_CASE("no options and no environment: one process") {
  auto w = resolve_world(DistillOptions{}, FakeEnvironment{}.lookup());
  CHECK(w.size == 1);
  CHECK(w.rank == 0);
  CHECK_FALSE(w.distributed());
  CHECK(w.source == "one process");
}

TEST_CASE("torchrun's variables describe the world, options override them one by one") {
  FakeEnvironment env{{{"WORLD_SIZE", "4"}, {"RANK", "3"}, {"LOCAL_RANK", "1"}, {"MASTER_ADDR", "10.0.0.1"},
                       {"MASTER_PORT", "29501"}}};
  auto w = resolve_world(DistillOptions{}, env.lookup());
  CHECK(w.size == 4);
  CHECK(w.rank == 3);
  CHECK(w.local_rank == 1);
  CHECK(w.master() == "10.0.0.1:29501");
  CHECK(w.source == "environment (torchrun)");

  DistillOptions o;
  o.rank = 2;
  o.master = "[::1]:1234";
  w = resolve_world(o, env.lookup());
  CHECK(w.size == 4);
  CHECK(w.rank == 2);
  CHECK(w.host == "::1");
  CHECK(w.port == 1234);
  CHECK(w.source == "options and environment");
}

TEST_CASE("Slurm's task variables stand in where torchrun's are absent, and torchrun's win where both are set") {
  FakeEnvironment slurm{{{"SLURM_NTASKS", "4"}, {"SLURM_PROCID", "2"}, {"SLURM_LOCALID", "0"},
                         {"MASTER_ADDR", "node01"}, {"MASTER_PORT", "29500"}}};
  auto w = resolve_world(DistillOptions{}, slurm.lookup());
  CHECK(w.size == 4);
  CHECK(w.rank == 2);
  CHECK(w.local_rank == 0);
  CHECK(w.master() == "node01:29500");
  CHECK(w.source == "environment (Slurm)");
  slurm.vars["WORLD_SIZE"] = "2";
  slurm.vars["RANK"] = "1";
  slurm.vars["LOCAL_RANK"] = "1";
  w = resolve_world(DistillOptions{}, slurm.lookup());
  CHECK(w.size == 2);
  CHECK(w.rank == 1);
  CHECK(w.local_rank == 1);
  CHECK(w.source == "environment (torchrun)");
  CHECK(rejected_key(DistillOptions{}, FakeEnvironment{{{"SLURM_NTASKS", "2"}, {"SLURM_PROCID", "0"}}}) == "master");
}

TEST_CASE("bad worlds are refused by key or by variable") {
  DistillOptions o;
  o.world_size = 2;
  CHECK(rejected_key(o) == "master");  // several processes need a rendezvous address
  o.master = "127.0.0.1";
  CHECK(rejected_key(o) == "master");  // no port
  o.master = "127.0.0.1:70000";
  CHECK(rejected_key(o) == "master");
  o.master = "127.0.0.1:29500";
  CHECK(rejected_key(o).empty());
  FakeEnvironment env{{{"RANK", "5"}}};
  CHECK(rejected_key(o, env) == "rank");  // RANK beyond the world size

  FakeEnvironment junk{{{"WORLD_SIZE", "two"}}};
  try {
    resolve_world(DistillOptions{}, junk.lookup());
    FAIL("WORLD_SIZE=two was accepted");
  } catch (const lite::InputError& e) {
    CHECK(std::string(e.what()).find("WORLD_SIZE") != std::string::npos);
  }
  FakeEnvironment no_port{{{"WORLD_SIZE", "2"}, {"MASTER_ADDR", "h"}}};
  CHECK(rejected_key(DistillOptions{}, no_port) == "master");
}

TEST_CASE("data-parallel option rules") {
  auto key = [](const DistillOptions& o) -> std::string {
    try {
      lite::distill::validate(o);
    } catch (const lite::OptionError& e) {
      return e.key();
    }
    return "";
  };
  DistillOptions o = valid();
  CHECK(key(o).empty());
  o.world_size = 2;
  o.rank = 2;
  CHECK(key(o) == "rank");
  o = valid();
  o.timeout_s = 0;
  CHECK(key(o) == "timeout_s");
  o = valid();
  o.bucket_mb = -1;
  CHECK(key(o) == "bucket_mb");
  o = valid();
  o.launch_local = 2;
  CHECK(key(o).empty());
  o.master = "127.0.0.1:1";
  CHECK(key(o) == "launch_local");  // the launcher picks the world itself
  o = valid();
  o.launch_local = 65;
  CHECK(key(o) == "launch_local");
}

TEST_CASE("the last batch keeps at least min_last samples (2 per rank)") {
  using lite::distill::steps_per_epoch;
  CHECK(steps_per_epoch(65, 64) == 1);       // one process: a single-sample tail joins the batch before
  CHECK(steps_per_epoch(66, 64) == 2);
  CHECK(steps_per_epoch(67, 64, 4) == 1);    // two ranks: a tail of 3 would leave one rank 1 sample
  CHECK(steps_per_epoch(68, 64, 4) == 2);
  CHECK(steps_per_epoch(128, 64, 4) == 2);
  CHECK(steps_per_epoch(3, 64, 4) == 1);
}
