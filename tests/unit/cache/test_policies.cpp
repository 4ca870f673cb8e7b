// Hand-computed request sequences for every policy. Each case states the cache contents after each
// request (head = newest / most recent first) so the expected counts can be checked by reading.
#include "cache_test_util.hpp"
#include "lite/cache/policies.hpp"

using namespace cache_test;

TEST_CASE("lru: recency order, object mode") {
  // C=3: A m[A] B m[B A] C m[C B A] A h[A C B] D m,evict B[D A C] B m,evict C[B D A]
  //      E m,evict A[E B D] A m,evict D[A E B]
  auto c = run("lru", 3, "A B C A D B E A");
  CHECK(c.n_req == 8);
  CHECK(hits(c) == 1);
  // C=2, A A B C D A: A m, A h, B m[B A], C m evict A, D m evict B, A m
  CHECK(hits(run("lru", 2, "A A B C D A")) == 1);
}

TEST_CASE("lru: byte mode, a hit keeps the stored size, an object larger than the cache is not inserted") {
  // C=10: A:4 m[A]4  B:3 m[B A]7  A:4 h[A B]  C:5 m (7+5>10: evict tail B) [C A]9
  //       D:11 m (> C: not inserted, nothing evicted)  A:4 h[A C]  B:3 m (9+3>10: evict C)[B A]7
  //       C:5 m (7+5>10: evict A)[C B]8
  auto c = run("lru", 10, "A:4 B:3 A:4 C:5 D:11 A:4 B:3 C:5");
  CHECK(c.n_req == 8);
  CHECK(hits(c) == 2);
  CHECK(c.n_req_byte == 39);
  CHECK(c.n_miss_byte == 31);
  // A:4 B:5 A:9 (hit: A stays 4 bytes, occupancy 9) C:1 (9+1 <= 10: no eviction) B:5 hit.
  // Had the hit grown A to 9 bytes, C would have evicted B.
  auto d = run("lru", 10, "A:4 B:5 A:9 C:1 B:5");
  CHECK(hits(d) == 2);
  CHECK(d.n_req_byte == 24);
  CHECK(d.n_miss_byte == 10);
}

TEST_CASE("fifo: hits change nothing") {
  // C=3: A m B m C m [C B A]; A h; D m evict A (oldest) [D C B]; B h; E m evict B [E D C];
  //      A m evict C [A E D]
  auto c = run("fifo", 3, "A B C A D B E A");
  CHECK(hits(c) == 2);
  // A B A C D B A: A m B m A h C m[C B A] D m evict A[D C B] B h A m
  CHECK(hits(run("fifo", 3, "A B A C D B A")) == 2);
}

TEST_CASE("clock: one reference bit gives a second chance (libCacheSim default n-bit-counter=1)") {
  // C=3: A m B m A h(A.bit=1) C m [C B A]
  //      D m: tail A bit 1 -> 0, moved to head [A C B]; tail B bit 0 evicted -> [D A C]
  //      B m: tail C bit 0 evicted -> [B D A];  A h
  // LRU on the same sequence evicts A at B and misses A at the end.
  CHECK(hits(run("clock", 3, "A B A C D B A")) == 2);
  CHECK(hits(run("lru", 3, "A B A C D B A")) == 1);
  // two bits: a counter of 3 survives three sweeps
  // C=2: A m, A h(1), A h(2), B m [B A]; C m: A 2->1 head [A B], B 0 evicted [C A];
  //      D m: tail A 1->0 head [A C]; tail C evicted [D A]; A h
  CHECK(hits(run("clock:bits=2", 2, "A A A B C D A")) == 3);
  CHECK(hits(run("clock", 2, "A A A B C D A")) == 2);  // 1 bit: A 1->0 at C, evicted at D
}

TEST_CASE("sieve: the hand clears visited bits and rests on the evicted object's newer neighbour") {
  // C=3: A m B m A h(A.v=1) C m [C B A]
  //      D m: hand at tail A (v=1 -> 0), moves to the newer B (v=0): evict B; hand -> C. [D C A]
  //      B m: hand at C (v=0): evict C; hand -> D. [B D A]
  //      A h
  CHECK(hits(run("sieve", 3, "A B A C D B A")) == 2);
  // continuing: E m: hand at D (v=0) evict D; hand -> B. [E B A]; A h; F m: hand at B (v=0) evict B.
  //             B m: hand -> E (v=0) evict E. Then A h: A was never moved and survives.
  CHECK(hits(run("sieve", 3, "A B A C D B A E A F B A")) == 4);
  // A frequent object loses its bit to the hand and goes: C=2: A m, A h (v=1), B m [B A];
  //   C m: hand at A clears it, B (v=0) evicted, hand -> nil (B was the head) [C A]
  //   D m: hand restarts at the tail A (v=0): evicted [D C];  A m
  // LFU keeps A (frequency 2) and hits it at the end.
  CHECK(hits(run("sieve", 2, "A A B C D A")) == 1);
  CHECK(hits(run("lfu", 2, "A A B C D A")) == 2);
  // FIFO evicts A at D and again at B: hits at 3, 6, 9 only
  CHECK(hits(run("fifo", 3, "A B A C D B A E A F B A")) == 3);
}

TEST_CASE("lfu: least frequent goes first, FIFO among equals, frequency forgotten on eviction") {
  // C=2: A m(f1) A h(f2) B m(f1) C m: evict lowest bucket f1 -> B; C(f1)
  //      A h(f3) B m: evict C (f1) -> B(f1)
  auto c = run("lfu", 2, "A A B C A B");
  CHECK(hits(c) == 2);
  CHECK(hits(run("lru", 2, "A A B C A B")) == 1);
  // Equal frequencies: bucket f2 holds A then B (in the order they reached f2); C evicts A.
  // A B A B C -> {B f2, C f1}; A m evicts C (f1); B h
  CHECK(hits(run("lfu", 2, "A B A B C A B")) == 3);
  // Frequency is forgotten: C=1: A m, A h (f2), A h (f3), B m (the only slot: A evicted),
  // A m (comes back at f1, evicts B), B m.

  CHECK(hits(run("lfu", 1, "A A A B A B")) == 2);
}

TEST_CASE("arc: recency and frequency lists with ghosts") {
  // C=2, p=0: A m T1=[A]; A h T2=[A]; B m T1=[B]
  //   C m: |T1|+|B1|+1 = 2 <= 2, |all| = 2 < 4 -> REPLACE: |T1|=1 > p=0 -> B to B1; T1=[C]
  //   D m: |T1|+|B1|+1 = 3 > 2 and B1 not empty -> drop B from B1; REPLACE: C to B1; T1=[D]
  //   A h (T2): LRU would have evicted A at C.
  CHECK(hits(run("arc", 2, "A A B C D A")) == 2);
  CHECK(hits(run("lru", 2, "A A B C D A")) == 1);
  // Ghost hits adapt p. C=2:
  //   A m T1=[A]; B m T1=[B A]; A h T2=[A] T1=[B]
  //   C m: REPLACE (|T1|=1 > p=0): B -> B1.  T1=[C] T2=[A] B1=[B]
  //   B m, ghost in B1: p = min(0 + max(|B2|/|B1|,1), 2) = 1; REPLACE: |T1|=1 == p but not a B2 hit,
  //        T2 not empty -> A -> B2; B into T2.  T1=[C] T2=[B] B2=[A]
  //   D m: REPLACE: |T1|=1 == p, no B2 hit -> T2's B -> B2. T1=[D C] B2=[B A]
  //   A m, ghost in B2: p = max(1 - max(|B1|/|B2|,1), 0) = 0; REPLACE: |T1|=2 > 0 -> C -> B1;
  //        A into T2.  T1=[D] T2=[A] B1=[C] B2=[B]
  //   D h (T1 -> T2): T2=[D A]
  //   C m, ghost in B1: p = 1; REPLACE: T1 empty -> T2's A -> B2; C into T2: T2=[C D]
  //   C h
  CHECK(hits(run("arc", 2, "A B A C B D A D C C")) == 3);
}

TEST_CASE("2q: Ain FIFO, Aout ghost, Am LRU (C=4: Ain=1, Aout=2, Am=3)") {
  //  1 A m Ain=[A]      2 B m Ain=[B A]   3 A h (Ain: no change)   4 C m Ain=[C B A]
  //  5 B h              6 D m Ain=[D C B A] (4 objects, no eviction yet)  7 A h
  //  8 E m: Ain (4) over its share 1 -> tail A to Aout=[A]; Ain=[E D C B]
  //  9 A m, Aout hit: evict Ain tail B to Aout=[B]; A into Am=[A]
  // 10 B m, Aout hit: Ain tail C to Aout=[C]; Am=[B A]
  // 11 A h (Am: moved to head)  Am=[A B]
  // 12 C m, Aout hit: Ain tail D to Aout=[D]; Ain=[E]; Am=[C A B]
  // 13 D m, Aout hit: Ain (1) not over its share -> Am's LRU tail B evicted; Am=[D C A]
  // 14 B m (gone, not in Aout): Am tail A evicted; B into Ain=[B E]
  // 15 E h   16 A m: Ain tail E to Aout; A into Ain
  auto c = run("2q", 4, "A B A C B D A E A B A C D B E A");
  CHECK(c.n_req == 16);
  CHECK(hits(c) == 5);
  CHECK(hits(run("lru", 4, "A B A C B D A E A B A C D B E A")) == 7);
}

TEST_CASE("s3fifo: small, main and ghost queues (object mode, C=20: small 2, main 18, ghost 18)") {
  // 1..20: misses. Small fills with 1,2; then (no eviction yet, small full) 3..20 go to main.
  std::string s;
  for (int i = 1; i <= 20; ++i) s += "k" + std::to_string(i) + " ";
  // 21: evict small's tail 1 (freq 0) to the ghost; small=[21 2]
  // k1: ghost hit -> main; to make room small's tail 2 goes to the ghost
  // k2: ghost hit -> main; main (19) over its 18 -> main's tail 3 evicted
  // 21 21: hits in small, freq 2
  // 22: main over its share -> tail 4 evicted; 22 into small=[22 21]
  // 23: small's tail 21 has freq 2 -> moves to main (freq 0); 22 (freq 0) -> ghost; 23 into small
  // k5: hit in main (freq 1)
  // 24: main 19 > 18 -> tail 5 has freq 1: reinserted with min(1,3)-1 = 0; tail 6 evicted
  // k6: miss (evicted, not a ghost): small's tail 23 -> ghost; 6 into small
  // 22: ghost hit -> main; small's tail 24 -> ghost
  // k7: hit in main
  s += "k21 k1 k2 k21 k21 k22 k23 k5 k24 k6 k22 k7";
  auto c = run("s3fifo", 20, s);
  CHECK(c.n_req == 32);
  CHECK(hits(c) == 4);
  // The SOSP'23 version (original=1) sends every new object to small; here the same counts.
  CHECK(hits(run("s3fifo:original=1", 20, "k1 k2 k3 k1 k2")) == 2);
}

TEST_CASE("s3fifo: libCacheSim admits only objects smaller than the small queue") {
  // C=19 objects: small = floor(1.9) = 1 and an object as large as small is refused, so nothing is
  // ever cached (libCacheSim S3FIFO.c behaves the same).
  auto c = run("s3fifo", 19, "A A A A");
  CHECK(hits(c) == 0);
  // byte mode, C=100: small 10. A 9-byte object is admitted, a 10-byte one is not.
  CHECK(hits(run("s3fifo", 100, "A:9 A:9")) == 1);
  CHECK(hits(run("s3fifo", 100, "A:10 A:10")) == 0);
}

TEST_CASE("belady: evicts the object needed farthest in the future, always inserts") {
  // C=2: A m B m C m (A next at 4, B next at 6 -> evict B) A h C h B m
  CHECK(hits(run("belady", 2, "A B C A C B")) == 2);
  CHECK(hits(run("lru", 2, "A B C A C B")) == 1);
  // a never-reused object is inserted anyway (no bypass): C=1: A m, B m (A evicted), B h
  CHECK(hits(run("belady", 1, "A B B A")) == 1);
  // byte mode: C=10: A:6 m, B:6 m (evicts A), A:6 m (evicts B), B:6 m
  CHECK(hits(run("belady", 10, "A:6 B:6 A:6 B:6")) == 0);
}

TEST_CASE("every policy: an object larger than the cache is a miss that evicts nothing") {
  for (const auto& e : lite::cache::policy_table()) {
    CAPTURE(std::string(e.name));
    // C=1000 bytes; A:5 fits every policy's admission rule (S3-FIFO's small queue is 100 bytes,
    // W-TinyLFU's window 10)
    auto c = run(e.name, 1000, "A:5 X:2000 A:5 X:2000 A:5");
    CHECK(c.n_req == 5);
    CHECK(hits(c) == 2);
    CHECK(c.n_miss_byte == 5 + 2000 + 2000);
  }
}
