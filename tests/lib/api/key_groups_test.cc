#include <catch2/catch.hpp>

#include <climits>
#include <vector>

#include "lib/api/key_groups.h"

namespace {
// Java's String.hashCode by its definition, h = 31 * h + c one byte at a time.
int32_t JavaHashCode(const std::string& s) {
  uint32_t h = 0;
  for (unsigned char c : s) h = 31 * h + c;
  return static_cast<int32_t>(h);
}
}  // namespace

TEST_CASE("key groups: the same key groups as Flink for int, long and String keys", "[api]") {
  // Expected values computed on the JVM with Flink's formula
  // MathUtils.murmurHash(key.hashCode()) % 128.
  CHECK(weir::KeyGroupOf<int32_t>(0, 128) == 94);
  CHECK(weir::KeyGroupOf<int32_t>(1, 128) == 86);
  CHECK(weir::KeyGroupOf<int32_t>(2, 128) == 127);
  CHECK(weir::KeyGroupOf<int32_t>(42, 128) == 29);
  CHECK(weir::KeyGroupOf<int32_t>(-7, 128) == 33);
  CHECK(weir::KeyGroupOf<std::string>("hello", 128) == 35);
  CHECK(weir::KeyGroupOf<int64_t>(1234567890123LL, 128) == 92);
}

TEST_CASE("key groups: String hash codes equal Java's String.hashCode at every length", "[api]") {
  // Values of "...".hashCode() on the JVM.
  CHECK(weir::KeyHashCode<std::string>::Of("") == 0);
  CHECK(weir::KeyHashCode<std::string>::Of("a") == 97);
  CHECK(weir::KeyHashCode<std::string>::Of("hello") == 99162322);
  CHECK(weir::KeyHashCode<std::string>::Of("the quick brown fox") == 1302335171);
  // The definition (JavaHashCode), for lengths around each step of 4.
  std::string s;
  for (int len = 0; len < 40; ++len) {
    INFO("length " << len);
    CHECK(weir::KeyHashCode<std::string>::Of(s) == JavaHashCode(s));
    s.push_back(static_cast<char>('A' + (len * 7) % 60));
  }
}

TEST_CASE("key groups: String hash codes ignore the bytes past the length, and take bytes above 127", "[api]") {
  for (size_t len = 0; len <= 20; ++len) {
    INFO("length " << len);
    // Shortened in place: the old bytes stay in the buffer past the new length.
    std::string shortened(20, '\xe9');
    for (size_t i = 0; i < shortened.size(); ++i) shortened[i] = static_cast<char>(0x80 + i * 5);
    shortened.resize(len);
    CHECK(weir::KeyHashCode<std::string>::Of(shortened) == JavaHashCode(shortened));
    // Short but held on the heap (its capacity from before).
    std::string on_heap(100, 'x');
    on_heap.assign(len, '\xff');
    CHECK(weir::KeyHashCode<std::string>::Of(on_heap) == JavaHashCode(on_heap));
    // Bytes from the whole range 0..255, in every position.
    for (int c = 0; c < 256; c += 17) {
      std::string mixed(len, 'a');
      for (size_t i = 0; i < len; ++i) mixed[i] = static_cast<char>((c + 31 * i) & 0xff);
      CHECK(weir::KeyHashCode<std::string>::Of(mixed) == JavaHashCode(mixed));
    }
  }
}

TEST_CASE("key groups: ranges cover every group exactly once, and agree with the operator index", "[api]") {
  for (int max_p : {1, 2, 7, 128, 1000, 1024}) {
    for (int p = 1; p <= std::min(max_p, 13); ++p) {
      std::vector<int> owner(max_p, -1);
      for (int i = 0; i < p; ++i) {
        auto range = weir::KeyGroupRangeForOperator(max_p, p, i);
        for (int kg = range.start; kg <= range.end; ++kg) {
          REQUIRE(owner[kg] == -1);
          owner[kg] = i;
        }
      }
      for (int kg = 0; kg < max_p; ++kg) {
        INFO("maxP=" << max_p << " p=" << p << " kg=" << kg);
        REQUIRE(owner[kg] == weir::OperatorIndexForKeyGroup(max_p, p, kg));
        REQUIRE(owner[kg] == weir::KeyGroupToOperator(max_p, p)(kg));
      }
    }
  }
}

TEST_CASE("key groups: the operator of a key group at the largest maximum parallelism", "[api]") {
  const int max_p = weir::kUpperBoundMaxParallelism;
  for (int p : {1, 3, 128, 1000, max_p - 1, max_p}) {
    const weir::KeyGroupToOperator channel_of(max_p, p);
    for (int kg = 0; kg < max_p; kg += 97) {
      INFO("p=" << p << " kg=" << kg);
      REQUIRE(channel_of(kg) == weir::OperatorIndexForKeyGroup(max_p, p, kg));
    }
    REQUIRE(channel_of(max_p - 1) == p - 1);
  }
}

TEST_CASE("key groups: Flink's default max parallelism", "[api]") {
  CHECK(weir::ComputeDefaultMaxParallelism(1) == 128);
  CHECK(weir::ComputeDefaultMaxParallelism(85) == 128);
  CHECK(weir::ComputeDefaultMaxParallelism(86) == 256);
  CHECK(weir::ComputeDefaultMaxParallelism(30000) == 32768);
}

TEST_CASE("key groups: a batch's key groups are those of its hash codes one by one", "[api]") {
  // Hash codes around the edges of the hash's sign handling, and spread over the rest.
  std::vector<int32_t> codes = {0, 1, -1, 2, -7, 42, INT32_MAX, INT32_MIN, INT32_MIN + 1, INT32_MAX - 1};
  uint32_t x = 12345;
  while (codes.size() < 1000) {
    x = x * 1664525u + 1013904223u;
    codes.push_back(static_cast<int32_t>(x));
  }
  // Powers of two (vectorized where the machine can) and other maximum parallelisms.
  for (int max_parallelism : {1, 2, 128, 4096, 1 << 15, 3, 100, 32767}) {
    // Counts below, at and above a vector's width, and with a tail.
    for (int count : {0, 1, 7, 8, 9, 64, 100, 1000}) {
      INFO("max parallelism " << max_parallelism << ", " << count << " hashes");
      std::vector<weir::KeyHash> hashes(static_cast<size_t>(count) + 1);
      for (int i = 0; i < count; ++i) hashes[static_cast<size_t>(i)] = {codes[static_cast<size_t>(i)], -1};
      hashes.back() = {77, -5};  // past the end: left alone
      weir::AssignToKeyGroups(hashes.data(), count, max_parallelism);
      for (int i = 0; i < count; ++i) {
        const auto& h = hashes[static_cast<size_t>(i)];
        REQUIRE(h.hash_code == codes[static_cast<size_t>(i)]);
        REQUIRE(h.key_group == weir::AssignToKeyGroup(codes[static_cast<size_t>(i)], max_parallelism));
      }
      CHECK(hashes.back().key_group == -5);
    }
  }
}
