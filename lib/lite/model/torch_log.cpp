// libtorch logs through glog (Debian's build: C10_USE_GLOG) straight to stderr: its first line of the
// process is glog's "WARNING: Logging before InitGoogleLogging() is written to STDERR", then c10's
// TORCH_WARNs ("Warning: prim::Loop is not yet supported in quantization", Resize.cpp's "output ... was
// resized") with timestamps and source paths, mid-progress-bar. lite's own findings say what matters, so
// by default:
//   - glog's FLAGS_minloglevel is raised to FATAL: glog drops a message below it before formatting, and
//     the "before InitGoogleLogging" banner is only written for a message that passes;
//   - c10's warning handler (process-wide in libtorch 1.13) is replaced by one that keeps each distinct
//     message's first line; the CLI appends them to the report as "libtorch warned: ..." notes.
// --verbose restores glog's threshold and the handler that was installed before, so libtorch prints
// as it always does.
#include "lite/model/torch_log.hpp"

#include <c10/util/Exception.h>
#include <c10/util/Logging.h>
#include <glog/logging.h>
#include <torch/csrc/jit/runtime/print_handler.h>

#include <cstdio>

#include <algorithm>
#include <mutex>

#include "lite/core/error.hpp"
#include "lite/core/text.hpp"

namespace lite {

namespace {

class Collector final : public c10::WarningHandler {
 public:
  void process(const c10::SourceLocation&, const std::string& message, const bool) override {
    std::lock_guard<std::mutex> lock(mutex_);  // warnings may come from intra-op worker threads
    std::string line = first_line(message);
    if (std::find(seen_.begin(), seen_.end(), line) == seen_.end()) seen_.push_back(line);
  }
  std::vector<std::string> seen() {
    std::lock_guard<std::mutex> lock(mutex_);
    return seen_;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> seen_;
};

Collector& collector() {
  static Collector* c = new Collector;  // never destroyed: libtorch may warn during static destruction
  return *c;
}

c10::WarningHandler*& previous_handler() {
  static c10::WarningHandler* previous = nullptr;
  return previous;
}

int& previous_minloglevel() {
  static int level = 0;
  return level;
}

// A model's own print() (TorchScript's prim::Print) writes to stdout by default, into the middle of a --json
// report; it goes to stderr, where a user still sees it.
void print_model_output_to_stderr() {
  torch::jit::setPrintHandler([](const std::string& text) {
    std::fwrite(text.data(), 1, text.size(), stderr);
    std::fflush(stderr);
  });
}

}  // namespace

void collect_torch_warnings() {
  print_model_output_to_stderr();
  if (c10::Warning::get_warning_handler() == &collector()) return;
  previous_minloglevel() = FLAGS_minloglevel;
  FLAGS_minloglevel = google::GLOG_FATAL;
  previous_handler() = c10::Warning::get_warning_handler();
  c10::Warning::set_warning_handler(&collector());
}

void print_torch_warnings() {
  print_model_output_to_stderr();
  if (c10::Warning::get_warning_handler() != &collector()) return;
  FLAGS_minloglevel = previous_minloglevel();
  c10::Warning::set_warning_handler(previous_handler());
}

std::vector<std::string> collected_torch_warnings() { return collector().seen(); }

}  // namespace lite
