#include "lite/profile/agreement.hpp"

namespace lite::profile {

void to_json(nlohmann::json& j, const Agreement& a) {
  j = nlohmann::json{{"samples", a.samples},
                     {"max_abs_error", a.max_abs_error},
                     {"mean_abs_error", a.mean_abs_error},
                     {"top1_agreement", a.top1_agreement},
                     {"kl_divergence", a.kl_divergence}};
}

void to_json(nlohmann::json& j, const Accuracy& a) {
  j = nlohmann::json{{"correct", a.correct}, {"total", a.total}, {"percent", a.percent()}};
}

}  // namespace lite::profile
