// Untrusted JSON (lite/core/json_input.hpp): the nesting bound (256 accepted, 257 and 100k refused without a
// crash), keys repeated at the top level and nested, syntax errors that quote at most a short token, and the
// file checks (missing, folder, device, FIFO, too large). Every refusal is an InputError naming the source.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <string>

#include "../scratch_dir.hpp"
#include "lite/core/error.hpp"
#include "lite/core/json_input.hpp"

namespace {

std::string nested_arrays(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// The message of the InputError parse_json_input throws for `text` (fails the test when it accepts it).
std::string refusal(const std::string& text, const std::string& source = "cfg.json") {
  try {
    lite::parse_json_input(text, source, "see the form");
  } catch (const lite::InputError& e) {
    return e.what();
  }
  FAIL("expected an InputError for: " << text.substr(0, 80));
  return {};
}

std::string file_refusal(const std::filesystem::path& path) {
  try {
    lite::read_json_input_file(path, "config file", "see the form");
  } catch (const lite::InputError& e) {
    return e.what();
  }
  FAIL("expected an InputError for " << path);
  return {};
}

}  // namespace

TEST_CASE("json input: nesting up to 256 levels is read, 257 is refused with the byte where it starts") {
  CHECK(lite::parse_json_input(nested_arrays(256), "x.json", "fix").is_array());
  std::string deep_objects;
  for (int i = 0; i < 256; ++i) deep_objects += "{\"k\":";
  deep_objects += "1" + std::string(256, '}');
  CHECK(lite::parse_json_input(deep_objects, "x.json", "fix").is_object());

  const std::string message = refusal(nested_arrays(257), "deep.json");
  CHECK(message.rfind("deep.json: ", 0) == 0);
  CHECK(message.find("deeper than 256 levels") != std::string::npos);
  CHECK(message.find("at byte 256") != std::string::npos);
  CHECK(message.find("[0][0][0][0][0]...[0][0][0])") != std::string::npos);
  CHECK(message.find("at most 256 levels deep") != std::string::npos);
}

TEST_CASE("json input: 100k levels are refused without a crash, arrays and objects alike") {
  CHECK(refusal(nested_arrays(100000)).find("deeper than 256 levels") != std::string::npos);
  CHECK(refusal(std::string(100000, '[')).find("deeper than 256 levels") != std::string::npos);  // unclosed too
  std::string objects;
  for (int i = 0; i < 100000; ++i) objects += "{\"a\":";
  const std::string message = refusal(objects);
  CHECK(message.find("deeper than 256 levels") != std::string::npos);
  CHECK(message.find("a.a.a.a.a...a.a.a)") != std::string::npos);  // the key path, elided in the middle
}

TEST_CASE("json input: a key given twice in one object is refused with its key path") {
  const std::string top = refusal(R"({"mode": "static", "batches": [1], "mode": "dynamic"})", "q.json");
  CHECK(top.rfind("q.json: ", 0) == 0);
  CHECK(top.find("has the key 'mode' twice in the top-level object") != std::string::npos);
  CHECK(top.find("keep one of them") != std::string::npos);

  const std::string nested = refusal(R"({"steps": [{"prune": {}}, {"quantize": {"mode": "a", "mode": "b"}}]})");
  CHECK(nested.find("has the key 'mode' twice in steps[1].quantize") != std::string::npos);

  // The same key in different objects is not a repeat; nor is one that differs only in case.
  const auto distinct = lite::parse_json_input(R"({"a": {"x": 1}, "b": {"x": 2}, "X": {"x": 3, "a": 0}})", "ok", "fix");
  CHECK(distinct.size() == 3);
  // Escapes are decoded first: "\u006dode" is "mode".
  CHECK(refusal(R"({"mode": 1, "\u006dode": 2})").find("'mode' twice") != std::string::npos);
}

TEST_CASE("json input: error lines quote at most 40 characters of a key or token") {
  const std::string long_key(5000, 'k');
  const std::string twice = refusal("{\"" + long_key + "\": 1, \"" + long_key + "\": 2}");
  CHECK(twice.find(std::string(40, 'k') + "...'") != std::string::npos);
  CHECK(twice.size() < 300);

  const std::string digits(100000, '9');
  const std::string overflow = refusal("[1e" + digits + "]");
  CHECK(overflow.find("is not valid JSON") != std::string::npos);
  CHECK(overflow.size() < 400);

  const std::string unterminated = refusal("{\"a\": \"" + std::string(100000, 'x'));
  CHECK(unterminated.find("is not valid JSON") != std::string::npos);
  CHECK(unterminated.find("see the form") != std::string::npos);
  CHECK(unterminated.size() < 400);
  CHECK(refusal("").find("is not valid JSON") != std::string::npos);
  CHECK(refusal("{} {}").find("is not valid JSON") != std::string::npos);
}

TEST_CASE("json input: only a regular file of at most 16 MiB is read") {
  lite::test::ScratchDir dir("json_input");
  CHECK(lite::read_json_input_file(dir.file("ok.json", R"({"a": [1, 2]})"), "config file", "fix")["a"].size() == 2);

  const std::string missing = file_refusal(dir.path / "none.json");
  CHECK(missing.find("none.json: cannot open the config file") != std::string::npos);
  CHECK(file_refusal(dir.path).find("is a folder, not a config file") != std::string::npos);
  CHECK(file_refusal("/dev/zero").find("/dev/zero: is not a regular file") != std::string::npos);
  CHECK(file_refusal("/dev/urandom").find("is not a regular file") != std::string::npos);

  const auto fifo = dir.path / "fifo.json";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(file_refusal(fifo).find("is not a regular file") != std::string::npos);  // returns: no writer is awaited

  const std::string big = file_refusal(dir.file("big.json", "[" + std::string(lite::kMaxJsonFileBytes, ' ') + "]"));
  CHECK(big.find("more than the 16.0 MiB lite reads as a config file") != std::string::npos);

  const std::string dup = file_refusal(dir.file("dup.json", R"({"a": 1, "a": 2})"));
  CHECK(dup.find("dup.json: has the key 'a' twice") != std::string::npos);
}
