// The implausible-speedup rule (see speed_claim.hpp).
#include "lite/measure/speed_claim.hpp"

#include <fmt/format.h>

namespace lite::measure {

bool implausible_speedup(double speedup, std::optional<double> work_ratio) {
  if (speedup > kImplausibleSpeedup) return true;
  return work_ratio && *work_ratio > 0 && speedup > kImplausibleOverWork * *work_ratio;
}

report::Finding implausible_speedup_finding(double speedup, const std::string& what,
                                            std::optional<double> macs_after_over_before) {
  const std::string work = macs_after_over_before ? fmt::format(" for {:.2f}x MACs", *macs_after_over_before) : "";
  const std::string bound =
      macs_after_over_before
          ? fmt::format("speedup > {:.0f}x, or > {:.0f} x (MACs before / MACs after)", kImplausibleSpeedup,
                        kImplausibleOverWork)
          : fmt::format("speedup > {:.0f}x", kImplausibleSpeedup);
  return {"warning",
          fmt::format("implausible: {}: {:.1f}x faster{}; the baseline was probably disturbed; rerun on a quiet "
                      "machine",
                      what, speedup, work),
          bound, "rerun on a quiet machine; the speedup is not shown as a gain"};
}

std::string untrusted_mark(bool oversubscribed, bool implausible) {
  if (oversubscribed && implausible)
    return " (untrusted: the machine was oversubscribed; implausible: see the findings)";
  if (implausible) return " (implausible: see the findings)";
  if (oversubscribed) return " (untrusted: the machine was oversubscribed)";
  return "";
}

}  // namespace lite::measure
