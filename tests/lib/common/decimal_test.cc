#include <catch2/catch.hpp>

#include <algorithm>
#include <charconv>
#include <iterator>
#include <cstdint>
#include <limits>
#include <random>
#include <string>

#include "lib/common/decimal.h"

namespace {

// What WriteDecimal wrote for v, checked against std::to_chars; the bytes past the end it
// returns may have been written, but no byte past out + kMaxDecimalChars.
std::string Written(int64_t v) {
  char out[weir::kMaxDecimalChars + 8];
  std::fill(std::begin(out), std::end(out), '#');
  char* end = weir::WriteDecimal(out, v);
  for (size_t i = weir::kMaxDecimalChars; i < sizeof out; ++i) {
    if (out[i] != '#') FAIL("WriteDecimal(" << v << ") wrote past kMaxDecimalChars");
  }
  if (end <= out || end > out + weir::kMaxDecimalChars) FAIL("WriteDecimal(" << v << ") returned a wrong end");
  return std::string(out, end);
}

std::string Expected(int64_t v) {
  char out[32];
  return std::string(out, std::to_chars(out, out + sizeof out, v).ptr);
}

}  // namespace

TEST_CASE("decimal: every number of digits, and around each power of ten", "[common]") {
  CHECK(Written(0) == "0");
  CHECK(Written(7) == "7");
  CHECK(Written(10) == "10");
  CHECK(Written(1234) == "1234");
  CHECK(Written(99999999) == "99999999");
  CHECK(Written(100000000) == "100000000");
  CHECK(Written(-1) == "-1");
  int64_t power = 1;
  for (int digits = 1; digits <= 19; ++digits) {
    for (int64_t v : {power - 1, power, power + 1, 2 * power - 1, 5 * power + 3, 9 * power}) {
      INFO("v = " << v);
      CHECK(Written(v) == Expected(v));
      CHECK(Written(-v) == Expected(-v));
    }
    if (digits < 19) power *= 10;
  }
  CHECK(Written(std::numeric_limits<int64_t>::max()) == "9223372036854775807");
  CHECK(Written(std::numeric_limits<int64_t>::min()) == "-9223372036854775808");
}

TEST_CASE("decimal: the same text as std::to_chars for every value below 10^6 and random ones", "[common]") {
  for (int64_t v = 0; v < 1000000; ++v) {
    if (Written(v) != Expected(v)) FAIL("v = " << v << ": " << Written(v));
  }
  std::mt19937_64 random(42);
  for (int i = 0; i < 1000000; ++i) {
    const int64_t below_1e8 = static_cast<int64_t>(random() % 100000000);
    const auto any = static_cast<int64_t>(random());
    if (Written(below_1e8) != Expected(below_1e8)) FAIL("v = " << below_1e8);
    if (Written(any) != Expected(any)) FAIL("v = " << any);
  }
}
