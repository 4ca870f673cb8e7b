// The --launch-local launcher (see launch_local.hpp). fork + execve of /proc/self/exe with the process's own
// /proc/self/cmdline, so a worker is exactly the command the user typed plus its place in the job; each
// worker gets its own process group (a terminal's Ctrl-C reaches only the launcher, which forwards it once:
// a worker that received it twice would die at once instead of stopping after the agreed step) and
// PR_SET_PDEATHSIG, so workers never outlive a launcher that was killed. The launcher polls waitpid
// rather than blocking, so that it can forward signals and enforce the timeout: after a worker failed,
// the others get the timeout (plus a grace) to notice through their collectives and end; then they are
// killed. Never a hang.
#include "launch_local.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "error_line.hpp"
#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"

extern char** environ;

namespace lite::cli {

namespace {

constexpr const char* kThreadsVariable = "LITE_DISTILL_WORKER_THREADS";

// The workers' pids, for the interrupt watchdog: if the launcher is still waiting when it ends the process (a
// worker ignored the forwarded signal), it kills them rather than leaving them orphaned.
constexpr int kMaxTrackedWorkers = 256;
pid_t g_worker_pids[kMaxTrackedWorkers] = {};

void kill_workers() {
  for (pid_t pid : g_worker_pids)
    if (pid > 0) ::kill(pid, SIGKILL);
}

std::vector<std::string> own_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  std::string cur;
  for (char c : all) {
    if (c == '\0') {
      args.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) args.push_back(cur);
  if (args.empty()) throw InternalError("cannot read this process's command line from /proc/self/cmdline");
  return args;
}

// A port the kernel just handed out on loopback (closed again; rank 0 binds it a moment later).
uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw InternalError(std::string("cannot open a socket to find a free port: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    throw InternalError(std::string("cannot find a free loopback port: ") + std::strerror(errno));
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

// The environment of worker `rank`: this process's, with the job's variables replaced.
std::vector<std::string> worker_environment(int rank, const LaunchPlan& plan, uint16_t port, int threads) {
  static const char* replaced[] = {"WORLD_SIZE=", "RANK=", "LOCAL_RANK=", "LOCAL_WORLD_SIZE=", "MASTER_ADDR=",
                                   "MASTER_PORT=", "LITE_DISTILL_WORKER_THREADS="};
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    bool keep = true;
    for (const char* r : replaced) keep = keep && std::strncmp(*e, r, std::strlen(r)) != 0;
    if (keep) env.emplace_back(*e);
  }
  env.push_back("WORLD_SIZE=" + std::to_string(plan.workers));
  env.push_back("LOCAL_WORLD_SIZE=" + std::to_string(plan.workers));
  env.push_back("RANK=" + std::to_string(rank));
  env.push_back("LOCAL_RANK=" + std::to_string(rank));
  env.push_back("MASTER_ADDR=127.0.0.1");
  env.push_back("MASTER_PORT=" + std::to_string(port));
  env.push_back(std::string(kThreadsVariable) + "=" + std::to_string(threads));
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

struct Worker {
  pid_t pid = -1;
  bool running = true;
  int status = 0;           // waitpid's
  bool killed_by_launcher = false;
};

int exit_code_of(const Worker& w) {
  if (WIFEXITED(w.status)) return WEXITSTATUS(w.status);
  return exit_check_failed;  // died by a signal
}

}  // namespace

bool launched_by_launch_local() {
  const char* v = std::getenv(kThreadsVariable);
  return v && *v;
}

void adopt_launch_assignment(int& launch_local, int& threads) {
  const char* v = std::getenv(kThreadsVariable);
  if (!v || !*v) return;
  launch_local = 0;
  threads = std::max(1, std::atoi(v));
}

int launch_local(const LaunchPlan& plan) {
  auto args = own_command_line();
  char exe[4096] = {};
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) throw InternalError("cannot find this executable through /proc/self/exe");
  const int total = plan.threads > 0 ? plan.threads : int(std::max(1u, std::thread::hardware_concurrency()));
  const int threads = std::max(1, total / plan.workers);
  const uint16_t port = free_port();
  const pid_t launcher = ::getpid();

  std::vector<Worker> workers(size_t(plan.workers));
  for (int r = 0; r < plan.workers; ++r) {
    auto env = worker_environment(r, plan, port, threads);
    auto argv = pointers(args);
    auto envp = pointers(env);
    const pid_t pid = ::fork();
    if (pid < 0) {
      for (auto& w : workers)
        if (w.pid > 0) ::kill(w.pid, SIGKILL);
      throw InternalError(std::string("cannot start a worker process: ") + std::strerror(errno));
    }
    if (pid == 0) {  // the worker: only async-signal-safe calls until execve
      ::setpgid(0, 0);
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (::getppid() != launcher) ::_exit(exit_internal);
      ::execve(exe, argv.data(), envp.data());
      ::_exit(exit_internal);
    }
    workers[size_t(r)].pid = pid;
    if (r < kMaxTrackedWorkers) g_worker_pids[r] = pid;
  }
  // Workers end within their own watchdog's 1 s of the forwarded signal; the launcher waits a little longer.
  on_forced_exit(kill_workers);
  start_interrupt_watchdog(1.4);

  using Clock = std::chrono::steady_clock;
  std::optional<Clock::time_point> first_failure;
  int forwarded = 0;
  for (int running = plan.workers; running > 0;) {
    for (auto& w : workers) {
      if (!w.running || ::waitpid(w.pid, &w.status, WNOHANG) != w.pid) continue;
      w.running = false;
      --running;
      if (!(WIFEXITED(w.status) && WEXITSTATUS(w.status) == 0) && !first_failure) first_failure = Clock::now();
    }
    if (interrupt_requested() && !forwarded) {
      forwarded = interrupt_exit_code() == 128 + SIGTERM ? SIGTERM : SIGINT;
      for (auto& w : workers)
        if (w.running) ::kill(w.pid, forwarded);
    }
    if (first_failure && Clock::now() - *first_failure > std::chrono::duration<double>(plan.timeout_s + 10)) {
      for (auto& w : workers)
        if (w.running && !w.killed_by_launcher) {
          ::kill(w.pid, SIGKILL);
          w.killed_by_launcher = true;
        }
    }
    if (running > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }

  if (forwarded) return interrupt_exit_code();
  for (size_t r = 0; r < workers.size(); ++r) {
    const auto& w = workers[r];
    if (w.killed_by_launcher)
      print_error_line("lite " + plan.command, "error",
                       fmt::format("rank {}: still running {:.0f} s after another rank failed; stopped it", r,
                                   plan.timeout_s + 10));
    else if (WIFSIGNALED(w.status))
      print_error_line("lite " + plan.command, "error",
                       fmt::format("rank {}: killed by signal {} ({})", r, WTERMSIG(w.status),
                                   strsignal(WTERMSIG(w.status))));
  }
  for (const auto& w : workers)
    if (exit_code_of(w) == exit_bad_input) return exit_bad_input;
  if (exit_code_of(workers[0]) != 0) return exit_code_of(workers[0]);
  for (const auto& w : workers)
    if (exit_code_of(w) != 0) return exit_check_failed;
  return exit_ok;
}

}  // namespace lite::cli
