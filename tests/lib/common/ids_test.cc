#include <catch2/catch.hpp>

#include <vector>

#include "lib/common/hash.h"
#include "lib/common/ids.h"

using weir::Id16;

namespace {

// CRC-32C by its definition: reflected polynomial 0x82f63b78, bit by bit.
uint32_t ReferenceCrc32c(const unsigned char* p, size_t n) {
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (0x82f63b78u ^ (c >> 1)) : (c >> 1);
  }
  return ~c;
}

// Crc32c of n bytes at p is the definition's, whole and continued after `split` bytes.
void CheckCrc32c(const unsigned char* p, size_t n, size_t split) {
  const uint32_t whole = weir::Crc32c(p, n);
  CHECK(whole == ReferenceCrc32c(p, n));
  CHECK(weir::Crc32c(p + split, n - split, weir::Crc32c(p, split)) == whole);
}

}  // namespace

TEST_CASE("ids: 32 hex characters round-trip", "[common]") {
  Id16 a = Id16::Generate();
  auto hex = a.ToHex();
  REQUIRE(hex.size() == 32);
  auto parsed = Id16::Parse(hex);
  REQUIRE(parsed.ok());
  CHECK(*parsed == a);
  CHECK(Id16::Parse("CCA7BC1061D61CF15238E92312C2FC20").ok());
}

TEST_CASE("ids: bad text is rejected with the text named", "[common]") {
  auto short_id = Id16::Parse("abc");
  REQUIRE_FALSE(short_id.ok());
  CHECK(short_id.status().message().find("'abc'") != std::string::npos);
  CHECK_FALSE(Id16::Parse("zz a7bc1061d61cf15238e92312c2fc2").ok());
}

TEST_CASE("hash: murmur finalizer matches Flink's MathUtils.murmurHash", "[common]") {
  // Values computed with Flink's MathUtils.murmurHash(int) on the JVM.
  CHECK(weir::MurmurHashInt(0) == 593689054);
  CHECK(weir::MurmurHashInt(1) == 68075478);  // negated: the finalizer's int is negative
  // The one input whose finalizer gives INT32_MIN, which Flink maps to 0.
  CHECK(weir::MurmurHashInt(-2089875627) == 0);
  CHECK(weir::Crc32c("123456789", 9) == 0xe3069283u);
}

TEST_CASE("crc32c: every length and alignment, and in pieces, as the byte-at-a-time definition", "[common]") {
  std::vector<unsigned char> data(300);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<unsigned char>(i * 131 + 7);
  for (size_t offset = 0; offset < 9; ++offset) {
    for (size_t n = 0; n + offset <= data.size(); n += 13) {
      INFO("offset " << offset << ", length " << n);
      CheckCrc32c(data.data() + offset, n, n / 3);
    }
  }
}

TEST_CASE("crc32c: long buffers, in the blocks computed three at a time and around their edges", "[common]") {
  std::vector<unsigned char> data(100000 + 16);
  uint32_t x = 12345;
  for (auto& b : data) b = static_cast<unsigned char>((x = x * 1103515245u + 12345u) >> 24);
  for (size_t n : {size_t{767}, size_t{768}, size_t{769}, size_t{1541}, size_t{24575}, size_t{24576},
                   size_t{24577}, size_t{49152 + 768 + 13}, size_t{100000}}) {
    for (size_t offset : {0, 1, 7, 8}) {
      INFO("offset " << offset << ", length " << n);
      CheckCrc32c(data.data() + offset, n, n / 2 + 1);
    }
  }
}
