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
// An opcode the scan does not model leaves the stream unchanged, so the worst case is today's error: every
// opcode libtorch 1.13's unpickler reads is modeled here, so libtorch fails at (or before) the first opcode the
// scan did not check, and never reads an unchecked tail.
//
// The same scan guards libtorch against hostile streams, which it would otherwise trust (limits in
// pickle_compat.hpp and docs/inputs.md "Data files"):
//   - nesting: libtorch builds and frees containers recursively (an IValue's destructor releases its elements),
//     so 200k nested tuples overflow the stack. Each value carries its depth (a scalar 0, a container one more
//     than its deepest element; a container filled later, by APPEND(S)/SETITEM(S)/BUILD, grows to one more than
//     what went in). A container changed after it was itself put inside another (only a self-referencing
//     structure does that) may deepen its holders, which are not tracked: the growth is added to a global
//     allowance instead, so the bound stays an upper bound. Nesting, and open MARKs, beyond kMaxPickleNesting
//     are refused;
//   - lengths: a string or bytes opcode whose length exceeds what is left of the stream is refused before
//     anyone allocates it (libtorch resizes its buffer to the claimed length first);
//   - memo indices: libtorch grows its memo table to the index a PUT names (16 bytes a slot), so an index that
//     skips past the next free slot is refused (Python numbers them in order; two slots of slack per GLOBAL,
//     for the ones a rewritten STACK_GLOBAL leaves unset);
//   - a malformed stack (an opcode short of operands, a container opcode without its MARK or container) is
//     refused: libtorch's unpickler pops without checking in places.
#include "lite/model/pickle_compat.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "lite/core/error.hpp"

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

std::string le_bytes(uint64_t v, size_t n) {
  std::string out(n, '\0');
  for (size_t i = 0; i < n; ++i) out[i] = char((v >> (8 * i)) & 0xff);
  return out;
}

constexpr const char* kFix = "save it again with torch.save (a tensor, a dict or list of tensors, or a tuple (x, y))";

struct StackItem {
  size_t start;
  bool mark;
  uint32_t object;                  // index into PickleScan::depth_ (0 for a MARK)
  // A string pushed by a literal or a BINGET of one (for STACK_GLOBAL); shared, so that a stream fetching a
  // long string many times costs a pointer each, not a copy.
  std::shared_ptr<const std::string> text;
};

struct Edit {
  size_t at;            // offset in the original stream
  size_t length;        // original bytes replaced (0: an insertion)
  std::string with;
};

// One pass over the opcodes: the stack effect of each (for the rewrite and the nesting bound), the memo, and
// the edits; see the top of this file.
class PickleScan {
 public:
  PickleScan(const std::string& s, const std::string& file) : s_(s), file_(file) {}

  PickleRewrite run() {
    size_t pos = 0;
    while (pos < s_.size()) {
      const unsigned char code = uint8_t(s_[pos]);
      const OpInfo* op = find_op(code);
      if (!op) return stopped("opcode 0x" + std::string(1, "0123456789abcdef"[code >> 4]) + "0123456789abcdef"[code & 15]);
      const size_t arg = argument_size(pos, *op);
      const size_t next = pos + 1 + arg;
      if (code == '.') break;
      position_ = pos;
      if (code == 'c') ++globals_;
      memo(pos, code);
      protocol4(pos, code, arg);
      if (code == 0x93) {
        if (!stack_global(pos)) return stopped(stop_reason_);
      } else {
        stack_effect(pos, *op, arg);
      }
      pos = next;
    }
    return rewritten();
  }

 private:
  [[noreturn]] void refuse(const std::string& problem) const { throw InputError(file_, problem, kFix); }

  PickleRewrite stopped(const std::string& why) const { return {s_, 0, why}; }

  // Bytes taken by the argument of the opcode at `pos`; a stream that ends inside it is refused, and so is a
  // length that claims more than what is left (compared, never summed: a LEN8 near 2^64 would wrap).
  size_t argument_size(size_t pos, const OpInfo& op) const {
    const size_t at = pos + 1, left = s_.size() - at;
    auto ends_inside = [&] { refuse(fmt::format("the pickle stream ends inside {} at byte {}", op.name, pos)); };
    auto fixed = [&](size_t n) {
      if (n > left) ends_inside();
      return n;
    };
    auto counted = [&](size_t width) {
      fixed(width);
      const uint64_t length = little_endian(s_, at, width);
      if (length > left - width)
        refuse(fmt::format("{} at byte {} claims {} bytes, but only {} remain in the pickle stream", op.name, pos,
                           length, left - width));
      return width + size_t(length);
    };
    auto line_end = [&](size_t from) {
      const size_t nl = s_.find('\n', from);
      if (nl == std::string::npos) ends_inside();
      return nl + 1;
    };
    switch (op.arg) {
      case Arg::none: return 0;
      case Arg::u1: return fixed(1);
      case Arg::u2: return fixed(2);
      case Arg::u4: return fixed(4);
      case Arg::u8: return fixed(8);
      case Arg::line: return line_end(at) - at;
      case Arg::two_lines: return line_end(line_end(at)) - at;
      case Arg::len1: return counted(1);
      case Arg::len4: return counted(4);
      case Arg::len8: return counted(8);
    }
    return 0;
  }

  // Memo bookkeeping: MEMOIZE's implicit index, the bound on indices, the value each slot holds.
  void memo(size_t pos, unsigned char code) {
    if (code != 'q' && code != 'r' && code != 0x94) return;
    const uint64_t index = code == 0x94 ? memo_size_ : little_endian(s_, pos + 1, code == 'q' ? 1 : 4);
    // Python numbers memo slots in order; a rewritten STACK_GLOBAL leaves up to two slots unset (see above),
    // which its GLOBAL allows for when the rewritten stream is read.
    const uint64_t allowed = memo_stores_.size() + 2 * globals_;
    if (index > allowed)
      refuse(fmt::format("memo index {} at byte {} skips past the next free slot {} (a damaged or hostile pickle)",
                         index, pos, allowed));
    memo_size_ = std::max(memo_size_, index + 1);
    memo_stores_.push_back(pos);
    if (code == 0x94) edits_.push_back({pos, 1, "r" + le_bytes(index, 4)});
    if (stack_.empty() || stack_.back().mark) return;
    memo_object_[index] = stack_.back().object;
    if (stack_.back().text) memo_text_[index] = stack_.back().text;
  }

  // Protocol 4 and 5 forms libtorch's unpickler (protocol 2 only) lacks.
  void protocol4(size_t pos, unsigned char code, size_t arg) {
    if (code == 0x80 && uint8_t(s_[pos + 1]) > 2) edits_.push_back({pos, 2, std::string("\x80\x02", 2)});
    if (code == 0x95) edits_.push_back({pos, 1 + arg, ""});
    if (code == 0x8c) edits_.push_back({pos, 2, "X" + le_bytes(little_endian(s_, pos + 1, 1), 4)});
    if (code == 0x8a && arg < 9) {  // LONG1 of fewer than 8 bytes: libtorch reads only 8, sign-extended here
      const size_t n = arg - 1;
      const bool negative = n > 0 && (uint8_t(s_[pos + 1 + n]) & 0x80);
      edits_.push_back({pos, 1 + arg, "\x8a\x08" + s_.substr(pos + 2, n) + std::string(8 - n, negative ? '\xff' : '\0')});
    }
  }

  // STACK_GLOBAL of two known strings -> GLOBAL "module\nname\n" in their place; false (stop) otherwise.
  bool stack_global(size_t pos) {
    if (stack_.size() < 2 || !stack_[stack_.size() - 2].text || !stack_.back().text) {
      stop_reason_ = "STACK_GLOBAL of computed names";
      return false;
    }
    // GLOBAL's names are lines: a name holding a newline cannot be written as one (and is no Python name).
    const std::string& module = *stack_[stack_.size() - 2].text;
    const std::string& name = *stack_.back().text;
    if (module.find('\n') != std::string::npos || name.find('\n') != std::string::npos) {
      stop_reason_ = "STACK_GLOBAL of a name with a newline";
      return false;
    }
    const size_t from = stack_[stack_.size() - 2].start;
    // The GLOBAL replaces [from, pos]: at most the two names' memo stores may go with it (see memo()).
    if (memo_stores_.end() - std::lower_bound(memo_stores_.begin(), memo_stores_.end(), from) > 2) {
      stop_reason_ = "STACK_GLOBAL of names built in more than two steps";
      return false;
    }
    edits_.erase(std::remove_if(edits_.begin(), edits_.end(), [&](const Edit& e) { return e.at >= from; }), edits_.end());
    edits_.push_back({from, pos + 1 - from, "c" + module + "\n" + name + "\n"});
    stack_.resize(stack_.size() - 2);
    stack_.push_back({from, false, new_value(0), nullptr});
    return true;
  }

  uint32_t new_value(uint32_t depth) {
    check_depth(depth);
    depth_.push_back(depth);
    contained_.push_back(false);
    return uint32_t(depth_.size() - 1);
  }

  void check_depth(uint64_t depth) const {
    if (depth + late_growth_ > kMaxPickleNesting)
      refuse(fmt::format("the pickle nests containers {} levels deep (at byte {}), over lite's limit of {} "
                         "(libtorch's unpickler would overflow its stack)",
                         depth + late_growth_, position_, kMaxPickleNesting));
  }

  // The depth of a value built from `items` (one more than the deepest); marks them as held.
  uint32_t holding(const std::vector<StackItem>& items, size_t from) {
    uint32_t deepest = 0;
    for (size_t i = from; i < items.size(); ++i) {
      if (items[i].mark) continue;
      deepest = std::max(deepest, depth_[items[i].object]);
      contained_[items[i].object] = true;
    }
    return deepest + 1;
  }

  // `target` takes in items[from..]: APPEND(S), SETITEM(S), ADDITEMS, BUILD.
  void fill(const StackItem& target, size_t from) {
    const uint32_t before = depth_[target.object];
    const uint32_t after = std::max(before, holding(stack_, from));
    if (contained_[target.object]) late_growth_ += after - before;
    depth_[target.object] = after;
    check_depth(after);
  }

  // Pops to the MARK (items above it first handed to `fill`'s target, when the opcode fills one).
  size_t pop_to_mark(const OpInfo& op, bool fills) {
    size_t mark = stack_.size();
    while (mark > 0 && !stack_[mark - 1].mark) --mark;
    if (mark == 0) refuse(fmt::format("{} at byte {} has no MARK before it (a damaged pickle)", op.name, position_));
    if (fills) {
      if (mark < 2 || stack_[mark - 2].mark)
        refuse(fmt::format("{} at byte {} has no container to fill (a damaged pickle)", op.name, position_));
      fill(stack_[mark - 2], mark);
    }
    const size_t start = stack_[mark - 1].start;
    stack_.resize(mark - 1);
    --open_marks_;
    return start;
  }

  static bool fills_a_container(unsigned char code) {
    return code == 'a' || code == 's' || code == 'b' || code == 'e' || code == 'u' || code == 0x90;
  }

  void stack_effect(size_t pos, const OpInfo& op, size_t arg) {
    const unsigned char code = op.code;
    if (code == '(') {
      if (++open_marks_ > kMaxPickleNesting)
        refuse(fmt::format("the pickle opens {} MARKs at once (at byte {}), over lite's limit of {}", open_marks_, pos,
                           kMaxPickleNesting));
      stack_.push_back({pos, true, 0, nullptr});
      return;
    }
    if (op.pops == kToMark) {
      const size_t mark_at = stack_.size();
      size_t first = mark_at;
      while (first > 0 && !stack_[first - 1].mark) --first;
      const uint32_t depth = op.pushes && first > 0 ? holding(stack_, first) : 0;
      const size_t start = pop_to_mark(op, fills_a_container(code));
      if (op.pushes) stack_.push_back({start, false, new_value(depth), nullptr});
      return;
    }
    if (stack_.size() < size_t(op.pops)) refuse(fmt::format("{} at byte {} on a short stack (a damaged pickle)", op.name, pos));
    size_t start = pos;
    uint32_t depth = 0;
    if (op.pops > 0) {
      const size_t first = stack_.size() - size_t(op.pops);
      for (size_t i = first; i < stack_.size(); ++i)
        if (stack_[i].mark) refuse(fmt::format("{} at byte {} across a MARK (a damaged pickle)", op.name, pos));
      start = stack_[first].start;
      if (fills_a_container(code)) {
        if (first == 0 || stack_[first - 1].mark)
          refuse(fmt::format("{} at byte {} has no container to fill (a damaged pickle)", op.name, pos));
        fill(stack_[first - 1], first);
      } else if (op.pushes) {
        depth = holding(stack_, first);
      }
      if (code == 's' || code == 'a') {  // [..., dict, key, value] / [..., list, value]: MARK, then the batched form
        if (open_marks_ + 1 > kMaxPickleNesting)  // the MARK this inserts counts when the result is read
          refuse(fmt::format("the pickle opens {} MARKs at once (at byte {}), over lite's limit of {}",
                             open_marks_ + 1, pos, kMaxPickleNesting));
        edits_.push_back({start, 0, "("});
        edits_.push_back({pos, 1, code == 's' ? "u" : "e"});
        ++rewritten_;
      }
      stack_.resize(first);
    }
    if (!op.pushes) return;
    if (code == 'h' || code == 'j') {
      const uint64_t index = little_endian(s_, pos + 1, code == 'h' ? 1 : 4);
      auto known = memo_object_.find(index);
      stack_.push_back({start, false, known != memo_object_.end() ? known->second : new_value(0), nullptr});
      auto text = memo_text_.find(index);
      if (text != memo_text_.end()) stack_.back().text = text->second;
      return;
    }
    if (code == ']' || code == ')' || code == '}' || code == 0x8f) depth = 1;  // an empty container
    stack_.push_back({start, false, new_value(depth), nullptr});
    if (code == 'X' || code == 0x8c)
      stack_.back().text =
          std::make_shared<const std::string>(s_.substr(pos + 1 + (code == 'X' ? 4 : 1), arg - (code == 'X' ? 4 : 1)));
  }

  PickleRewrite rewritten() {
    PickleRewrite out;
    out.rewritten = rewritten_;
    if (edits_.empty()) {
      out.bytes = s_;
      return out;
    }
    // Insertions sort before a replacement at the same offset (the MARK goes in front of the opcode there).
    std::stable_sort(edits_.begin(), edits_.end(), [](const Edit& a, const Edit& b) {
      return a.at != b.at ? a.at < b.at : (a.length == 0 && b.length != 0);
    });
    out.bytes.reserve(s_.size() + edits_.size());
    size_t copied = 0;
    for (const auto& e : edits_) {
      out.bytes.append(s_, copied, e.at - copied);
      out.bytes += e.with;
      copied = e.at + e.length;
    }
    out.bytes.append(s_, copied, std::string::npos);
    return out;
  }

  const std::string& s_;
  const std::string& file_;
  std::vector<StackItem> stack_;
  std::vector<Edit> edits_;
  std::vector<uint32_t> depth_;    // per value: containers nested in it (a scalar 0)
  std::vector<bool> contained_;    // per value: put inside another value already
  uint64_t late_growth_ = 0;       // depth added to values already held by others (see the top of the file)
  size_t open_marks_ = 0;
  size_t position_ = 0;            // the opcode being read, for messages
  uint64_t memo_size_ = 0;         // MEMOIZE stores at the next index after the highest one used
  uint64_t globals_ = 0;           // GLOBAL opcodes read so far
  std::vector<size_t> memo_stores_;  // offsets of the memo stores read so far, in order
  std::unordered_map<uint64_t, uint32_t> memo_object_;
  std::map<uint64_t, std::shared_ptr<const std::string>> memo_text_;  // memoized strings, for STACK_GLOBAL's BINGETs
  int rewritten_ = 0;
  std::string stop_reason_;
};

}  // namespace

PickleRewrite rewrite_for_torch_unpickler(const std::string& pickle, const std::string& file) {
  PickleRewrite result = PickleScan(pickle, file).run();
  // A MARK inserted before a SETITEM's key or an APPEND's value stays open over every MARK inside them, so the
  // rewritten stream can hold more MARKs open at once than the input did (found by fuzz/pickle_compat): what
  // libtorch will read is scanned once more, under the same limits.
  if (result.rewritten > 0) PickleScan(result.bytes, file).run();
  return result;
}

}  // namespace lite::model
