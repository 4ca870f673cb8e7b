#include "blas_environment.hpp"

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace lite::cli {

#ifndef LITE_OPENBLAS_OPENMP_DIR
#define LITE_OPENBLAS_OPENMP_DIR "/usr/lib/x86_64-linux-gnu/openblas-openmp"
#endif

void prefer_openmp_openblas() {
  const std::string dir = LITE_OPENBLAS_OPENMP_DIR;
  if (::access((dir + "/libblas.so.3").c_str(), R_OK) != 0) return;
  const char* current = std::getenv("LD_LIBRARY_PATH");
  const std::string path = current ? current : "";
  if (path.find("openblas") != std::string::npos) return;
  ::setenv("LD_LIBRARY_PATH", (path.empty() ? dir : dir + ":" + path).c_str(), 1);
}

}  // namespace lite::cli
