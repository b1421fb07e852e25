#pragma once
// Stable hash functions: the same value gives the same hash in every process and
// build, which key-group assignment (and so checkpoint compatibility) relies on.

#include <cstddef>
#include <cstdint>

namespace weir {

inline uint64_t Fnv1a64(const void* data, size_t n, uint64_t seed = 0xcbf29ce484222325ULL) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = seed;
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

// Flink's MathUtils.murmurHash(int): the finalizer Flink applies to a key's
// hashCode before taking it modulo maxParallelism. Result is non-negative.
inline int32_t MurmurHashInt(int32_t code) {
  uint32_t k = static_cast<uint32_t>(code);
  k *= 0xcc9e2d51u;
  k = (k << 15) | (k >> 17);
  k *= 0x1b873593u;
  uint32_t h = 0 ^ k;  // seed 0
  h = (h << 13) | (h >> 19);
  h = h * 5 + 0xe6546b64u;
  h ^= 4;
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  // Flink's result: h when non-negative as an int, else -h, and 0 for INT32_MIN. Without
  // a branch: the sign of a hash is a coin toss that a branch mispredicts half the time.
  const uint32_t negative = 0u - (h >> 31);              // all ones when h is negative
  const uint32_t magnitude = (h ^ negative) - negative;  // |h|; INT32_MIN stays 2^31
  return static_cast<int32_t>(magnitude & 0x7fffffffu);  // 2^31 -> 0; the rest are below
}

// CRC-32C (Castagnoli), used for checksums of state files and metadata.
uint32_t Crc32c(const void* data, size_t n, uint32_t crc = 0);

}  // namespace weir
