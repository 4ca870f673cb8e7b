// The .npz (zip) member reader (lib/lite/model/zip_members.cpp, torch-free): a directory's sizes are checked
// before anything is allocated, the output grows only with what really inflates, and inflating stops at the
// declared size.
#include <doctest/doctest.h>

#include <string>

#include "data_test_util.hpp"
#include "lite/core/error.hpp"
#include "lite/model/zip_members.hpp"

namespace {

using data_test::deflate_bytes;
using data_test::one_member_zip;
using lite::model::read_zip_members;

std::string refusal(const std::string& archive) {
  try {
    read_zip_members(archive, "bad.npz");
  } catch (const lite::InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("stored and deflated members read back") {
  const std::string data = data_test::noise(5000) + std::string(5000, '\0');
  auto stored = read_zip_members(one_member_zip("x.npy", data, 0, data.size()), "ok.npz");
  REQUIRE(stored.size() == 1);
  CHECK(stored[0].name == "x.npy");
  CHECK(stored[0].bytes == data);
  auto deflated = read_zip_members(one_member_zip("x.npy", deflate_bytes(data, -15), 8, data.size()), "ok.npz");
  CHECK(deflated[0].bytes == data);
  const std::string empty = deflate_bytes("", -15);
  CHECK(read_zip_members(one_member_zip("e.npy", empty, 8, 0), "ok.npz")[0].bytes.empty());
}

TEST_CASE("a declared size its data cannot back is refused before inflating") {
  const std::string packed = deflate_bytes(std::string(3000, 'a'), -15);  // a few bytes
  const std::string beyond = refusal(one_member_zip("x.npy", packed, 8, 3000000000ull));
  CHECK(has(beyond, "bad.npz: member x.npy claims 3000000000 bytes uncompressed from "));
  CHECK(has(beyond, "1032:1"));
  CHECK(has(refusal(one_member_zip("x.npy", "abcd", 0, 4000)), "is stored uncompressed but its directory says 4000"));
}

TEST_CASE("3 GB declared for 3 MB of data: refused once the data ends, without allocating the claim") {
  const std::string data = data_test::noise(3 << 20);
  const std::string packed = deflate_bytes(data, -15, 1);
  const uint64_t declared = 3000000000ull;  // within 1032:1 of ~3 MB, so only inflating tells
  REQUIRE(declared <= packed.size() * lite::model::kMaxDeflateRatio);
  const long before = data_test::peak_rss_kib();
  const std::string why = refusal(one_member_zip("x.npy", packed, 8, declared));
  CHECK(has(why, "inflates to " + std::to_string(data.size()) + " bytes, not the 3000000000 bytes its directory declares"));
  CHECK(data_test::peak_rss_kib() - before < 200 * 1024);  // KiB: far under the 3 GB claimed
}

TEST_CASE("inflating stops at the declared size") {
  const std::string data(1 << 20, '\0');
  const std::string longer = refusal(one_member_zip("x.npy", deflate_bytes(data, -15), 8, 1000));
  CHECK(has(longer, "inflates to more than the 1000 bytes its directory declares"));
  CHECK(has(refusal(one_member_zip("x.npy", "\xff\xff\xff\xff", 8, 10)), "not a deflate stream"));
}

TEST_CASE("the directory alone gives each member's declared size, and a size the archive cannot back is refused") {
  const std::string data = data_test::noise(4000);
  const std::string stored = one_member_zip("m/data/0", data, 0, data.size());
  const auto entries = lite::model::zip_directory_in_memory(stored);
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].name == "m/data/0");
  CHECK(entries[0].method == 0);
  CHECK(entries[0].size == 4000);
  CHECK(entries[0].packed == 4000);
  lite::model::check_declared_sizes(entries, stored.size(), "m.pt", "re-save it");  // honest: accepted

  const std::string lying = one_member_zip("m/data/0", data, 0, 0xF0000000ull);  // libtorch would allocate 3.75 GiB
  std::string why;
  try {
    lite::model::check_declared_sizes(lite::model::zip_directory_in_memory(lying), lying.size(), "m.pt", "re-save it");
  } catch (const lite::InputError& e) {
    why = e.what();
  }
  CHECK(has(why, "m.pt: member m/data/0 is stored uncompressed but its directory says 4026531840 bytes for its 4000"));
  CHECK(has(why, "; re-save it"));
  CHECK(lite::model::zip_directory_in_memory("not a zip").empty());
}

TEST_CASE("the member check sees each member's first bytes and declared size before it is inflated, and can refuse it") {
  const std::string data = std::string(200000, 'a');
  const std::string archive = one_member_zip("x.npy", deflate_bytes(data, -15), 8, data.size());
  std::string seen_name;
  size_t seen_head = 0;
  uint64_t seen_size = 0;
  auto members = read_zip_members(archive, "ok.npz", [&](const std::string& name, std::string_view head, uint64_t size) {
    seen_name = name;
    seen_head = head.size();
    seen_size = size;
    CHECK(head == std::string_view(data).substr(0, head.size()));
  });
  CHECK(seen_name == "x.npy");
  CHECK(seen_head == lite::model::kMemberHeadBytes);  // the head only, not the 200 kB member
  CHECK(seen_size == data.size());
  CHECK(members[0].bytes == data);
  CHECK_THROWS_AS(read_zip_members(archive, "ok.npz",
                                   [](const std::string& name, std::string_view, uint64_t) {
                                     throw lite::InputError(name, "refused by its header", "fix it");
                                   }),
                  lite::InputError);
  const std::string small = "tiny";
  read_zip_members(one_member_zip("s.npy", small, 0, small.size()), "ok.npz",
                   [&](const std::string&, std::string_view head, uint64_t) { CHECK(head == small); });
}
