#pragma once
// Per-operator timing with at::RecordFunction callbacks: self time (excluding nested operators), calls,
// and the TorchScript module each operator ran in; optionally the events as a Chrome trace.
#include <filesystem>
#include <memory>

#include "lite/profile/options.hpp"
#include "lite/profile/result.hpp"

namespace lite::profile {

class OpRecorder {
 public:
  // Installs thread-local callbacks on the calling thread until destroyed.
  explicit OpRecorder(bool keep_events);
  ~OpRecorder();
  OpRecorder(const OpRecorder&) = delete;
  OpRecorder& operator=(const OpRecorder&) = delete;

  // Aggregates everything recorded so far as per-forward figures over `iterations` forwards.
  OpProfile summarize(int iterations, double forward_ms, int top) const;
  // Writes the recorded events in Chrome trace format (atomically).
  void write_chrome_trace(const std::filesystem::path& path) const;

  struct State;

 private:
  std::unique_ptr<State> state_;
  uint64_t handle_ = 0;
};

}  // namespace lite::profile
