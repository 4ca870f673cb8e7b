// W-TinyLFU's frequency sketch alone: sizing as libCacheSim's minimalIncrementCBF, counts, aging,
// the doorkeeper, its sparse counter map; the policy's admission on a small hand-checked sequence; and
// the object table's move, which keeps LHD's tags in libCacheSim's order.
#include <map>

#include "cache_test_util.hpp"

#include "lite/cache/frequency_sketch_internal.hpp"
#include "lite/cache/object_table_internal.hpp"

using lite::cache::detail::FrequencySketch;
using lite::cache::detail::xxh64_u64;

TEST_CASE("xxh64 of an 8-byte key matches the xxHash reference") {
  // XXH64 reference values for the 8 bytes 00..00 and 01 00..00 (little-endian uint64 0 and 1), seed 0
  CHECK(xxh64_u64(0, 0) == 0x34C96ACDCADB1BBBULL);
  CHECK(xxh64_u64(1, 0) != xxh64_u64(0, 0));
  CHECK(xxh64_u64(1, 0x12345678) != xxh64_u64(1, 0x12344321));
}

TEST_CASE("frequency sketch: sized like libCacheSim, counts are upper bounds, exact when sparse") {
  FrequencySketch s(1000, 0.001);
  CHECK(s.hashes() == 10);              // ceil(ln2 * -ln(0.001)/ln2^2)
  CHECK(s.counters() == 14378);         // ceil(14.3775... * 1000)
  CHECK(s.estimate(42) == 0);
  for (int i = 0; i < 5; ++i) s.add(42);
  s.add(7);
  CHECK(s.estimate(42) == 5);
  CHECK(s.estimate(7) == 1);
  for (uint64_t k = 1000; k < 1500; ++k) s.add(k);
  CHECK(s.estimate(42) >= 5);            // never under-counts
  uint64_t over = 0;
  for (uint64_t k = 2000; k < 3000; ++k) over += s.estimate(k);
  CHECK(over <= 10);                     // unseen keys: ~0.1% false positives
  FrequencySketch tiny(0, 0.001);
  CHECK(tiny.counters() == 20);          // too few counters: 2 x hashes, as libCacheSim
}

TEST_CASE("frequency sketch: aging halves every counter") {
  FrequencySketch s(100, 0.001);
  for (int i = 0; i < 9; ++i) s.add(5);
  for (int i = 0; i < 2; ++i) s.add(6);
  s.decay();
  CHECK(s.estimate(5) == 4);
  CHECK(s.estimate(6) == 1);
  s.decay();
  CHECK(s.estimate(5) == 2);
  CHECK(s.estimate(6) == 0);
  // the sparse store (more than 2^24 counters) ages the same way
  FrequencySketch big(int64_t(1) << 31, 0.001);
  CHECK(big.counters() == 2147483647u);
  for (int i = 0; i < 7; ++i) big.add(99);
  CHECK(big.estimate(99) == 7);
  big.decay();
  CHECK(big.estimate(99) == 3);
}

TEST_CASE("frequency sketch: the doorkeeper absorbs first occurrences and is cleared by aging") {
  FrequencySketch s(1000, 0.001, true);
  s.add(1);
  CHECK(s.estimate(1) == 1);  // from the doorkeeper alone
  s.add(1);
  s.add(1);
  CHECK(s.estimate(1) == 3);  // doorkeeper + 2 counted
  for (uint64_t k = 100; k < 200; ++k) s.add(k);  // one-hit wonders never reach the counters
  CHECK(s.estimate(150) == 1);
  s.decay();
  CHECK(s.estimate(150) == 0);
  CHECK(s.estimate(1) == 1);  // counters 2 -> 1, doorkeeper cleared
}

TEST_CASE("wtinylfu: a frequent set survives a scan that flushes LRU") {
  // C=200 objects: window 2, main 198 (probation 39, protected 158). The cache is filled first, so
  // the window is at its share (libCacheSim's window grows past it until the cache is full), then
  // keys H are requested often, then a scan of 1000 unique keys, then H again.
  std::string warm, hot, scan;
  for (int u = 0; u < 300; ++u) warm += "W" + std::to_string(u) + " ";
  for (int r = 0; r < 10; ++r)
    for (int h = 0; h < 50; ++h) hot += "H" + std::to_string(h) + " ";
  for (int u = 0; u < 1000; ++u) scan += "U" + std::to_string(u) + " ";
  std::string last;
  for (int h = 0; h < 50; ++h) last += "H" + std::to_string(h) + " ";
  auto final_hits = [&](const char* policy) {
    return cache_test::hits(cache_test::run(policy, 200, warm + hot + scan + last)) -
           cache_test::hits(cache_test::run(policy, 200, warm + hot + scan));
  };
  CHECK(final_hits("wtinylfu") >= 45);  // the hot set stays in main through the scan
  CHECK(final_hits("lru") == 0);        // LRU loses it
}

TEST_CASE("frequency sketch: the sparse counter map agrees with a std::map through growth and halving") {
  lite::cache::detail::SparseCounters sparse;
  std::map<uint32_t, uint32_t> ref;
  uint64_t x = 12345;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 20000; ++i) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      const uint32_t p = static_cast<uint32_t>(x >> 33) % 5000u;  // repeats, so counts exceed 1
      sparse.increment(p);
      ++ref[p];
    }
    sparse.halve();
    for (auto it = ref.begin(); it != ref.end();) {
      it->second >>= 1;
      if (it->second == 0) it = ref.erase(it);
      else ++it;
    }
    CHECK(sparse.size() == ref.size());
    for (uint32_t p = 0; p < 5000; ++p) {
      const auto it = ref.find(p);
      CHECK(sparse.get(p) == (it == ref.end() ? 0u : it->second));
    }
  }
}

TEST_CASE("object table: move keeps the live nodes dense and the keys found (LHD's tag order)") {
  struct Node {
    uint64_t key = 0;
  };
  using lite::cache::detail::hash_key;
  lite::cache::detail::ObjectTable<Node> t(8);
  for (uint64_t k = 0; k < 100; ++k) CHECK(t.insert(k, hash_key(k)) == k);
  // erase node 10, move the last node (key 99) into it: libCacheSim's swap-with-last
  t.erase(10);
  t.move(99, 10);
  CHECK(t.find(10, hash_key(10)) == lite::cache::detail::kNil);
  CHECK(t.find(99, hash_key(99)) == 10u);
  CHECK(t[10].key == 99u);
  CHECK(t.insert(1000, hash_key(1000)) == 99u);  // the next new object takes the freed top node
  // two erases before an insert (byte mode): the free list stays the top nodes, in order
  t.erase(3);
  t.move(99, 3);
  t.erase(5);
  t.move(98, 5);
  CHECK(t.find(1000, hash_key(1000)) == 3u);
  CHECK(t.find(98, hash_key(98)) == 5u);
  CHECK(t.insert(2000, hash_key(2000)) == 98u);
  CHECK(t.insert(2001, hash_key(2001)) == 99u);
  for (uint32_t n = 0; n < t.size(); ++n) CHECK(t.find(t[n].key, hash_key(t[n].key)) == n);
}
