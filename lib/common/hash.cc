#include "lib/common/hash.h"

#include <array>
#include <cstring>

namespace weir {

namespace {

std::array<uint32_t, 256> MakeTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (0x82f63b78u ^ (c >> 1)) : (c >> 1);
    table[i] = c;
  }
  return table;
}

// Byte at a time (any CPU). `crc` is the inverted running value.
uint32_t Crc32cTable(const unsigned char* p, size_t n, uint32_t crc) {
  static const std::array<uint32_t, 256> kTable = MakeTable();
  for (size_t i = 0; i < n; ++i) crc = kTable[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return crc;
}

#if defined(__x86_64__)
// The SSE 4.2 CRC32 instruction computes CRC-32C (Castagnoli) itself, 8 bytes per step.
__attribute__((target("sse4.2"))) uint32_t Crc32cSse42(const unsigned char* p, size_t n, uint32_t crc) {
  uint64_t c = crc;
  while (n >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    c = __builtin_ia32_crc32di(c, word);
    p += 8;
    n -= 8;
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  while (n > 0) {
    c32 = __builtin_ia32_crc32qi(c32, *p++);
    --n;
  }
  return c32;
}

bool HasSse42() {
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
}
#endif

}  // namespace

uint32_t Crc32c(const void* data, size_t n, uint32_t crc) {
  const auto* p = static_cast<const unsigned char*>(data);
#if defined(__x86_64__)
  if (HasSse42()) return ~Crc32cSse42(p, n, ~crc);
#endif
  return ~Crc32cTable(p, n, ~crc);
}

}  // namespace weir
