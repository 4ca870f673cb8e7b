// Untrusted JSON (see json_input.hpp). The check is a SAX pass (nlohmann's parser drives it without recursion)
// holding one Frame per open array or object: the depth is the number of frames, an object's frame holds the keys
// seen so far, and the frames together give the key path of the value being read (steps[0].quantize.mode) for the
// error. Nothing is built until the whole text has passed; then nlohmann parses it again into a tree, which costs
// a second pass over at most 16 MiB and keeps lite off nlohmann's internal (detail::) DOM builder.
#include "lite/core/json_input.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <unordered_set>
#include <vector>

#include "lite/core/error.hpp"
#include "lite/core/file_roles.hpp"
#include "lite/core/text.hpp"

namespace lite {

namespace {

// One open array or object.
struct Frame {
  bool is_object = false;
  std::string key;                       // object: the key whose value is being read
  size_t elements = 0;                   // array: elements begun so far
  std::unordered_set<std::string> keys;  // object: every key seen so far
};

// The key path of the value the first `count` frames lead to ("steps[0].quantize.mode"), each key shortened and
// a path of more than ten parts elided in the middle, so that the error line stays short.
std::string key_path(const std::vector<Frame>& frames, size_t count) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < count; ++i)
    parts.push_back(frames[i].is_object ? "." + shorten(frames[i].key) : fmt::format("[{}]", frames[i].elements - 1));
  if (parts.size() > 10) {  // the first five parts say where in the document, the last three what
    parts.erase(parts.begin() + 5, parts.end() - 3);
    parts.insert(parts.begin() + 5, "...");
  }
  std::string path;
  bool after_gap = true;  // at the start, or after "...": a key needs no "." before it
  for (const auto& part : parts) {
    path += after_gap && part[0] == '.' ? part.substr(1) : part;
    after_gap = part == "...";
  }
  return path;
}

// The byte offset of the '[' or '{' that opens nesting level `depth`. The SAX pass has read the text up to it, so
// counting brackets outside strings is exact there.
size_t offset_of_level(std::string_view text, size_t depth) {
  size_t level = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++level == depth) return i;
    } else if (c == ']' || c == '}') {
      --level;
    }
  }
  return text.size();
}

// nlohmann's message without its "[json.exception.parse_error.101] " tag, and with the token it quotes (which
// may be megabytes of digits or string) shortened.
std::string syntax_problem(const std::string& what, const std::string& last_token) {
  std::string message = what;
  if (message.rfind("[json.exception.", 0) == 0)
    if (size_t end = message.find("] "); end != std::string::npos) message.erase(0, end + 2);
  const std::string short_token = shorten(last_token);
  if (!last_token.empty() && short_token != last_token)
    for (size_t at = message.find(last_token); at != std::string::npos; at = message.find(last_token, at))
      message.replace(at, last_token.size(), short_token), at += short_token.size();
  return first_line(message);
}

// The SAX handler that checks the text; it throws InputError at the first problem.
class Checker {
 public:
  using json = nlohmann::json;
  Checker(std::string_view text, const std::string& source, const std::string& form_fix)
      : text_(text), source_(source), form_fix_(form_fix) {}

  bool null() { return value(); }
  bool boolean(bool) { return value(); }
  bool number_integer(json::number_integer_t) { return value(); }
  bool number_unsigned(json::number_unsigned_t) { return value(); }
  bool number_float(json::number_float_t, const json::string_t&) { return value(); }
  bool string(json::string_t&) { return value(); }
  bool binary(json::binary_t&) { return value(); }
  bool start_object(size_t) { return open(true); }
  bool start_array(size_t) { return open(false); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(json::string_t& name) {
    Frame& object = frames_.back();
    if (!object.keys.insert(name).second) {
      const std::string where = frames_.size() == 1 ? "the top-level object" : key_path(frames_, frames_.size() - 1);
      throw InputError(source_, fmt::format("has the key '{}' twice in {}", shorten(name), where),
                       "keep one of them (lite refuses a repeated key rather than silently use the last)");
    }
    object.key = name;
    return true;
  }

  bool parse_error(size_t, const std::string& last_token, const nlohmann::detail::exception& e) {
    throw InputError(source_, "is not valid JSON: " + syntax_problem(e.what(), last_token), form_fix_);
  }

 private:
  bool value() {
    if (!frames_.empty() && !frames_.back().is_object) ++frames_.back().elements;
    return true;
  }

  bool open(bool is_object) {
    value();
    if (frames_.size() >= kMaxJsonDepth) {
      const std::string path = key_path(frames_, frames_.size());
      throw InputError(source_,
                       fmt::format("nests arrays and objects deeper than {} levels (level {} opens at byte {}, {})",
                                   kMaxJsonDepth, kMaxJsonDepth + 1, offset_of_level(text_, kMaxJsonDepth + 1), path),
                       fmt::format("flatten the document: lite reads JSON at most {} levels deep", kMaxJsonDepth));
    }
    frames_.emplace_back();
    frames_.back().is_object = is_object;
    return true;
  }

  bool close() {
    frames_.pop_back();
    return true;
  }

  std::string_view text_;
  const std::string& source_;
  const std::string& form_fix_;
  std::vector<Frame> frames_;
};

// Closes a file descriptor when it goes out of scope.
struct FileDescriptor {
  int fd;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

[[noreturn]] void refuse_size(const std::string& name, const std::string& what, const std::string& size) {
  const std::string limit = format_bytes(double(kMaxJsonFileBytes));
  throw InputError(name, fmt::format("is {}, more than the {} lite reads as a {}", size, limit, what),
                   fmt::format("check the path: a {} is a few KiB of JSON", what));
}

// The whole of a regular file of at most kMaxJsonFileBytes. O_NONBLOCK keeps open() of a FIFO from waiting for a
// writer; fstat on the open descriptor decides what the file is, so it cannot change between check and read.
std::string read_bounded_file(const std::filesystem::path& path, const std::string& what) {
  const std::string name = path.string();
  const FileDescriptor file{::open(name.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (file.fd < 0)
    throw InputError(name, fmt::format("cannot open the {}: {}", what, std::strerror(errno)), "check the path");
  struct stat st {};
  if (::fstat(file.fd, &st) != 0)
    throw InputError(name, fmt::format("cannot read the {}: {}", what, std::strerror(errno)), "check the path");
  if (S_ISDIR(st.st_mode))
    throw InputError(name, fmt::format("is a folder, not a {}", what), fmt::format("give the {}'s JSON file", what));
  if (!S_ISREG(st.st_mode))
    throw InputError(name, fmt::format("is not a regular file ({}), so not read as a {}", special_file_kind(st.st_mode), what),
                     fmt::format("give the {} as a JSON file", what));
  if (uint64_t(st.st_size) > kMaxJsonFileBytes) refuse_size(name, what, format_bytes(double(st.st_size)));
  std::string text;
  char buffer[65536];
  while (true) {
    const ssize_t n = ::read(file.fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      throw InputError(name, fmt::format("cannot read the {}: {}", what, std::strerror(errno)), "check the path");
    if (n == 0) return text;
    text.append(buffer, size_t(n));
    if (text.size() > kMaxJsonFileBytes)  // it grew after fstat
      refuse_size(name, what, "still growing past " + format_bytes(double(text.size())));
  }
}

}  // namespace

nlohmann::json parse_json_input(std::string_view text, const std::string& source, const std::string& form_fix) {
  Checker checker(text, source, form_fix);
  const char* begin = text.data();
  nlohmann::json::sax_parse(begin, begin + text.size(), &checker);
  return nlohmann::json::parse(begin, begin + text.size());
}

nlohmann::json read_json_input_file(const std::filesystem::path& path, const std::string& what,
                                    const std::string& form_fix) {
  return parse_json_input(read_bounded_file(path, what), path.string(), form_fix);
}

}  // namespace lite
