#include "docgen.hpp"

#include "lite/core/atomic_file.hpp"
#include "lite/core/error.hpp"

namespace lite::cli::docgen {

void generate(const std::filesystem::path& dir, const nlohmann::json& catalog) {
  const std::filesystem::path man = dir / "man" / "man1";
  const std::filesystem::path bash = dir / "bash-completion" / "completions";
  const std::filesystem::path zsh = dir / "zsh" / "vendor-completions";
  const std::filesystem::path fish = dir / "fish" / "vendor_completions.d";
  for (const auto& folder : {man, bash, zsh, fish}) {
    std::error_code ec;
    std::filesystem::create_directories(folder, ec);
    if (ec) throw InputError(folder.string(), "cannot create the folder: " + ec.message(), "give a writable DIR");
  }
  write_file_atomically(man / "lite.1", man_page_of_lite(catalog));
  for (const auto& verb : catalog["verbs"])
    write_file_atomically(man / ("lite-" + verb["name"].get<std::string>() + ".1"), man_page(verb));
  write_file_atomically(bash / "lite", bash_completion(catalog));
  write_file_atomically(zsh / "_lite", zsh_completion(catalog));
  write_file_atomically(fish / "lite.fish", fish_completion(catalog));
}

}  // namespace lite::cli::docgen
