#include <catch2/catch.hpp>

#include "lib/common/hash.h"
#include "lib/common/ids.h"

using weir::Id16;

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
  CHECK(weir::MurmurHashInt(1) == 68075478);
  CHECK(weir::Crc32c("123456789", 9) == 0xe3069283u);
}
