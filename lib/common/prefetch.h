// Loading memory ahead of its use: hints that change nothing but when the bytes arrive.
#pragma once

#include <cstddef>
#include <cstdint>

namespace weir {

// Starts loading the cache line holding `p` (a hint; changes nothing). GCC finds a
// function whose only effect is __builtin_prefetch free of side effects and drops the
// calls to it once it is not inlined; an asm statement it keeps.
inline void PrefetchLine(const void* p) {
#if defined(__x86_64__)
  asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p);
#endif
}

// Starts loading the first and the last cache line of the `size` bytes at `p`: all of an
// object of up to 64 bytes, wherever it lies.
inline void PrefetchObject(const void* p, size_t size) {
  const char* bytes = static_cast<const char*>(p);
  PrefetchLine(bytes);
  if (reinterpret_cast<uintptr_t>(bytes) % 64 + size > 64) PrefetchLine(bytes + size - 1);
}

}  // namespace weir
