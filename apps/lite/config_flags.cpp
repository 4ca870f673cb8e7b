#include "config_flags.hpp"

#include <functional>

#include "flag_wording.hpp"
#include "torch_log_flags.hpp"
#include "lite/core/file_roles.hpp"
#include "lite/core/json_input.hpp"

namespace lite::cli {

void add_config_flags(CLI::App& app, ConfigFlags& flags) {
  app.add_option("--config", flags.config,
                 "Options from a JSON file, as --dump-config prints them; flags win")
      ->group("Options as data");
  app.add_flag("--dump-config", flags.dump, "Print the effective options as JSON and exit")->group("Options as data");
}

void add_shared_flags(CLI::App& app, OutputOptions& output, ConfigFlags& config, bool verbose) {
  add_output_flags(app, output);
  if (verbose) add_verbose_flag(app);
  add_config_flags(app, config);
}

nlohmann::json read_config_file(const std::string& path) {
  const std::string form_fix = "see --dump-config for the form";
  nlohmann::json j = read_json_input_file(path, "config file", form_fix);
  if (!j.is_object()) throw InputError(path, "is not a JSON object of options", form_fix);
  return j;
}

namespace {
// Every string in `value` (paths sit at the top level or in lists), with the key it sits under.
void each_string(const std::string& key, const nlohmann::json& value,
                 const std::function<void(const std::string&, const std::string&)>& visit) {
  if (value.is_string()) visit(key, value.get<std::string>());
  if (value.is_array())
    for (const auto& v : value) each_string(key, v, visit);
}
}  // namespace

void check_config_not_named(const std::string& config, const nlohmann::json& options) {
  for (auto it = options.begin(); it != options.end(); ++it)
    each_string(it.key(), it.value(), [&](const std::string& key, const std::string& path) {
      if (!path.empty() && path != "-" && same_file(path, config))
        throw OptionError(key, path + ": is the {config} file, an input of this command",
                          "choose a different path (lite never overwrites its inputs)");
    });
}

bool given_on_command_line(const CLI::App& app, const std::string& key) {
  std::vector<std::string> names = {flag_for_key(key), key};
  const auto& old = renamed_flags(key);
  names.insert(names.end(), old.begin(), old.end());
  for (const std::string& name : names) {
    const CLI::Option* option = app.get_option_no_throw(name);
    if (option && option->count() > 0) return true;
  }
  return false;
}

}  // namespace lite::cli
