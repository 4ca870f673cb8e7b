#pragma once
// What libtorch prints on its own: glog lines ("WARNING: Logging before InitGoogleLogging() ...") and
// c10 warnings (TORCH_WARN, e.g. Resize.cpp's "An output with one or more elements was resized").
// Torch-free header: lite-torch's main calls these. See torch_log.cpp.
#include <string>
#include <vector>

namespace lite {

// Nothing reaches stderr from libtorch: glog keeps only FATAL, and c10 warnings are collected (once each,
// first line) for the report instead. A model's own print() goes to stderr (by default TorchScript prints to
// stdout, into a --json report), here and with print_torch_warnings. Call once at start, before any torch work.
void collect_torch_warnings();
// libtorch's own behaviour (--verbose): glog from WARNING up and c10 warnings on stderr as they happen.
void print_torch_warnings();
// The c10 warnings collected since collect_torch_warnings(), in the order first seen.
std::vector<std::string> collected_torch_warnings();

}  // namespace lite
