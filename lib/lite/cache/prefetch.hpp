#pragma once
// The one way lite's simulators prefetch. GCC counts __builtin_prefetch as free of side effects, so a function
// whose only job is to prefetch is found pure, and a call to it (its result unused) is deleted as dead code:
// with GCC 12 at -O3 the object table's prefetch_links and prefetch_victim compiled to nothing in every policy,
// and the sketch's prefetch with them. The empty volatile asm is a side effect the optimiser must keep, so a
// function that calls prefetch_line stays called; it clobbers nothing, so the code around it is unchanged.
namespace lite::cache::detail {

inline void prefetch_line(const void* p) {
  __builtin_prefetch(p);
  asm volatile("");
}

// The same for a line about to be written.
inline void prefetch_line_for_write(const void* p) {
  __builtin_prefetch(p, 1);
  asm volatile("");
}

}  // namespace lite::cache::detail
