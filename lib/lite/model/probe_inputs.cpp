// Probing: forwards at batch 1 on a clone of the module (a clone has its own executors, so nothing here warms
// the model that profile times). The solver treats the feature count reaching the first Linear as
// channels x h(s)^d with h affine in the input size s (d = 1 for signals, 2 for images and clips, whose frame
// count stays fixed), so two probes give h's line and the size whose count the Linear wants; pooling's floors
// make h only nearly affine, hence a few secant steps and neighbours, each checked by a forward.
#include "lite/model/probe_inputs.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <regex>
#include <set>

#include "lite/model/inputs.hpp"

namespace lite::model {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMaxProbes = 24;
constexpr double kMaxProbeSeconds = 20.0;
const std::vector<int64_t> kCommonImageSizes = {32, 28, 64, 96, 112, 128, 160, 192, 256, 299, 320, 384, 512};
const std::vector<int64_t> kCommonSignalSizes = {16000, 8000, 4096, 2048, 512, 256, 128, 101, 100, 64, 49, 32};

struct Probe {
  bool ran = false;
  std::optional<int64_t> features;  // what reached the Linear (mat1's columns)
  std::optional<int64_t> wanted;    // what the Linear takes (mat2's rows)
};

class Prober {
 public:
  Prober(const torch::jit::Module& module, std::vector<InputSpec> specs, size_t index, int dims)
      : module_(module.clone()), specs_(std::move(specs)), index_(index), dims_(dims), start_(Clock::now()) {}

  bool exhausted() const {
    return count_ >= kMaxProbes ||
           std::chrono::duration<double>(Clock::now() - start_).count() > kMaxProbeSeconds;
  }
  int count() const { return count_; }
  int dims() const { return dims_; }

  InputSpec at_size(int64_t size) const {
    InputSpec s = specs_[index_];
    for (int d = 0; d < std::min(dims_, 2); ++d) s.shape[s.shape.size() - 1 - d] = size;
    return s;
  }

  Probe run(int64_t size) {
    Probe p;
    if (size < 1 || exhausted() || !tried_.insert(size).second) return p;
    ++count_;
    std::vector<c10::IValue> args;
    for (size_t i = 0; i < specs_.size(); ++i)
      args.emplace_back(random_input(i == index_ ? at_size(size) : specs_[i], i));
    try {
      torch::NoGradGuard no_grad;
      module_.forward(args);
      p.ran = true;
    } catch (const std::exception& e) {
      static const std::regex kMatmul(R"(mat1 and mat2 shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\))");
      std::cmatch m;
      if (std::regex_search(e.what(), m, kMatmul)) {
        p.features = std::stoll(m[2].str());
        p.wanted = std::stoll(m[3].str());
      }
    }
    return p;
  }

 private:
  torch::jit::Module module_;
  std::vector<InputSpec> specs_;
  size_t index_;
  int dims_;
  Clock::time_point start_;
  int count_ = 0;
  std::set<int64_t> tried_;
};

double root(int64_t features, int dims) { return std::pow(double(features), 1.0 / std::min(dims, 2)); }

// Secant steps on root(features(size)) towards root(wanted), then the neighbours of the last estimate.
std::optional<int64_t> solve_size(Prober& prober, int64_t first_size, const Probe& first) {
  int64_t s0 = first_size;
  Probe p0 = first;
  int64_t s1 = std::max<int64_t>(1, first_size / 2);
  Probe p1 = prober.run(s1);
  if (p1.ran) return s1;
  double estimate = 0;
  for (int step = 0; step < 6 && p1.features && p0.features && *p1.wanted == *p0.wanted; ++step) {
    const double r0 = root(*p0.features, prober.dims()), r1 = root(*p1.features, prober.dims());
    if (r0 == r1) break;
    const double slope = (r0 - r1) / double(s0 - s1);
    estimate = double(s1) + (root(*p0.wanted, prober.dims()) - r1) / slope;
    if (!(estimate >= 1 && estimate < 1e6)) return std::nullopt;
    const int64_t next = std::llround(estimate);
    Probe p = prober.run(next);
    if (p.ran) return next;
    if (!p.features) break;
    s0 = s1, p0 = p1, s1 = next, p1 = p;
  }
  if (estimate < 1) return std::nullopt;
  for (int64_t delta = 1; delta <= 4 && !prober.exhausted(); ++delta)
    for (int64_t size : {std::llround(estimate) + delta, std::llround(estimate) - delta})
      if (prober.run(size).ran) return size;
  return std::nullopt;
}

// "224x224" for an image size, "1024" for a signal length.
std::string size_text(int64_t size, int dims) {
  return dims == 1 ? std::to_string(size) : std::to_string(size) + "x" + std::to_string(size);
}

std::string size_reason(int64_t size, int64_t conventional, const Probe& first, int dims, int probes) {
  std::string why = size_text(conventional, dims) + " does not run";
  if (first.features)
    why += ": " + std::to_string(*first.features) + " features reach a Linear that takes " + std::to_string(*first.wanted);
  return ", sized " + size_text(size, dims) + " by " + std::to_string(probes) + " trial forwards (" + why + ")";
}

}  // namespace

void fit_inferred_sizes(const torch::jit::Module& module, InferredInputs& inferred) {
  for (size_t i = 0; i < inferred.specs.size(); ++i) {
    const int dims = i < inferred.spatial_dims.size() ? inferred.spatial_dims[i] : 0;
    if (dims == 0) continue;
    const int64_t conventional = inferred.specs[i].shape.back();
    Prober prober(module, inferred.specs, i, dims);
    const Probe first = prober.run(conventional);
    if (first.ran) continue;
    std::optional<int64_t> size;
    if (first.features) size = solve_size(prober, conventional, first);
    // Pooling's floors make a range of sizes run alike (24..31 for a 28x28 CNN): the nearest common size within a
    // quarter of the solved one is the likelier intent.
    const auto& common_sizes = dims == 1 ? kCommonSignalSizes : kCommonImageSizes;
    if (size && std::find(common_sizes.begin(), common_sizes.end(), *size) == common_sizes.end()) {
      std::vector<int64_t> near = common_sizes;
      std::sort(near.begin(), near.end(),
                [&](int64_t a, int64_t b) { return std::llabs(a - *size) < std::llabs(b - *size); });
      for (int64_t common : near) {
        if (prober.exhausted() || std::llabs(common - *size) * 4 > *size) break;
        if (prober.run(common).ran) {
          size = common;
          break;
        }
      }
    }
    for (int64_t common : common_sizes) {
      if (size || prober.exhausted()) break;
      if (prober.run(common).ran) size = common;
    }
    if (!size) continue;
    inferred.specs[i] = prober.at_size(*size);
    inferred.reasons[i] += size_reason(*size, conventional, first, dims, prober.count());
  }
}

}  // namespace lite::model
