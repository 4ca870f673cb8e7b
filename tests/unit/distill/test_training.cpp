// The training loop end to end on the bundled Fashion-MNIST CNN as teacher and a small MLP student built
// here: it learns, it resumes bit for bit (also from a checkpoint taken mid-epoch by Ctrl-C), a loss that
// becomes NaN fails the finite_loss gate with the best epoch kept, and mismatched models are refused.
#include <doctest/doctest.h>
#include <torch/script.h>
#include <torch/torch.h>

#include "../torch_fixtures.hpp"
#include "lite/core/error.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/distill/distill.hpp"

namespace fs = std::filesystem;
using lite::distill::DistillOptions;

namespace {

// An MLP 784-hidden-classes with dropout, so train/eval mode and the RNG state matter.
fs::path make_student(const fs::path& dir, int64_t classes = 10, int64_t hidden = 32) {
  torch::manual_seed(7);
  torch::jit::Module m{c10::QualifiedName("__torch__.lite_test.Student")};
  m.register_attribute("training", c10::BoolType::get(), true);
  m.register_parameter("w1", torch::randn({hidden, 784}) * 0.05, false);
  m.register_parameter("b1", torch::zeros({hidden}), false);
  m.register_parameter("w2", torch::randn({classes, hidden}) * 0.05, false);
  m.register_parameter("b2", torch::zeros({classes}), false);
  m.define(R"(
def forward(self, x):
    h = torch.relu(torch.linear(torch.flatten(x, 1), self.w1, self.b1))
    h = torch.dropout(h, 0.2, self.training)
    return torch.linear(h, self.w2, self.b2)
)");
  fs::path path = dir / ("student" + std::to_string(classes) + ".pt");
  m.save(path.string());
  return path;
}

DistillOptions options(const fs::path& student, const fs::path& dir, const std::string& name) {
  DistillOptions o;
  o.teacher = lite::test::bundled_model().string();
  o.student = student.string();
  o.data = lite::test::bundled_eval().string();
  o.samples = 200;
  o.epochs = 2;
  o.train_batch = 32;
  o.lr = 3e-3;
  o.threads = 1;
  o.latency_iterations = 0;
  o.output = (dir / (name + ".pt")).string();
  return o;
}

std::vector<torch::Tensor> weights_of(const std::string& path) {
  auto m = torch::jit::load(path);
  std::vector<torch::Tensor> out;
  for (const auto& p : m.parameters()) out.push_back(p);
  return out;
}

bool same_weights(const std::string& a, const std::string& b) {
  auto wa = weights_of(a), wb = weights_of(b);
  if (wa.size() != wb.size()) return false;
  for (size_t i = 0; i < wa.size(); ++i)
    if (!torch::equal(wa[i], wb[i])) return false;
  return true;
}

// Requests Ctrl-C when training reaches (epoch, step).
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

TEST_CASE("distillation improves a fresh student, writes it in eval mode, and records its provenance") {
  lite::test::ScratchDir dir("distill");
  auto student = make_student(dir.path);
  auto o = options(student, dir.path, "out");
  auto r = lite::distill::run(o, lite::no_progress());
  CHECK(r.gates.passed());
  CHECK(r.metric == "top-1 accuracy");
  CHECK(r.teacher_logits == "cached");
  REQUIRE(r.epochs.size() == 2);
  CHECK(r.best_metric > r.student_before.metric + 20);
  CHECK(r.student.metric == r.best_metric);
  CHECK(r.student.parameters == 784 * 32 + 32 + 32 * 10 + 10);
  CHECK(r.student.macs < r.teacher.macs);
  auto m = torch::jit::load(o.output);
  CHECK_FALSE(m.is_training());
  std::unordered_map<std::string, std::string> extra{{"lite.json", ""}};
  torch::jit::load(o.output, c10::nullopt, extra);
  auto prov = nlohmann::json::parse(extra["lite.json"]);
  CHECK(prov["transform"] == "distill");
  CHECK(prov["details"]["best_epoch"] == r.best_epoch);
  CHECK(prov["details"]["teacher"]["sha256"].get<std::string>().size() == 64);
  CHECK(prov["details"]["hyperparameters"]["temperature"] == o.temperature);
}

TEST_CASE("a run resumed from a checkpoint ends with the same weights as an uninterrupted one") {
  lite::test::ScratchDir dir("distill_resume");
  auto student = make_student(dir.path);
  auto straight = options(student, dir.path, "straight");
  straight.checkpoint_dir = (dir.path / "ck_straight").string();
  auto a = lite::distill::run(straight, lite::no_progress());
  CHECK(fs::exists(dir.path / "ck_straight" / "last.ckpt"));

  for (int64_t stop_step : {int64_t(7), int64_t(3)}) {  // after epoch 1 (step 7 is its last), mid epoch 2
    CAPTURE(stop_step);
    auto first = options(student, dir.path, "first");
    first.checkpoint_dir = (dir.path / ("ck" + std::to_string(stop_step))).string();
    InterruptAt interrupt(stop_step == 7 ? 1 : 2, stop_step);
    std::string checkpoint;
    try {
      lite::distill::run(first, interrupt);
      FAIL("not interrupted");
    } catch (const lite::distill::CheckpointSaved& e) {
      checkpoint = e.checkpoint;
    }
    lite::request_interrupt_for_testing(false);
    CHECK_FALSE(fs::exists(first.output));  // Ctrl-C: no artifact
    torch::manual_seed(12345);  // as in a new process: the RNG state must come from the checkpoint
    auto resumed = options(student, dir.path, "resumed" + std::to_string(stop_step));
    resumed.resume = checkpoint;
    auto b = lite::distill::run(resumed, lite::no_progress());
    CHECK(b.start_epoch == (stop_step == 7 ? 1 : 2));  // Ctrl-C in epoch 1's validation resumes there
    CHECK(same_weights(a.output, b.output));
    REQUIRE(b.epochs.size() == a.epochs.size());
    for (size_t i = 0; i < a.epochs.size(); ++i) {
      CHECK(b.epochs[i].metric == a.epochs[i].metric);
      CHECK(b.epochs[i].train_loss == a.epochs[i].train_loss);
    }
  }

  auto other = options(student, dir.path, "other");
  other.resume = (dir.path / "ck_straight" / "last.ckpt").string();
  other.lr = 1e-2;
  CHECK_THROWS_WITH_AS(lite::distill::run(other, lite::no_progress()), doctest::Contains("lr"), lite::InputError);
}

TEST_CASE("a loss that becomes NaN fails the finite_loss gate and keeps the best weights") {
  lite::test::ScratchDir dir("distill_nan");
  auto student = make_student(dir.path);
  auto o = options(student, dir.path, "nan");
  o.optimizer = "sgd";
  o.lr = 1e30;  // the largest lr validate() allows: the weights blow up within a few steps
  o.warmup_fraction = 0;
  auto r = lite::distill::run(o, lite::no_progress());
  CHECK_FALSE(r.gates.passed());
  CHECK(r.gates.failed == std::vector<std::string>{"finite_loss"});
  CHECK(r.stopped.find("loss became NaN") != std::string::npos);
  CHECK(fs::exists(o.output));
  auto w = weights_of(o.output);
  for (const auto& t : w) CHECK(torch::isfinite(t).all().item<bool>());
}

TEST_CASE("a student whose outputs differ in shape from the teacher's is refused before training") {
  lite::test::ScratchDir dir("distill_shape");
  auto student = make_student(dir.path, 5);
  auto o = options(student, dir.path, "bad");
  CHECK_THROWS_WITH_AS(lite::distill::run(o, lite::no_progress()), doctest::Contains("outputs shape"),
                       lite::InputError);
  CHECK_FALSE(fs::exists(o.output));
}
