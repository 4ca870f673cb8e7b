// DataParallel over ProcessGroupGloo (see distributed.hpp): the start broadcast, the bucketed gradient
// all-reduce started from parameter hooks during backward, the shard gather and count sums of the no-grad
// passes, the epoch-end buffer average, and the per-rank figures gathered through the store.
#include "lite/distill/distributed.hpp"

#include <fmt/format.h>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <csignal>
#include <cstdlib>

#include "lite/core/error.hpp"
#include "lite/core/sha256.hpp"
#include "lite/distill/checkpoint.hpp"
#include "lite/distill/lost_peer.hpp"
#include "lite/distill/rendezvous.hpp"

namespace lite::distill {

namespace {

using Clock = std::chrono::steady_clock;

// After a collective timed out among three or more ranks: how long the others' answers are waited for.
constexpr double kRollCallSeconds = 10;

std::string reason(const std::exception& e) { return c10d_reason(e); }

uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// A flat buffer over consecutive parameters of one dtype: gradients are copied in as backward produces them,
// all-reduced, copied out.
struct Bucket {
  std::vector<torch::Tensor> parameters;
  std::vector<int64_t> offsets;           // of each parameter in flat
  std::vector<torch::Tensor> flat;        // one tensor: the argument c10d's allreduce takes by reference
  std::vector<bool> filled;               // this step's gradient copied in
  size_t ready = 0;                       // count of filled
  c10::intrusive_ptr<c10d::Work> work;    // the all-reduce in flight; null before launch

  torch::Tensor slot(size_t i) { return flat[0].narrow(0, offsets[i], parameters[i].numel()); }
};

// Buckets over the parameters in reverse order (backward produces the last layers' gradients first, so the
// first bucket fills first), cut at about bucket_mb and at a change of dtype.
std::vector<Bucket> make_buckets(const std::vector<torch::Tensor>& parameters, double bucket_mb) {
  const double cap = bucket_mb * 1024 * 1024;
  std::vector<Bucket> buckets;
  double bytes = 0;
  int64_t numel = 0;
  auto close = [&] {
    if (buckets.empty() || buckets.back().parameters.empty()) return;
    auto& b = buckets.back();
    b.flat = {torch::zeros({numel}, b.parameters.front().options().requires_grad(false))};
    b.filled.assign(b.parameters.size(), false);
  };
  for (auto it = parameters.rbegin(); it != parameters.rend(); ++it) {
    const auto& p = *it;
    if (buckets.empty() || bytes >= cap || p.scalar_type() != buckets.back().parameters.front().scalar_type()) {
      close();
      buckets.emplace_back();
      bytes = 0;
      numel = 0;
    }
    buckets.back().parameters.push_back(p);
    buckets.back().offsets.push_back(numel);
    bytes += double(p.numel() * int64_t(p.element_size()));
    numel += p.numel();
  }
  close();
  return buckets;
}

// LITE_DISTILL_TEST_CRASH="RANK:STEP" kills rank RANK (SIGKILL, as a crash or the OOM killer would) before
// global step STEP; "RANK:STEP:stop" stops it instead (SIGSTOP: its connections stay open and silent, as a
// host that lost power or its network leaves them). The fault tests' way of losing a rank mid-training. Not
// documented for users.
struct CrashPoint {
  int rank = -1;
  int64_t step = -1;
  int signal = SIGKILL;
};

CrashPoint test_crash_point() {
  const char* v = std::getenv("LITE_DISTILL_TEST_CRASH");
  int rank = -1;
  long long step = -1;
  char how[8] = {};
  const int fields = v ? std::sscanf(v, "%d:%lld:%7s", &rank, &step, how) : 0;
  if (fields < 2) return {};
  return {rank, step, std::string(how) == "stop" ? SIGSTOP : SIGKILL};
}

class GlooDataParallel final : public DataParallel {
 public:
  GlooDataParallel(const World& w, const DistillOptions& o, Connection c)
      : world_(w), seed_(o.seed), bucket_mb_(o.bucket_mb), store_(std::move(c.store)), group_(std::move(c.group)),
        crash_(test_crash_point()) {
    exchange_hosts();
  }

  void refuse(const std::string& why) override;

  int world_size() const override { return world_.size; }
  bool writes_files() const override { return world_.rank == 0; }

  void agree(const nlohmann::json& fingerprint) override { check_fingerprints(fingerprint); }

  ~GlooDataParallel() override {
    for (auto& [parameter, handle] : hooks_) parameter.remove_hook(handle);
  }

  void start(torch::jit::Module& student) override {
    torch::NoGradGuard no_grad;
    std::vector<std::vector<torch::Tensor>> tensors;
    for (const auto& [name, t] : named_state(student)) tensors.push_back({t.detach()});
    std::vector<c10::intrusive_ptr<c10d::Work>> works;
    for (auto& t : tensors) works.push_back(group_->broadcast(t, c10d::BroadcastOptions()));
    wait_all(works, "the start broadcast of rank 0's weights");
    if (buckets_.empty()) watch_gradients(student);
  }

  BatchSlice shard(int64_t n) const override { return shard_of(world_.rank, n); }

  torch::Tensor gather_shards(const torch::Tensor& part, int64_t n) override;

  std::vector<double> sum(std::vector<double> values) override {
    std::vector<torch::Tensor> t{torch::tensor(values, torch::TensorOptions().dtype(torch::kFloat64))};
    std::vector<c10::intrusive_ptr<c10d::Work>> works{group_->allreduce(t)};
    wait_all(works, "the sum of every rank's validation counts");
    const auto* sums = t[0].data_ptr<double>();
    return std::vector<double>(sums, sums + values.size());
  }

  void throw_if_interrupted() override {
    if (agreed_interrupt_) throw Interrupted();
  }

  BatchSlice begin_step(int64_t global_step, int64_t begin, int64_t length) override {
    step_ = global_step;
    if (crash_.rank == world_.rank && crash_.step == global_step) ::raise(crash_.signal);
    torch::manual_seed(splitmix64(seed_ ^ splitmix64(uint64_t(world_.rank) * 0x100000001ULL + uint64_t(global_step))));
    const int64_t lo = begin + length * world_.rank / world_.size;
    const int64_t hi = begin + length * (world_.rank + 1) / world_.size;
    share_ = double(hi - lo) / double(length);
    in_backward_ = true;  // the next gradients the hooks see are this step's
    samples_ += hi - lo;
    return {lo, hi - lo};
  }

  // Launches, in bucket order, what backward has not (buckets with a parameter that got no gradient hook
  // this step: its .grad, or zeros), then waits for every bucket and copies the sums into the gradients.
  double after_backward(torch::jit::Module& student, double local_loss) override {
    torch::NoGradGuard no_grad;
    in_backward_ = false;
    const auto t0 = Clock::now();
    for (auto& b : buckets_) {
      for (size_t i = 0; i < b.parameters.size(); ++i) {
        if (b.filled[i]) continue;
        const auto& g = b.parameters[i].grad();
        if (g.defined()) b.slot(i).copy_(g.reshape({-1})).mul_(share_);
        else b.slot(i).zero_();
        b.filled[i] = true;
        ++b.ready;
      }
    }
    launch_ready_buckets();
    std::vector<c10::intrusive_ptr<c10d::Work>> works;
    for (auto& b : buckets_) works.push_back(std::move(b.work));
    std::vector<torch::Tensor> meta{torch::tensor({local_loss * share_, interrupt_requested() ? 1.0 : 0.0},
                                                  torch::TensorOptions().dtype(torch::kFloat64))};
    works.push_back(group_->allreduce(meta));
    wait_all(works, fmt::format("the gradient all-reduce of global step {}", step_ + 1));
    for (auto& b : buckets_) {
      for (size_t i = 0; i < b.parameters.size(); ++i) {
        auto& p = b.parameters[i];
        auto sum = b.slot(i).view(p.sizes());
        if (p.grad().defined()) p.mutable_grad().copy_(sum);
        else p.mutable_grad() = sum.clone();
      }
      std::fill(b.filled.begin(), b.filled.end(), false);
      b.ready = 0;
    }
    next_launch_ = 0;
    allreduce_s_ += std::chrono::duration<double>(Clock::now() - t0).count();
    agreed_interrupt_ = meta[0][1].item<double>() > 0;
    return meta[0][0].item<double>();
  }

  void end_epoch(torch::jit::Module& student) override {
    torch::NoGradGuard no_grad;
    std::vector<std::vector<torch::Tensor>> buffers;
    for (const auto& b : student.buffers()) if (b.is_floating_point()) buffers.push_back({b});
    std::vector<c10::intrusive_ptr<c10d::Work>> works;
    for (auto& b : buffers) works.push_back(group_->allreduce(b));
    wait_all(works, "the batch-norm statistics average at the end of an epoch");
    for (auto& b : buffers) b[0].div_(world_.size);
  }

  DistributedSummary summarize(torch::jit::Module& student, double train_seconds) override;

 private:
  void check_fingerprints(const nlohmann::json& fingerprint);
  void exchange_hosts();
  // "rank R (host H)": how errors name a peer.
  std::string named(int rank) const {
    return fmt::format("rank {} (host {})", rank, rank_hosts_.at(size_t(rank)).host);
  }
  std::string who_was_lost(const std::string& why);
  [[noreturn]] void lost(const std::string& during, const std::exception& e);
  void wait_all(std::vector<c10::intrusive_ptr<c10d::Work>>& works, const std::string& during) {
    for (auto& w : works) {
      try {
        w->wait();
      } catch (const std::exception& e) {
        lost(during, e);
      }
    }
  }

  // A hook per parameter copies its gradient (weighted by this rank's share) into its bucket as backward
  // computes it; a full bucket is all-reduced at once (asynchronously, on Gloo's threads) while backward goes
  // on with the earlier layers: DDP's overlap of communication with backward.
  void watch_gradients(torch::jit::Module& student) {
    std::vector<torch::Tensor> parameters;
    for (const auto& p : student.parameters()) parameters.push_back(p);
    buckets_ = make_buckets(parameters, bucket_mb_);
    for (size_t b = 0; b < buckets_.size(); ++b)
      for (size_t i = 0; i < buckets_[b].parameters.size(); ++i) {
        auto& p = buckets_[b].parameters[i];
        if (!p.requires_grad()) continue;
        hooks_.emplace_back(p, p.register_hook([this, b, i](torch::Tensor grad) { gradient_ready(b, i, grad); }));
      }
  }

  void gradient_ready(size_t b, size_t i, const torch::Tensor& grad) {
    auto& bucket = buckets_[b];
    if (!in_backward_ || bucket.filled[i]) return;
    torch::NoGradGuard no_grad;
    bucket.slot(i).copy_(grad.reshape({-1})).mul_(share_);
    bucket.filled[i] = true;
    ++bucket.ready;
    launch_ready_buckets();
  }

  // Every rank launches its buckets in the same order (Gloo matches collectives by order): bucket k only
  // after buckets 0..k-1, each once full.
  void launch_ready_buckets() {
    while (next_launch_ < buckets_.size() && buckets_[next_launch_].ready == buckets_[next_launch_].parameters.size()) {
      buckets_[next_launch_].work = group_->allreduce(buckets_[next_launch_].flat);
      ++next_launch_;
    }
  }

  BatchSlice shard_of(int rank, int64_t n) const {
    const int64_t lo = n * rank / world_.size, hi = n * (rank + 1) / world_.size;
    return {lo, hi - lo};
  }

  World world_;
  uint64_t seed_;
  double bucket_mb_;
  c10::intrusive_ptr<c10d::Store> store_;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> group_;
  CrashPoint crash_;
  std::vector<Bucket> buckets_;
  std::vector<std::pair<torch::Tensor, unsigned>> hooks_;  // (parameter, hook handle), removed at the end
  size_t next_launch_ = 0;   // the next bucket to all-reduce this step
  bool in_backward_ = false;  // between begin_step and after_backward
  int64_t step_ = 0, samples_ = 0;
  double share_ = 1, allreduce_s_ = 0;
  bool agreed_interrupt_ = false;
  std::vector<RankHost> rank_hosts_;  // every rank's host name and addresses, by rank, since the rendezvous
};

// Gloo's all-gather takes equal shapes: each part is padded to the longest shard's rows, then trimmed.
torch::Tensor GlooDataParallel::gather_shards(const torch::Tensor& part, int64_t n) {
  const int64_t longest = shard_of(world_.size - 1, n).length;  // the last shard is never shorter
  auto shape = part.sizes().vec();
  shape[0] = longest;
  std::vector<torch::Tensor> input{torch::zeros(shape, part.options())};
  input[0].narrow(0, 0, part.size(0)).copy_(part);
  std::vector<std::vector<torch::Tensor>> output(1);
  for (int r = 0; r < world_.size; ++r) output[0].push_back(torch::empty(shape, part.options()));
  std::vector<c10::intrusive_ptr<c10d::Work>> works{group_->allgather(output, input)};
  wait_all(works, "the all-gather of the teacher's logits");
  std::vector<torch::Tensor> parts;
  for (int r = 0; r < world_.size; ++r) parts.push_back(output[0][size_t(r)].narrow(0, 0, shard_of(r, n).length));
  return torch::cat(parts);
}

void GlooDataParallel::lost(const std::string& during, const std::exception& e) {
  if (interrupt_requested()) throw Interrupted();  // the peer went away because the job was interrupted
  const std::string why = reason(e);
  const std::string peer = world_.size == 2 ? named(1 - world_.rank) : who_was_lost(why);
  throw RankLost(fmt::format("rank {}: lost {} during {} ({}; the timeout is {:g} s)", world_.rank, peer, during,
                             why, world_.timeout_s));
}

// Of three or more ranks: the one whose address Gloo's error names, else those that miss the roll call (a
// timeout names no address), else rank 0 when its store is gone too.
std::string GlooDataParallel::who_was_lost(const std::string& why) {
  if (std::string at = ranks_at_address_in(why, rank_hosts_, world_.rank); !at.empty()) return at;
  const std::optional<std::string> silent =
      roll_call(*store_, rank_hosts_, world_.rank, std::min(kRollCallSeconds, world_.timeout_s));
  if (!silent) return named(0);
  return silent->empty() ? std::string("a peer rank") : *silent;
}

// Right after the rendezvous every rank is there: each posts its host name and reads the others', so errors
// name the host of a rank that is gone by then.
void GlooDataParallel::exchange_hosts() {
  const std::string mine = to_wire(this_rank_host());
  try {
    store_->set("lite/host/" + std::to_string(world_.rank), std::vector<uint8_t>(mine.begin(), mine.end()));
    for (int r = 0; r < world_.size; ++r) {
      auto v = store_->get("lite/host/" + std::to_string(r));
      rank_hosts_.push_back(from_wire(std::string(v.begin(), v.end())));
    }
  } catch (const std::exception& e) {
    throw InputError(fmt::format("rank {}: the ranks could not exchange their host names within {:g} s: {}",
                                 world_.rank, world_.timeout_s, reason(e)));
  }
}

// A rank whose own inputs failed (a file on another host only, another file under its path) says why in
// place of its fingerprint or verdict, so every rank ends at once naming it and its host instead of waiting
// out the timeout for it. Rank 0 hosts the store: it waits for every verdict before it exits.
void GlooDataParallel::refuse(const std::string& why) {
  try {
    if (world_.rank == 0) {
      const std::string refusal = nlohmann::json{{"lite_refused", why}}.dump();
      store_->set("lite/fingerprint", std::vector<uint8_t>(refusal.begin(), refusal.end()));
      for (int r = 1; r < world_.size; ++r) store_->get("lite/verdict/" + std::to_string(r));
    } else {
      store_->set("lite/verdict/" + std::to_string(world_.rank), std::vector<uint8_t>(why.begin(), why.end()));
    }
  } catch (const std::exception&) {
    // the others are gone already: this rank's own error still says what failed
  }
}

// Each rank posts its fingerprint; the others compare theirs with rank 0's and post a verdict, which rank 0
// waits for: a mismatch, or a rank's refusal, ends every rank before training, with exit 2.
void GlooDataParallel::check_fingerprints(const nlohmann::json& fingerprint) {
  const std::string me = std::to_string(world_.rank);
  try {
    if (world_.rank == 0) {
      const std::string mine = fingerprint.dump();
      store_->set("lite/fingerprint", std::vector<uint8_t>(mine.begin(), mine.end()));
      for (int r = 1; r < world_.size; ++r) {
        auto v = store_->get("lite/verdict/" + std::to_string(r));
        const std::string verdict(v.begin(), v.end());
        if (verdict != "ok")
          throw InputError(fmt::format("rank 0: {} refused to train: {}", named(r), verdict));
      }
      return;
    }
    auto v = store_->get("lite/fingerprint");
    const auto theirs = nlohmann::json::parse(std::string(v.begin(), v.end()));
    if (auto refused = theirs.find("lite_refused"); refused != theirs.end()) {
      store_->set("lite/verdict/" + me, std::vector<uint8_t>{'o', 'k'});
      throw InputError(fmt::format("rank {}: {} refused to train: {}", world_.rank, named(0),
                                   refused->get<std::string>()));
    }
    std::string verdict = "ok";
    for (auto it = fingerprint.begin(); it != fingerprint.end(); ++it) {
      auto found = theirs.find(it.key());
      if (found == theirs.end() || *found != *it) {
        verdict = fmt::format("its {} differs from rank 0's ({} here, {} there); start every rank with the same "
                              "options and files", it.key(), it->dump(),
                              found == theirs.end() ? std::string("nothing") : found->dump());
        break;
      }
    }
    store_->set("lite/verdict/" + me, std::vector<uint8_t>(verdict.begin(), verdict.end()));
    if (verdict != "ok") throw InputError(fmt::format("rank {}: {}", world_.rank, verdict));
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(fmt::format("rank {}: the ranks could not compare their options within {:g} s: {}", world_.rank,
                                 world_.timeout_s, reason(e)));
  }
}

std::string weights_sha256(torch::jit::Module& student) {
  Sha256 h;
  for (const auto& [name, t] : named_state(student)) {
    auto c = t.detach().contiguous();
    h.update(name);
    h.update(c.data_ptr(), size_t(c.numel()) * c.element_size());
  }
  return h.hex_digest();
}

DistributedSummary GlooDataParallel::summarize(torch::jit::Module& student, double train_seconds) {
  DistributedSummary d;
  d.world_size = world_.size;
  d.rank = world_.rank;
  d.master = world_.master();
  d.source = world_.source;
  d.buckets = int(buckets_.size());
  for (const auto& b : buckets_) d.allreduce_bytes_per_step += b.flat[0].numel() * int64_t(b.flat[0].element_size());
  d.batchnorm = "per-rank batch statistics in each step; running statistics averaged over ranks at every epoch's end";
  RankFigures mine;
  mine.rank = world_.rank;
  mine.host = rank_hosts_.at(size_t(world_.rank)).host;
  mine.samples = samples_;
  mine.train_s = train_seconds;
  mine.allreduce_s = allreduce_s_;
  mine.samples_per_s = train_seconds > 0 ? double(samples_) / train_seconds : 0;
  mine.allreduce_share = train_seconds > 0 ? allreduce_s_ / train_seconds : 0;
  mine.weights_sha256 = weights_sha256(student);
  nlohmann::json j;
  to_json(j, mine);
  const std::string text = j.dump();
  try {
    store_->set("lite/figures/" + std::to_string(world_.rank), std::vector<uint8_t>(text.begin(), text.end()));
    if (world_.rank != 0) {
      d.ranks = {mine};
      return d;
    }
    for (int r = 0; r < world_.size; ++r) {
      auto v = store_->get("lite/figures/" + std::to_string(r));
      d.ranks.push_back(nlohmann::json::parse(std::string(v.begin(), v.end())).get<RankFigures>());
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    lost("the gathering of every rank's figures", e);
  }
  int64_t samples = 0;
  double slowest = 0, share = 0, compute_rate = 0;
  for (const auto& f : d.ranks) {
    samples += f.samples;
    slowest = std::max(slowest, f.train_s);
    share += f.allreduce_share;
    const double compute = f.train_s - f.allreduce_s;
    compute_rate += compute > 0 ? double(f.samples) / compute : 0;
    d.weights_identical = d.weights_identical && f.weights_sha256 == mine.weights_sha256;
  }
  d.samples_per_s = slowest > 0 ? double(samples) / slowest : 0;
  d.allreduce_share = share / double(d.ranks.size());
  const double mean_compute_rate = compute_rate / double(d.ranks.size());
  d.scaling_efficiency = mean_compute_rate > 0 ? d.samples_per_s / (double(d.world_size) * mean_compute_rate) : 0;
  return d;
}

}  // namespace

std::unique_ptr<DataParallel> join_world(const World& world, const DistillOptions& o) {
  if (!world.distributed()) return nullptr;
  return std::make_unique<GlooDataParallel>(world, o, rendezvous(world));
}

}  // namespace lite::distill
