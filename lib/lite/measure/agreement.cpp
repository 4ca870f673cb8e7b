#include "lite/measure/agreement.hpp"

#include <cmath>

namespace lite::measure {

AgreementLoss agreement_loss(const Agreement& a, double floor_points) {
  AgreementLoss loss;
  loss.points = 100.0 * (1.0 - a.top1_agreement);
  loss.disagreeing = std::llround((1.0 - a.top1_agreement) * double(a.samples));
  loss.breaks_floor = loss.points > floor_points && loss.disagreeing >= 2;
  return loss;
}

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

}  // namespace lite::measure
