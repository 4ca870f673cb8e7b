#pragma once
// Rewrites a Python pickle stream so that libtorch 1.13's unpickler accepts it. Torch-free; see
// pickle_compat.cpp for the opcodes involved and why a rewrite rather than an own unpickler.
#include <string>

namespace lite::model {

struct PickleRewrite {
  std::string bytes;       // the stream to hand to torch's unpickler (the input when nothing changed)
  int rewritten = 0;       // SETITEM and APPEND opcodes turned into their batched forms
  std::string stopped_at;  // the opcode the scan did not know ("" when it read the whole stream)
};

// SETITEM -> MARK key value SETITEMS and APPEND -> MARK value APPENDS, everything else unchanged. A stream
// with an opcode the scan does not model is returned unchanged (torch's unpickler then names the problem).
PickleRewrite rewrite_for_torch_unpickler(const std::string& pickle);

}  // namespace lite::model
