// The engine table: the one place an engine is registered (engine.hpp), and the --engine text's parser
// ("vllm:decode-ms=30"). Each engine lives in its own engine_*.cpp, opening with its rules and their sources.
#include <fmt/format.h>

#include <cmath>

#include "lite/cache/prefix/engine.hpp"
#include "lite/core/registry.hpp"
#include "lite/core/text.hpp"

namespace lite::cache::prefix {

const std::vector<EngineEntry>& engine_table() {
  static const std::vector<EngineEntry> table = {
      {"ideal", "every request served at once on arrival, all its blocks cached after it (the policy's replay)",
       nullptr},
      {"vllm", "vLLM v1: full blocks only, hit within input_length - 1 tokens, LRU free queue of unused blocks, "
               "running requests' blocks pinned", make_vllm_engine},
      {"sglang", "SGLang RadixCache: token hits within input_length - 1, leaves by LRU, running requests' paths "
                 "locked", make_sglang_engine},
  };
  return table;
}

std::vector<std::string> engine_names() {
  std::vector<std::string> names;
  for (const auto& e : engine_table()) names.push_back(e.name);
  return names;
}

namespace {

// "decode-ms=X": X ms per generated token, finite and 0 or more.
double parse_decode_ms(const std::string& item) {
  const auto eq = item.find('=');
  const std::string key = to_lower(trim(item.substr(0, eq)));
  const auto value = eq == std::string::npos ? std::nullopt : parse_decimal(trim(item.substr(eq + 1)));
  if (key != "decode-ms" || !value || !(*value >= 0) || !std::isfinite(*value))
    throw OptionError("engine", fmt::format("'{}' is not decode-ms=MS (a finite number of ms, 0 or more)", trim(item)),
                      "e.g. vllm:decode-ms=30: each generated token takes 30 ms");
  return *value;
}

}  // namespace

EngineSpec parse_engine(const std::string& text) {
  const auto colon = text.find(':');
  EngineSpec spec;
  spec.engine = &find_named(engine_table(), trim(text.substr(0, colon)), "engine", "engine",
                            [](const EngineEntry& e) { return std::vector<std::string>{e.name}; },
                            "e.g. vllm or sglang:decode-ms=30");
  if (colon == std::string::npos) return spec;
  if (!spec.engine->make)
    throw OptionError("engine", "ideal serves every request at once and takes no decode time",
                      "drop ':...', or name vllm or sglang");
  spec.decode_ms = parse_decode_ms(text.substr(colon + 1));
  return spec;
}

}  // namespace lite::cache::prefix
