// The one-process GradientSync: every hook keeps the default behaviour (see gradient_sync.hpp).
#include "lite/distill/gradient_sync.hpp"

namespace lite::distill {

GradientSync& single_process() {
  static GradientSync one;
  return one;
}

}  // namespace lite::distill
