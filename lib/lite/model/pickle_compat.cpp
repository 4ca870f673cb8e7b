// Makes a pickle stream written by Python's torch.save readable by libtorch 1.13's unpickler.
//
// The gap: Python pickles a container with one item through the single-item opcodes, SETITEM for a dict
// ({"x": t}) and APPEND for a list ([t]); libtorch's unpickler knows only the batched SETITEMS and APPENDS
// and fails with "Unknown opcode for unpickling at 0x73". It also reads protocol 2 only, and LONG1 only with
// 8 bytes; streams written with pickle_protocol=4 add FRAME (a length hint), MEMOIZE (memo store at the next
// free index), SHORT_BINUNICODE and STACK_GLOBAL (module and name taken from the stack).
//
// The rewrite: scan the opcode stream once, tracking for each value on the pickle stack the offset of the
// first opcode that built it (an opcode that pops n values and pushes one starts where the deepest popped
// value started; a MARK-delimited one starts at the MARK). Then
//   SETITEM at p, stack [..., dict, key, value]  ->  MARK inserted at key's start, 's' replaced by 'u';
//   APPEND  at p, stack [..., list, value]       ->  MARK inserted at value's start, 'a' replaced by 'e';
//   PROTO 4/5 -> PROTO 2; FRAME n -> dropped; MEMOIZE -> LONG_BINPUT <its index>; SHORT_BINUNICODE ->
//   BINUNICODE; LONG1 -> LONG1 of 8 bytes; STACK_GLOBAL whose two strings are known (literals, or BINGETs of
//   memoized literals) -> GLOBAL "module\nname\n" replacing the string pushes (their memo slots stay unset:
//   libtorch fills gaps with None, and only STACK_GLOBAL reads such names back).
// Memo entries are numbered, not addressed by offset, so inserting bytes keeps every BINGET valid.
//
// Why a rewrite rather than an own unpickler: the tensors inside a torch.save file are rebuilt by torch's
// unpickler (storages, strides, dtypes, the persistent-id protocol of the zip format), which lite should not
// reimplement; the container level is the only part that differs, and a stack-effect scan of it is ~150 lines.
// An opcode the scan does not model leaves the stream unchanged, so the worst case is today's error.
#include "lite/model/pickle_compat.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <vector>

namespace lite::model {

namespace {

enum class Arg { none, u1, u2, u4, u8, line, two_lines, len1, len4, len8 };
constexpr int kToMark = -1;

struct OpInfo {
  unsigned char code;
  const char* name;
  Arg arg;
  int pops;   // values popped, or kToMark
  int pushes;
};

// Protocols 0-5, except DUP, INST and PERSID-free oddities that torch.save never writes.
const OpInfo kOps[] = {
    {'(', "MARK", Arg::none, 0, 0},          {'.', "STOP", Arg::none, 0, 0},
    {'0', "POP", Arg::none, 1, 0},           {'1', "POP_MARK", Arg::none, kToMark, 0},
    {'F', "FLOAT", Arg::line, 0, 1},         {'I', "INT", Arg::line, 0, 1},
    {'J', "BININT", Arg::u4, 0, 1},          {'K', "BININT1", Arg::u1, 0, 1},
    {'L', "LONG", Arg::line, 0, 1},          {'M', "BININT2", Arg::u2, 0, 1},
    {'N', "NONE", Arg::none, 0, 1},          {'P', "PERSID", Arg::line, 0, 1},
    {'Q', "BINPERSID", Arg::none, 1, 1},     {'R', "REDUCE", Arg::none, 2, 1},
    {'S', "STRING", Arg::line, 0, 1},        {'T', "BINSTRING", Arg::len4, 0, 1},
    {'U', "SHORT_BINSTRING", Arg::len1, 0, 1}, {'V', "UNICODE", Arg::line, 0, 1},
    {'X', "BINUNICODE", Arg::len4, 0, 1},    {'a', "APPEND", Arg::none, 1, 0},
    {'b', "BUILD", Arg::none, 1, 0},         {'c', "GLOBAL", Arg::two_lines, 0, 1},
    {'d', "DICT", Arg::none, kToMark, 1},    {'}', "EMPTY_DICT", Arg::none, 0, 1},
    {'e', "APPENDS", Arg::none, kToMark, 0}, {'g', "GET", Arg::line, 0, 1},
    {'h', "BINGET", Arg::u1, 0, 1},          {'j', "LONG_BINGET", Arg::u4, 0, 1},
    {'l', "LIST", Arg::none, kToMark, 1},    {']', "EMPTY_LIST", Arg::none, 0, 1},
    {'o', "OBJ", Arg::none, kToMark, 1},     {'p', "PUT", Arg::line, 0, 0},
    {'q', "BINPUT", Arg::u1, 0, 0},          {'r', "LONG_BINPUT", Arg::u4, 0, 0},
    {'s', "SETITEM", Arg::none, 2, 0},       {'t', "TUPLE", Arg::none, kToMark, 1},
    {')', "EMPTY_TUPLE", Arg::none, 0, 1},   {'u', "SETITEMS", Arg::none, kToMark, 0},
    {'G', "BINFLOAT", Arg::u8, 0, 1},        {0x80, "PROTO", Arg::u1, 0, 0},
    {0x81, "NEWOBJ", Arg::none, 2, 1},       {0x82, "EXT1", Arg::u1, 0, 1},
    {0x83, "EXT2", Arg::u2, 0, 1},           {0x84, "EXT4", Arg::u4, 0, 1},
    {0x85, "TUPLE1", Arg::none, 1, 1},       {0x86, "TUPLE2", Arg::none, 2, 1},
    {0x87, "TUPLE3", Arg::none, 3, 1},       {0x88, "NEWTRUE", Arg::none, 0, 1},
    {0x89, "NEWFALSE", Arg::none, 0, 1},     {0x8a, "LONG1", Arg::len1, 0, 1},
    {0x8b, "LONG4", Arg::len4, 0, 1},        {'B', "BINBYTES", Arg::len4, 0, 1},
    {'C', "SHORT_BINBYTES", Arg::len1, 0, 1}, {0x8c, "SHORT_BINUNICODE", Arg::len1, 0, 1},
    {0x8d, "BINUNICODE8", Arg::len8, 0, 1},  {0x8e, "BINBYTES8", Arg::len8, 0, 1},
    {0x8f, "EMPTY_SET", Arg::none, 0, 1},    {0x90, "ADDITEMS", Arg::none, kToMark, 0},
    {0x91, "FROZENSET", Arg::none, kToMark, 1}, {0x92, "NEWOBJ_EX", Arg::none, 3, 1},
    {0x93, "STACK_GLOBAL", Arg::none, 2, 1}, {0x94, "MEMOIZE", Arg::none, 0, 0},
    {0x95, "FRAME", Arg::u8, 0, 0},          {0x96, "BYTEARRAY8", Arg::len8, 0, 1},
    {0x97, "NEXT_BUFFER", Arg::none, 0, 1},  {0x98, "READONLY_BUFFER", Arg::none, 1, 1},
};

const OpInfo* find_op(unsigned char code) {
  for (const auto& op : kOps)
    if (op.code == code) return &op;
  return nullptr;
}

uint64_t little_endian(const std::string& s, size_t at, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint64_t(uint8_t(s[at + i])) << (8 * i);
  return v;
}

// Bytes taken by an opcode's argument at `at`, or nullopt when the stream ends inside it.
std::optional<size_t> argument_size(const std::string& s, size_t at, Arg arg) {
  // Compared with what is left, never as a sum: a LEN8 argument near 2^64 would wrap `at + n`.
  auto fits = [&](uint64_t n) { return at <= s.size() && n <= s.size() - at ? std::optional<size_t>(n) : std::nullopt; };
  auto counted = [&](size_t width) -> std::optional<size_t> {
    if (at + width > s.size()) return std::nullopt;
    const uint64_t length = little_endian(s, at, width);
    return length <= s.size() ? fits(width + length) : std::nullopt;
  };
  auto line_end = [&](size_t from) -> std::optional<size_t> {
    auto nl = s.find('\n', from);
    return nl == std::string::npos ? std::nullopt : std::optional<size_t>(nl + 1);
  };
  switch (arg) {
    case Arg::none: return 0;
    case Arg::u1: return fits(1);
    case Arg::u2: return fits(2);
    case Arg::u4: return fits(4);
    case Arg::u8: return fits(8);
    case Arg::line: {
      auto end = line_end(at);
      return end ? std::optional<size_t>(*end - at) : std::nullopt;
    }
    case Arg::two_lines: {
      auto first = line_end(at);
      auto second = first ? line_end(*first) : std::nullopt;
      return second ? std::optional<size_t>(*second - at) : std::nullopt;
    }
    case Arg::len1: return counted(1);
    case Arg::len4: return counted(4);
    case Arg::len8: return counted(8);
  }
  return std::nullopt;
}

std::string le_bytes(uint64_t v, size_t n) {
  std::string out(n, '\0');
  for (size_t i = 0; i < n; ++i) out[i] = char((v >> (8 * i)) & 0xff);
  return out;
}

struct StackItem {
  size_t start;
  bool mark;
  std::optional<std::string> text;  // a string pushed by a literal or a BINGET of one (for STACK_GLOBAL)
};

struct Edit {
  size_t at;            // offset in the original stream
  size_t length;        // original bytes replaced (0: an insertion)
  std::string with;
};

}  // namespace

PickleRewrite rewrite_for_torch_unpickler(const std::string& s) {
  PickleRewrite out;
  out.bytes = s;
  std::vector<StackItem> stack;
  std::vector<Edit> edits;
  uint64_t memo_size = 0;  // MEMOIZE stores at the next index after the highest one used
  std::map<uint64_t, std::string> memo_text;  // memoized strings, for STACK_GLOBAL arguments fetched by BINGET
  auto pop_to_mark = [&]() -> std::optional<size_t> {
    while (!stack.empty() && !stack.back().mark) stack.pop_back();
    if (stack.empty()) return std::nullopt;
    size_t start = stack.back().start;
    stack.pop_back();
    return start;
  };
  size_t pos = 0;
  while (pos < s.size()) {
    const unsigned char code = uint8_t(s[pos]);
    const OpInfo* op = find_op(code);
    if (!op) {
      out.stopped_at = "opcode 0x" + std::string(1, "0123456789abcdef"[code >> 4]) + "0123456789abcdef"[code & 15];
      return {s, 0, out.stopped_at};
    }
    auto arg = argument_size(s, pos + 1, op->arg);
    if (!arg) return {s, 0, std::string(op->name) + " truncated"};
    const size_t next = pos + 1 + *arg;
    if (code == '.') {
      pos = next;
      break;
    }
    // Memo bookkeeping (for MEMOIZE's implicit index and for strings fetched back by BINGET).
    if (code == 'q' || code == 'r' || code == 0x94) {
      const uint64_t index = code == 0x94 ? memo_size : little_endian(s, pos + 1, code == 'q' ? 1 : 4);
      memo_size = std::max(memo_size, index + 1);
      if (code == 0x94) edits.push_back({pos, 1, "r" + le_bytes(index, 4)});
      if (!stack.empty() && stack.back().text) memo_text[index] = *stack.back().text;
    }
    // Protocol 4 and 5 forms libtorch's unpickler (protocol 2 only) lacks.
    if (code == 0x80 && uint8_t(s[pos + 1]) > 2) edits.push_back({pos, 2, std::string("\x80\x02", 2)});
    if (code == 0x95) edits.push_back({pos, 1 + *arg, ""});
    if (code == 0x8c) edits.push_back({pos, 2, "X" + le_bytes(little_endian(s, pos + 1, 1), 4)});
    if (code == 0x8a && *arg < 9) {  // LONG1 of fewer than 8 bytes: libtorch reads only 8, sign-extended here
      const size_t n = *arg - 1;
      const bool negative = n > 0 && (uint8_t(s[pos + 1 + n]) & 0x80);
      edits.push_back({pos, 1 + *arg, "\x8a\x08" + s.substr(pos + 2, n) + std::string(8 - n, negative ? '\xff' : '\0')});
    }
    if (code == 0x93) {  // STACK_GLOBAL of two known strings -> GLOBAL "module\nname\n" in their place
      if (stack.size() < 2 || !stack[stack.size() - 2].text || !stack.back().text)
        return {s, 0, "STACK_GLOBAL of computed names"};
      // GLOBAL's names are lines: a name holding a newline cannot be written as one (and is no Python name).
      if (stack[stack.size() - 2].text->find('\n') != std::string::npos || stack.back().text->find('\n') != std::string::npos)
        return {s, 0, "STACK_GLOBAL of a name with a newline"};
      const size_t from = stack[stack.size() - 2].start;
      edits.erase(std::remove_if(edits.begin(), edits.end(), [&](const Edit& e) { return e.at >= from; }), edits.end());
      edits.push_back({from, pos + 1 - from, "c" + *stack[stack.size() - 2].text + "\n" + *stack.back().text + "\n"});
      stack.resize(stack.size() - 2);
      stack.push_back({from, false, std::nullopt});
      pos = next;
      continue;
    }
    if (code == '(') {
      stack.push_back({pos, true, std::nullopt});
    } else if (op->pops == kToMark) {
      auto start = pop_to_mark();
      if (!start) return {s, 0, std::string(op->name) + " without MARK"};
      if (op->pushes) stack.push_back({*start, false, std::nullopt});
    } else {
      if (stack.size() < size_t(op->pops)) return {s, 0, std::string(op->name) + " on a short stack"};
      size_t start = pos;
      if (op->pops > 0) {
        const StackItem& deepest = stack[stack.size() - size_t(op->pops)];
        if (deepest.mark) return {s, 0, std::string(op->name) + " across a MARK"};
        start = deepest.start;
        if (code == 's') {  // [..., dict, key, value]: MARK before key, then SETITEMS
          edits.push_back({start, 0, "("});
          edits.push_back({pos, 1, "u"});
          ++out.rewritten;
        } else if (code == 'a') {  // [..., list, value]: MARK before value, then APPENDS
          edits.push_back({start, 0, "("});
          edits.push_back({pos, 1, "e"});
          ++out.rewritten;
        }
        stack.resize(stack.size() - size_t(op->pops));
      }
      if (op->pushes) stack.push_back({start, false, std::nullopt});
      if (code == 'X' || code == 0x8c) stack.back().text = s.substr(pos + 1 + (code == 'X' ? 4 : 1), *arg - (code == 'X' ? 4 : 1));
      if (code == 'h' || code == 'j') {
        auto known = memo_text.find(little_endian(s, pos + 1, code == 'h' ? 1 : 4));
        if (known != memo_text.end()) stack.back().text = known->second;
      }
    }
    pos = next;
  }
  if (edits.empty()) return out;
  // Insertions sort before a replacement at the same offset (the MARK goes in front of the opcode there).
  std::stable_sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) {
    return a.at != b.at ? a.at < b.at : (a.length == 0 && b.length != 0);
  });
  std::string rewritten;
  rewritten.reserve(s.size() + edits.size());
  size_t copied = 0;
  for (const auto& e : edits) {
    rewritten.append(s, copied, e.at - copied);
    rewritten += e.with;
    copied = e.at + e.length;
  }
  rewritten.append(s, copied, std::string::npos);
  out.bytes = std::move(rewritten);
  return out;
}

}  // namespace lite::model
