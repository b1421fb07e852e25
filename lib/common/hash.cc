#include "lib/common/hash.h"

#include <algorithm>
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
// CRC-32C is linear: the CRC of A followed by B is the CRC of A "shifted" over len(B)
// zero bytes, xor the CRC of B computed from 0. A shift over a fixed length is a
// 32x32 matrix over GF(2), applied byte by byte through four tables.
using ShiftTables = std::array<std::array<uint32_t, 256>, 4>;

uint32_t Gf2Times(const uint32_t* matrix, uint32_t vector) {
  uint32_t sum = 0;
  for (; vector != 0; vector >>= 1, ++matrix) {
    if (vector & 1) sum ^= *matrix;
  }
  return sum;
}

void Gf2Square(uint32_t* square, const uint32_t* matrix) {
  for (int n = 0; n < 32; ++n) square[n] = Gf2Times(matrix, matrix[n]);
}

// The tables that shift a (non-inverted) CRC over `bytes` zero bytes.
ShiftTables MakeShiftTables(size_t bytes) {
  uint32_t bit[32], two[32], four[32], op[32];
  bit[0] = 0x82f63b78u;  // one zero bit: column n is where a register of only bit n goes
  for (int n = 1; n < 32; ++n) bit[n] = 1u << (n - 1);
  Gf2Square(two, bit);
  Gf2Square(four, two);
  Gf2Square(op, four);  // one zero byte
  uint32_t result[32];
  for (int n = 0; n < 32; ++n) result[n] = 1u << n;  // no shift
  for (size_t left = bytes; left != 0; left >>= 1) {  // op is the shift over 2^k bytes
    uint32_t next[32];
    if (left & 1) {
      for (int n = 0; n < 32; ++n) next[n] = Gf2Times(op, result[n]);
      std::copy(next, next + 32, result);
    }
    Gf2Square(next, op);
    std::copy(next, next + 32, op);
  }
  ShiftTables t{};
  for (uint32_t n = 0; n < 256; ++n) {
    t[0][n] = Gf2Times(result, n);
    t[1][n] = Gf2Times(result, n << 8);
    t[2][n] = Gf2Times(result, n << 16);
    t[3][n] = Gf2Times(result, n << 24);
  }
  return t;
}

uint32_t Shift(const ShiftTables& t, uint32_t crc) {
  return t[0][crc & 0xff] ^ t[1][(crc >> 8) & 0xff] ^ t[2][(crc >> 16) & 0xff] ^ t[3][crc >> 24];
}

// The SSE 4.2 CRC32 instruction computes CRC-32C (Castagnoli) itself, 8 bytes per step,
// with a latency of three steps: three streams over three blocks run at once, and are
// joined by shifting. Blocks of kLongBlock bytes, then kShortBlock, then one stream.
constexpr size_t kLongBlock = 8192;
constexpr size_t kShortBlock = 256;

template <size_t kBlock>
__attribute__((target("sse4.2"))) void Crc32cThreeWay(const unsigned char*& p, size_t& n, uint64_t& c,
                                                     const ShiftTables& shift) {
  while (n >= 3 * kBlock) {
    uint64_t c1 = 0, c2 = 0;
    for (const unsigned char* end = p + kBlock; p < end; p += 8) {
      uint64_t w0, w1, w2;
      std::memcpy(&w0, p, 8);
      std::memcpy(&w1, p + kBlock, 8);
      std::memcpy(&w2, p + 2 * kBlock, 8);
      c = __builtin_ia32_crc32di(c, w0);
      c1 = __builtin_ia32_crc32di(c1, w1);
      c2 = __builtin_ia32_crc32di(c2, w2);
    }
    c = Shift(shift, static_cast<uint32_t>(c)) ^ static_cast<uint32_t>(c1);
    c = Shift(shift, static_cast<uint32_t>(c)) ^ static_cast<uint32_t>(c2);
    p += 2 * kBlock;
    n -= 3 * kBlock;
  }
}

__attribute__((target("sse4.2"))) uint32_t Crc32cSse42(const unsigned char* p, size_t n, uint32_t crc) {
  static const ShiftTables kShiftLong = MakeShiftTables(kLongBlock);
  static const ShiftTables kShiftShort = MakeShiftTables(kShortBlock);
  uint64_t c = crc;
  Crc32cThreeWay<kLongBlock>(p, n, c, kShiftLong);
  Crc32cThreeWay<kShortBlock>(p, n, c, kShiftShort);
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
