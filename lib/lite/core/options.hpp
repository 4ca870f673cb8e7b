#pragma once
// The one options pattern every verb follows (each lib/lite/<area>/options.hpp of lib/lite/verbs/verbs.cpp's list):
//
//   struct <Verb>Options { ...fields, defaults as member initializers... };   lib/lite/<verb>/options.hpp
//   void to_json(nlohmann::json&, const <Verb>Options&);        every key: --dump-config, reports, recipes
//   void from_json(const nlohmann::json&, <Verb>Options&);      through OptionReader: unknown keys and wrong
//                                                               types are OptionErrors naming the key
//   void validate(const <Verb>Options&);                        value rules: OptionError naming the key
//   <Verb>Result run(const <Verb>Options&, Progress&);          never prints, never exits; Gates in the result
//
// The library speaks option keys (snake_case, "calib_method"); only the CLI words them as flags
// ("--calib-method") when it prints an OptionError, so a recipe step, --config file and command line
// share one vocabulary and one set of checks.
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lite/core/error.hpp"

namespace lite {

// A bad option value. `key` is the option's key path ("calib_method", "timing.warmup",
// "steps[2].quantize.mode"); what() is "KEY: PROBLEM; FIX", which the CLI rewrites with the flag name.
// A UsageError, so code that catches usage errors catches these too.
class OptionError : public UsageError {
 public:
  OptionError(std::string key, std::string problem, std::string fix = {});
  const std::string& key() const { return key_; }
  const std::string& problem() const { return problem_; }
  const std::string& fix() const { return fix_; }
  // The same error under a longer key path (a recipe step prefixes "steps[2].quantize.").
  OptionError prefixed(const std::string& prefix) const;

 private:
  std::string key_, problem_, fix_;
};

// Messages name other options as "{key}" ("add {requests} N"): the CLI writes each as its flag ("--requests"),
// a recipe as its key path. render_option_refs does the substitution; `word` maps a key to its wording.
std::string render_option_refs(const std::string& text, const std::function<std::string(const std::string&)>& word);
// The same over every string of a JSON document (reports, provenance).
void render_option_refs_in(nlohmann::json& j, const std::function<std::string(const std::string&)>& word);

// Reads a JSON object into an options struct key by key. Keys that are absent keep the struct's default;
// a wrong type is an OptionError naming the key and the expected type; finish() rejects every key that
// was never read, with "did you mean" and the list of valid keys.
class OptionReader {
 public:
  OptionReader(const nlohmann::json& object, std::string prefix = {});

  // field() is read(): one field list per options struct serves OptionReader and OptionWriter alike.
  template <class T>
  OptionReader& field(const std::string& key, T& value) {
    return read(key, value);
  }

  template <class T>
  OptionReader& read(const std::string& key, T& field) {
    known_.push_back(key);
    auto it = object_.find(key);
    if (it == object_.end()) return *this;
    assign(key, *it, field);
    return *this;
  }

  // An option renamed in this release: its old key is still read, into the new key's field, with a warning
  // (take_option_warnings), until the next release. Both keys at once are an OptionError.
  template <class T>
  OptionReader& renamed(const std::string& old_key, const std::string& new_key, T& field) {
    renamed_.push_back(old_key);
    auto it = object_.find(old_key);
    if (it == object_.end()) return *this;
    if (object_.contains(new_key))
      throw OptionError(prefix_ + old_key, "is the old name of {" + prefix_ + new_key + "}, which is given too",
                        "keep only {" + prefix_ + new_key + "}");
    warn_renamed(old_key, new_key);
    assign(old_key, *it, field);
    return *this;
  }

  // A nested object read by its own from_json (which may use a nested reader with prefix_for(key)).
  std::string prefix_for(const std::string& key) const { return prefix_ + key + "."; }
  const std::string& prefix() const { return prefix_; }

  // Throws for keys that no read() asked for.
  void finish() const;

 private:
  template <class T>
  void assign(const std::string& key, const nlohmann::json& value, std::optional<T>& field) {
    if (value.is_null()) {
      field.reset();
      return;
    }
    T inner{};
    assign(key, value, inner);
    field = std::move(inner);
  }
  template <class T>
  void assign(const std::string& key, const nlohmann::json& value, T& field) {
    check_type(key, value, expected_type<T>());
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
      check_integer_range(key, value, static_cast<long double>(std::numeric_limits<T>::min()),
                          static_cast<long double>(std::numeric_limits<T>::max()));
    try {
      field = value.get<T>();
    } catch (const OptionError& e) {
      throw e.prefixed(prefix_ + key + ".");
    } catch (const Error& e) {
      throw OptionError(prefix_ + key, first_line(e.what()), "give a value of the form the option's description shows");
    } catch (const std::exception& e) {
      throw OptionError(prefix_ + key, std::string("cannot be read: ") + first_line(e.what()),
                        "give a value of the form the option's description shows");
    }
  }

  enum class Type { any, boolean, integer, number, string, array, object };
  template <class T>
  struct is_vector : std::false_type {};
  template <class T, class A>
  struct is_vector<std::vector<T, A>> : std::true_type {};
  template <class T>
  static constexpr Type expected_type() {
    if constexpr (std::is_same_v<T, bool>) return Type::boolean;
    else if constexpr (std::is_integral_v<T>) return Type::integer;
    else if constexpr (std::is_floating_point_v<T>) return Type::number;
    else if constexpr (std::is_same_v<T, std::string>) return Type::string;
    else if constexpr (is_vector<T>::value) return Type::array;
    else return Type::any;
  }
  void check_type(const std::string& key, const nlohmann::json& value, Type type) const;
  // nlohmann's get<T>() wraps an integer that T cannot hold (-1 as uint64_t is 2^64-1): refused by key instead.
  void check_integer_range(const std::string& key, const nlohmann::json& value, long double low, long double high) const;

  void warn_renamed(const std::string& old_key, const std::string& new_key) const;

  const nlohmann::json& object_;
  std::string prefix_;
  std::vector<std::string> known_;
  std::vector<std::string> renamed_;  // old keys still read (not offered as valid keys)
};

// Warnings about options (an old key or flag still read): collected while options are read, taken by the CLI,
// which prints each on stderr once ("lite distill: warning: ..."), with {key} references worded as its flags.
void warn_option(const std::string& text);
std::vector<std::string> take_option_warnings();

// Writes an options struct into a JSON object through the same field list its from_json reads (an unset
// optional is null), so to_json and from_json cannot drift apart:
//   template <class Fields, class O> void fields(Fields& f, O& o) { f.field("warmup", o.warmup)...; }
//   to_json:   OptionWriter w(j); fields(w, o);      from_json: OptionReader r(j); fields(r, o); r.finish();
class OptionWriter {
 public:
  explicit OptionWriter(nlohmann::json& object) : object_(object) { object_ = nlohmann::json::object(); }
  template <class T>
  OptionWriter& field(const std::string& key, const T& value) {
    object_[key] = value;
    return *this;
  }
  template <class T>
  OptionWriter& field(const std::string& key, const std::optional<T>& value) {
    object_[key] = value ? nlohmann::json(*value) : nlohmann::json();
    return *this;
  }

 private:
  nlohmann::json& object_;
};

// Value rules shared by every verb's validate(); each throws OptionError(key, ...). An empty `fix` becomes
// the range itself ("give 1 or more"), so every rejection says what to do.
namespace option_rules {
void at_least(const std::string& key, double value, double minimum, const std::string& fix = {});
void at_most(const std::string& key, double value, double maximum, const std::string& fix = {});
void finite(const std::string& key, double value);
void in_range(const std::string& key, double value, double low, double high, const std::string& fix = {});
void not_empty(const std::string& key, const std::string& value, const std::string& fix = {});
// Intra-op threads: 0 (libtorch's default) up to 4x the machine's cores.
void thread_count(const std::string& key, int threads);
int max_threads();
// OMP_NUM_THREADS and MKL_NUM_THREADS, which libtorch's thread pools read at start: each a positive count (or
// OpenMP's comma list of them) up to max_threads(). Throws UsageError naming the variable (100000 threads
// crashes libtorch's first parallel region).
void thread_environment();
}  // namespace option_rules

}  // namespace lite
