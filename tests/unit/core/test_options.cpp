// The options pattern's shared pieces: OptionReader (unknown keys, wrong types, nested prefixes), the value
// rules, and the one name lookup of plug-in tables.
#include <doctest/doctest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "lite/core/gates.hpp"
#include "lite/core/options.hpp"
#include "lite/core/registry.hpp"

namespace {

struct Demo {
  int warmup = 5;
  double duration_s = 1.0;
  std::string mode = "auto";
  std::optional<double> tolerance;
  std::vector<int64_t> batches = {1, 64};
  bool dry_run = false;
};

void read_demo(const nlohmann::json& j, Demo& d, const std::string& prefix = {}) {
  lite::OptionReader r(j, prefix);
  r.read("warmup", d.warmup)
      .read("duration_s", d.duration_s)
      .read("mode", d.mode)
      .read("tolerance", d.tolerance)
      .read("batches", d.batches)
      .read("dry_run", d.dry_run);
  r.finish();
}

template <class F>
lite::OptionError catch_option_error(F f) {
  try {
    f();
  } catch (const lite::OptionError& e) {
    return e;
  }
  FAIL("no OptionError thrown");
  return lite::OptionError("", "");
}

}  // namespace

TEST_CASE("OptionReader keeps defaults for absent keys and reads present ones") {
  Demo d;
  read_demo(nlohmann::json{{"warmup", 7}, {"tolerance", 0.5}, {"batches", {1, 32}}}, d);
  CHECK(d.warmup == 7);
  CHECK(d.duration_s == 1.0);
  CHECK(d.mode == "auto");
  REQUIRE(d.tolerance);
  CHECK(*d.tolerance == 0.5);
  CHECK(d.batches == std::vector<int64_t>{1, 32});
  read_demo(nlohmann::json{{"tolerance", nullptr}}, d);
  CHECK_FALSE(d.tolerance);
}

TEST_CASE("OptionReader names the key of an unknown option, with a suggestion and the valid keys") {
  Demo d;
  auto e = catch_option_error([&] { read_demo(nlohmann::json{{"warmpu", 3}}, d); });
  CHECK(e.key() == "warmpu");
  CHECK(e.problem().find("did you mean 'warmup'") != std::string::npos);
  CHECK(e.fix().find("valid keys: warmup, duration_s") != std::string::npos);
}

TEST_CASE("OptionReader rejects wrong types, naming the key path") {
  Demo d;
  auto e = catch_option_error([&] { read_demo(nlohmann::json{{"warmup", "five"}}, d, "steps[2].quantize."); });
  CHECK(e.key() == "steps[2].quantize.warmup");
  CHECK(e.problem().find("expected an integer") != std::string::npos);
  e = catch_option_error([&] { read_demo(nlohmann::json{{"dry_run", 1}}, d); });
  CHECK(e.key() == "dry_run");
  e = catch_option_error([&] { read_demo(nlohmann::json{{"batches", {1, "x"}}}, d); });
  CHECK(e.key() == "batches");
  e = catch_option_error([&] { read_demo(nlohmann::json::array(), d); });
  CHECK(e.problem().find("expected an object") != std::string::npos);
}

TEST_CASE("option rules reject non-finite and out-of-range values with the key") {
  using namespace lite::option_rules;
  CHECK_NOTHROW(at_least("warmup", 0, 0));
  CHECK(catch_option_error([] { at_least("warmup", -1, 0); }).key() == "warmup");
  CHECK(catch_option_error([] { finite("duration_s", INFINITY); }).problem().find("finite") != std::string::npos);
  CHECK(catch_option_error([] { in_range("alpha", NAN, 0, 1); }).key() == "alpha");
  CHECK_NOTHROW(thread_count("threads", 0));
  CHECK(catch_option_error([] { thread_count("threads", 100000); }).problem().find("4x") != std::string::npos);
  CHECK(catch_option_error([] { thread_count("threads", -1); }).key() == "threads");
}

TEST_CASE("find_named: one normalisation, aliases, did you mean") {
  struct Entry {
    const char* name;
    const char* alias;
  };
  const std::vector<Entry> table = {{"s3fifo", "s3-fifo"}, {"2q", "twoq"}, {"weight-int8", ""}};
  auto names = [](const Entry& e) {
    std::vector<std::string> n{e.name};
    if (*e.alias) n.push_back(e.alias);
    return n;
  };
  CHECK(std::string(lite::find_named(table, "S3_FIFO", "policy", "policy", names).name) == "s3fifo");
  CHECK(std::string(lite::find_named(table, "TwoQ", "policy", "policy", names).name) == "2q");
  CHECK(std::string(lite::find_named(table, "weight_int8", "mode", "mode", names).name) == "weight-int8");
  auto e = catch_option_error([&] { lite::find_named(table, "s3fif", "policies", "policy", names); });
  CHECK(e.key() == "policies");
  CHECK(e.problem() == "unknown policy 's3fif'; did you mean 's3fifo'?");
  CHECK(e.fix() == "known: s3fifo, 2q, weight-int8");
  CHECK(catch_option_error([&] { lite::find_named(table, "", "mode", "mode", names); }).key() == "mode");
}

TEST_CASE("Gates records each failed gate once") {
  lite::Gates g;
  CHECK(g.passed());
  g.fail("speed");
  g.fail("speed");
  g.fail("tolerance");
  CHECK_FALSE(g.passed());
  CHECK(g.failed == std::vector<std::string>{"speed", "tolerance"});
  CHECK(nlohmann::json(g)["passed"] == false);
}

TEST_CASE("OMP_NUM_THREADS and MKL_NUM_THREADS: thread counts from 1 to 4x the cores, else a usage error") {
  const int most = lite::option_rules::max_threads();
  for (const char* name : {"OMP_NUM_THREADS", "MKL_NUM_THREADS"}) {
    for (const std::string& fine : {std::string("1"), std::to_string(most), std::string("2,1"), std::string("")}) {
      ::setenv(name, fine.c_str(), 1);
      CHECK_NOTHROW(lite::option_rules::thread_environment());
    }
    for (const std::string& bad : {std::string("100000"), std::string("0"), std::string("-1"), std::string("x"),
                                   std::to_string(most + 1), std::string("2,100000"), std::string("99999999999999")}) {
      ::setenv(name, bad.c_str(), 1);
      try {
        lite::option_rules::thread_environment();
        FAIL("accepted " << name << "=" << bad);
      } catch (const lite::UsageError& e) {
        CHECK(std::string(e.what()).find(name) == 0);
      }
    }
    ::unsetenv(name);
  }
  CHECK_NOTHROW(lite::option_rules::thread_environment());
}

TEST_CASE("OptionReader refuses an integer its field cannot hold instead of wrapping it") {
  struct Counts {
    uint64_t keys = 1;
    int threads = 0;
  } c;
  auto read = [&](const nlohmann::json& j) {
    try {
      lite::OptionReader r(j);
      r.read("keys", c.keys).read("threads", c.threads);
      r.finish();
    } catch (const lite::OptionError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(read({{"keys", 18446744073709551615ULL}, {"threads", -3}}).empty());  // in range: the rules come later
  CHECK(c.keys == 18446744073709551615ULL);
  const std::string negative = read({{"keys", -1}});
  CHECK(negative.rfind("keys: -1 is outside", 0) == 0);
  CHECK(negative.find("0 to 18446744073709551615") != std::string::npos);
  CHECK(read({{"threads", 4294967296LL}}).find("threads: 4294967296 is outside") == 0);
  CHECK(c.keys == 18446744073709551615ULL);  // a refused value leaves the field alone
}
