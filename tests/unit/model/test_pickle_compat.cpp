// pickle_compat: the single-item opcodes libtorch's unpickler lacks become their batched forms, and the
// result is what Python's pickle would have produced with them (checked through torch's own unpickler).
#include <doctest/doctest.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/torch.h>

#include "lite/model/pickle_compat.hpp"

using lite::model::rewrite_for_torch_unpickler;

namespace {
std::string bytes(const char* s, size_t n) { return std::string(s, n); }

c10::IValue unpickle(const std::string& s) { return torch::jit::unpickle(s.data(), s.size()); }
}  // namespace

TEST_CASE("a one-key dict's SETITEM becomes MARK ... SETITEMS") {
  // pickle.dumps({'x': 1}, protocol=2)
  const std::string in = bytes("\x80\x02}q\x00X\x01\x00\x00\x00xq\x01K\x01s.", 17);
  CHECK_THROWS(unpickle(in));  // "Unknown opcode for unpickling at 0x73"
  auto out = rewrite_for_torch_unpickler(in, "f.pt");
  CHECK(out.rewritten == 1);
  CHECK(out.bytes == bytes("\x80\x02}q\x00(X\x01\x00\x00\x00xq\x01K\x01u.", 18));
  auto v = unpickle(out.bytes);
  REQUIRE(v.isGenericDict());
  CHECK(v.toGenericDict().at("x").toInt() == 1);
}

TEST_CASE("a one-element list's APPEND and nested containers") {
  // pickle.dumps([5], protocol=2)
  // (A hex escape takes every hex digit after it: "\x05" "a" keeps the 'a' an opcode.)
  auto list = rewrite_for_torch_unpickler(bytes("\x80\x02]q\x00K\x05" "a.", 9), "f.pt");
  CHECK(list.bytes == bytes("\x80\x02]q\x00(K\x05" "e.", 10));
  CHECK(unpickle(list.bytes).toListRef()[0].toInt() == 5);
  // pickle.dumps({'a': [{'b': 2}]}, protocol=2): SETITEM inside APPEND inside SETITEM
  const char nested[] =
      "\x80\x02}q\x00X\x01\x00\x00\x00" "aq\x01]q\x02}q\x03X\x01\x00\x00\x00" "bq\x04K\x02sas.";
  auto out = rewrite_for_torch_unpickler(bytes(nested, sizeof(nested) - 1), "f.pt");
  CHECK(out.rewritten == 3);
  auto v = unpickle(out.bytes);
  CHECK(v.toGenericDict().at("a").toListRef()[0].toGenericDict().at("b").toInt() == 2);
}

TEST_CASE("protocol 4 framing and memo opcodes are rewritten, unknown opcodes leave the stream alone") {
  // pickle.dumps({'x': 1}, protocol=4)
  const char p4[] = "\x80\x04\x95\n\x00\x00\x00\x00\x00\x00\x00}\x94\x8c\x01x\x94K\x01s.";
  auto out = rewrite_for_torch_unpickler(bytes(p4, sizeof(p4) - 1), "f.pt");
  CHECK(out.stopped_at.empty());
  CHECK(unpickle(out.bytes).toGenericDict().at("x").toInt() == 1);

  const std::string odd = bytes("\x80\x02}q\x00\xffK\x01s.", 10);
  auto unchanged = rewrite_for_torch_unpickler(odd, "f.pt");
  CHECK(unchanged.bytes == odd);
  CHECK(unchanged.stopped_at == "opcode 0xff");
  // A stream already in the batched form comes back byte for byte.
  const std::string batched = bytes("\x80\x02}q\x00(X\x01\x00\x00\x00xq\x01K\x01u.", 18);
  CHECK(rewrite_for_torch_unpickler(batched, "f.pt").bytes == batched);
}
