// The one file rule (core/file_roles.hpp): outputs are never inputs (by identity, through links, or by name for
// files not there yet), never each other, never a device or FIFO, and the atomic write refuses those too.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "../scratch_dir.hpp"
#include "lite/core/atomic_file.hpp"
#include "lite/core/error.hpp"
#include "lite/core/file_roles.hpp"
#include "lite/core/options.hpp"

using namespace lite;
namespace fs = std::filesystem;
using test::ScratchDir;

namespace {
std::string rejection(const FileRoles& roles) {
  try {
    roles.check();
  } catch (const OptionError& e) {
    return e.key() + ": " + e.problem();
  }
  return {};
}
}  // namespace

TEST_CASE("an output may not be an input: same name, a hard link, a symlink, a path through '..'") {
  ScratchDir dir;
  const fs::path data = dir.file("data.pt", "x");
  fs::create_hard_link(data, dir.path / "hard.pt");
  fs::create_symlink(data, dir.path / "soft.pt");
  fs::create_directories(dir.path / "sub");
  for (const fs::path& out : {data, dir.path / "hard.pt", dir.path / "soft.pt", dir.path / "sub" / ".." / "data.pt"}) {
    FileRoles roles;
    roles.reads("{eval}", data).writes("output", out);
    const std::string why = rejection(roles);
    CHECK_MESSAGE(why.find("output: ") == 0, out);
    CHECK(why.find("would overwrite the input {eval}") != std::string::npos);
  }
  FileRoles fine;
  fine.reads("{eval}", data).writes("output", dir.path / "new.pt");
  CHECK(rejection(fine).empty());
}

TEST_CASE("two outputs on one path are refused, naming both") {
  ScratchDir dir;
  FileRoles roles;
  roles.writes("output", dir.path / "a.pt").writes("report_md", dir.path / "a.pt");
  const std::string why = rejection(roles);
  CHECK(why.find("report_md: ") == 0);
  CHECK(why.find("{output}") != std::string::npos);
}

TEST_CASE("an existing FIFO as output is refused by the check and by the atomic write, it stays a FIFO") {
  ScratchDir dir;
  const fs::path fifo = dir.path / "pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  FileRoles roles;
  roles.writes("plot", fifo);
  CHECK(rejection(roles).find("a FIFO, not a regular file") != std::string::npos);
  CHECK_THROWS_AS(write_file_atomically(fifo, "svg"), InputError);
  CHECK(fs::is_fifo(fifo));
  CHECK_THROWS_AS(check_output(fifo, {}, "output"), OptionError);
}

TEST_CASE("a character device as output is refused (read only: /dev/null is never written)") {
  FileRoles roles;
  roles.writes("plot", "/dev/null");
  CHECK(rejection(roles).find("a character device") != std::string::npos);
  CHECK_THROWS_AS(write_file_atomically("/dev/null", "svg"), InputError);
  CHECK(fs::is_character_file("/dev/null"));
}

TEST_CASE("empty paths and '-' read nothing, an empty output path is refused") {
  ScratchDir dir;
  FileRoles roles;
  roles.reads("{eval}", "").reads("{trace}", "-").writes("output", dir.path / "x.pt");
  CHECK(rejection(roles).empty());
  FileRoles empty;
  empty.writes("output", "");
  CHECK(rejection(empty).find("empty output path") != std::string::npos);
}

TEST_CASE("an output in a missing folder or on a directory is refused") {
  ScratchDir dir;
  FileRoles missing;
  missing.writes("output", dir.path / "no" / "x.pt");
  CHECK(rejection(missing).find("its folder does not exist") != std::string::npos);
  FileRoles folder;
  folder.writes("output", dir.path);
  CHECK(rejection(folder).find("is a directory") != std::string::npos);
}

TEST_CASE("an output folder: not an input nor under one, not another output nor under an output file") {
  ScratchDir dir;
  const fs::path trace = dir.file("trace.txt", "1\n");
  const fs::path plot = dir.path / "p.svg";
  auto why = [&](const fs::path& folder, const fs::path& out = {}) {
    FileRoles roles;
    roles.reads("{trace}", trace);
    if (!out.empty()) roles.writes("plot", out);
    return rejection(roles.writes_folder("results_dir", folder));
  };
  CHECK(why(trace).find("results_dir: ") == 0);
  CHECK(why(trace).find("is the input {trace}") != std::string::npos);
  CHECK(why(trace / "r").find("lies under the input {trace}") != std::string::npos);
  CHECK(why(dir.path / "sub" / ".." / "trace.txt" / "r").find("lies under the input") != std::string::npos);
  CHECK(why(plot, plot).find("is also the path of the output {plot}") != std::string::npos);
  CHECK(why(plot / "r", plot).find("lies under the output file {plot}") != std::string::npos);
  // a folder that exists, one to be created (also deeper), and a plot inside it are fine
  CHECK(why(dir.path).empty());
  CHECK(why(dir.path / "new" / "deeper", plot).empty());
  fs::create_directories(dir.path / "r");
  CHECK(why(dir.path / "r", dir.path / "r" / "p.svg").empty());
  // a file on its path, or a file where its folder would be made
  const fs::path file = dir.file("a_file", "x");
  CHECK(why(file).find("is a file, not a folder") != std::string::npos);
  CHECK(why(file / "under").find("is not a folder") != std::string::npos);
}

TEST_CASE("lies_under: strictly below, by resolved names") {
  ScratchDir dir;
  CHECK(lies_under(dir.path / "a" / "b", dir.path / "a"));
  CHECK(lies_under(dir.path / "a" / "b", dir.path / "a" / ""));
  CHECK_FALSE(lies_under(dir.path / "a", dir.path / "a"));
  CHECK_FALSE(lies_under(dir.path / "ab", dir.path / "a"));
  CHECK_FALSE(lies_under(dir.path / "a", dir.path / "a" / "b"));
  CHECK(lies_under(dir.path / "x" / ".." / "a" / "b", dir.path / "a"));
}

TEST_CASE("same_file: identity when both exist, the resolved name when one does not") {
  ScratchDir dir;
  const fs::path a = dir.file("a", "1");
  CHECK(same_file(a, dir.path / "." / "a"));
  CHECK_FALSE(same_file(a, dir.file("b", "1")));
  CHECK(same_file(dir.path / "new", dir.path / "sub" / ".." / "new"));
}
