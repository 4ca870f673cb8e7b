#pragma once
// SHA-256 (FIPS 180-4), used to fingerprint input models in artifact provenance. Self-contained so
// lite needs no crypto library.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace lite {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  void update(std::string_view s) { update(s.data(), s.size()); }
  std::string hex_digest();  // finalizes; call once

 private:
  void compress(const uint8_t* block);
  uint32_t state_[8];
  uint8_t buffer_[64];
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

std::string sha256_hex(std::string_view data);
// Throws InputError when the file cannot be read.
std::string sha256_file(const std::filesystem::path& path);

}  // namespace lite
