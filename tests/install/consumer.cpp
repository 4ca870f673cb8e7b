// Links lite::lite from an installed prefix and profiles a model through the public API.
#include <iostream>

#include "lite/core/version.hpp"
#include "lite/profile/profile.hpp"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  lite::profile::ProfileOptions o;
  o.models = {argv[1]};
  o.timing.warmup = 2;
  o.timing.iterations = 5;
  auto r = lite::profile::run(o);
  std::cout << "lite " << lite::version() << " p50 " << r.models[0].latency_ms.p50 << " ms\n";
}
