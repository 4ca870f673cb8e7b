#include "version_info.hpp"

#include <unistd.h>

#include <filesystem>

#include "lite/core/environment.hpp"
#include "lite/core/text.hpp"
#include "lite/core/version.hpp"

namespace lite::cli {

namespace {
std::function<std::vector<std::string>()>& torch_facts() {
  static std::function<std::vector<std::string>()> facts;
  return facts;
}

// Whether the executable `name` is installed beside this one (build tree) or in ../libexec/lite/ (installed).
bool side_executable(const char* name) {
  std::error_code ec;
  const auto dir = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
  if (ec) return false;
  for (const auto& path : {dir / name, dir / ".." / "libexec" / "lite" / name})
    if (::access(path.c_str(), X_OK) == 0) return true;
  return false;
}
}  // namespace

void set_torch_facts(std::function<std::vector<std::string>()> facts) { torch_facts() = std::move(facts); }

std::string version_text() {
  std::string text = std::string("lite ") + lite::version() + "\n";
  text += std::string("commit: ") + lite::git_commit() + "\n";
  text += std::string("build: ") + lite::build_type() + " build, " + lite::compiler() + "\n";
  text += std::string("libtorch: ") + LITE_LIBTORCH_VERSION + "\n";
  if (torch_facts())
    for (const auto& line : torch_facts()()) text += line + "\n";
  else
    text += "quantized engines: unknown here (lite-torch, which loads libtorch, is not installed)\n";
#ifdef LITE_WITH_MPI
  text += std::string("MPI: built in (lite-mpi: cache-sim sweeps over ranks)") +
          (side_executable("lite-mpi") ? "" : ", but lite-mpi is not installed") + "\n";
#else
  text += "MPI: not built in (configure with Open MPI, libopenmpi-dev, for lite-mpi)\n";
#endif
#ifdef LITE_WITH_GLOO
  text += "Gloo: built in (lite distill's data parallelism over c10d)\n";
#else
  text += "Gloo: not built in (built without LibTorch)\n";
#endif
  const Environment env = host_environment();
  text += "CPU: " + env.cpu_model + ", " + std::to_string(env.logical_cores) + " logical cores\n";
  text += "CPU features: " + (env.cpu_features.empty() ? std::string("none of ") + join(cpu_feature_names(), " ")
                                                       : join(env.cpu_features, " ")) +
          "\n";
  text.pop_back();  // CLI11's --version ends the last line
  return text;
}

}  // namespace lite::cli
