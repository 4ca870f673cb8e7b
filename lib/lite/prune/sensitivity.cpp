// Sensitivity analysis (the Distiller / SparseML analysis): each prunable group is pruned alone at each
// ratio and the model's accuracy (labels) or top-1 agreement with the original (no labels) measured, so
// the groups that can lose many channels stand out from those that cannot. Results go to a CSV (one row
// per group and ratio) and an SVG plot (one line per group); with a tolerance, each group's suggested
// ratio is the largest tried whose drop stays within it. Each trial goes through the same planning and
// surgery as a real run, on a fresh copy of the model.
#include <fmt/format.h>

#include <algorithm>

#include "lite/core/interrupt.hpp"
#include "lite/prune/plan_internal.hpp"

namespace lite::prune {

std::vector<SensitivityPoint> analyse_sensitivity(const torch::jit::Module& module, const DependencyGraph& graph,
                                                  const std::vector<GroupPlan>& plans,
                                                  const std::vector<torch::Tensor>& scores, const PruneOptions& o,
                                                  const std::function<double(torch::jit::Module&)>& measure,
                                                  double baseline, Progress& progress) {
  std::vector<SensitivityPoint> points;
  size_t prunable = size_t(std::count_if(plans.begin(), plans.end(), [](const GroupPlan& p) { return p.prunable; }));
  ProgressPhase phase(progress, "sensitivity", prunable * o.sensitivity_ratios.size());
  const std::string bytes = serialize(module);
  for (size_t i = 0; i < plans.size(); ++i) {
    if (!plans[i].prunable) continue;
    for (double ratio : o.sensitivity_ratios) {
      throw_if_interrupted();
      PruneOptions one = o;
      one.ratio = ratio;
      one.layer_ratios.clear();
      one.global = false;
      std::vector<GroupPlan> alone = plans;
      for (size_t j = 0; j < alone.size(); ++j) {
        alone[j].prunable = j == i;
        alone[j].ratio = ratio;
      }
      Removal removal = choose_channels(scores, alone, one);
      torch::jit::Module pruned = deserialize(bytes);
      remove_channels(pruned, graph, removal);
      SensitivityPoint p;
      p.group = plans[i].name;
      p.channels = plans[i].channels;
      p.kept = alone[i].kept;
      p.ratio = ratio;
      p.value = measure(pruned);
      p.drop = baseline - p.value;
      points.push_back(p);
      phase.advance();
    }
  }
  return points;
}

std::vector<LayerRatio> suggest_ratios(const std::vector<SensitivityPoint>& points, double tolerance) {
  std::vector<LayerRatio> out;
  for (const auto& p : points) {
    if (out.empty() || out.back().glob != p.group) out.push_back({p.group, 0});
    if (p.drop <= tolerance) out.back().ratio = std::max(out.back().ratio, p.ratio);
  }
  return out;
}

std::string sensitivity_csv(const std::vector<SensitivityPoint>& points, const std::string& metric) {
  std::string csv = "group,channels,ratio,kept," + metric + ",drop_points\n";
  for (const auto& p : points)
    csv += fmt::format("{},{},{},{},{:.4f},{:.4f}\n", p.group, p.channels, p.ratio, p.kept, p.value, p.drop);
  return csv;
}

std::string sensitivity_svg(const std::vector<SensitivityPoint>& points, const std::string& metric, double baseline) {
  const double w = 760, h = 420, left = 60, right = 220, top = 30, bottom = 50;
  double max_ratio = 0, low = baseline;
  for (const auto& p : points) max_ratio = std::max(max_ratio, p.ratio), low = std::min(low, p.value);
  low = std::max(0.0, std::floor(low / 10) * 10);
  double high = std::max(baseline, low + 1);
  auto x = [&](double r) { return left + (w - left - right) * r / std::max(max_ratio, 1e-9); };
  auto y = [&](double v) { return top + (h - top - bottom) * (high - v) / (high - low); };
  static const char* colors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                 "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" font-family=\"sans-serif\" "
      "font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{}\" y=\"18\" font-size=\"13\">lite prune sensitivity: {} vs ratio (each group pruned alone)</text>\n"
      "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>\n"
      "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>\n"
      "<text x=\"{}\" y=\"{}\">ratio of the group's channels removed</text>\n"
      "<text x=\"12\" y=\"{}\">{:.0f}%</text><text x=\"12\" y=\"{}\">{:.0f}%</text>\n",
      w, h, left, metric, left, h - bottom, w - right, h - bottom, left, top, left, h - bottom, left + 120, h - 12, y(high) + 4,
      high, y(low) + 4, low);
  std::string group;
  std::string line;
  int index = -1;
  auto flush = [&] {
    if (index < 0) return;
    const char* color = colors[index % 10];
    svg += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" points=\"{} {}{}\"/>\n", color,
                       x(0), y(baseline), line);
    if (index < 24)
      svg += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"{}\">{}</text>\n", w - right + 10, top + 14 * index + 10, color,
                         group);
  };
  for (const auto& p : points) {
    if (p.group != group) {
      flush();
      group = p.group;
      line.clear();
      ++index;
    }
    line += fmt::format(" {:.1f},{:.1f}", x(p.ratio), y(p.value));
  }
  flush();
  for (double r : {0.0, max_ratio / 2, max_ratio})
    svg += fmt::format("<text x=\"{}\" y=\"{}\">{:.2f}</text>\n", x(r) - 10, h - bottom + 16, r);
  return svg + "</svg>\n";
}

}  // namespace lite::prune
