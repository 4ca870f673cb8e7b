#pragma once
// Builders for the torch-free data-file tests: deflate/gzip streams, a one-member zip, idx headers, and the
// process's peak memory (to show a hostile file's claim was never allocated).
#include <sys/resource.h>
#include <zlib.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace data_test {

// windowBits: -15 raw deflate (zip), 31 gzip.
inline std::string deflate_bytes(const std::string& in, int window_bits, int level = 6) {
  z_stream z{};
  if (deflateInit2(&z, level, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY) != Z_OK) throw std::runtime_error("zlib");
  std::string out(deflateBound(&z, uLong(in.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = uInt(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = uInt(out.size());
  deflate(&z, Z_FINISH);
  out.resize(out.size() - z.avail_out);
  deflateEnd(&z);
  return out;
}

inline std::string gzip_bytes(const std::string& in) { return deflate_bytes(in, 31); }

// gzip of `head` followed by `zeros` zero bytes, compressed a MiB at a time: a bomb built without holding it.
inline std::string gzip_with_zeros(const std::string& head, uint64_t zeros) {
  z_stream z{};
  if (deflateInit2(&z, 9, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK) throw std::runtime_error("zlib");
  const std::string block(size_t(1) << 20, '\0');
  std::string out;
  char buf[1 << 16];
  auto feed = [&](const char* data, size_t n, int flush) {
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
    z.avail_in = uInt(n);
    do {
      z.next_out = reinterpret_cast<Bytef*>(buf);
      z.avail_out = sizeof(buf);
      deflate(&z, flush);
      out.append(buf, sizeof(buf) - z.avail_out);
    } while (z.avail_out == 0);
  };
  feed(head.data(), head.size(), Z_NO_FLUSH);
  for (uint64_t left = zeros; left > 0;) {
    const size_t n = size_t(left < block.size() ? left : block.size());
    feed(block.data(), n, Z_NO_FLUSH);
    left -= n;
  }
  feed(nullptr, 0, Z_FINISH);
  deflateEnd(&z);
  return out;
}

inline void put_le(std::string& s, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) s += char((v >> (8 * i)) & 0xff);
}

// A zip with one member `name` whose data is `data` (already compressed when method is 8) and whose directory
// declares `declared` uncompressed bytes.
inline std::string one_member_zip(const std::string& name, const std::string& data, int method, uint64_t declared) {
  std::string z = "PK\x03\x04";
  put_le(z, 20, 2), put_le(z, 0, 2), put_le(z, uint64_t(method), 2), put_le(z, 0, 4), put_le(z, 0, 4);
  put_le(z, data.size(), 4), put_le(z, declared, 4), put_le(z, name.size(), 2), put_le(z, 0, 2);
  z += name + data;
  const size_t dir = z.size();
  z += "PK\x01\x02";
  put_le(z, 20, 2), put_le(z, 20, 2), put_le(z, 0, 2), put_le(z, uint64_t(method), 2), put_le(z, 0, 4);
  put_le(z, 0, 4), put_le(z, data.size(), 4), put_le(z, declared, 4), put_le(z, name.size(), 2);
  put_le(z, 0, 2), put_le(z, 0, 2), put_le(z, 0, 2), put_le(z, 0, 2), put_le(z, 0, 4), put_le(z, 0, 4);
  z += name;
  const size_t dir_size = z.size() - dir;
  z += "PK\x05\x06";
  put_le(z, 0, 2), put_le(z, 0, 2), put_le(z, 1, 2), put_le(z, 1, 2), put_le(z, dir_size, 4), put_le(z, dir, 4);
  put_le(z, 0, 2);
  return z;
}

inline std::string idx_header(std::initializer_list<uint32_t> dims) {
  std::string out{'\0', '\0', '\x08', char(dims.size())};
  for (uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8) out += char((d >> shift) & 0xff);
  return out;
}

// Pseudo-random bytes (incompressible enough that deflate keeps them about their size).
inline std::string noise(size_t n, uint32_t seed = 1) {
  std::string s(n, '\0');
  for (auto& c : s) {
    seed = seed * 1664525u + 1013904223u;
    c = char(seed >> 24);
  }
  return s;
}

inline long peak_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

}  // namespace data_test
