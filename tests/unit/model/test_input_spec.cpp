#include <doctest/doctest.h>

#include "lite/core/error.hpp"
#include "lite/core/options.hpp"
#include "lite/model/input_spec.hpp"

#include <nlohmann/json.hpp>

using namespace lite;
using model::parse_input_spec;

TEST_CASE("input specs parse shapes and dtypes") {
  auto s = parse_input_spec("1x3x224x224");
  CHECK(s.shape == std::vector<int64_t>{1, 3, 224, 224});
  CHECK(s.dtype == "float32");
  auto t = parse_input_spec("8x128:int64");
  CHECK(t.shape == std::vector<int64_t>{8, 128});
  CHECK(t.dtype == "int64");
  CHECK(parse_input_spec("4X16:Float16").dtype == "float16");
  CHECK(model::to_string(t) == "8x128:int64");
  CHECK(model::to_string(s) == "1x3x224x224");
  auto b = model::with_batch({s, t}, 32);
  CHECK(b[0].shape[0] == 32);
  CHECK(b[1].shape[0] == 32);
  CHECK(model::with_batch({s}, 0)[0].shape[0] == 1);
}

TEST_CASE("an input spec in JSON is an object with a shape or the string --input takes") {
  auto object = nlohmann::json::parse(R"({"shape": [1, 3, 8, 8], "dtype": "int64"})").get<model::InputSpec>();
  CHECK(object.shape == std::vector<int64_t>{1, 3, 8, 8});
  CHECK(object.dtype == "int64");
  auto text = nlohmann::json("1x3x8x8:int64").get<model::InputSpec>();
  CHECK(text.shape == object.shape);
  CHECK(text.dtype == object.dtype);
  CHECK(nlohmann::json("1x3x8x8").get<model::InputSpec>().dtype == "float32");
  CHECK_THROWS_AS(nlohmann::json("1xax3").get<model::InputSpec>(), UsageError);
  // a model's lite.json is untrusted: what is not a shape is a usage error naming the form, never a JSON type error
  CHECK_THROWS_AS(nlohmann::json::parse(R"({"dtype": "float32"})").get<model::InputSpec>(), UsageError);
  CHECK_THROWS_AS(nlohmann::json::parse(R"({"shape": [1.5, 3]})").get<model::InputSpec>(), UsageError);
  CHECK_THROWS_AS(nlohmann::json::parse(R"({"shape": ["a"]})").get<model::InputSpec>(), UsageError);
  CHECK_THROWS_AS(nlohmann::json::parse(R"({"shape": [1, 3], "dtype": 5})").get<model::InputSpec>(), UsageError);
  CHECK_THROWS_AS(nlohmann::json(5).get<model::InputSpec>(), UsageError);
}

TEST_CASE("bad input specs are usage errors that show the expected form") {
  for (const char* bad : {"", "1x", "x3", "1xax3", "0x3", "1x-3", "1x3:float65"}) {
    CAPTURE(bad);
    try {
      parse_input_spec(bad);
      FAIL("expected a usage error");
    } catch (const OptionError& e) {
      CHECK(e.key() == "inputs");  // the CLI words it as --input
      CHECK(std::string(e.what()).find(std::string("'") + bad + "'") != std::string::npos);
    }
  }
  CHECK_THROWS_WITH_AS(parse_input_spec("1x3:flaot32"), doctest::Contains("did you mean 'float32'"),
                       UsageError);
}

TEST_CASE("a declared object shape passes --input's rule: positive dimensions up to 2^31, a known dtype") {
  for (const char* text : {R"({"shape": [-1, 99999999999, 28, 28]})", R"({"shape": [1, 0, 28]})",
                           R"({"shape": []})", R"({"shape": [1, 4294967296]})",
                           R"({"shape": [1, 3], "dtype": "complex128"})"}) {
    CAPTURE(text);
    CHECK_THROWS_AS(nlohmann::json::parse(text).get<model::InputSpec>(), UsageError);
  }
  const auto ok = nlohmann::json::parse(R"({"shape": [8, 128], "dtype": "int64"})").get<model::InputSpec>();
  CHECK(ok.shape == std::vector<int64_t>{8, 128});
  CHECK(ok.dtype == "int64");
}
