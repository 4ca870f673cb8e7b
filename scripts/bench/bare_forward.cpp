// The plainest possible C++ forward loop, the baseline lite profile's timing is checked against
// (scripts/bench/profile_overhead). Usage: bare_forward MODEL SHAPE THREADS WARMUP ITERATIONS
// Prints the median latency in ms.
#include <ATen/Parallel.h>
#include <torch/script.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s MODEL 1x1x28x28 THREADS WARMUP ITERATIONS\n", argv[0]);
    return 2;
  }
  std::vector<int64_t> shape;
  std::stringstream dims(argv[2]);
  for (std::string d; std::getline(dims, d, 'x');) shape.push_back(std::stoll(d));
  at::set_num_threads(std::stoi(argv[3]));
  int warmup = std::stoi(argv[4]), iterations = std::stoi(argv[5]);

  auto module = torch::jit::load(argv[1]);
  module.eval();
  torch::NoGradGuard no_grad;
  std::vector<c10::IValue> inputs{torch::randn(shape)};
  for (int i = 0; i < warmup; ++i) module.forward(inputs);
  std::vector<double> ms;
  ms.reserve(iterations);
  for (int i = 0; i < iterations; ++i) {
    auto start = std::chrono::steady_clock::now();
    module.forward(inputs);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  std::printf("%.6f\n", ms[ms.size() / 2]);
}
