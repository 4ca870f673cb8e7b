#pragma once
// What `lite --version` prints: what a bug report needs, one fact a line: lite's version and commit, the build,
// libtorch's version and its quantized engines, whether MPI (lite-mpi) and Gloo (distill's data parallelism) are
// built in, and the CPU this runs on with the features lite detected. The torch-free `lite` execs lite-torch for
// it (main.cpp), which knows libtorch's run-time facts; without lite-torch it says so.
#include <functional>
#include <string>
#include <vector>

namespace lite::cli {

// lite-torch's main sets it: libtorch's facts as "key: value" lines (quantized engines, oneDNN's ISA).
void set_torch_facts(std::function<std::vector<std::string>()> facts);
std::string version_text();

}  // namespace lite::cli
