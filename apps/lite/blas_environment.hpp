#pragma once
// Which OpenBLAS build lite-torch loads. libtorch's fp32 matmul calls the system libblas; Debian's default OpenBLAS
// is the pthread build, whose worker threads run beside libgomp's (which spin between parallel regions), so above
// one intra-op thread the two pools oversubscribe the cores: on a 2-core VM vit_b_16 at batch 1 took 716 ms at
// 2 threads against 215 ms with OpenBLAS's OpenMP build, which shares libgomp's threads (docs/profile.md). The
// library path is read as lite-torch loads, so `lite` sets it before the exec.
namespace lite::cli {

// Prepends OpenBLAS's OpenMP build's folder to LD_LIBRARY_PATH when that build is installed and the user's
// LD_LIBRARY_PATH names no OpenBLAS folder of its own (theirs wins).
void prefer_openmp_openblas();

}  // namespace lite::cli
