#include "lib/api/graph.h"

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace weir {
namespace {

using Record = std::pair<std::string, int64_t>;

const std::string& WordOf(const Record& r) { return r.first; }
using WordSelector = KeySelector<Record, std::string, const std::string& (*)(const Record&)>;

std::vector<Record> Records(int n) {
  std::vector<Record> records;
  for (int i = 0; i < n; ++i) records.emplace_back("word-" + std::to_string(i), i);
  return records;
}

// The records as a hash edge's buffer holds them: each after its timestamp (when
// `timestamps`) and the KeyHash `hash_of` gives it (none when null).
template <class HashOf>
std::vector<uint8_t> Buffer(const std::vector<Record>& records, bool timestamps, HashOf hash_of) {
  std::vector<uint8_t> bytes;
  DataOutput out(&bytes);
  for (const Record& r : records) {
    if (timestamps) out.WriteFixed<int64_t>(r.second * 10);
    if constexpr (!std::is_same_v<HashOf, std::nullptr_t>) WriteKeyHash(out, hash_of(r), kKeyHashBytes<std::string>);
    Serializer<Record>::Write(out, r);
  }
  return bytes;
}

TEST_CASE("TypeInfo: in-flight records written without key hashes are given the ones their keys have",
          "[api][graph]") {
  const bool timestamps = GENERATE(false, true);
  const auto selector = std::make_shared<const WordSelector>(&WordOf);
  const std::vector<Record> records = Records(50);
  const auto hashed = TypeInfoOf<Record>()->AddKeyHashes(Buffer(records, timestamps, nullptr), timestamps,
                                                         selector, 128);
  CHECK(hashed == Buffer(records, timestamps, [&](const Record& r) { return selector->Hash(r, 128); }));
  auto cut = Buffer(records, timestamps, nullptr);
  cut.pop_back();
  CHECK_THROWS_AS(TypeInfoOf<Record>()->AddKeyHashes(cut, timestamps, selector, 128), DeserializationError);
}

TEST_CASE("TypeInfo: in-flight records are kept by the key group they carry", "[api][graph]") {
  const bool timestamps = GENERATE(false, true);
  const std::vector<Record> records = Records(50);
  // Key groups carried as given (not the ones the words hash to): record i carries i.
  const auto carried = [](const Record& r) { return KeyHash{0, static_cast<int>(r.second)}; };
  const auto selector = std::make_shared<const WordSelector>(&WordOf);
  const auto kept = TypeInfoOf<Record>()->FilterByKeyGroups(Buffer(records, timestamps, carried), timestamps,
                                                            selector, KeyGroupRange{10, 19});
  const std::vector<Record> expected(records.begin() + 10, records.begin() + 20);
  CHECK(kept == Buffer(expected, timestamps, carried));
  auto cut = Buffer(records, timestamps, carried);
  cut.resize(cut.size() - 3);
  CHECK_THROWS_AS(TypeInfoOf<Record>()->FilterByKeyGroups(cut, timestamps, selector, KeyGroupRange{0, 127}),
                  DeserializationError);
}

}  // namespace
}  // namespace weir
