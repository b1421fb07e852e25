#pragma once
// WriteDecimal: an integer as decimal text, for jobs that format their own lines.
//
//   char* end = weir::WriteDecimal(out, count);  // out has kMaxDecimalChars bytes of room
//
// std::to_chars branches on the number of digits (to count them, then once per two
// digits), and a stream of counts whose lengths change from record to record makes the
// core guess those branches wrong. WriteDecimal turns a value below 10^8 into its digits
// with a few multiplications, all eight at once in a 64-bit word, and drops the leading
// zeros with a shift by a count of zero bytes: no branch depends on the value. Larger and
// negative values take std::to_chars.

#include <bit>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace weir {

// The room WriteDecimal needs at `out`: the 19 digits and the sign of an int64_t. (Below
// 10^8 it stores 8 bytes, of which the digits are the first.)
inline constexpr size_t kMaxDecimalChars = 20;

namespace decimal_internal {

// The eight decimal digits of v < 10^8, leading zeros included, as the values 0..9 in
// the bytes of a little-endian word: the first digit in the lowest byte.
inline uint64_t EightDigits(uint32_t v) {
  // Two halves of four digits in 32-bit lanes, the first half in the low lane.
  const uint64_t fours = (v / 10000) | (static_cast<uint64_t>(v % 10000) << 32);
  // Each lane x < 10^4 into x / 100 and x % 100, in 16-bit lanes (x * 10486 >> 20 is
  // x / 100 for every x < 10^4, and stays below 2^27: no carry into the next lane).
  const uint64_t hundreds = ((fours * 10486) >> 20) & 0x0000007F0000007FULL;
  const uint64_t twos = hundreds | ((fours - hundreds * 100) << 16);
  // Each 16-bit lane y < 100 into y / 10 and y % 10, in bytes (y * 103 >> 10 is y / 10 for
  // every y < 100, and stays below 2^14).
  const uint64_t tens = ((twos * 103) >> 10) & 0x000F000F000F000FULL;
  return tens | ((twos - tens * 10) << 8);
}

}  // namespace decimal_internal

// Writes `v` in decimal at `out` (a '-' first when negative; no terminator) and returns
// the end of what it wrote. `out` must have kMaxDecimalChars bytes of room; the bytes
// past the returned end may have been written.
inline char* WriteDecimal(char* out, int64_t v) {
  if (static_cast<uint64_t>(v) < 100000000) [[likely]] {
    const uint64_t digits = decimal_internal::EightDigits(static_cast<uint32_t>(v));
    // Leading zero digits are zero bytes at the low end: at most 7 of them, so that 0
    // is written "0".
    const int leading = std::countr_zero(digits | (uint64_t{1} << 56)) / 8;
    const uint64_t text = (digits + 0x3030303030303030ULL) >> (8 * leading);
    const uint64_t first_digit_first = std::endian::native == std::endian::little ? text : __builtin_bswap64(text);
    std::memcpy(out, &first_digit_first, sizeof first_digit_first);
    return out + 8 - leading;
  }
  return std::to_chars(out, out + kMaxDecimalChars, v).ptr;
}

}  // namespace weir
