// Lookups in the heap state's hash maps, without a job around them: one FlatHashMap per key
// group (128), number keys with number values, read and written once per "record" in the
// order number_sum's keys come (n mod K), with and without prefetching the slots of the
// key `distance` records ahead (as a keyed input that reads ahead does). Prints the time
// per lookup for each key count, the median of `rounds` runs taking turns, the bytes of the
// tables' slot arrays and how full they are. Figures only, no pass/fail.
//
// A job's run time on a VM drifts by more than most changes to the table; this isolates
// the table, and its figures drift less, though they still do (take turns, compare ratios).
//
//   build/bin/state_lookup_bench [lookups (30000000)] [distance (8)] [rounds (3)] [keys ...]
//   (keys default: 2 10000 100000 1000000)

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "lib/api/flat_hash_map.h"
#include "lib/api/key_groups.h"

namespace {

constexpr int kMaxParallelism = 128;
using Map = weir::FlatHashMap<int64_t, int64_t, weir::StableKeyHash<int64_t>, weir::KeyEqual<int64_t>>;

struct Tables {
  std::vector<Map> groups{kMaxParallelism};
  std::vector<int> key_group;      // by key
  std::vector<size_t> spread_hash;  // by key: what the map hashes the key to
  explicit Tables(int64_t keys) : key_group(keys), spread_hash(keys) {
    for (int64_t k = 0; k < keys; ++k) {
      const int32_t code = weir::KeyHashCode<int64_t>::Of(k);
      key_group[k] = weir::AssignToKeyGroup(code, kMaxParallelism);
      spread_hash[k] = weir::StableKeyHash<int64_t>::Spread(code);
      groups[key_group[k]][k] = 0;
    }
  }
  // The slots of all the tables, free ones included, and the entries in them.
  std::pair<size_t, size_t> SlotsAndEntries() const {
    size_t slots = 0, entries = 0;
    for (const Map& m : groups) {
      slots += m.bucket_count();
      entries += m.size();
    }
    return {slots, entries};
  }
};

// Where Run leaves the sum of the values it read, so that the loop is not dropped.
volatile int64_t g_results = 0;

// Nanoseconds per lookup over `lookups` read-modify-writes of keys 0, 1, ..., keys-1, 0, ...
double Run(Tables& t, int64_t keys, long lookups, int distance) {
  const auto start = std::chrono::steady_clock::now();
  int64_t key = 0;
  int64_t ahead = distance % keys;
  int64_t sum = 0;
  for (long i = 0; i < lookups; ++i) {
    if (distance > 0) {
      t.groups[t.key_group[ahead]].PrefetchSlots(t.spread_hash[ahead]);
      if (++ahead == keys) ahead = 0;
    }
    auto it = t.groups[t.key_group[key]].find(key);
    it->second += i;
    sum += it->second;
    if (++key == keys) key = 0;
  }
  const auto end = std::chrono::steady_clock::now();
  g_results = sum;
  return std::chrono::duration<double, std::nano>(end - start).count() / static_cast<double>(lookups);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr, "state_lookup_bench: %s\nusage: state_lookup_bench [lookups] [distance] [rounds] [keys ...]\n",
               why);
  std::exit(2);
}

long Positive(const char* text, const char* what) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < 1) Usage((std::string(what) + " must be a whole number >= 1").c_str());
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  const long lookups = argc > 1 ? Positive(argv[1], "lookups") : 30'000'000;
  const int distance = argc > 2 ? static_cast<int>(Positive(argv[2], "distance")) : 8;
  const int rounds = argc > 3 ? static_cast<int>(Positive(argv[3], "rounds")) : 3;
  std::vector<int64_t> key_counts;
  for (int i = 4; i < argc; ++i) key_counts.push_back(Positive(argv[i], "keys"));
  if (key_counts.empty()) key_counts = {2, 10'000, 100'000, 1'000'000};

  std::printf("%ld lookups a run, prefetching %d records ahead, median of %d runs taking turns\n", lookups,
              distance, rounds);
  std::printf("%10s %10s %6s %16s %16s\n", "keys", "tables MB", "full", "ns, no prefetch", "ns, prefetch");
  for (const int64_t keys : key_counts) {
    Tables tables(keys);
    std::vector<double> plain, prefetched;
    for (int r = 0; r < rounds; ++r) {
      plain.push_back(Run(tables, keys, lookups, 0));
      prefetched.push_back(Run(tables, keys, lookups, distance));
    }
    const auto [slots, entries] = tables.SlotsAndEntries();
    std::printf("%10lld %10.2f %6.2f %16.2f %16.2f\n", static_cast<long long>(keys),
                static_cast<double>(slots * Map::kBytesPerEntry) / 1e6,
                static_cast<double>(entries) / static_cast<double>(slots), Median(plain), Median(prefetched));
  }
  return 0;
}
