// Reads every member of a small zip archive (a NumPy .npz) from memory.
//
// Algorithm: find the End Of Central Directory record (signature PK\5\6, searched backwards over the last
// 64 KiB + 22 bytes), walk the central directory for each member's name, method and sizes (the central
// directory is authoritative: np.savez writes local headers with zip64 placeholders), then skip the local
// header (30 bytes + name + extra) to the data, which is either stored (method 0) or raw deflate (method 8,
// inflated with zlib's windowBits -15). Zip64 sizes are read from the member's extra field when the 32-bit
// fields say 0xFFFFFFFF.
//
// Hostile archives: the directory's sizes are checked before anything is allocated (a stored member is as
// long as its data; a deflated one claims at most kMaxDeflateRatio times its compressed bytes, deflate's own
// limit, and under 4 GiB), the output grows only with what really inflates, and inflating stops at the declared
// size (a member that inflates to more or less is refused). Memory thus follows the archive's real content.
//
// Why not libtorch's PyTorchStreamReader (miniz underneath): it accepts only archives whose members share
// one top folder (torch.save's layout) and rejects an .npz's top-level "x.npy".
#include "lite/model/zip_members.hpp"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "lite/core/error.hpp"

namespace lite::model {

namespace {

constexpr const char* kResave = "save the file again (numpy.savez or numpy.savez_compressed)";

// Inflates `in` into exactly `out_size` bytes. The output grows with what really inflates (never to the
// declared size up front: a size the data does not back costs nothing), and inflating stops at the declared
// size: a stream that would go on is refused, not followed.
std::string inflate_raw(std::string_view in, uint64_t out_size, const std::string& file, const std::string& name) {
  z_stream z{};
  if (inflateInit2(&z, -15) != Z_OK) throw InputError(file, "cannot start zlib", "check the zlib installation");
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());  // < 4 GiB: check_declared_size
  std::string out;
  int rc = Z_OK;
  while (rc == Z_OK && out.size() < out_size) {
    const size_t have = out.size();
    out.resize(size_t(std::min<uint64_t>(out_size, have + (1 << 20))));  // capacity grows geometrically
    z.next_out = reinterpret_cast<Bytef*>(out.data() + have);
    z.avail_out = static_cast<uInt>(out.size() - have);
    rc = inflate(&z, Z_NO_FLUSH);
    out.resize(out.size() - z.avail_out);
    if (rc == Z_BUF_ERROR && z.avail_out != 0) break;  // no progress possible: the input ended early
  }
  bool longer = false;
  if (rc == Z_OK && out.size() == out_size) {  // all declared bytes are in: the stream must end here
    unsigned char extra;
    z.next_out = &extra;
    z.avail_out = 1;
    rc = inflate(&z, Z_FINISH);
    longer = z.avail_out == 0;
  }
  inflateEnd(&z);
  if (rc == Z_STREAM_END && out.size() == out_size && !longer) return out;
  const std::string declared = std::to_string(out_size) + " bytes its directory declares";
  throw InputError(file,
                   "member " + name + " has corrupt compressed data (" +
                       (longer ? "it inflates to more than the " + declared
                        : rc == Z_STREAM_END || rc == Z_BUF_ERROR || rc == Z_OK
                            ? "it inflates to " + std::to_string(out.size()) + " bytes, not the " + declared
                            : std::string("not a deflate stream")) +
                       ")",
                   "save the file again");
}

// The first `n` bytes `in` inflates to, or fewer where it ends or breaks (inflate_raw judges the whole member).
std::string inflate_prefix(std::string_view in, uint64_t n) {
  z_stream z{};
  if (inflateInit2(&z, -15) != Z_OK) return {};
  std::string out(size_t(n), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  while (z.avail_out > 0 && inflate(&z, Z_NO_FLUSH) == Z_OK) {
  }
  out.resize(out.size() - z.avail_out);
  inflateEnd(&z);
  return out;
}

}  // namespace

std::vector<ZipMember> read_zip_members(std::string_view s, const std::string& file, const MemberCheck& check) {
  const std::string damaged = "is not a readable zip (.npz) archive";
  const size_t lowest = s.size() > kEndRecordSearchBytes ? s.size() - kEndRecordSearchBytes : 0;
  size_t eocd = find_end_record(s.substr(lowest));
  if (eocd != std::string_view::npos) eocd += lowest;
  if (eocd == std::string_view::npos) throw InputError(file, damaged + " (no end of central directory)", "save it again");
  uint64_t count = read_little_endian(s, eocd + 10, 2), dir = read_little_endian(s, eocd + 16, 4);
  std::vector<ZipMember> members;
  size_t at = dir;
  for (uint64_t k = 0; k < count; ++k) {
    if (at + 46 > s.size() || std::memcmp(s.data() + at, "PK\x01\x02", 4) != 0)
      throw InputError(file, damaged + " (bad central directory)", "save it again");
    const uint64_t flags = read_little_endian(s, at + 8, 2), method = read_little_endian(s, at + 10, 2);
    uint64_t packed = read_little_endian(s, at + 20, 4), size = read_little_endian(s, at + 24, 4);
    const size_t name_len = read_little_endian(s, at + 28, 2), extra_len = read_little_endian(s, at + 30, 2), comment_len = read_little_endian(s, at + 32, 2);
    uint64_t local = read_little_endian(s, at + 42, 4);
    if (at + 46 + name_len + extra_len > s.size()) throw InputError(file, damaged + " (bad central directory)", "save it again");
    ZipMember m;
    m.name = std::string(s.substr(at + 46, name_len));
    // Zip64 extra field (id 1): the 64-bit values, in order, of the 32-bit fields that hold 0xFFFFFFFF. A
    // field whose length runs past the extra area ends the walk (its values would be read from beyond it).
    const size_t extra_end = at + 46 + name_len + extra_len;
    for (size_t e = at + 46 + name_len; e + 4 <= extra_end;) {
      const uint64_t id = read_little_endian(s, e, 2), len = read_little_endian(s, e + 2, 2);
      size_t v = e + 4;
      if (len > extra_end - v) break;
      if (id == 1) {
        if (size == 0xFFFFFFFF && v + 8 <= e + 4 + len) size = read_little_endian(s, v, 8), v += 8;
        if (packed == 0xFFFFFFFF && v + 8 <= e + 4 + len) packed = read_little_endian(s, v, 8), v += 8;
        if (local == 0xFFFFFFFF && v + 8 <= e + 4 + len) local = read_little_endian(s, v, 8);
      }
      e += 4 + len;
    }
    at += 46 + name_len + extra_len + comment_len;
    if (flags & 1) throw InputError(file, "member " + m.name + " is encrypted", "save it without a password");
    // Offsets and sizes are compared as "fits in what is left", never as sums that a 64-bit zip64 value wraps.
    if (local > s.size() || s.size() - local < 30 || std::memcmp(s.data() + local, "PK\x03\x04", 4) != 0)
      throw InputError(file, damaged + " (bad local header of " + m.name + ")", "save it again");
    const uint64_t data = local + 30 + read_little_endian(s, local + 26, 2) + read_little_endian(s, local + 28, 2);
    if (data > s.size() || packed > s.size() - data) throw InputError(file, damaged + " (" + m.name + " is truncated)", "save it again");
    if (method != 0 && method != 8)
      throw InputError(file, "member " + m.name + " uses zip compression method " + std::to_string(method),
                       "save it with numpy.savez or numpy.savez_compressed");
    check_declared_size(ZipDirectoryEntry{m.name, method, packed, size}, s.size(), file, kResave);
    const std::string_view raw = s.substr(size_t(data), size_t(packed));
    if (check) {
      const uint64_t head = std::min(size, kMemberHeadBytes);
      check(m.name, method == 0 ? std::string(raw.substr(0, size_t(head))) : inflate_prefix(raw, head), size);
    }
    m.bytes = method == 0 ? std::string(raw) : inflate_raw(raw, size, file, m.name);
    members.push_back(std::move(m));
  }
  return members;
}

}  // namespace lite::model
