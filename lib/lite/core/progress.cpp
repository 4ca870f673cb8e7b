#include "lite/core/progress.hpp"

namespace lite {

Progress& no_progress() {
  static NullProgress sink;
  return sink;
}

}  // namespace lite
