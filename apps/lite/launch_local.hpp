#pragma once
// `lite distill --launch-local N`: the one-machine launcher. lite starts N worker processes of its own
// executable with its own command line, each told its place the way torchrun tells it (WORLD_SIZE, RANK,
// LOCAL_RANK, MASTER_ADDR=127.0.0.1, MASTER_PORT=a free port) plus its share of the threads; it forwards
// SIGINT/SIGTERM to them, waits for every one, and exits with the job's status. Rank 0's output is the
// command's output (the other ranks print only their own error line, if any). Torch-free.
#include <string>

namespace lite::cli {

struct LaunchPlan {
  std::string command;          // the subcommand, for error lines ("distill")
  int workers = 2;
  int threads = 0;              // the whole job's intra-op threads; 0: this machine's cores
  double timeout_s = 300;       // after a worker failed, how long the others get to notice before being killed
};

// Runs the workers to the end; returns the command's exit code: 130/143 when interrupted, else 2 when any
// rank refused its setup, else rank 0's non-zero status, else 1 when another rank failed or died, else 0.
int launch_local(const LaunchPlan& plan);

// In a worker started by launch_local: its thread share replaces `threads` and `launch_local` becomes 0
// (so a --config or command line that holds --launch-local does not launch again). No-op elsewhere.
void adopt_launch_assignment(int& launch_local, int& threads);
bool launched_by_launch_local();

}  // namespace lite::cli
