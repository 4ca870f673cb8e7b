#pragma once
// Man pages and shell completions, generated from the flag catalog (flag_catalog.hpp), so they say what --help says:
// `lite --generate-docs DIR` writes, under DIR, the tree the package installs below /usr/share:
//   man/man1/lite.1, man/man1/lite-<verb>.1          man(7) pages
//   bash-completion/completions/lite                    bash (bash-completion's folder)
//   zsh/vendor-completions/_lite                        zsh (Debian's vendor folder)
//   fish/vendor_completions.d/lite.fish                 fish
// The output depends on the catalog alone (no date, no host), so a rebuild regenerates the same bytes.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace lite::cli::docgen {

std::string man_page_of_lite(const nlohmann::json& catalog);
std::string man_page(const nlohmann::json& verb);
std::string bash_completion(const nlohmann::json& catalog);
std::string zsh_completion(const nlohmann::json& catalog);
std::string fish_completion(const nlohmann::json& catalog);

// Writes every file above under `dir` (atomically, each).
void generate(const std::filesystem::path& dir, const nlohmann::json& catalog);

}  // namespace lite::cli::docgen
