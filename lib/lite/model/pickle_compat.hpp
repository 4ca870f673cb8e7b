#pragma once
// Rewrites a Python pickle stream so that libtorch 1.13's unpickler accepts it, and refuses the streams that
// would make that unpickler crash or allocate what the stream does not hold. Torch-free; see pickle_compat.cpp
// for the opcodes involved and why a rewrite rather than an own unpickler.
#include <cstddef>
#include <string>

namespace lite::model {

// Containers nested deeper than this (or MARKs open at once) are refused: libtorch builds and frees nested
// values recursively, and 200k levels overflow its stack. Data lite reads nests a few levels (a tensor is 3).
constexpr size_t kMaxPickleNesting = 1000;

struct PickleRewrite {
  std::string bytes;       // the stream to hand to torch's unpickler (the input when nothing changed)
  int rewritten = 0;       // SETITEM and APPEND opcodes turned into their batched forms
  std::string stopped_at;  // the opcode the scan did not know ("" when it read the whole stream)
};

// SETITEM -> MARK key value SETITEMS and APPEND -> MARK value APPENDS, protocol 4's forms -> protocol 2's,
// everything else unchanged. A stream with an opcode the scan does not model is returned unchanged (torch's
// unpickler then names the problem). Throws lite::InputError naming `file` for a stream nested deeper than
// kMaxPickleNesting, a string or bytes length beyond the stream's end, a memo index beyond the stream's
// length, a stream that ends inside an opcode, and an opcode short of its operands.
PickleRewrite rewrite_for_torch_unpickler(const std::string& pickle, const std::string& file);

}  // namespace lite::model
