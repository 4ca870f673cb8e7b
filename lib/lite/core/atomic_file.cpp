#include "lite/core/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <random>

#include "lite/core/error.hpp"
#include "lite/core/file_roles.hpp"
#include "lite/core/interrupt.hpp"
#include "lite/core/options.hpp"

namespace fs = std::filesystem;

namespace lite {

void check_output(const fs::path& output, const std::vector<fs::path>& inputs, const std::string& key) {
  FileRoles roles;
  for (const auto& input : inputs) roles.reads("", input);
  roles.writes(key, output).check();
}

namespace {
void fsync_path(const fs::path& p) {
  int fd = ::open(p.c_str(), O_RDONLY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}
}  // namespace

void write_atomically(const fs::path& output, const std::function<void(const fs::path&)>& write) {
  refuse_special_output(output);  // the rename below would replace a device or FIFO
  fs::path parent = output.parent_path().empty() ? fs::path(".") : output.parent_path();
  std::random_device rd;
  fs::path temp = parent / ("." + output.filename().string() + ".tmp-" + std::to_string(::getpid()) + "-" +
                            std::to_string(rd() % 1000000));
  TemporaryFileGuard in_flight(temp);  // removed by the watchdog if a signal finds this write blocked
  try {
    write(temp);
    fsync_path(temp);
    std::error_code ec;
    fs::rename(temp, output, ec);
    if (ec)
      throw InputError(output.string(), "cannot move the finished file into place: " + ec.message(),
                       "check the folder's permissions and free space");
    fsync_path(parent);
  } catch (...) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    throw;
  }
}

void write_file_atomically(const fs::path& output, const std::string& contents) {
  write_atomically(output, [&](const fs::path& temp) {
    std::ofstream out(temp, std::ios::binary);
    out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
    out.close();
    if (!out) throw InputError(output.string(), "write failed", "check free disk space and the folder's permissions");
  });
}

fs::path derive_output_path(const fs::path& input, const std::string& tag) {
  fs::path out = input;
  std::string ext = input.extension().string();
  if (ext.empty()) ext = ".pt";
  out.replace_filename(input.stem().string() + "." + tag + ext);
  return out;
}

}  // namespace lite
