#pragma once
// Key groups: the unit in which keyed state is partitioned and redistributed, with
// Flink's formulas (KeyGroupRangeAssignment):
//   keyGroup      = murmurHash(hashCode(key)) % maxParallelism
//   operatorIndex = keyGroup * parallelism / maxParallelism
//   range(i)      = [ceil(i * maxP / p), ((i + 1) * maxP - 1) / p]
// hashCode follows Java's for the built-in types (int, long, String as bytes), so
// the same key lands in the same key group in every weir process and build.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "lib/api/serialization.h"
#include "lib/common/hash.h"

namespace weir {

inline constexpr int kDefaultMaxParallelism = 128;
inline constexpr int kUpperBoundMaxParallelism = 1 << 15;

// Java-compatible hashCode of a key.
template <class T, class Enable = void>
struct KeyHashCode {
  // Fallback: a stable hash of the canonical serialized form.
  static int32_t Of(const T& v) {
    auto bytes = SerializeToBytes(v);
    uint64_t h = Fnv1a64(bytes.data(), bytes.size());
    return static_cast<int32_t>(h ^ (h >> 32));
  }
};
template <class T>
struct KeyHashCode<T, std::enable_if_t<std::is_integral_v<T> && (sizeof(T) <= 4)>> {
  static int32_t Of(const T& v) { return static_cast<int32_t>(v); }
};
template <class T>
struct KeyHashCode<T, std::enable_if_t<std::is_integral_v<T> && (sizeof(T) == 8)>> {
  static int32_t Of(const T& v) {
    uint64_t u = static_cast<uint64_t>(v);
    return static_cast<int32_t>(u ^ (u >> 32));
  }
};
template <>
struct KeyHashCode<std::string> {
  // h = 31 * h + byte over the bytes, four bytes per step (31^4 = 923521, all mod 2^32):
  // the same value as one byte per step, with a quarter of the dependent multiplies.
  static int32_t Of(const std::string& s) {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data());
    const size_t n = s.size();
    uint32_t h = 0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
      h = h * 923521u + p[i] * 29791u + p[i + 1] * 961u + p[i + 2] * 31u + p[i + 3];
    }
    for (; i < n; ++i) h = 31 * h + p[i];
    return static_cast<int32_t>(h);
  }
};
template <class A, class B>
struct KeyHashCode<std::pair<A, B>> {
  static int32_t Of(const std::pair<A, B>& p) {
    uint32_t h = 31u * static_cast<uint32_t>(KeyHashCode<A>::Of(p.first));
    return static_cast<int32_t>(h + static_cast<uint32_t>(KeyHashCode<B>::Of(p.second)));
  }
};

// A key and its hash code, computed once for the key group and reused for the lookup
// in a keyed-state hash map (StableKeyHash and KeyEqual take it in place of a key).
template <class K>
struct HashedKeyRef {
  const K& key;
  int32_t hash_code;
};

// A key's hash code and key group, computed once: carried with a record on a hash edge
// (see KeyedInput), and given to the heap state's prefetches.
struct KeyHash {
  int32_t hash_code = 0;  // KeyHashCode of the key, when carried (kKeyHashCodeCarried)
  int key_group = 0;
};

// std::hash-compatible functor for keyed-state hash maps.
template <class K>
struct StableKeyHash {
  using is_transparent = void;
  static size_t Spread(int32_t hash_code) {
    return static_cast<size_t>(static_cast<uint32_t>(hash_code)) * 0x9e3779b97f4a7c15ULL;
  }
  size_t operator()(const K& k) const { return Spread(KeyHashCode<K>::Of(k)); }
  size_t operator()(const HashedKeyRef<K>& k) const { return Spread(k.hash_code); }
};

// Equality of keys in the keyed-state hash maps: WEIR_FIELDS structs by their fields,
// strings by SameString. Always inline: a state table compares a record's key with the
// entry its hash found, and left to itself GCC called the string compare out of line
// there (word count ran 4 to 5 % faster with it inline).
template <class K>
struct KeyEqual {
  using is_transparent = void;
  [[gnu::always_inline]] bool operator()(const K& a, const K& b) const {
    if constexpr (HasWeirFields<K>::value) {
      return a.weir_fields() == b.weir_fields();
    } else if constexpr (std::is_same_v<K, std::string>) {
      return SameString(a, b);
    } else {
      return a == b;
    }
  }
  [[gnu::always_inline]] bool operator()(const HashedKeyRef<K>& a, const K& b) const { return (*this)(a.key, b); }
  [[gnu::always_inline]] bool operator()(const K& a, const HashedKeyRef<K>& b) const { return (*this)(a, b.key); }
};

inline int AssignToKeyGroup(int32_t hash_code, int max_parallelism) {
  const int h = MurmurHashInt(hash_code);  // non-negative
  // The usual maximum parallelism is a power of two: a mask instead of a division.
  if ((max_parallelism & (max_parallelism - 1)) == 0) return h & (max_parallelism - 1);
  return h % max_parallelism;
}

// hashes[i].key_group = AssignToKeyGroup(hashes[i].hash_code, max_parallelism) for i in
// [0, count). Where KeyGroupsByVector(max_parallelism), eight at a time with AVX2 vector
// instructions.
void AssignToKeyGroups(KeyHash* hashes, int count, int max_parallelism);
// Whether AssignToKeyGroups runs on vector instructions for this maximum parallelism: the
// machine has AVX2 and the maximum parallelism is a power of two (any other takes a
// division per key group, which no vector does). Then the key groups of a batch of keys
// cost less from it than one by one; otherwise one by one costs less.
bool KeyGroupsByVector(int max_parallelism);

template <class K>
int KeyGroupOf(const K& key, int max_parallelism) {
  return AssignToKeyGroup(KeyHashCode<K>::Of(key), max_parallelism);
}

inline int OperatorIndexForKeyGroup(int max_parallelism, int parallelism, int key_group) {
  return key_group * parallelism / max_parallelism;
}

// OperatorIndexForKeyGroup for one maximum parallelism and parallelism, as a record on a
// hash edge needs it: a shift instead of a division when the maximum parallelism is a
// power of two (Flink's default always is).
class KeyGroupToOperator {
 public:
  KeyGroupToOperator(int max_parallelism, int parallelism)
      : max_parallelism_(max_parallelism), parallelism_(parallelism) {
    if (max_parallelism > 0 && (max_parallelism & (max_parallelism - 1)) == 0) {
      while ((1 << shift_) < max_parallelism) ++shift_;
    } else {
      shift_ = -1;
    }
  }
  int operator()(int key_group) const {
    const int scaled = key_group * parallelism_;  // < 2^15 * 2^15: no overflow
    return shift_ >= 0 ? scaled >> shift_ : scaled / max_parallelism_;
  }

 private:
  int max_parallelism_;
  int parallelism_;
  int shift_ = 0;  // log2(max_parallelism_), or -1 when it is not a power of two
};

// An inclusive range of key groups [start, end]; empty when end < start.
struct KeyGroupRange {
  int start = 0;
  int end = -1;
  int size() const { return end >= start ? end - start + 1 : 0; }
  bool Contains(int kg) const { return kg >= start && kg <= end; }
  bool operator==(const KeyGroupRange&) const = default;
};

inline KeyGroupRange KeyGroupRangeForOperator(int max_parallelism, int parallelism, int index) {
  int start = (index * max_parallelism + parallelism - 1) / parallelism;
  int end = ((index + 1) * max_parallelism - 1) / parallelism;
  return {start, end};
}

// Flink's default max parallelism for an operator of this parallelism when none is
// set: roundUpToPowerOfTwo(p + p/2), at least 128, at most 32768.
inline int ComputeDefaultMaxParallelism(int parallelism) {
  int target = parallelism + parallelism / 2;
  int pow2 = 1;
  while (pow2 < target) pow2 <<= 1;
  if (pow2 < kDefaultMaxParallelism) pow2 = kDefaultMaxParallelism;
  if (pow2 > kUpperBoundMaxParallelism) pow2 = kUpperBoundMaxParallelism;
  return pow2;
}

}  // namespace weir
