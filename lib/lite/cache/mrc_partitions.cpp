// Key-partitioned LRU curves (see mrc_partitions.hpp): the partitions, their combination, and the engine's
// side (one profiler per partition, their curves at the end of the main pass).
#include "lite/cache/mrc_partitions.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "lite/cache/engine_internal.hpp"

namespace lite::cache {

HashRange partition_range(size_t partition, size_t n) {
  if (n <= 1) return {};
  using u128 = unsigned __int128;
  auto start = [n](size_t p) { return ((u128(p) << 64) + n - 1) / n; };  // ceil(p * 2^64 / n)
  const u128 lo = start(partition), hi = start(partition + 1);
  return {static_cast<uint64_t>(lo), static_cast<uint64_t>(hi - lo)};
}

size_t partition_of(uint64_t hash, size_t n) {
  return static_cast<size_t>((static_cast<unsigned __int128>(hash) * n) >> 64);
}

std::vector<size_t> partitions_of_process(size_t n, int process, int processes) {
  std::vector<size_t> mine;
  for (size_t p = size_t(std::max(process, 0)); p < n; p += size_t(std::max(processes, 1))) mine.push_back(p);
  return mine;
}

namespace {

// The partitions' miss ratios at one point: the request- (byte-) weighted means and the spread of the
// request miss ratios over the partitions that had requests.
struct PointStats {
  MrcPoint point;
  MrcSpread spread;
};

PointStats combine_point(const std::vector<const MrcPoint*>& at, const std::vector<PartitionCurve>& parts, uint64_t size) {
  PointStats out;
  double requests = 0, bytes = 0, misses = 0, byte_misses = 0, sum = 0, sum_sq = 0;
  size_t counted = 0;
  out.spread.min = 1, out.spread.max = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    requests += parts[i].requests;
    bytes += parts[i].bytes;
    misses += parts[i].requests * at[i]->miss_ratio;
    byte_misses += parts[i].bytes * at[i]->byte_miss_ratio;
    if (parts[i].requests <= 0) continue;
    ++counted;
    sum += at[i]->miss_ratio;
    sum_sq += at[i]->miss_ratio * at[i]->miss_ratio;
    out.spread.min = std::min(out.spread.min, at[i]->miss_ratio);
    out.spread.max = std::max(out.spread.max, at[i]->miss_ratio);
  }
  if (counted == 0) out.spread.min = 0;
  if (counted > 1) {
    const double mean = sum / double(counted);
    const double variance = std::max(0.0, (sum_sq - double(counted) * mean * mean) / double(counted - 1));
    out.spread.std_error = std::sqrt(variance / double(counted));
  }
  out.point.size = size;
  out.point.miss_ratio = requests > 0 ? misses / requests : 0;
  out.point.byte_miss_ratio = bytes > 0 ? byte_misses / bytes : 0;
  return out;
}

void check_complete(const std::vector<PartitionCurve>& parts, size_t n) {
  if (parts.size() != n) throw std::logic_error("combine_partitions: wrong number of partitions");
  for (size_t i = 0; i < n; ++i)
    if (parts[i].partition != i) throw std::logic_error("combine_partitions: a partition is missing or repeated");
  for (const auto& p : parts)
    if (p.curve.points.empty() || p.curve.at_sizes.size() != parts.front().curve.at_sizes.size())
      throw std::logic_error("combine_partitions: the partitions' curves do not share their sizes");
}

}  // namespace

MrcCurve combine_partitions(std::vector<PartitionCurve> parts, size_t n, std::optional<double> target_hit_ratio) {
  std::sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.partition < b.partition; });
  check_complete(parts, n);
  // every grid is a prefix of the same one, and each curve is flat past its end: the longest is the grid
  size_t longest = 0;
  for (size_t i = 0; i < parts.size(); ++i)
    if (parts[i].curve.points.size() > parts[longest].curve.points.size()) longest = i;
  MrcCurve out;
  out.bytes = parts.front().curve.bytes;
  out.partitions = MrcPartitions{};
  out.partitions->n = n;
  double requests = 0;
  for (const auto& p : parts) {
    requests += p.requests;
    out.partitions->requests.push_back(static_cast<uint64_t>(std::llround(p.requests)));
    out.sizes_vary = out.sizes_vary || p.curve.sizes_vary;
    out.exact_from_size = std::max(out.exact_from_size, p.curve.exact_from_size);
    out.seconds = std::max(out.seconds, p.curve.seconds);
  }
  out.n_req = static_cast<uint64_t>(std::llround(requests));
  std::vector<const MrcPoint*> at(parts.size());
  for (size_t k = 0; k < parts[longest].curve.points.size(); ++k) {
    const uint64_t size = parts[longest].curve.points[k].size;
    for (size_t i = 0; i < parts.size(); ++i) {
      const auto& pts = parts[i].curve.points;
      if (k < pts.size() && pts[k].size != size) throw std::logic_error("combine_partitions: the grids differ");
      at[i] = &pts[std::min(k, pts.size() - 1)];
    }
    const PointStats s = combine_point(at, parts, size);
    out.points.push_back(s.point);
    out.partitions->points.push_back(s.spread);
  }
  for (size_t k = 0; k < parts.front().curve.at_sizes.size(); ++k) {
    for (size_t i = 0; i < parts.size(); ++i) at[i] = &parts[i].curve.at_sizes[k];
    const PointStats s = combine_point(at, parts, parts.front().curve.at_sizes[k].size);
    out.at_sizes.push_back(s.point);
    out.partitions->at_sizes.push_back(s.spread);
  }
  if (target_hit_ratio)
    for (const auto& p : out.points)
      if (1.0 - p.miss_ratio >= *target_hit_ratio - 1e-12) {
        out.smallest_size_for_target = p.size;
        break;
      }
  return out;
}

void to_json(nlohmann::json& j, const PartitionCurve& c) {
  auto points = [](const std::vector<MrcPoint>& v) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& p : v) a.push_back({p.size, p.miss_ratio, p.byte_miss_ratio});
    return a;
  };
  j = {{"partition", c.partition},         {"requests", c.requests},
       {"bytes", c.bytes},                 {"curve_bytes", c.curve.bytes},
       {"sizes_vary", c.curve.sizes_vary}, {"exact_from_size", c.curve.exact_from_size},
       {"seconds", c.curve.seconds},       {"points", points(c.curve.points)},
       {"at_sizes", points(c.curve.at_sizes)}};
}

PartitionCurve partition_curve_from_json(const nlohmann::json& j) {
  auto points = [](const nlohmann::json& a) {
    std::vector<MrcPoint> v;
    for (const auto& p : a) v.push_back({p.at(0).get<uint64_t>(), p.at(1).get<double>(), p.at(2).get<double>()});
    return v;
  };
  PartitionCurve c;
  c.partition = j.at("partition").get<size_t>();
  c.requests = j.at("requests").get<double>();
  c.bytes = j.at("bytes").get<double>();
  c.curve.bytes = j.at("curve_bytes").get<bool>();
  c.curve.sizes_vary = j.at("sizes_vary").get<bool>();
  c.curve.exact_from_size = j.at("exact_from_size").get<uint64_t>();
  c.curve.seconds = j.at("seconds").get<double>();
  c.curve.points = points(j.at("points"));
  c.curve.at_sizes = points(j.at("at_sizes"));
  c.curve.n_req = static_cast<uint64_t>(std::llround(c.requests));
  return c;
}

namespace detail {

void add_partition_profilers(const SimulationConfig& opt, const std::vector<uint64_t>& query_sizes,
                             const std::vector<size_t>& only, SimulatorSet& set) {
  std::vector<size_t> mine = only;
  if (mine.empty())
    for (size_t p = 0; p < opt.mrc_partitions; ++p) mine.push_back(p);
  for (size_t p : mine) {
    auto profiler = std::make_unique<LruProfiler>(opt.bytes, query_sizes);
    const HashRange r = partition_range(p, opt.mrc_partitions);
    profiler->keep_hashes(r.lo, r.width);
    set.partitions.push_back({p, std::make_unique<ProfilerConsumer>(std::move(profiler))});
  }
}

void finish_partition_curves(const SimulationConfig& opt, const SimulatorSet& set, bool combine, double seconds,
                             CacheSimResult& result) {
  if (set.partitions.empty()) return;
  std::vector<PartitionCurve> curves;
  for (const auto& [p, consumer] : set.partitions) {
    const LruProfiler& prof = *consumer->profiler;
    PartitionCurve c{p, prof.sampled_requests(), prof.sampled_bytes(), prof.finish(0, std::nullopt, prof.shared_grid())};
    c.curve.seconds = seconds;
    curves.push_back(std::move(c));
  }
  // the combined curve's "sizes vary" note is finish_sweep's: under MPI only rank 0 knows every partition
  if (combine) result.mrc = combine_partitions(std::move(curves), opt.mrc_partitions, opt.target_hit_ratio);
  else result.mrc_partition_curves = std::move(curves);
}

}  // namespace detail
}  // namespace lite::cache
