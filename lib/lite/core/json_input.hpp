#pragma once
// Reading JSON a user hands lite (--config files, lite run recipes): untrusted documents, checked before any
// tree is built. Why: nlohmann's parser is iterative, but what follows it is not (copies, from_json, dump
// recurse), so a document nested 100k deep overflowed the stack; and an object holding a key twice silently kept
// the last value, so a recipe's second "mode" replaced its first without a word. Here one SAX pass checks the
// text (syntax, nesting at most kMaxJsonDepth, no key twice in one object) and only then is the tree built.
// Files must be regular files of at most kMaxJsonFileBytes, so /dev/zero, /dev/urandom or a FIFO neither hang
// the reader nor grow its memory. Every refusal is an InputError naming the source, the place (key path, line
// and column or byte offset) and the fix; a value quoted into it is cut to its first 40 characters (shorten()).
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace lite {

// The deepest nesting of arrays and objects accepted: `[]` is 1 deep, `{"a": [1]}` 2.
inline constexpr size_t kMaxJsonDepth = 256;
// The largest JSON file read (a config file or recipe is a few KiB).
inline constexpr size_t kMaxJsonFileBytes = size_t(16) << 20;

// Parses `text`, the contents of `source` (the subject of every error: a file name). Throws InputError when the
// text is not JSON, nests deeper than kMaxJsonDepth or repeats a key in an object; `form_fix` is the fix given
// for text that is not JSON (e.g. "see --dump-config for the form").
nlohmann::json parse_json_input(std::string_view text, const std::string& source, const std::string& form_fix);

// Reads the file `path` (`what` it is, for messages: "config file", "recipe") and parses it as above. Refuses
// (InputError naming the path) a missing or unreadable file, a folder, anything but a regular file, and a file
// larger than kMaxJsonFileBytes.
nlohmann::json read_json_input_file(const std::filesystem::path& path, const std::string& what,
                                    const std::string& form_fix);

}  // namespace lite
