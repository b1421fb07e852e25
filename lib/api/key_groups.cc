#include "lib/api/key_groups.h"

namespace weir {
namespace {

// AssignToKeyGroups for a maximum parallelism that is a power of two, built for AVX2:
// GCC vectorizes the loop, eight hashes at a time (this file is compiled with its dynamic
// vector cost model, see lib/api/CMakeLists.txt; its default at -O2 leaves the loop scalar).
[[gnu::target("avx2")]] void AssignMaskedAvx2(KeyHash* hashes, int count, int mask) {
  for (int i = 0; i < count; ++i) hashes[i].key_group = MurmurHashInt(hashes[i].hash_code) & mask;
}

}  // namespace

bool KeyGroupsByVector(int max_parallelism) {
  // __builtin_cpu_init first: this may run in a static initializer, before libgcc's.
  static const bool avx2 = (__builtin_cpu_init(), __builtin_cpu_supports("avx2"));
  return avx2 && (max_parallelism & (max_parallelism - 1)) == 0;
}

void AssignToKeyGroups(KeyHash* hashes, int count, int max_parallelism) {
  if (KeyGroupsByVector(max_parallelism)) {
    AssignMaskedAvx2(hashes, count, max_parallelism - 1);
    return;
  }
  for (int i = 0; i < count; ++i) hashes[i].key_group = AssignToKeyGroup(hashes[i].hash_code, max_parallelism);
}

}  // namespace weir
