// Parsing of --policy, --sizes, --csv-columns and --format, including the error messages.
#include "cache_test_util.hpp"
#include "lite/cache/options.hpp"
#include "lite/cache/policies.hpp"
#include "lite/core/error.hpp"
#include "lite/core/text.hpp"

using namespace lite::cache;

namespace {
template <class F>
std::string usage_error(F&& f) {
  try {
    f();
  } catch (const lite::UsageError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("--policy: lists, all, parameters, aliases, duplicates") {
  auto p = parse_policies("lru,s3fifo:small=0.2,ghost=0.5,clock:bits=2");
  REQUIRE(p.size() == 3);
  CHECK(p[0].label() == "lru");
  CHECK(p[1].label() == "s3fifo:small=0.2,ghost=0.5");
  CHECK(p[2].label() == "clock:bits=2");
  CHECK(parse_policies("all").size() == policy_table().size());
  CHECK(parse_policies(" None ").empty());  // --policy none: the LRU curve alone
  CHECK(parse_policies("LRU,lru").size() == 1);
  CHECK(parse_policies("s3fifo:small-size-ratio=0.3")[0].label() == "s3fifo:small=0.3");  // libCacheSim's name
  CHECK(parse_policies("twoq")[0].name == "2q");
  CHECK(parse_policies("S3-FIFO")[0].name == "s3fifo");
  CHECK(parse_policies("opt")[0].name == "belady");
}

TEST_CASE("--policy: unknown names and parameters get the known ones and a suggestion") {
  auto m = usage_error([] { parse_policies("lru,s3fif"); });
  CHECK(m.find("unknown policy 's3fif'") != std::string::npos);
  CHECK(m.find("did you mean 's3fifo'") != std::string::npos);
  CHECK(m.find("lru, fifo, lfu, arc, 2q, s3fifo, sieve, clock, belady") != std::string::npos);
  auto p = usage_error([] { parse_policies("s3fifo:smal=0.2"); });
  CHECK(p.find("did you mean 'small'") != std::string::npos);
  CHECK(usage_error([] { parse_policies("lru:x=1"); }).find("takes no parameters") != std::string::npos);
  CHECK(usage_error([] { parse_policies("s3fifo:small=2"); }).find("out of range") != std::string::npos);
  CHECK(usage_error([] { parse_policies("clock:bits=1.5"); }).find("whole number") != std::string::npos);
  CHECK(usage_error([] { parse_policies("s3fifo:small=abc"); }).find("needs a number") != std::string::npos);
  CHECK(usage_error([] { parse_policies("small=0.1"); }).find("before any policy") != std::string::npos);
  CHECK(usage_error([] { parse_policies(""); }).find("no policy") != std::string::npos);
}

TEST_CASE("--sizes: objects, byte units in powers of 1024, fractions, percentages") {
  auto s = parse_sizes("1000, 0.1, 25%, 1.0", false);
  REQUIRE(s.size() == 4);
  CHECK(s[0].absolute == 1000);
  CHECK(s[1].fraction == doctest::Approx(0.1));
  CHECK(s[2].fraction == doctest::Approx(0.25));
  CHECK(s[3].fraction == doctest::Approx(1.0));
  auto b = parse_sizes("64KB,1MiB,1GB,4096", true);
  CHECK(b[0].absolute == 65536);
  CHECK(b[1].absolute == 1048576);
  CHECK(b[2].absolute == 1073741824);
  CHECK(b[3].absolute == 4096);
  CHECK(parse_sizes("auto", false).empty());
  CHECK(auto_size_fractions().front() == doctest::Approx(0.0001));
  CHECK(auto_size_fractions().back() == doctest::Approx(1.0));
}

TEST_CASE("--sizes: zero, negative, malformed and unit mistakes are usage errors") {
  CHECK(usage_error([] { parse_sizes("0", false); }).find("not positive") != std::string::npos);
  CHECK(usage_error([] { parse_sizes("-5", false); }).find("not positive") != std::string::npos);
  CHECK(usage_error([] { parse_sizes("100,-1MB", true); }).find("not positive") != std::string::npos);
  CHECK(usage_error([] { parse_sizes("ten", false); }).find("not a size") != std::string::npos);
  CHECK(usage_error([] { parse_sizes("1.5", false); }).find("neither a whole number") != std::string::npos);
  CHECK(usage_error([] { parse_sizes("64MB", false); }).find("add {bytes}") != std::string::npos);
  CHECK(usage_error([] { parse_sizes("0%", false); }).find("percentage") != std::string::npos);
  CHECK(usage_error([] { parse_sizes("12 parsecs", true); }).find("not a size") != std::string::npos);
}

TEST_CASE("--csv-columns and --format") {
  auto c = parse_csv_columns("time=2,obj-id=5,size=4,cost=6,delimiter=tab");
  CHECK(c.key == 5);
  CHECK(c.time == 2);
  CHECK(c.size == 4);
  CHECK(c.cost == 6);
  CHECK(c.delimiter == '\t');
  CHECK(usage_error([] { parse_csv_columns("size=4"); }).find("key") != std::string::npos);
  CHECK(usage_error([] { parse_csv_columns("key=0"); }).find("not a column number") != std::string::npos);
  CHECK(usage_error([] { parse_csv_columns("key=1,sise=2"); }).find("did you mean 'size'") != std::string::npos);
  CHECK(parse_trace_format("oracleGeneral") == TraceFormat::oracle_general);
  CHECK(parse_trace_format("oraclegeneralbin") == TraceFormat::oracle_general);
  CHECK(usage_error([] { parse_trace_format("vsci"); }).find("did you mean 'vscsi'") != std::string::npos);
}

TEST_CASE("--sizes: sizes that do not fit 64 bits are rejected as overflow, never wrapped or capped") {
  CHECK(parse_sizes("18446744073709551615", false)[0].absolute == UINT64_MAX);  // exact, not rounded to 2^64
  CHECK(parse_sizes("18446744073709551615", true)[0].absolute == UINT64_MAX);
  for (const char* text : {"18446744073709551616", "99999999999999999999999", "1e30", "2e19"}) {
    CAPTURE(text);
    const std::string m = usage_error([&] { parse_sizes(text, false); });
    CHECK(m.find("does not fit in 64 bits") != std::string::npos);
    CHECK(m.rfind("sizes: ", 0) == 0);
    CHECK(m.find("; give a smaller size") != std::string::npos);
  }
  for (const char* text : {"1e30GB", "16777216TB", "18446744073709551616B"}) {
    CAPTURE(text);
    CHECK(usage_error([&] { parse_sizes(text, true); }).find("does not fit in 64 bits") != std::string::npos);
  }
  CHECK(parse_sizes("16777215TB", true)[0].absolute == 16777215ULL << 40);
  CHECK(!lite::parse_byte_size("1e30GB"));
  CHECK(!lite::parse_byte_size("18446744073709551616"));
  CHECK(lite::parse_byte_size("1e19").value() == 10000000000000000000ULL);
}

TEST_CASE("--sizes: hex, inf, nan and other junk are not sizes, the message names the value and the forms") {
  for (bool bytes : {false, true})
    for (const char* text : {"0x10", "0x1p4", "inf", "nan", "infinity", "1e", "5 5", "--5", "1..5", "+-1", "0x10%",
                             "1e3e3", "10 objects", "%"}) {
      const std::string shown = text;
      CAPTURE(shown);
      CAPTURE(bytes);
      const std::string m = usage_error([&] { parse_sizes(text, bytes); });
      CHECK(m.rfind("sizes: '", 0) == 0);
      CHECK(m.find(std::string("'") + text + "' is not a size") != std::string::npos);
      CHECK(m.find("use e.g.") != std::string::npos);
    }
  CHECK(usage_error([] { parse_sizes("1e999", false); }).find("does not fit in 64 bits") != std::string::npos);
  CHECK(parse_sizes("1e3", false)[0].absolute == 1000);  // decimal exponents are decimal
  CHECK(parse_sizes("010", false)[0].absolute == 10);    // never octal
}

TEST_CASE("--sizes: at most kMaxSizes sizes, with the bound and the way out in the message") {
  std::string list;
  for (size_t i = 1; i <= kMaxSizes; ++i) list += std::to_string(i) + ",";
  CHECK(parse_sizes(list, false).size() == kMaxSizes);
  const std::string m = usage_error([&] { parse_sizes(list + "99999", false); });
  CHECK(m.rfind("sizes: more than 1024 sizes given", 0) == 0);
  CHECK(m.find("{mrc}") != std::string::npos);
}

TEST_CASE("the sweep's empty simulators are bounded: thousands of LHD sizes are refused before any work") {
  SimulationConfig c;
  c.trace = "unused.txt";
  std::string list;
  for (size_t i = 1; i <= kMaxSizes; ++i) list += std::to_string(i * 10) + ",";
  c.sizes = parse_sizes(list, false);
  c.policies = parse_policies("lru,s3fifo,sieve");
  check_resolved(c);  // small fixed state: 1024 sizes are fine
  CHECK(empty_simulator_bytes(parse_policies("lhd")[0], false) > (uint64_t(3) << 20));  // LHD's histograms
  c.policies = parse_policies("lru,lhd");
  const std::string m = usage_error([&] { check_resolved(c); });
  CHECK(m.rfind("sizes: 1024 sizes x 2 policies need about", 0) == 0);
  CHECK(m.find("lhd alone") != std::string::npos);
  CHECK(m.find("2.00 GiB") != std::string::npos);
  CHECK(m.find("give at most") != std::string::npos);
  c.sizes.resize(100);
  check_resolved(c);
  c.sample_check = true;  // twice the simulators
  c.sample_rate = 0.5;
  c.sizes = parse_sizes(list, false);
  c.sizes.resize(400);
  CHECK(usage_error([&] { check_resolved(c); }).rfind("sizes: 400 sizes x 2 policies", 0) == 0);
}

TEST_CASE("--policy parameters are decimal: hex and inf are refused") {
  for (const char* spec : {"s3fifo:small=0x1p-3", "s3fifo:small=inf", "clock:bits=0x2"}) {
    CAPTURE(spec);
    CHECK(usage_error([&] { parse_policies(spec); }).find("needs a number") != std::string::npos);
  }
}

TEST_CASE("--config: sample_objects -1 is refused by key, not read as 2^64-1") {
  CacheSimOptions o;
  const std::string m = usage_error([&] { from_json(nlohmann::json{{"trace", "t.txt"}, {"sample_objects", -1}}, o); });
  CHECK(m.rfind("sample_objects: -1 is outside", 0) == 0);
}
