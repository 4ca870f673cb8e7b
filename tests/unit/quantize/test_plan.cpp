// The mode table, the planner (what --dry-run prints) and the tolerance search, on hand-made layers and
// a fake evaluator: no torch needed.
#include <doctest/doctest.h>

#include <set>

#include "lite/core/error.hpp"
#include "lite/quantize/plan.hpp"
#include "lite/quantize/tolerance.hpp"

using namespace lite::quantize;

namespace {

std::vector<LayerInfo> cnn_layers() {
  return {{"features.0", "Conv2d", "aten::conv2d", {32, 1, 3, 3}, 32},
          {"features.4", "Conv2d", "aten::conv2d", {64, 32, 3, 3}, 64},
          {"classifier.1", "Linear", "aten::linear", {256, 1152}, 256},
          {"classifier.4", "Linear", "aten::linear", {10, 256}, 10}};
}

}  // namespace

TEST_CASE("every mode in the table parses, has a unique name and tag, and plans the CNN") {
  std::set<std::string> names;
  for (const auto& m : modes()) {
    CAPTURE(m.name);
    CHECK(names.insert(m.name).second);
    CHECK(&find_mode(m.name) == &m);
    CHECK(std::string(m.summary).size() > 20);
    CHECK(std::string(m.tag).size() > 0);
    if (!m.scheme) continue;  // auto
    Plan p = make_plan(cnn_layers(), m, "onednn", {}, {}, {}, 2'000'000);
    CHECK(p.mode == m.name);
    CHECK(p.layers.size() == 4);
    CHECK(p.quantized_layers() >= 1);
    // Every scheme shrinks what it quantizes, and the expected file shrinks with it.
    for (const auto& l : p.layers) {
      if (l.quantized)
        CHECK(l.bytes_after < l.bytes_before);
      else
        CHECK(l.bytes_after == l.bytes_before);
    }
    CHECK(p.weight_bytes_after < p.weight_bytes_before);
    CHECK(p.expected_file_bytes == 2'000'000 - (p.weight_bytes_before - p.weight_bytes_after));
  }
  CHECK(names.count("auto"));
  CHECK(names.count("static"));
  CHECK(find_mode("auto").scheme == nullptr);
}

TEST_CASE("an unknown mode is a usage error with a suggestion") {
  try {
    find_mode("statc");
    FAIL("expected a usage error");
  } catch (const lite::UsageError& e) {
    std::string msg = e.what();
    CHECK(msg.find("unknown mode 'statc'") != std::string::npos);
    CHECK(msg.find("did you mean 'static'") != std::string::npos);
  }
}

TEST_CASE("static int8 sizes: int8 weights plus per-channel scale and zero point, float bias") {
  const ModeEntry& m = find_mode("static");
  LayerInfo l{"fc", "Linear", "aten::linear", {256, 1152}, 256};
  CHECK(m.scheme->layer_bytes(l) == 256u * 1152u + 256u * 12u + 4u * 256u);
  CHECK(l.float_bytes() == 4u * (256u * 1152u + 256u));
}

TEST_CASE("weight-only sizes: int4 packs two weights per byte with a float16 scale per group of 64") {
  LayerInfo l{"fc", "Linear", "aten::linear", {256, 1152}, 0};
  CHECK(find_mode("weight-int8").scheme->layer_bytes(l) == 256u * 1152u + 2u * 256u * 18u);
  CHECK(find_mode("weight-int4").scheme->layer_bytes(l) == 256u * 1152u / 2u + 2u * 256u * 18u);
}

TEST_CASE("--skip and --only choose layers by glob, small Linear layers stay float in int8 modes") {
  const ModeEntry& m = find_mode("static");
  Plan p = make_plan(cnn_layers(), m, "onednn", {}, {}, {}, 0);
  // classifier.4 (2560 MACs per sample) is too small for an int8 call.
  CHECK(p.layers[3].quantized == false);
  CHECK(p.layers[3].reason.find("small") != std::string::npos);
  CHECK(p.quantized_layers() == 3);

  p = make_plan(cnn_layers(), m, "onednn", {"features.*"}, {}, {}, 0);
  CHECK_FALSE(p.layers[0].quantized);
  CHECK_FALSE(p.layers[1].quantized);
  CHECK(p.layers[0].reason == "{skip} features.*");
  CHECK(p.layers[2].quantized);

  // --only names layers explicitly, small or not.
  p = make_plan(cnn_layers(), m, "onednn", {}, {"classifier.*"}, {}, 0);
  CHECK_FALSE(p.layers[0].quantized);
  CHECK(p.layers[0].reason == "not in {only}");  // the library names options by key
  CHECK(p.layers[2].quantized);
  CHECK(p.layers[3].quantized);

  p = make_plan(cnn_layers(), m, "onednn", {}, {}, {"classifier.1"}, 0);
  CHECK_FALSE(p.layers[2].quantized);
  CHECK(p.layers[2].reason.find("sensitive") != std::string::npos);
  CHECK(p.float_layers() == std::vector<std::string>{"classifier.1", "classifier.4"});

  CHECK_THROWS_AS(check_layer_globs(cnn_layers(), {"decoder.*"}, {}), lite::UsageError);
  CHECK_NOTHROW(check_layer_globs(cnn_layers(), {"features.*"}, {"classifier.1"}));
}

TEST_CASE("a mode with nothing to quantize is an input error") {
  std::vector<LayerInfo> convs = {{"c", "Conv2d", "aten::conv2d", {8, 3, 3, 3}, 8}};
  CHECK_THROWS_AS(make_plan(convs, find_mode("dynamic"), "onednn", {}, {}, {}, 0), lite::InputError);
  CHECK_THROWS_AS(make_plan({}, find_mode("static"), "onednn", {}, {}, {}, 0), lite::InputError);
  CHECK_THROWS_AS(make_plan(convs, find_mode("auto"), "onednn", {}, {}, {}, 0), lite::InternalError);
}

TEST_CASE("tolerance search: nothing kept float when everything quantized fits") {
  int calls = 0;
  auto r = search_float_layers({"a", "b", "c"}, 1.0, [&](const std::vector<std::string>& keep) {
    ++calls;
    return keep.empty() ? 0.5 : 0.0;
  });
  CHECK(r.met);
  CHECK(r.float_layers.empty());
  CHECK(calls == 1);
}

TEST_CASE("tolerance search finds the fewest sensitive layers to keep float, in log time") {
  // 40 layers; every layer kept float removes 0.1 points from a 3.0-point drop: 20 must stay float.
  std::vector<std::string> layers;
  for (int i = 0; i < 40; ++i) layers.push_back("l" + std::to_string(i));
  int calls = 0;
  auto r = search_float_layers(layers, 1.0, [&](const std::vector<std::string>& keep) {
    ++calls;
    return 3.0 - 0.1 * double(keep.size());
  });
  CHECK(r.met);
  CHECK(r.float_layers.size() == 20);
  CHECK(r.float_layers.front() == "l0");  // most sensitive first
  CHECK(r.drop <= 1.0);
  CHECK(calls <= 12);  // 1 + 6 doublings + 5 bisections, not 40
  CHECK(r.steps.size() == static_cast<size_t>(calls));
}

TEST_CASE("tolerance search reports the best effort when only the float model would fit") {
  auto r = search_float_layers({"a", "b", "c", "d"}, 0.1, [&](const std::vector<std::string>& keep) {
    return keep.size() == 2 ? 0.4 : 1.0;  // best with two float layers, never within 0.1
  });
  CHECK_FALSE(r.met);
  CHECK(r.float_layers.size() == 2);
  CHECK(r.drop == doctest::Approx(0.4));
  for (const auto& s : r.steps) CHECK(s.float_layers.size() < 4);  // never all float
  // A single layer cannot fall back at all.
  auto single = search_float_layers({"a"}, 0.1, [](const std::vector<std::string>&) { return 1.0; });
  CHECK_FALSE(single.met);
  CHECK(single.steps.size() == 1);
}

TEST_CASE("a float region keeps every layer under its module path float, and only those") {
  Plan p = make_plan(cnn_layers(), find_mode("static"), "onednn", {}, {}, {}, 2'000'000);
  const uint64_t expected = p.expected_file_bytes;
  apply_float_regions(p, {{"features", "an `if` that depends on data (model.py:12)"}});
  REQUIRE(p.float_regions.size() == 1);
  CHECK(p.float_regions[0].module == "features");
  CHECK_FALSE(p.layers[0].quantized);
  CHECK_FALSE(p.layers[1].quantized);
  CHECK(p.layers[0].reason == "in features: an `if` that depends on data (model.py:12)");
  CHECK(p.layers[0].bytes_after == p.layers[0].bytes_before);
  CHECK(p.layers[2].quantized);  // "classifier.1" is not under "features"
  CHECK(p.expected_file_bytes > expected);
  // Applying the same region again changes nothing; a prefix that is not a whole path segment matches nothing.
  apply_float_regions(p, {{"features", "again"}, {"classifier.", "no layer is named under it"}});
  CHECK(p.float_regions.size() == 2);
  CHECK(p.layers[0].reason == "in features: an `if` that depends on data (model.py:12)");
  CHECK(p.layers[2].quantized);
}
