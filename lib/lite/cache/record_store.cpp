// --results-dir (see record_store.hpp): the trace content hash, the record key, and one atomically written
// JSON file per finished record.
#include "lite/cache/record_store.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "lite/cache/json_fields_internal.hpp"
#include "lite/cache/sweep.hpp"
#include "lite/cache/trace_internal.hpp"
#include "lite/core/atomic_file.hpp"
#include "lite/core/error.hpp"
#include "lite/core/options.hpp"
#include "lite/core/sha256.hpp"

namespace lite::cache {
namespace {

constexpr uint64_t kPrime1 = 0x9E3779B185EBCA87ULL, kPrime2 = 0xC2B2AE3D27D4EB4FULL;

inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
inline uint64_t mix(uint64_t acc, uint64_t word) { return rotl(acc + word * kPrime2, 31) * kPrime1; }
inline uint64_t avalanche(uint64_t h) {
  h ^= h >> 33;
  h *= kPrime2;
  h ^= h >> 29;
  h *= kPrime1;
  return h ^ (h >> 32);
}

// Four 64-bit lanes over 32-byte blocks (xxHash64's round), folded into two independently seeded digests.
class ContentHasher {
 public:
  void update(const unsigned char* p, size_t n) {
    total_ += n;
    if (tail_len_) {
      const size_t take = std::min(n, sizeof(tail_) - tail_len_);
      std::memcpy(tail_ + tail_len_, p, take);
      tail_len_ += take, p += take, n -= take;
      if (tail_len_ < sizeof(tail_)) return;
      block(tail_);
      tail_len_ = 0;
    }
    for (; n >= 32; p += 32, n -= 32) block(p);
    std::memcpy(tail_, p, n);
    tail_len_ = n;
  }
  std::string hex() const {
    uint64_t a = total_ * kPrime1, b = ~total_ * kPrime2;
    for (int i = 0; i < 4; ++i) a = mix(a, lane_[i]), b = mix(b ^ uint64_t(i + 1), rotl(lane_[i], 17));
    for (size_t i = 0; i < tail_len_; ++i) a = mix(a, tail_[i] + 1), b = mix(b, tail_[i] ^ 0xA5);
    return fmt::format("{:016x}{:016x}-{}", avalanche(a), avalanche(b), total_);
  }

 private:
  void block(const unsigned char* p) {
    for (int i = 0; i < 4; ++i) {
      uint64_t w;
      std::memcpy(&w, p + 8 * i, 8);
      lane_[i] = mix(lane_[i], w);
    }
  }
  uint64_t lane_[4] = {kPrime1 + kPrime2, kPrime2, 0, 0 - kPrime1};
  unsigned char tail_[32] = {};
  size_t tail_len_ = 0;
  uint64_t total_ = 0;
};

Counters counters_from_json(const nlohmann::json& j) {
  Counters c;
  c.n_req = j.at("n_req").get<uint64_t>();
  c.n_miss = j.at("n_miss").get<uint64_t>();
  c.n_req_byte = j.at("n_req_byte").get<uint64_t>();
  c.n_miss_byte = j.at("n_miss_byte").get<uint64_t>();
  return c;
}

LatencyFigures latency_from_json(const nlohmann::json& j) {
  return {j.at("mean").get<double>(), j.at("p50").get<double>(), j.at("p99").get<double>()};
}

}  // namespace

std::string content_hash(const void* data, size_t n) {
  ContentHasher h;
  h.update(static_cast<const unsigned char*>(data), n);
  return h.hex();
}

std::string trace_content_hash(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw InputError(path, std::string("cannot read it to hash it for {results_dir}: ") + std::strerror(errno),
                     "check the path and its permissions");
  ContentHasher h;
  std::vector<unsigned char> buf(size_t(1) << 20);
  while (true) {
    const ssize_t r = ::read(fd, buf.data(), buf.size());
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      const int e = errno;
      ::close(fd);
      throw InputError(path, std::string("read failed while hashing it for {results_dir}: ") + std::strerror(e),
                       "check the file");
    }
    if (r == 0) break;
    h.update(buf.data(), static_cast<size_t>(r));
  }
  ::close(fd);
  return h.hex();
}

SimRecord record_from_json(const nlohmann::json& j) {
  SimRecord r;
  r.policy = j.at("policy").get<std::string>();
  r.size = j.at("size").get<uint64_t>();
  r.size_text = j.at("size_text").get<std::string>();
  r.counters = counters_from_json(j);
  r.sampled = j.at("sampled").get<bool>();
  r.simulated_size = j.contains("simulated_size") ? j.at("simulated_size").get<uint64_t>() : r.size;
  if (j.contains("sampled_counts")) r.sampled_counters = counters_from_json(j.at("sampled_counts"));
  if (j.contains("latency_ms")) r.latency = latency_from_json(j.at("latency_ms"));
  if (j.contains("variants"))
    for (const auto& v : j.at("variants"))
      r.variants.emplace_back(v.at("variant").get<std::string>(), latency_from_json(v.at("latency_ms")));
  if (j.contains("full_trace")) r.full = counters_from_json(j.at("full_trace"));
  r.memory_bytes = j.at("memory_bytes").get<uint64_t>();
  r.miss_cost_s = optional_double(j, "miss_cost_s");
  r.saved_cost_s = optional_double(j, "saved_cost_s");
  r.miss_ratio_error = optional_double(j, "miss_ratio_error");
  r.small_sample = j.value("small_sample", false);
  return r;
}

nlohmann::json record_options_key(const SimulationConfig& c) {
  nlohmann::json variants = nlohmann::json::array();
  for (const auto& v : c.variants) variants.push_back({v.label, v.mean_ms, v.p50_ms, v.p99_ms});
  return {{"format", trace_format_name(c.format)},
          {"csv", {c.csv.key, c.csv.time, c.csv.size, c.csv.cost, int(c.csv.delimiter), c.csv.explicit_columns}},
          {"has_header", c.has_header},
          {"skip_bad_lines", c.skip_bad_lines},
          {"bytes", c.bytes},
          {"sample_rate", c.sample_rate},
          {"sample_objects", c.sample_objects},
          {"sample_check", c.sample_check},
          {"hit_latency_ms", c.hit_latency_ms},
          {"miss_latency_ms", c.miss_latency_ms ? nlohmann::json(*c.miss_latency_ms) : nlohmann::json()},
          {"variants", variants}};
}

void check_results_dir(const std::string& dir, const std::string& trace) {
  if (dir.empty()) return;
  if (trace == "-" || detail::is_stream(trace))
    throw OptionError("results_dir", "needs a trace file it can hash; the trace is read from a stream",
                      "write the trace to a file first");
}

RecordStore::RecordStore(std::filesystem::path dir, std::string trace_path, nlohmann::json options_key)
    : dir_(std::move(dir)), trace_path_(std::move(trace_path)), options_key_(std::move(options_key)) {}

const std::string& RecordStore::trace_hash() const {
  if (trace_hash_.empty()) trace_hash_ = trace_content_hash(trace_path_);
  return trace_hash_;
}

// The object mode's key was {trace, options, policy, size} before other modes shared the store: a job of
// {policy, size} gives the same key (a JSON object's keys are sorted), so folders written then are still read.
nlohmann::json RecordStore::key(const nlohmann::json& job) const {
  nlohmann::json k = job;
  k["trace"] = trace_hash();
  k["options"] = options_key_;
  return k;
}

std::filesystem::path RecordStore::file_for(const nlohmann::json& key) const {
  return dir_ / ("record-" + sha256_hex(key.dump()).substr(0, 32) + ".json");
}

std::optional<nlohmann::json> RecordStore::find_json(const nlohmann::json& job) const {
  const nlohmann::json k = key(job);
  std::ifstream in(file_for(k), std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  try {
    nlohmann::json stored = nlohmann::json::parse(text.str());
    if (stored.at("key") != k) return std::nullopt;
    return std::move(stored.at("record"));
  } catch (const std::exception&) {
    return std::nullopt;  // unreadable: recomputed and overwritten
  }
}

void RecordStore::put_json(const nlohmann::json& job, const nlohmann::json& record) const {
  const nlohmann::json k = key(job);
  const nlohmann::json stored = {{"key", k}, {"record", record}};
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec && !std::filesystem::is_directory(dir_))
    throw InputError(dir_.string(), "cannot create the results folder: " + ec.message(),
                     "give a writable folder for {results_dir}");
  write_file_atomically(file_for(k), stored.dump(1) + "\n");
}

std::optional<SimRecord> RecordStore::find(const std::string& policy, uint64_t size) const {
  const auto stored = find_json({{"policy", policy}, {"size", size}});
  if (!stored) return std::nullopt;
  try {
    SimRecord r = record_from_json(*stored);
    if (r.policy != policy || r.size != size) return std::nullopt;
    return r;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

void RecordStore::put(const SimRecord& record) const {
  put_json({{"policy", record.policy}, {"size", record.size}}, record);
}

}  // namespace lite::cache
