#pragma once
// How close a transformed model stays to its reference: label-free output agreement, and accuracy when
// labels exist. Torch-free result structs; computed in evaluate.hpp.
#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

namespace lite::measure {

struct Agreement {
  int64_t samples = 0;
  double max_abs_error = 0;
  double mean_abs_error = 0;
  double top1_agreement = 0;  // fraction of samples whose argmax (over dim 1) matches the reference
  double kl_divergence = 0;   // mean over samples of KL(softmax(reference) || softmax(candidate)), nats
};

struct Accuracy {
  int64_t correct = 0;
  int64_t total = 0;
  double percent() const { return total ? 100.0 * double(correct) / double(total) : 0.0; }
};

// Top-1 points a transformed model lost against its reference, and whether that breaks an agreement floor: more than
// `floor_points` lost, on more than one sample (one flipped sample of a small set can exceed the floor by itself:
// noise, not a collapse). The rule of quantize's and prune's "agreement" gate.
struct AgreementLoss {
  double points = 0;          // 100 x (1 - top-1 agreement)
  int64_t disagreeing = 0;    // samples whose top-1 changed
  bool breaks_floor = false;
};
AgreementLoss agreement_loss(const Agreement& a, double floor_points);

void to_json(nlohmann::json& j, const Agreement& a);
void to_json(nlohmann::json& j, const Accuracy& a);

}  // namespace lite::measure
