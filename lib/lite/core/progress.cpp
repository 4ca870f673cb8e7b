#include "lite/core/progress.hpp"

namespace lite {

namespace {
class NoProgress final : public Progress {
 public:
  void begin(std::string_view, uint64_t) override {}
  void advance(uint64_t) override {}
  void end() override {}
};
}  // namespace

Progress& no_progress() {
  static NoProgress sink;
  return sink;
}

}  // namespace lite
