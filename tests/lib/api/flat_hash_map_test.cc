#include "lib/api/flat_hash_map.h"

#include <catch2/catch.hpp>

#include <bit>
#include <functional>
#include <map>
#include <random>
#include <string>

#include "lib/api/key_groups.h"

namespace weir {
namespace {

using StringMap = FlatHashMap<std::string, int64_t, StableKeyHash<std::string>, KeyEqual<std::string>>;
using IntMap = FlatHashMap<int, int, StableKeyHash<int>, KeyEqual<int>>;

// The entries of `m` as a std::map, each key once.
template <class Map>
auto Contents(const Map& m) {
  std::map<typename Map::key_type, typename Map::mapped_type> out;
  for (const auto& [k, v] : m) REQUIRE(out.emplace(k, v).second);  // each key once
  return out;
}

// `steps` random operations on `map` and on a std::map beside it, with keys from
// key_of(rng() % keys): three in five add to a key's value, one erases a key, one finds
// one. They must agree after every step, and at the end.
template <class Map, class KeyOf>
void AgreeWithStdMap(Map& map, int steps, uint32_t seed, uint32_t keys, KeyOf key_of) {
  std::mt19937 rng(seed);
  std::map<typename Map::key_type, typename Map::mapped_type> expected;
  for (int step = 0; step < steps; ++step) {
    const auto key = key_of(rng() % keys);
    switch (rng() % 5) {
      case 0:
      case 1:
      case 2:
        map[key] += step;
        expected[key] += step;
        break;
      case 3:
        REQUIRE(map.erase(key) == expected.erase(key));
        break;
      case 4: {
        auto it = map.find(key);
        auto e = expected.find(key);
        REQUIRE((it == map.end()) == (e == expected.end()));
        if (it != map.end()) REQUIRE(it->second == e->second);
        break;
      }
    }
    REQUIRE(map.size() == expected.size());
  }
  REQUIRE(Contents(map) == expected);
  for (uint32_t k = 0; k < keys; ++k) REQUIRE(map.count(key_of(k)) == expected.count(key_of(k)));
}

TEST_CASE("FlatHashMap: random inserts, finds and erases agree with std::map", "[heap_state]") {
  StringMap map;
  AgreeWithStdMap(map, 200000, 7, 3000, [](uint32_t k) { return "k" + std::to_string(k); });
}

// Four keys to a hash: runs of entries with the same home, entries displaced by others,
// runs that wrap around the end of the array.
struct SharedHash {
  size_t operator()(int k) const { return static_cast<size_t>(k / 4) * 0x9e3779b97f4a7c15ULL; }
};
using CollidingMap = FlatHashMap<int, int, SharedHash, std::equal_to<int>>;

TEST_CASE("FlatHashMap: keys that share hashes are found, missed and erased like std::map's", "[heap_state]") {
  CollidingMap map;
  AgreeWithStdMap(map, 300000, 11, 2000, [](uint32_t k) { return static_cast<int>(k); });
}

TEST_CASE("FlatHashMap: entries keep their values while the array grows and entries shift back", "[heap_state]") {
  IntMap map;
  map[1] = 42;
  for (int i = 2; i < 10000; ++i) map[i] = i;  // many growths of the slot array
  for (int i = 2; i < 10000; i += 2) REQUIRE(map.erase(i) == 1);  // many backward shifts
  REQUIRE(map.find(1)->second == 42);
  REQUIRE(map.size() == 1 + 4999);
  for (int i = 3; i < 10000; i += 2) REQUIRE(map.find(i)->second == i);
  for (int i = 2; i < 10000; i += 2) REQUIRE(map.find(i) == map.end());
  for (int i = 3; i < 10000; i += 2) REQUIRE(map.erase(i) == 1);
  REQUIRE(map.size() == 1);
  REQUIRE(map.begin()->first == 1);
  REQUIRE(++map.begin() == map.end());
}

TEST_CASE("FlatHashMap: the slot array is a power of two, at most 7/8 full, and doubles past it, as foretold",
          "[heap_state]") {
  IntMap map;
  REQUIRE(map.bucket_count() == 0);
  size_t grew = 0;
  for (int i = 0; i < 5000; ++i) {
    const size_t before = map.bucket_count();
    const size_t foretold = map.bucket_count_after_adding();
    map[i] = i;
    const size_t slots = map.bucket_count();
    REQUIRE(slots == foretold);
    REQUIRE(std::has_single_bit(slots));
    REQUIRE(map.size() * 8 <= slots * 7);
    if (slots == before) continue;
    ++grew;
    if (before != 0) {  // it doubled, and only because the entry would have made it more than 7/8 full
      REQUIRE(slots == 2 * before);
      REQUIRE(map.size() * 8 > before * 7);
    }
  }
  REQUIRE(grew == 11);  // none to 8 slots, then 10 doublings up to 8192
  REQUIRE(map.bucket_count() == 8192);  // 5000 entries: more than 7/8 of 4096
  map.clear();
  REQUIRE(map.bucket_count() == 0);
}

TEST_CASE("FlatHashMap: strings that allocate survive moves, copies and erasure", "[heap_state]") {
  StringMap map;
  const std::string tail(40, 'x');  // longer than a short string's inline buffer
  for (int i = 0; i < 5000; ++i) map[std::to_string(i) + tail] = i;
  for (int i = 0; i < 5000; i += 3) map.erase(std::to_string(i) + tail);
  StringMap copy = map;
  for (int i = 0; i < 5000; ++i) {
    const auto it = copy.find(std::to_string(i) + tail);
    if (i % 3 == 0) {
      REQUIRE(it == copy.end());
    } else {
      REQUIRE(it->second == i);
    }
  }
}

TEST_CASE("FlatHashMap: a copy is deep, a move takes the entries", "[heap_state]") {
  StringMap map;
  for (int i = 0; i < 100; ++i) map[std::to_string(i)] = i;
  StringMap copy = map;
  copy["5"] = -5;
  copy.erase(std::string("6"));
  REQUIRE(map.find(std::string("5"))->second == 5);
  REQUIRE(map.count(std::string("6")) == 1);
  REQUIRE(copy.size() == 99);
  StringMap moved = std::move(copy);
  REQUIRE(moved.size() == 99);
  REQUIRE(moved.find(std::string("5"))->second == -5);
  copy = map;  // a moved-from map can be assigned again
  REQUIRE(Contents(copy) == Contents(map));
}

TEST_CASE("FlatHashMap: found with a precomputed hash code, added once", "[heap_state]") {
  StringMap map;
  std::string key = "word";
  HashedKeyRef<std::string> ref{key, KeyHashCode<std::string>::Of(key)};
  auto [it, added] = map.try_emplace(ref);
  REQUIRE(added);
  it->second = 3;
  auto [again, added_again] = map.try_emplace(ref);
  REQUIRE_FALSE(added_again);
  REQUIRE(again->second == 3);
  REQUIRE(map.find(ref)->first == "word");
  REQUIRE(map.find(key) == map.find(ref));
}

TEST_CASE("FlatHashMap: erasing while iterating visits the rest", "[heap_state]") {
  IntMap map;
  for (int i = 0; i < 1000; ++i) map[i] = i;
  size_t erased = 0;
  for (auto it = map.begin(); it != map.end();) {
    if (it->first % 3 == 0) {
      it = map.erase(it);
      ++erased;
    } else {
      ++it;
    }
  }
  REQUIRE(map.size() + erased == 1000);
  for (const auto& [k, v] : map) REQUIRE(k % 3 != 0);
}

TEST_CASE("FlatHashMap: a prefetch changes nothing, on an empty map too", "[heap_state]") {
  // Entries of a cache line or more: PrefetchEntry reads the tags to find them.
  using WideMap = FlatHashMap<std::string, std::pair<std::string, int64_t>, StableKeyHash<std::string>,
                              KeyEqual<std::string>>;
  WideMap map;
  const auto hash = [](const std::string& key) { return StableKeyHash<std::string>{}(key); };
  map.PrefetchSlots(hash("absent"));
  map.PrefetchEntry(hash("absent"));
  CHECK(map.empty());
  for (int i = 0; i < 100; ++i) map["k" + std::to_string(i)] = {"v" + std::to_string(i), i};
  const auto before = Contents(map);
  for (int i = 0; i < 200; ++i) {  // half of them present
    const std::string key = "k" + std::to_string(i);
    map.PrefetchSlots(hash(key));
    map.PrefetchEntry(hash(key));
  }
  CHECK(Contents(map) == before);
}

}  // namespace
}  // namespace weir
