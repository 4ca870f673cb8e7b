// Trace readers: each format, format detection, csv columns and headers, malformed input.
#include <sys/stat.h>

#include <cstring>

#include "cache_test_util.hpp"
#include "lite/cache/trace_internal.hpp"
#include "lite/core/error.hpp"

using namespace cache_test;
using lite::cache::TraceFormat;
using lite::cache::detail::Batch;
using lite::cache::detail::ReaderConfig;

namespace {

struct Read {
  std::vector<uint64_t> keys;
  std::vector<uint32_t> sizes;
  std::vector<float> costs;
  std::vector<int64_t> next;
  TraceFormat format;
  lite::cache::detail::ReaderStats stats;
  bool has_cost, has_next;
};

Read read_all(ReaderConfig c) {
  auto r = lite::cache::detail::open_trace(c);
  Batch b;
  b.reserve(3);  // tiny batches: records cross batch boundaries
  Read out;
  while (true) {
    b.n = 0;
    if (!r->fill(b)) break;
    for (size_t i = 0; i < b.n; ++i) {
      out.keys.push_back(b.key[i]);
      out.sizes.push_back(b.size[i]);
      out.costs.push_back(b.cost[i]);
      out.next.push_back(b.next[i]);
    }
  }
  out.format = r->format();
  out.stats = r->stats();
  out.has_cost = r->has_cost();
  out.has_next = r->has_next();
  return out;
}

ReaderConfig config(const std::string& path, bool bytes = true) {
  ReaderConfig c;
  c.path = path;
  c.bytes = bytes;
  return c;
}

std::string message_of(const ReaderConfig& c) {
  try {
    read_all(c);
  } catch (const lite::InputError& e) {
    return e.what();
  }
  return "";
}

template <class... T>
std::string pack(T... fields) {
  std::string s;
  (s.append(reinterpret_cast<const char*>(&fields), sizeof(fields)), ...);
  return s;
}

std::string oracle_record(uint32_t t, uint64_t id, uint32_t size, int64_t next) { return pack(t, id, size, next); }
std::string vscsi_record(uint64_t lbn, uint32_t len, uint16_t ver = 0x100) {
  return pack(uint32_t(1), len, uint32_t(0), uint16_t(0x28), ver, lbn, uint64_t(5000000));
}

}  // namespace

TEST_CASE("txt: one key per line, blank lines skipped, no trailing newline needed, string keys") {
  ScratchDir d;
  auto r = read_all(config(d.file("t.txt", "1\n2\n\n1\r\nfoo\n  2  \n42")));
  CHECK(r.format == TraceFormat::txt);
  REQUIRE(r.keys.size() == 6);
  CHECK(r.keys[0] == 1);
  CHECK(r.keys[1] == 2);
  CHECK(r.keys[2] == 1);
  CHECK(r.keys[4] == 2);
  CHECK(r.keys[5] == 42);
  CHECK(r.keys[3] != 1);
  CHECK(std::all_of(r.sizes.begin(), r.sizes.end(), [](uint32_t s) { return s == 1; }));
}

TEST_CASE("csv: columns from the header names, zero sizes skipped, cost column") {
  ScratchDir d;
  auto path = d.file("t.csv", "time,key,size,cost\n1,a,100,5.5\n2,b,0,1\n3,a,100,2\n4,7,30,0.25\n");
  auto r = read_all(config(path));
  CHECK(r.format == TraceFormat::csv);
  REQUIRE(r.keys.size() == 3);
  CHECK(r.keys[0] == r.keys[1]);
  CHECK(r.keys[2] == 7);
  CHECK(r.sizes == std::vector<uint32_t>{100, 100, 30});
  CHECK(r.has_cost);
  CHECK(r.costs[0] == doctest::Approx(5.5));
  CHECK(r.stats.n_skipped_zero_size == 1);
  // object mode: every size is 1, zero sizes are still skipped (as libCacheSim's reader does)
  auto o = read_all(config(path, false));
  CHECK(o.sizes == std::vector<uint32_t>{1, 1, 1});
  CHECK(o.stats.n_skipped_zero_size == 1);
}

TEST_CASE("csv: explicit columns like libCacheSim's time-col=2,obj-id-col=5,obj-size-col=4, tab delimiter") {
  ScratchDir d;
  auto c = config(d.file("t.csv", "version,time,op,size,lbn\n1,5633898,2a,512,42932745\n1,5633899,28,1024,7\n"));
  c.csv = lite::cache::parse_csv_columns("time=2,key=5,size=4");
  auto r = read_all(c);
  CHECK(r.keys == std::vector<uint64_t>{42932745, 7});
  CHECK(r.sizes == std::vector<uint32_t>{512, 1024});
  auto t = read_all(config(d.file("tab.csv", "9\t100\n9\t100\n")));
  CHECK(t.format == TraceFormat::csv);
  CHECK(t.keys == std::vector<uint64_t>{9, 9});
  auto q = config(d.file("q.csv", "\"a,b\",5\n\"a,b\",5\nc,5\n"));
  q.csv = lite::cache::parse_csv_columns("key=1,size=2");
  auto qr = read_all(q);
  REQUIRE(qr.keys.size() == 3);
  CHECK(qr.keys[0] == qr.keys[1]);
  CHECK(qr.keys[0] != qr.keys[2]);
}

TEST_CASE("csv: a malformed line names file, line and field, --skip-bad-lines counts it") {
  ScratchDir d;
  auto path = d.file("bad.csv", "key,size\na,10\nb,ten\nc\nd,-4\ne,20\n");
  auto msg = message_of(config(path));
  CHECK(msg.find("bad.csv:3") != std::string::npos);
  CHECK(msg.find("'size' (column 2)") != std::string::npos);
  CHECK(msg.find("'ten'") != std::string::npos);
  CHECK(msg.find("{skip_bad_lines}") != std::string::npos);
  auto c = config(path);
  c.skip_bad_lines = true;
  auto r = read_all(c);
  CHECK(r.keys.size() == 2);
  CHECK(r.stats.n_bad_lines == 3);
  // a missing column
  auto m = message_of(config(d.file("short.csv", "key,size\na,1\nb\n")));
  CHECK(m.find("short.csv:3") != std::string::npos);
  CHECK(m.find("1 field") != std::string::npos);
  // a header without a key column
  auto h = message_of(config(d.file("nokey.csv", "alpha,beta\n1,2\n")));
  CHECK(h.find("names no key column") != std::string::npos);
  CHECK(h.find("{csv_columns}") != std::string::npos);
}

TEST_CASE("oracleGeneral: packed 24-byte records, -1 = no next access, size 0 skipped") {
  ScratchDir d;
  std::string data = oracle_record(1, 10, 100, 3) + oracle_record(2, 20, 0, -1) + oracle_record(3, 10, 100, -1) +
                     oracle_record(4, 30, 7, -1);
  auto r = read_all(config(d.file("t.oracleGeneral.bin", data)));
  CHECK(r.format == TraceFormat::oracle_general);
  CHECK(r.has_next);
  CHECK(r.keys == std::vector<uint64_t>{10, 10, 30});
  CHECK(r.sizes == std::vector<uint32_t>{100, 100, 7});
  CHECK(r.next[0] == 3);
  CHECK(r.next[1] == lite::cache::kNoNextAccess);
  CHECK(r.stats.n_skipped_zero_size == 1);
  // a truncated last record
  auto msg = message_of(config(d.file("cut.oracleGeneral.bin", data + std::string(10, '\0'))));
  CHECK(msg.find("cut.oracleGeneral.bin: record 5") != std::string::npos);
  CHECK(msg.find("truncated") != std::string::npos);
  // a bad next-access field
  auto bad = message_of(config(d.file("next.oracleGeneral.bin", oracle_record(1, 1, 1, -7))));
  CHECK(bad.find("record 1") != std::string::npos);
  CHECK(bad.find("'next_access'") != std::string::npos);
}

TEST_CASE("vscsi v1: 32-byte records, lbn is the key, len the size, detected from the contents") {
  ScratchDir d;
  std::string data = vscsi_record(42, 512) + vscsi_record(43, 1024) + vscsi_record(42, 4096);
  auto r = read_all(config(d.file("t.vscsi", data)));
  CHECK(r.format == TraceFormat::vscsi);
  CHECK(r.keys == std::vector<uint64_t>{42, 43, 42});
  CHECK(r.sizes == std::vector<uint32_t>{512, 1024, 4096});
  auto sniffed = read_all(config(d.file("noext", data)));
  CHECK(sniffed.format == TraceFormat::vscsi);
  auto msg = message_of(config(d.file("v2.vscsi", vscsi_record(1, 1, 0x200) + vscsi_record(2, 1, 0x200))));
  CHECK(msg.find("not a vscsi v1 trace") != std::string::npos);
}

TEST_CASE("format detection and errors") {
  ScratchDir d;
  CHECK(read_all(config(d.file("x.log", "a,1\nb,2\n"))).format == TraceFormat::csv);
  CHECK(read_all(config(d.file("y.log", "a\nb\n"))).format == TraceFormat::txt);
  auto bin = message_of(config(d.file("z.dat", std::string("\x01\x00\x00\x00\x02\x00", 6) + std::string(100, '\0'))));
  CHECK(bin.find("cannot tell the trace format") != std::string::npos);
  auto missing = message_of(config((d.path / "nope.csv").string()));
  CHECK(missing.find("nope.csv") != std::string::npos);
  CHECK(missing.find("cannot open") != std::string::npos);
  auto explicit_format = config(d.file("ids.dat", "5\n6\n5\n"));
  explicit_format.format = TraceFormat::txt;
  CHECK(read_all(explicit_format).keys == std::vector<uint64_t>{5, 6, 5});
}

TEST_CASE("a character device is refused as a trace before it is read (issue 38): it may never end") {
  for (const char* device : {"/dev/urandom", "/dev/zero", "/dev/null"}) {
    struct stat st {};
    if (::stat(device, &st) != 0 || !S_ISCHR(st.st_mode)) continue;
    auto c = config(device);
    c.format = TraceFormat::oracle_general;
    c.skip_bad_lines = true;
    auto message = message_of(c);
    CHECK(message.find(device) != std::string::npos);
    CHECK(message.find("is a character device, not a trace file") != std::string::npos);
  }
}

TEST_CASE("keys: decimal ids are numbers in every format, other text is hashed") {
  uint64_t k = 0;
  CHECK(lite::cache::detail::parse_key(" 123 ", k));
  CHECK(k == 123);
  CHECK(lite::cache::detail::parse_key("18446744073709551615", k));
  CHECK(k == UINT64_MAX);
  uint64_t a = 0, b = 0;
  CHECK(lite::cache::detail::parse_key("18446744073709551616", a));  // too large: hashed as text
  CHECK(lite::cache::detail::parse_key("user:42", b));
  CHECK(a != b);
  CHECK_FALSE(lite::cache::detail::parse_key("   ", k));
}

TEST_CASE("csv and txt: a UTF-8 byte-order mark at the start is not part of the header or the first key") {
  ScratchDir d;
  const std::string bom = "\xEF\xBB\xBF";
  // with a header: the first column's name is recognized
  auto h = read_all(config(d.file("h.csv", bom + "key,size\n5,100\n5,100\n")));
  CHECK(h.keys == std::vector<uint64_t>{5, 5});
  CHECK(h.sizes == std::vector<uint32_t>{100, 100});
  // without a header: the first key is the same object as the same key later
  auto k = read_all(config(d.file("k.csv", bom + "abc,7\nabc,7\n")));
  REQUIRE(k.keys.size() == 2);
  CHECK(k.keys[0] == k.keys[1]);
  auto n = read_all(config(d.file("n.csv", bom + "12,7\n12,7\n")));
  CHECK(n.keys == std::vector<uint64_t>{12, 12});
  auto t = read_all(config(d.file("t.txt", bom + "x\nx\n")));
  REQUIRE(t.keys.size() == 2);
  CHECK(t.keys[0] == t.keys[1]);
  // a mark later in the file is data, not skipped
  auto later = read_all(config(d.file("later.txt", "x\n" + bom + "x\n")));
  REQUIRE(later.keys.size() == 2);
  CHECK(later.keys[0] != later.keys[1]);
  // from memory, the format detected from the contents (a name gives none)
  const std::string text = bom + "key,size\n9,1\n";
  auto z = lite::cache::detail::open_trace(config(""), lite::cache::detail::open_memory_source(text, "mem"));
  Batch b;
  b.reserve(4);
  REQUIRE(z->fill(b));
  CHECK(b.n == 1);
  CHECK(b.key[0] == 9);
}

TEST_CASE("csv: a cost beyond float's range is a malformed field, not an infinite latency (found by fuzz/trace_csv)") {
  ScratchDir d;
  auto path = d.file("c.csv", "key,cost\na,1e69\nb,2\n");
  CHECK(message_of(config(path)).find("'1e69' is not a latency in ms") != std::string::npos);
  auto c = config(path);
  c.skip_bad_lines = true;
  auto r = read_all(c);
  CHECK(r.costs == std::vector<float>{2.0f});
  CHECK(r.stats.n_bad_lines == 1);
}

TEST_CASE("text traces: a line may be at most 1 MiB, a longer one is FILE:LINE, also without any line break") {
  using lite::cache::detail::kMaxLineBytes;
  ScratchDir d;
  // exactly the bound is a line (a hashed key)
  const std::string longest(kMaxLineBytes, 'k');
  auto r = read_all(config(d.file("long.txt", "5\n" + longest + "\n6\n")));
  CHECK(r.keys.size() == 3);
  CHECK(r.keys[2] == 6);
  // one byte more, on line 2, in both text formats
  for (const char* name : {"over.txt", "over.csv"}) {
    CAPTURE(name);
    auto msg = message_of(config(d.file(name, "5\n" + longest + "k\n6\n")));
    CHECK(msg.find(std::string(name) + ":2: the line is longer than 1048576 bytes") != std::string::npos);
    CHECK(msg.find("--format") == std::string::npos);  // the library speaks keys: {format}
    CHECK(msg.find("{format}") != std::string::npos);
  }
  // no line break at all, ending without one
  auto endless = message_of(config(d.file("one.txt", std::string(3 * kMaxLineBytes, 'a'))));
  CHECK(endless.find("one.txt:1: the line is longer") != std::string::npos);
  // a last line without '\n' within the bound is still a line
  CHECK(read_all(config(d.file("last.txt", "1\n" + std::string(1000, 'z')))).keys.size() == 2);
}

TEST_CASE("text traces: binary data is refused as 'not a text trace', whatever the name says") {
  ScratchDir d;
  std::string random_bytes;
  uint64_t x = 88172645463325252ULL;
  for (int i = 0; i < 100000; ++i) {  // xorshift: /dev/urandom's kind of bytes, deterministically
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    random_bytes.push_back(static_cast<char>(x));
  }
  for (const char* name : {"r.csv", "r.txt"}) {
    CAPTURE(name);
    auto msg = message_of(config(d.file(name, random_bytes)));
    CHECK(msg.find(std::string(name) + ": is not a text trace") != std::string::npos);
  }
  auto nul = message_of(config(d.file("nul.csv", "key,size\na,1\n" + std::string(1, '\0') + "b,2\n")));
  CHECK(nul.find("nul.csv: is not a text trace: byte 14 is a NUL byte") != std::string::npos);
  // control characters other than whitespace: more than 1% is binary, a stray one is not
  std::string controls;
  for (int i = 0; i < 100; ++i) controls += std::to_string(i) + (i % 20 == 0 ? "\x01\x02\n" : "\n");
  CHECK(message_of(config(d.file("ctl.txt", controls))).find("control characters") != std::string::npos);
  std::string dos;
  for (int i = 0; i < 1000; ++i) dos += std::to_string(i) + "\r\n";
  auto ok = read_all(config(d.file("dos.txt", dos + "\x1a")));  // a DOS end-of-file mark
  CHECK(ok.keys.size() == 1001);
  // an explicit --format txt on binary data is refused just the same
  auto explicit_txt = config(d.file("r.bin", random_bytes));
  explicit_txt.format = TraceFormat::txt;
  CHECK(message_of(explicit_txt).find("is not a text trace") != std::string::npos);
  // UTF-16 (a spreadsheet's "Unicode text") is named as such
  CHECK(message_of(config(d.file("u16.csv", std::string("\xFF\xFEk\0e\0y\0\n\0", 10)))).find("is UTF-16 text") !=
        std::string::npos);
  // UTF-8 keys are text
  CHECK(read_all(config(d.file("utf8.txt", "caf\xC3\xA9\n\xE6\x97\xA5\n"))).keys.size() == 2);
}

TEST_CASE("binary traces: 64 KiB of zero bytes is not a trace, a short one is an empty trace as before") {
  ScratchDir d;
  const std::string zeros(size_t(64) << 10, '\0');
  auto oracle = message_of(config(d.file("z.oracleGeneral.bin", zeros + zeros)));
  CHECK(oracle.find("z.oracleGeneral.bin: is not an oracleGeneral trace: its first 64 KiB are all zero bytes") !=
        std::string::npos);
  auto vscsi = config(d.file("z.bin", zeros));
  vscsi.format = TraceFormat::vscsi;
  CHECK(message_of(vscsi).find("all zero bytes") != std::string::npos);
  auto short_zero = read_all(config(d.file("s.oracleGeneral.bin", std::string(48, '\0'))));
  CHECK(short_zero.keys.empty());
  CHECK(short_zero.stats.n_skipped_zero_size == 2);
}

TEST_CASE("stream sources: the same bounds over bytes that are not a regular file") {
  using namespace lite::cache::detail;
  const std::string no_break(2 * kMaxLineBytes, 'x');
  ReaderConfig c;
  c.path = "-";
  c.display = "<stdin>";
  c.format = TraceFormat::txt;
  try {
    auto r = open_trace(c, open_memory_source(no_break, "<stdin>"));
    Batch b;
    b.reserve(4);
    r->fill(b);
    FAIL("a 2 MiB line was read");
  } catch (const lite::InputError& e) {
    CHECK(std::string(e.what()).find("<stdin>:1: the line is longer") == 0);
  }
  CHECK(is_stream("-"));
  CHECK_FALSE(is_stream("/no/such/file"));  // opening it reports the problem
  ScratchDir d;
  CHECK_FALSE(is_stream(d.file("f.txt", "1\n").string()));
  CHECK_FALSE(is_stream(d.path.string()));
  const auto fifo = d.path / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(is_stream(fifo.string()));
}
