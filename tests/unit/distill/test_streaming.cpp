// Training data larger than the memory budget: the chunked reader returns what load_dataset returns, the
// chunk-major order is a seeded permutation that visits each chunk in one run, distill streams when the
// budget is small (and says so), trains, and resumes bit for bit; and prune-then-recover builds its student
// from the teacher in memory.
#include <doctest/doctest.h>
#include <torch/script.h>
#include <torch/torch.h>

#include <ATen/CPUGeneratorImpl.h>

#include <fstream>

#include "../torch_fixtures.hpp"
#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/core/options.hpp"
#include "lite/distill/distill.hpp"
#include "lite/model/chunked_dataset.hpp"
#include "lite/model/dataset.hpp"

namespace fs = std::filesystem;
using lite::distill::DistillOptions;

namespace {

// numpy.save's format 1.0 for a C-ordered float32 or int64 tensor.
void save_npy(const fs::path& path, const torch::Tensor& t) {
  const char* descr = t.scalar_type() == torch::kFloat32 ? "<f4" : "<i8";
  std::string shape;
  for (auto d : t.sizes()) shape += std::to_string(d) + ", ";
  std::string header = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': (" + shape + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const uint16_t len = uint16_t(header.size());
  out.put(char(len & 0xff)).put(char(len >> 8));
  out << header;
  auto c = t.contiguous();
  out.write(static_cast<const char*>(c.data_ptr()), std::streamsize(c.nbytes()));
}

struct NpyData {
  fs::path x, y;
  torch::Tensor images, labels;
};

NpyData make_npy(const fs::path& dir, int64_t n) {
  auto eval = lite::model::load_dataset(lite::test::bundled_eval());
  NpyData d{dir / "x.npy", dir / "y.npy", eval.x.narrow(0, 0, n).contiguous(), eval.y->narrow(0, 0, n).contiguous()};
  save_npy(d.x, d.images);
  save_npy(d.y, d.labels);
  return d;
}

fs::path make_mlp_student(const fs::path& dir) {
  torch::manual_seed(7);
  torch::jit::Module m{c10::QualifiedName("__torch__.lite_test.StreamStudent")};
  m.register_attribute("training", c10::BoolType::get(), true);
  m.register_parameter("w1", torch::randn({32, 784}) * 0.05, false);
  m.register_parameter("b1", torch::zeros({32}), false);
  m.register_parameter("w2", torch::randn({10, 32}) * 0.05, false);
  m.register_parameter("b2", torch::zeros({10}), false);
  m.define(R"(
def forward(self, x):
    h = torch.relu(torch.linear(torch.flatten(x, 1), self.w1, self.b1))
    h = torch.dropout(h, 0.2, self.training)
    return torch.linear(h, self.w2, self.b2)
)");
  fs::path path = dir / "stream_student.pt";
  m.save(path.string());
  return path;
}

DistillOptions streamed_options(const NpyData& d, const fs::path& student, const fs::path& dir, const std::string& name) {
  DistillOptions o;
  o.teacher = lite::test::bundled_model().string();
  o.student = student.string();
  o.data = d.x.string();
  o.data_labels = d.y.string();
  o.eval = lite::test::bundled_eval().string();
  o.eval_samples = 200;
  o.epochs = 2;
  o.train_batch = 32;
  o.lr = 3e-3;
  o.threads = 1;
  o.latency_iterations = 0;
  o.data_memory_mb = 1;  // 600 samples of 3,136 bytes: 1.8 MB, streamed in chunks of 83
  o.output = (dir / (name + ".pt")).string();
  return o;
}

std::vector<torch::Tensor> weights_of(const std::string& path) {
  std::vector<torch::Tensor> out;
  for (const auto& p : torch::jit::load(path).parameters()) out.push_back(p);
  return out;
}

bool same_weights(const std::string& a, const std::string& b) {
  auto wa = weights_of(a), wb = weights_of(b);
  if (wa.size() != wb.size()) return false;
  for (size_t i = 0; i < wa.size(); ++i)
    if (!torch::equal(wa[i], wb[i])) return false;
  return true;
}

class InterruptAt final : public lite::distill::TrainingProgress {
 public:
  InterruptAt(int epoch, int64_t step) : epoch_(epoch), step_(step) {}
  void begin(std::string_view, uint64_t) override {}
  void advance(uint64_t) override {}
  void end() override {}
  void step(const lite::distill::StepStatus& s) override {
    if (s.epoch == epoch_ && s.step == step_) lite::request_interrupt_for_testing(true);
  }
  void epoch_done(const lite::distill::EpochRecord&, int) override {}

 private:
  int epoch_;
  int64_t step_;
};

}  // namespace

TEST_CASE("the chunked reader returns what load_dataset returns, for .npy and uncompressed idx") {
  lite::test::ScratchDir dir("chunked_read");
  auto d = make_npy(dir.path, 50);
  auto layout = lite::model::record_layout(d.x);
  REQUIRE(layout);
  CHECK(layout->count == 50);
  CHECK(lite::model::sample_bytes_in_memory(*layout) == 784 * 4);
  lite::model::ChunkedDataset stream(*layout, d.y, 0, 16);
  CHECK(stream.size() == 50);
  CHECK(stream.chunks() == 4);
  CHECK(torch::equal(stream.read(10, 5), d.images.narrow(0, 10, 5)));
  CHECK(torch::equal(*stream.labels(), d.labels));
  auto some = torch::tensor({3, 40, 17, 16, 49, 0}, torch::kInt64);  // four chunks in one call
  CHECK(torch::equal(stream.gather(some), d.images.index_select(0, some)));
  CHECK(stream.scan(lite::no_progress()) == doctest::Approx(d.images.sum().item<double>()));

  // idx: uint8 images become float32 in [0, 1] with a channel dimension, as load_dataset makes them
  fs::path idx = dir.path / "images-idx3-ubyte";
  {
    auto raw = (d.images.squeeze(1) * 255).round().to(torch::kUInt8).contiguous();
    std::ofstream out(idx, std::ios::binary);
    const unsigned char header[16] = {0, 0, 8, 3, 0, 0, 0, 50, 0, 0, 0, 28, 0, 0, 0, 28};
    out.write(reinterpret_cast<const char*>(header), 16);
    out.write(static_cast<const char*>(raw.data_ptr()), std::streamsize(raw.nbytes()));
  }
  auto whole = lite::model::load_dataset(idx);
  auto idx_layout = lite::model::record_layout(idx);
  REQUIRE(idx_layout);
  lite::model::ChunkedDataset idx_stream(*idx_layout, std::nullopt, 30, 7);
  CHECK(idx_stream.size() == 30);
  CHECK(torch::equal(idx_stream.read(0, 30), whole.x.narrow(0, 0, 30)));
  CHECK_FALSE(lite::model::record_layout(lite::test::bundled_eval()));  // torch.save: loaded whole

  // a file shorter than its header says is refused up front
  fs::path cut = dir.path / "cut.npy";
  fs::copy_file(d.x, cut);
  fs::resize_file(cut, fs::file_size(cut) - 100);
  CHECK_THROWS_WITH_AS(lite::model::record_layout(cut), doctest::Contains("truncated"), lite::InputError);
}

TEST_CASE("the chunk-major order is a seeded permutation that visits each chunk in one run") {
  auto order_of = [](uint64_t seed) {
    auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
    return lite::model::chunk_major_order(103, 10, gen);
  };
  auto a = order_of(5);
  CHECK(torch::equal(std::get<0>(a.sort()), torch::arange(103, torch::kInt64)));
  CHECK(torch::equal(a, order_of(5)));
  CHECK_FALSE(torch::equal(a, order_of(6)));
  auto chunk = a.div(10, "floor");
  CHECK(std::get<0>(torch::unique_consecutive(chunk)).size(0) == 11);  // each chunk's samples are contiguous
  CHECK_FALSE(torch::equal(a, torch::arange(103, torch::kInt64)));
}

TEST_CASE("data over the memory budget is streamed in chunks, trains, and resumes bit for bit") {
  lite::test::ScratchDir dir("distill_stream");
  auto d = make_npy(dir.path, 600);
  auto student = make_mlp_student(dir.path);
  auto straight = streamed_options(d, student, dir.path, "straight");
  auto a = lite::distill::run(straight, lite::no_progress());
  CHECK(a.data_path == "streamed in chunks of 83 samples");
  CHECK(a.data_chunk_samples == 83);
  CHECK(a.teacher_logits == "cached");
  CHECK(a.train_samples == 600);
  CHECK(a.best_metric > a.student_before.metric + 20);

  auto whole = streamed_options(d, student, dir.path, "whole");
  whole.data_memory_mb = 100;
  whole.teacher_cache_mb = 0;
  auto w = lite::distill::run(whole, lite::no_progress());
  CHECK(w.data_path == "loaded whole");
  CHECK(w.teacher_logits == "recomputed every step");
  CHECK_FALSE(same_weights(a.output, w.output));  // another shuffling order

  auto first = streamed_options(d, student, dir.path, "first");
  first.checkpoint_dir = (dir.path / "ck").string();
  InterruptAt interrupt(2, 5);
  std::string checkpoint;
  try {
    lite::distill::run(first, interrupt);
    FAIL("not interrupted");
  } catch (const lite::distill::CheckpointSaved& e) {
    checkpoint = e.checkpoint;
  }
  lite::request_interrupt_for_testing(false);
  torch::manual_seed(999);
  auto resumed = streamed_options(d, student, dir.path, "resumed");
  resumed.resume = checkpoint;
  auto b = lite::distill::run(resumed, lite::no_progress());
  CHECK(b.start_epoch == 2);
  CHECK(same_weights(a.output, b.output));
  REQUIRE(b.epochs.size() == a.epochs.size());
  CHECK(b.epochs.back().train_loss == a.epochs.back().train_loss);

  auto other_budget = streamed_options(d, student, dir.path, "other");
  other_budget.resume = checkpoint;
  other_budget.data_memory_mb = 2;  // chunks of 167: another order, refused
  CHECK_THROWS_WITH_AS(lite::distill::run(other_budget, lite::no_progress()), doctest::Contains("data_chunk_samples"),
                       lite::InputError);
}

TEST_CASE("student_from_prune distills the teacher pruned in memory, and refuses what cannot work") {
  lite::test::ScratchDir dir("distill_prune");
  DistillOptions o;
  o.teacher = lite::test::bundled_model().string();
  o.student_from_prune = 0.5;
  o.data = lite::test::bundled_eval().string();
  o.samples = 300;
  o.epochs = 1;
  o.threads = 1;
  o.latency_iterations = 0;
  o.output = (dir.path / "pruned.pt").string();
  auto r = lite::distill::run(o, lite::no_progress());
  REQUIRE(r.prune);
  CHECK(r.prune->criterion == "l1");
  CHECK(r.prune->groups_pruned > 0);
  CHECK(r.prune->parameters_after < r.prune->parameters_before);
  CHECK(r.prune->macs_after < r.prune->macs_before);
  CHECK(r.student.parameters == r.prune->parameters_after);
  CHECK(r.prune->metric_recovered >= r.prune->metric_pruned);
  std::unordered_map<std::string, std::string> extra{{"lite.json", ""}};
  torch::jit::load(o.output, c10::nullopt, extra);
  auto prov = nlohmann::json::parse(extra["lite.json"]);
  CHECK(prov["details"]["student_from_prune"]["ratio"] == 0.5);
  CHECK(prov["figures"]["prune"]["metric_pruned_percent"] == r.prune->metric_pruned);
  CHECK(prov["input_model"]["path"] == o.teacher);

  o.student = o.teacher;
  CHECK_THROWS_WITH_AS(lite::distill::validate(o), doctest::Contains("{student}"), lite::OptionError);
  o.student.clear();
  for (double bad : {0.0, 1.0, -0.2, 1.5}) {
    o.student_from_prune = bad;
    CHECK_THROWS_AS(lite::distill::validate(o), lite::OptionError);
  }
  o.student_from_prune = 0.5;
  o.prune_criterion = "l3";
  CHECK_THROWS_WITH_AS(lite::distill::validate(o), doctest::Contains("prune_criterion"), lite::OptionError);
}
