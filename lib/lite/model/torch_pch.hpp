// Precompiled header for lite::torch: the heavy LibTorch headers, parsed once per build.
#pragma once
#include <torch/script.h>
#include <torch/torch.h>
