// OptionError, OptionReader and the shared value rules of the options pattern (see options.hpp).
#include "lite/core/options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <thread>
#include <utility>

#include "lite/core/text.hpp"

namespace lite {

namespace {

std::string option_message(const std::string& key, const std::string& problem, const std::string& fix) {
  return describe_problem(key, problem, fix);
}

const char* type_name(const nlohmann::json& value) {
  if (value.is_boolean()) return "a boolean";
  if (value.is_number_integer()) return "an integer";
  if (value.is_number()) return "a number";
  if (value.is_string()) return "a string";
  if (value.is_array()) return "an array";
  if (value.is_object()) return "an object";
  return "null";
}

}  // namespace

std::string render_option_refs(const std::string& text, const std::function<std::string(const std::string&)>& word) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t open = text.find('{', i);
    if (open == std::string::npos) break;
    size_t close = text.find('}', open);
    if (close == std::string::npos) break;
    const std::string key = text.substr(open + 1, close - open - 1);
    const bool is_key = !key.empty() && key.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") == std::string::npos;
    out += text.substr(i, open - i);
    out += is_key ? word(key) : text.substr(open, close - open + 1);
    i = close + 1;
  }
  return out + text.substr(std::min(i, text.size()));
}

void render_option_refs_in(nlohmann::json& j, const std::function<std::string(const std::string&)>& word) {
  if (j.is_string()) {
    const auto& text = j.get_ref<const std::string&>();
    if (text.find('{') != std::string::npos) j = render_option_refs(text, word);
  } else if (j.is_structured()) {
    for (auto& child : j) render_option_refs_in(child, word);
  }
}

OptionError::OptionError(std::string key, std::string problem, std::string fix)
    : UsageError(option_message(key, problem, fix)),
      key_(std::move(key)),
      problem_(std::move(problem)),
      fix_(std::move(fix)) {}

OptionError OptionError::prefixed(const std::string& prefix) const { return OptionError(prefix + key_, problem_, fix_); }

OptionReader::OptionReader(const nlohmann::json& object, std::string prefix) : object_(object), prefix_(std::move(prefix)) {
  if (!object_.is_object()) {
    std::string where = prefix_.empty() ? "options" : prefix_.substr(0, prefix_.size() - 1);
    throw OptionError(where, std::string("expected an object of options, got ") + type_name(object_),
                      "write it as a JSON object {\"key\": value, ...}");
  }
}

void OptionReader::check_type(const std::string& key, const nlohmann::json& value, Type type) const {
  bool ok = true;
  const char* expected = "";
  switch (type) {
    case Type::any: return;
    case Type::boolean: ok = value.is_boolean(); expected = "true or false"; break;
    case Type::integer: ok = value.is_number_integer(); expected = "an integer"; break;
    case Type::number: ok = value.is_number(); expected = "a number"; break;
    case Type::string: ok = value.is_string(); expected = "a string"; break;
    case Type::array: ok = value.is_array(); expected = "an array"; break;
    case Type::object: ok = value.is_object(); expected = "an object"; break;
  }
  if (!ok)
    throw OptionError(prefix_ + key, fmt::format("expected {}, got {} ({})", expected, type_name(value), value.dump()),
                      fmt::format("write {}", expected));
}

void OptionReader::check_integer_range(const std::string& key, const nlohmann::json& value, long double low,
                                       long double high) const {
  const long double v = value.is_number_unsigned() ? static_cast<long double>(value.get<uint64_t>())
                                                   : static_cast<long double>(value.get<int64_t>());
  if (v >= low && v <= high) return;
  throw OptionError(prefix_ + key,
                    fmt::format("{} is outside the whole numbers this option holds ({:.0f} to {:.0f})", value.dump(),
                                low, high),
                    "give a value in that range");
}

void OptionReader::warn_renamed(const std::string& old_key, const std::string& new_key) const {
  warn_option("{" + prefix_ + old_key + "} is renamed {" + prefix_ + new_key + "}; the old name works until the next "
              "release");
}

namespace {
std::vector<std::string>& option_warnings() {
  static std::vector<std::string> warnings;
  return warnings;
}
}  // namespace

void warn_option(const std::string& text) {
  auto& w = option_warnings();
  if (std::find(w.begin(), w.end(), text) == w.end()) w.push_back(text);
}

std::vector<std::string> take_option_warnings() { return std::exchange(option_warnings(), {}); }

void OptionReader::finish() const {
  for (auto it = object_.begin(); it != object_.end(); ++it) {
    if (std::find(known_.begin(), known_.end(), it.key()) != known_.end()) continue;
    if (std::find(renamed_.begin(), renamed_.end(), it.key()) != renamed_.end()) continue;
    std::string problem = fmt::format("unknown option '{}'", it.key());
    if (auto m = closest_match(it.key(), known_)) problem += fmt::format("; did you mean '{}'?", *m);
    throw OptionError(prefix_ + it.key(), problem, "valid keys: " + join(known_, ", "));
  }
}

namespace option_rules {

void finite(const std::string& key, double value) {
  if (!std::isfinite(value))
    throw OptionError(key, fmt::format("must be a finite number, got {}", value), "give a finite number");
}

void at_least(const std::string& key, double value, double minimum, const std::string& fix) {
  finite(key, value);
  if (value < minimum)
    throw OptionError(key, fmt::format("must be at least {}, got {}", minimum, value),
                      fix.empty() ? fmt::format("give {} or more", minimum) : fix);
}

void at_most(const std::string& key, double value, double maximum, const std::string& fix) {
  finite(key, value);
  if (value > maximum)
    throw OptionError(key, fmt::format("must be at most {}, got {}", maximum, value),
                      fix.empty() ? fmt::format("give {} or less", maximum) : fix);
}

void in_range(const std::string& key, double value, double low, double high, const std::string& fix) {
  finite(key, value);
  if (value < low || value > high)
    throw OptionError(key, fmt::format("must be between {} and {}, got {}", low, high, value),
                      fix.empty() ? fmt::format("give a value from {} to {}", low, high) : fix);
}

void not_empty(const std::string& key, const std::string& value, const std::string& fix) {
  if (value.empty()) throw OptionError(key, "is required", fix.empty() ? std::string("give a value") : fix);
}

int max_threads() { return 4 * int(std::max(1u, std::thread::hardware_concurrency())); }

void thread_count(const std::string& key, int threads) {
  if (threads < 0 || threads > max_threads())
    throw OptionError(key, fmt::format("must be between 0 (the default) and {} (4x this machine's {} cores), got {}",
                                       max_threads(), max_threads() / 4, threads),
                      "more threads than cores only adds contention");
}

void thread_environment() {
  for (const char* name : {"OMP_NUM_THREADS", "MKL_NUM_THREADS"}) {
    const char* value = std::getenv(name);
    if (!value || !*value) continue;
    const std::string shown = escape_control(std::string(value).substr(0, 40));
    for (const auto& part : split(value, ',')) {
      const std::string t = trim(part);
      const bool digits = !t.empty() && t.size() <= 9 && t.find_first_not_of("0123456789") == std::string::npos;
      const long n = digits ? std::stol(t) : 0;
      if (n < 1 || n > max_threads())
        throw UsageError(describe_problem(name, fmt::format("'{}' is not a thread count from 1 to {} (4x this "
                                                            "machine's {} cores)", shown, max_threads(),
                                                            max_threads() / 4),
                                          fmt::format("unset {} or give 1 to {}; --threads sets lite's own", name,
                                                      max_threads())));
    }
  }
}

}  // namespace option_rules

}  // namespace lite
