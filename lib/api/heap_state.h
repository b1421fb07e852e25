#pragma once
// The hashmap state backend: keyed state as objects on the heap, one hash map per key
// group, so snapshots and rescaling work key group by key group.
//
// Snapshots copy nothing: the synchronous part pins every key group's map; the snapshot
// writer serializes the pinned maps into canonical rows (keyed_state_rows.h) group by
// group and unpins each group when done with it; the first time the task is about to
// change a group the writer has not reached yet, the task serializes that group itself
// (the work the writer would have done), and changes it in place from then on. Flink's
// CopyOnWriteStateMap copies the entries the task changes instead: with a hot key in
// every key group, as in a word count, that copied most of the state at every
// checkpoint.
//
// Owned by one operator subtask and used from its task thread, except the snapshots
// it hands out, which a writer thread reads. SetCurrentKey() must be called before
// state is accessed for a record.

#include <atomic>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "lib/api/flat_hash_map.h"
#include "lib/api/key_groups.h"
#include "lib/api/keyed_state_backend.h"
#include "lib/api/keyed_state_rows.h"
#include "lib/api/serialization.h"
#include "lib/api/state.h"
#include "lib/api/state_snapshot.h"

namespace weir {

// Throws the error of SetCurrentKey (out of line: cold).
[[noreturn]] void ThrowKeyGroupOutOfRange(int key_group, const KeyGroupRange& range);
// Throws the error of a state registered again with another kind or type.
[[noreturn]] void ThrowStateKindMismatch(const std::string& name, StateKind registered, StateKind requested);
// From how many bytes of state entries a keyed operator's lookups are worth prefetching
// (HeapKeyedStateBackend::PrefetchPays): 2.5 times this machine's per-core L2 cache (1 MB
// where it cannot be read).
size_t PrefetchStateBytes();

// What a snapshot of one state table reads on the writer thread.
class KeyedTableSnapshot {
 public:
  virtual ~KeyedTableSnapshot() = default;
  // The canonical rows of key group index `kg_index` (kg - range.start): valid until
  // Release(kg_index).
  virtual std::string_view KeyGroupRows(int kg_index) = 0;
  // The snapshot is done with that key group: the task may change it in place again.
  virtual void Release(int kg_index) = 0;
};

// A state table, type-erased.
class KeyedStateTable {
 public:
  virtual ~KeyedStateTable() = default;
  virtual StateKind kind() const = 0;
  // Adds a canonical row (restore).
  virtual void ReadRow(int kg_index, std::string_view key, std::string_view value) = 0;
  // Adds the entries of a key group in the layout of snapshots before canonical rows.
  virtual void ReadLegacyKeyGroup(int kg_index, DataInput& in) = 0;
  // Pins the current contents for a snapshot.
  virtual std::unique_ptr<KeyedTableSnapshot> Pin() = 0;
  virtual size_t Size() const = 0;
};

// The keys of a state table whose key type is K (timers rebuild their queues from them).
template <class K>
class KeyedTableKeys {
 public:
  virtual ~KeyedTableKeys() = default;
  virtual void ForEachKey(const std::function<void(const K&)>& fn) const = 0;
  // Starts loading what lookups of `keys` read first: the slots their lookups start at
  // (a hint). A key's key group index is its key_group - first_kg; keys of key groups
  // outside the table are skipped.
  virtual void PrefetchSlots(const KeyHash* keys, int n, int first_kg) const = 0;
  // Starts loading the entries that lookups of `keys` will find, as far as the slots
  // PrefetchSlots loaded tell (a hint): best once those loads had time to arrive.
  virtual void PrefetchEntries(const KeyHash* keys, int n, int first_kg) const = 0;
  // The bytes an entry takes in the table's arrays (FlatHashMap::kBytesPerEntry).
  virtual size_t BytesPerEntry() const = 0;
  // A count that moves whenever entries may have been added or erased: while it stays
  // the same, so does the table's number of entries.
  virtual uint64_t SizeChanges() const = 0;
};

namespace heap_internal {

// The row buffers of a KeyGroupedMap's groups whose last pin went, kept for the rows of
// the next snapshot. A group's rows are written at every checkpoint and dropped when the
// snapshot is done with them; freed, their pages went back to the system in between,
// and whoever wrote the next rows (for string keys, mostly the task) faulted them in and
// zeroed them again, every checkpoint. Kept, a buffer also keeps its size, so the next
// rows' resize writes only what they grow by. Holds at most kMaxBytes of capacity: the
// rows of larger state are taken and freed as before. Thread-safe: the task's thread and
// the snapshot writer's both take buffers and give them back.
class RowBufferPool {
 public:
  static constexpr size_t kMaxBytes = size_t{32} << 20;

  Bytes Take() {
    std::lock_guard lock(mu_);
    if (free_.empty()) return {};
    Bytes b = std::move(free_.back());
    free_.pop_back();
    bytes_ -= b.capacity();
    return b;
  }
  void Give(Bytes&& rows) {
    Bytes b = std::move(rows);  // freed here, outside the lock, unless kept
    std::lock_guard lock(mu_);
    if (b.capacity() == 0 || bytes_ + b.capacity() > kMaxBytes) return;
    bytes_ += b.capacity();
    free_.push_back(std::move(b));
  }
  size_t bytes() const {
    std::lock_guard lock(mu_);
    return bytes_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<Bytes> free_;
  size_t bytes_ = 0;  // the capacity of free_'s buffers
};

// One map per key group from key to a value of type S, whose snapshots are taken
// without copies: a snapshot pins every group; a pinned group is turned into its
// canonical rows (Codec) once, by the snapshot writer when it comes to the group or by
// the task when it is about to change the group first, whichever is earlier; from then
// on the snapshots read the rows and the task changes the map in place. When keys and
// values are trivially copyable, the task does not write the rows itself: it copies the
// group's map as it is (its slot array, far cheaper than rows), and the writer turns
// the copy into rows on its own thread. Other entries are written as rows by the task:
// copying them entry by entry, then destroying the copy, costs more than the rows, and
// on a machine whose cores are all busy the writer's work is not free either.
template <class K, class S, class Codec>
class KeyGroupedMap {
 public:
  using Map = FlatHashMap<K, S, StableKeyHash<K>, KeyEqual<K>>;
  // A cache line (or more) of its own: the task reads a group for every record, and
  // objects allocated beside it may be written by other threads.
  struct alignas(64) Group {
    Map map;
    std::atomic<int> pins{0};  // snapshots that have not written this group yet
    // Set (under mu) once `rows`, or `frozen`, holds the map as it was pinned; cleared
    // when the last pin goes. While it is set, snapshots read only `rows` (made from
    // `frozen` first when it is there), and the task may change `map` while pinned. Only
    // the task sets it before changing the map, or a snapshot writer; the map is read by
    // a writer only under mu while it is not set.
    std::atomic<bool> serialized{false};
    std::mutex mu;
    Bytes rows;                   // guarded by mu
    std::unique_ptr<Map> frozen;  // guarded by mu: the pinned map, copied by the task
    // The size of the rows written last: the next rows reserve about as much.
    std::atomic<size_t> rows_hint{0};
    // Where `rows` comes from and goes back to (shared: a snapshot may outlive the map).
    std::shared_ptr<RowBufferPool> row_buffers;
  };

  explicit KeyGroupedMap(int num_key_groups)
      : groups_(num_key_groups),
        hot_(num_key_groups),
        hot_keys_(kKeyComparedByBits<K> ? 0 : num_key_groups),
        row_buffers_(std::make_shared<RowBufferPool>()) {
    for (auto& g : groups_) g = NewGroup();
  }
  // `key` is a K or a HashedKeyRef<K>.
  template <class Q>
  const S* Find(int kg, const Q& key) const {
    const auto& m = groups_[kg]->map;
    auto it = m.find(key);
    return it == m.end() ? nullptr : &it->second;
  }
  // See KeyedTableKeys.
  void PrefetchSlots(const KeyHash* keys, int n, int first_kg) const {
    for (int i = 0; i < n; ++i) {
      if (const Map* m = GroupOf(keys[i], first_kg)) m->PrefetchSlots(StableKeyHash<K>::Spread(keys[i].hash_code));
    }
  }
  void PrefetchEntries(const KeyHash* keys, int n, int first_kg) const {
    for (int i = 0; i < n; ++i) {
      if (const Map* m = GroupOf(keys[i], first_kg)) m->PrefetchEntry(StableKeyHash<K>::Spread(keys[i].hash_code));
    }
  }
  // The entry of `key` when it is the one its group found last and the group is known
  // to be writable (a hot key, found inline); nullptr: ask FindEntry, FindMutable or
  // GetOrInsert.
  S* FindHotWritable(int kg, const HashedKeyRef<K>& key) { return hot_[kg].writable ? Last(kg, key) : nullptr; }
  // What FindHotWritable reads, by key group, for keys compared by their bits (for
  // CurrentEntryCache::FindHot); the array stays where it is for the life of the map.
  const HotEntry<S>* hot_entries() const { return hot_.data(); }
  // The lookups after FindHotWritable found nothing. A group it knew writable it compared
  // with the entry found last already; a group it did not (pinned since) is made writable
  // first when the entry is to change, and compared with that entry here.
  // For reads, and for changes in place when *writable.
  S* FindEntry(int kg, const HashedKeyRef<K>& key, bool* writable) {
    if (hot_[kg].writable) [[likely]] {
      *writable = true;
    } else {
      *writable = KnownWritable(kg);
      if (S* last = Last(kg, key)) return last;
    }
    return FindInGroup(kg, key);
  }
  // For changes in place.
  S* FindMutable(int kg, const HashedKeyRef<K>& key) {
    if (!hot_[kg].writable) [[unlikely]] {
      Mutable(kg);
      if (S* last = Last(kg, key)) return last;
    }
    return FindInGroup(kg, key);
  }
  S& GetOrInsert(int kg, const K& key) { return MutableForInsert(kg)[key]; }
  S& GetOrInsert(int kg, const HashedKeyRef<K>& key) {
    if (!hot_[kg].writable) [[unlikely]] {
      Mutable(kg);
      if (S* last = Last(kg, key)) return *last;
    }
    if (S* found = FindInGroup(kg, key)) return *found;
    return AddToGroup(kg, key);
  }
  // Adds an entry for a key that a lookup in its group found absent, with no entry added
  // to or erased from the group since (a snapshot's pin may have come between).
  S& InsertAbsent(int kg, const HashedKeyRef<K>& key) {
    Mutable(kg);
    return AddToGroup(kg, key);
  }
  template <class Q>
  void Erase(int kg, const Q& key) {
    if (Find(kg, key) == nullptr) return;
    auto& m = MutableForInsert(kg);
    m.erase(m.find(key));
  }
  // The group's map, for changes of its entries' values: a pinned group is written out
  // first.
  Map& Mutable(int kg) {
    auto& g = *groups_[kg];
    if (!hot_[kg].writable) [[unlikely]] {
      if (!Writable(g)) Detach(g);
      hot_[kg].writable = true;
    }
    return g.map;
  }
  // The group's map, for entries to be added or erased.
  Map& MutableForInsert(int kg) {
    hot_[kg].value = nullptr;
    ++size_changes_;
    return Mutable(kg);
  }
  // Moves with every call that may add or erase entries (see KeyedTableKeys::SizeChanges).
  uint64_t size_changes() const { return size_changes_; }
  int num_key_groups() const { return static_cast<int>(groups_.size()); }
  // Task thread: pins every group; the returned pointers keep them alive. A group the
  // task changed after an earlier pin (serialized) leaves its rows to that snapshot,
  // and its map moves on into a new group, which this snapshot pins.
  std::vector<std::shared_ptr<Group>> Pin() {
    for (HotEntry<S>& hot : hot_) hot.writable = false;
    for (auto& g : groups_) {
      if (g->serialized.load(std::memory_order_acquire)) {
        auto fresh = NewGroup();
        fresh->map = std::move(g->map);  // the entries stay where they are (and hot_'s)
        fresh->rows_hint.store(g->rows_hint.load(std::memory_order_relaxed), std::memory_order_relaxed);
        g = std::move(fresh);
      }
      g->pins.fetch_add(1, std::memory_order_relaxed);
    }
    return groups_;
  }
  // Writer thread: the rows of a group this snapshot pinned. They stay as they are while
  // the pin does: once serialized, `rows` only changes when the last pin goes.
  static std::string_view PinnedRows(Group& g) {
    Serialize(g);
    std::lock_guard lock(g.mu);
    return {reinterpret_cast<const char*>(g.rows.data()), g.rows.size()};
  }
  // Writer thread (or the task, when a snapshot is dropped): this snapshot is done with
  // the group.
  static void Unpin(Group& g) {
    if (g.pins.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
    std::lock_guard lock(g.mu);
    g.row_buffers->Give(std::move(g.rows));  // leaves g.rows empty
    g.frozen.reset();
    g.serialized.store(false, std::memory_order_release);
  }
  size_t Size() const {
    size_t n = 0;
    for (const auto& g : groups_) n += g->map.size();
    return n;
  }
  template <class F>
  void ForEachKey(F&& f) const {
    for (const auto& g : groups_) {
      for (const auto& entry : g->map) f(entry.first);
    }
  }
  // The bytes of row buffers kept for the next snapshot (for tests).
  size_t kept_row_bytes() const { return row_buffers_->bytes(); }

 private:
  // The key of a group's hot entry, for keys not compared by their bits: the entry's key,
  // and its hash code, compared first.
  struct HotKey {
    const K* key = nullptr;
    int32_t hash = 0;
  };

  const Map* GroupOf(const KeyHash& key, int first_kg) const {
    const auto index = static_cast<size_t>(static_cast<unsigned>(key.key_group - first_kg));
    return index < groups_.size() ? &groups_[index]->map : nullptr;
  }
  static bool Writable(const Group& g) {
    return g.pins.load(std::memory_order_acquire) == 0 || g.serialized.load(std::memory_order_acquire);
  }
  bool KnownWritable(int kg) {
    if (!Writable(*groups_[kg])) return false;
    hot_[kg].writable = true;
    return true;
  }
  static constexpr bool kCopyToDetach = std::is_trivially_copyable_v<K> && std::is_trivially_copyable_v<S>;

  // Writer (or the task, see Detach): turns the group's map as it was pinned into its
  // rows once. The map does not change meanwhile: the task changes it only when
  // Writable, and detaches it from the snapshots otherwise.
  [[gnu::noinline]] static void Serialize(Group& g) {
    std::lock_guard lock(g.mu);
    if (g.serialized.load(std::memory_order_relaxed)) {
      if (g.frozen) {
        WriteRows(*g.frozen, g);
        g.frozen.reset();
      }
      return;
    }
    WriteRows(g.map, g);
    g.serialized.store(true, std::memory_order_release);
  }
  // Task: the group is pinned and about to change; the snapshots keep what was pinned.
  [[gnu::noinline]] static void Detach(Group& g) {
    if constexpr (kCopyToDetach) {
      std::lock_guard lock(g.mu);
      if (g.serialized.load(std::memory_order_relaxed)) return;
      g.frozen = std::make_unique<Map>(g.map);
      g.serialized.store(true, std::memory_order_release);
    } else {
      Serialize(g);
    }
  }
  // Under g.mu: writes `map` (the group's, or its frozen copy) into g.rows.
  static void WriteRows(const Map& map, Group& g) {
    const size_t hint = g.rows_hint.load(std::memory_order_relaxed);
    if (g.rows.capacity() == 0) g.rows = g.row_buffers->Take();
    g.rows.resize(hint + hint / 8 + 64);  // room to write in place; grows when short
    size_t used = 0;
    {
      Bytes scratch;
      DataOutput out(&g.rows, &used);
      for (const auto& [k, v] : map) Codec::Write(k, v, out, &scratch);
    }
    g.rows.resize(used);
    g.rows_hint.store(used, std::memory_order_relaxed);
  }
  std::shared_ptr<Group> NewGroup() const {
    auto g = std::make_shared<Group>();
    g->row_buffers = row_buffers_;
    return g;
  }
  S& AddToGroup(int kg, const HashedKeyRef<K>& key) {
    ++size_changes_;
    auto it = groups_[kg]->map.emplace_absent(key);
    SetLast(kg, *it, key.hash_code);
    return it->second;
  }
  void SetLast(int kg, typename Map::value_type& entry, int32_t hash_code) {
    hot_[kg].value = &entry.second;
    if constexpr (kKeyComparedByBits<K>) {
      hot_[kg].key_bits = KeyBits(entry.first);
    } else {
      hot_keys_[kg] = {&entry.first, hash_code};
    }
  }
  // The group's hot entry when it is `key`'s.
  S* Last(int kg, const HashedKeyRef<K>& key) const {
    const HotEntry<S>& hot = hot_[kg];
    // A key compared by its bits is compared as it is: its hash code comes from it, and
    // comparing that first would only add a load and a branch.
    if constexpr (kKeyComparedByBits<K>) {
      return hot.ValueFor(KeyBits(key.key));
    } else {
      if (hot.value == nullptr) return nullptr;
      const HotKey& last = hot_keys_[kg];
      return last.hash == key.hash_code && KeyEqual<K>{}(*last.key, key.key) ? hot.value : nullptr;
    }
  }
  // A lookup that Last did not answer.
  S* FindInGroup(int kg, const HashedKeyRef<K>& key) {
    auto& m = groups_[kg]->map;
    auto it = m.find(key);
    if (it == m.end()) return nullptr;
    SetLast(kg, *it, key.hash_code);
    return &it->second;
  }

  std::vector<std::shared_ptr<Group>> groups_;
  // What the task thread knows of each group, by key group as groups_, in arrays of their
  // own: what a record reads first, with no pointer to follow and no atomic to load. The
  // task's only. An entry's value moves when another is added to or erased from its
  // group's FlatHashMap: every insertion and erasure sets it again or drops it. Only Pin
  // (on the task thread) makes a group unwritable, so `writable` stays true until the
  // next Pin; false means "look" (the writer may have made it writable meanwhile).
  std::vector<HotEntry<S>> hot_;
  std::vector<HotKey> hot_keys_;  // for keys not compared by their bits (else empty)
  uint64_t size_changes_ = 0;
  std::shared_ptr<RowBufferPool> row_buffers_;
};

template <class T>
void AppendSerialized(std::string* out, const T& v, Bytes* scratch) {
  out->append(SerializeInto(v, scratch));
}

template <class T>
void ParseSerialized(std::string_view bytes, T* v) {
  DataInput in(reinterpret_cast<const uint8_t*>(bytes.data()),
               reinterpret_cast<const uint8_t*>(bytes.data()) + bytes.size());
  Serializer<T>::Read(in, *v);
  if (!in.AtEnd()) throw DeserializationError("trailing bytes in a state value");
}

// How entries of a table become canonical rows and back. Codec::Write(key, S, out,
// scratch) writes the entry's rows; Codec::Read(row key, row value, map) adds a row.
template <class K, class V>
struct ValueCodec {
  // The row {varint-prefixed key} -> value, serialized in place: its three lengths are
  // one byte each unless the key or the value is long, so a byte is kept for each in
  // front of the key and the value, and filled in once their sizes are known.
  static void Write(const K& key, const V& value, DataOutput& out, Bytes* scratch) {
    if constexpr (DirectWriter<K>::kDefined && DirectWriter<V>::kDefined) {
      // Sizes known up front (numbers, short strings, pairs of those): the row in one
      // piece, with no check of the room per field.
      const size_t key_size = DirectWriter<K>::Size(key);
      const size_t value_size = DirectWriter<V>::Size(value);
      if (key_size != 0 && value_size != 0 && key_size < 127 && value_size < 128) [[likely]] {
        uint8_t* row = out.Reserve(3 + key_size + value_size);
        row[0] = static_cast<uint8_t>(key_size + 1);
        row[1] = static_cast<uint8_t>(key_size);
        uint8_t* at = DirectWriter<K>::Write(row + 2, key);
        *at = static_cast<uint8_t>(value_size);
        DirectWriter<V>::Write(at + 1, value);
        return;
      }
    }
    const size_t start = out.size();
    out.WriteFixed<uint16_t>(0);  // the row key's length, then the key's
    Serializer<K>::Write(out, key);
    const size_t key_size = out.size() - start - 2;
    out.WriteFixed<uint8_t>(0);  // the value's length
    Serializer<V>::Write(out, value);
    const size_t value_size = out.size() - start - 3 - key_size;
    if (key_size < 127 && value_size < 128) [[likely]] {
      uint8_t* row = out.data() + start;
      row[0] = static_cast<uint8_t>(key_size + 1);
      row[1] = static_cast<uint8_t>(key_size);
      row[2 + key_size] = static_cast<uint8_t>(value_size);
      return;
    }
    // Longer lengths take more bytes: the row is written again behind longer prefixes.
    const uint8_t* row = out.data() + start;
    scratch->assign(row + 2, row + 2 + key_size);
    scratch->insert(scratch->end(), row + 3 + key_size, row + 3 + key_size + value_size);
    out.Truncate(start);
    out.WriteVarint(VarintSize(key_size) + key_size);
    out.WriteVarint(key_size);
    out.WriteBytes(scratch->data(), key_size);
    out.WriteVarint(value_size);
    out.WriteBytes(scratch->data() + key_size, value_size);
  }
  template <class Map>
  static void Read(std::string_view row_key, std::string_view value, Map& map) {
    std::string_view k, rest;
    SplitMapRowKey(row_key, &k, &rest);
    if (!rest.empty()) throw DeserializationError("a value state row with a user key");
    K key{};
    ParseSerialized(k, &key);
    ParseSerialized(value, &map[key]);
  }
};

template <class K, class V>
struct ListCodec {
  static void Write(const K& key, const std::vector<V>& list, DataOutput& out, Bytes* scratch) {
    std::string k, rk, v, e, row;
    AppendSerialized(&k, key, scratch);
    AppendRowKey(&rk, k);
    for (const auto& element : list) {
      e.clear();
      AppendSerialized(&e, element, scratch);
      AppendVarint(&v, e.size());
      v.append(e);
    }
    AppendRow(&row, rk, v);
    out.WriteBytes(row.data(), row.size());
  }
  template <class Map>
  static void Read(std::string_view row_key, std::string_view value, Map& map) {
    std::string_view k, rest;
    SplitMapRowKey(row_key, &k, &rest);
    K key{};
    ParseSerialized(k, &key);
    auto& list = map[key];
    ForEachListElement(value, [&](std::string_view element) {
      V v{};
      ParseSerialized(element, &v);
      list.push_back(std::move(v));
    });
  }
};

template <class K, class UK, class UV>
struct MapCodec {
  static void Write(const K& key, const std::map<UK, UV>& entries, DataOutput& out, Bytes* scratch) {
    std::string k, rk, v, row;
    AppendSerialized(&k, key, scratch);
    for (const auto& [uk, uv] : entries) {
      rk.clear();
      v.clear();
      AppendRowKey(&rk, k);
      AppendSerialized(&rk, uk, scratch);
      AppendSerialized(&v, uv, scratch);
      row.clear();
      AppendRow(&row, rk, v);
      out.WriteBytes(row.data(), row.size());
    }
  }
  template <class Map>
  static void Read(std::string_view row_key, std::string_view value, Map& map) {
    std::string_view k, uk_bytes;
    SplitMapRowKey(row_key, &k, &uk_bytes);
    K key{};
    ParseSerialized(k, &key);
    UK uk{};
    ParseSerialized(uk_bytes, &uk);
    ParseSerialized(value, &map[key][uk]);
  }
};

}  // namespace heap_internal

template <class K>
class HeapKeyedStateBackend final : public KeyedStateBackend {
 public:
  HeapKeyedStateBackend(int max_parallelism, KeyGroupRange range)
      : max_parallelism_(max_parallelism), range_(range) {}
  HeapKeyedStateBackend(const HeapKeyedStateBackend&) = delete;  // current_key_ may point into it
  HeapKeyedStateBackend& operator=(const HeapKeyedStateBackend&) = delete;

  // Throws std::logic_error when the key's key group is not this subtask's: the record
  // was routed by a different key than the one computed here (a key selector that is
  // not deterministic).
  void SetCurrentKey(const K& key) {
    const int32_t hash_code = KeyHashCode<K>::Of(key);
    SetCurrentKey(key, hash_code, AssignToKeyGroup(hash_code, max_parallelism_));
  }
  // The same, with the key's hash code and key group computed already.
  void SetCurrentKey(const K& key, int32_t hash_code, int kg) {
    if (!range_.Contains(kg)) [[unlikely]] ThrowKeyGroupOutOfRange(kg, range_);
    owned_key_ = key;
    current_key_ = &owned_key_;
    current_hash_code_ = hash_code;
    SetCurrentView(key, kg);
  }
  // The same without a copy of the key: `key` must stay where it is, unchanged, while it
  // is current (until the next SetCurrentKey, BorrowCurrentKey or KeepCurrentKey). For
  // a key read into a buffer of records, which a copy per record would cost most for.
  void BorrowCurrentKey(const K& key, int32_t hash_code, int kg) {
    if (!range_.Contains(kg)) [[unlikely]] ThrowKeyGroupOutOfRange(kg, range_);
    current_key_ = &key;
    current_hash_code_ = hash_code;
    SetCurrentView(key, kg);
  }
  // Copies a borrowed current key, whose place is about to be reused; the key stays the
  // same (and so does current_key_version()).
  void KeepCurrentKey() {
    if (current_key_ == &owned_key_) return;
    owned_key_ = *current_key_;
    current_key_ = &owned_key_;
  }
  const K& current_key() const { return *current_key_; }
  // The current key with the hash code its key group came from: the state tables look it
  // up without hashing it again.
  HashedKeyRef<K> current_hashed_key() const { return {*current_key_, current_hash_code_}; }
  int current_kg_index() const { return current_.kg_index; }
  // Changes with every SetCurrentKey: a state table's cached entry for the current key is
  // valid while this stays the same.
  uint64_t current_key_version() const { return current_.version; }
  // The current key as the state handles' inline paths read it, for the life of the
  // backend.
  const CurrentKeyView* current_key_view() const { return &current_; }

  // Starts loading state for records processed soon (see KeyedInput), in two steps a
  // batch apart: in every large state table, the slots where lookups of the `next` keys
  // start, and the entries of the `soon` keys (whose slots an earlier call loaded). Keys
  // of another subtask's key groups are skipped here; SetCurrentKey refuses them.
  void Prefetch(const KeyHash* next, int n, const KeyHash* soon, int m) const {
    for (const KeyedTableKeys<K>* t : large_tables_) {
      t->PrefetchSlots(next, n, range_.start);
      t->PrefetchEntries(soon, m, range_.start);
    }
  }
  // Whether the tables' entries take so many bytes that a lookup usually misses the
  // caches near the core (then reading records ahead and prefetching their state pays
  // for itself). Also picks the tables Prefetch loads from: those not small enough to
  // stay cached anyway.
  // Below PrefetchStateBytes() the prefetching costs more than it saves: the core's
  // out-of-order window overlaps the lookups of consecutive records on its own. Measured
  // with number_sum (16-byte entries) on a core with 1 MB of L2: 20 k keys (0.4 MB) ran
  // 26 % slower with prefetching, 100 k (2 MB) 7 % slower, 120 k (2.4 MB) the same,
  // 150 k (3 MB) 15 % faster, 400 k 37 % faster; word count's 100 k words (7.6 MB)
  // 14 % faster.
  // Called for every buffer a keyed operator reads: the tables are only counted again
  // when entries may have come or gone since (counting walks every key group's map).
  bool PrefetchPays() {
    uint64_t changes = 0;
    for (const auto& table : key_tables_) changes += table.second->SizeChanges();
    if (changes == prefetch_counted_.changes && key_tables_.size() == prefetch_counted_.tables) {
      return prefetch_counted_.pays;
    }
    size_t bytes = 0;
    large_tables_.clear();
    for (const auto& [table, keys] : key_tables_) {
      const size_t n = table->Size();
      bytes += n * keys->BytesPerEntry();
      if (n >= kPrefetchTableEntries) large_tables_.push_back(keys);
    }
    prefetch_counted_ = {changes, key_tables_.size(), bytes >= prefetch_bytes_ && !large_tables_.empty()};
    return prefetch_counted_.pays;
  }

  const char* type() const override { return "hashmap"; }
  int max_parallelism() const override { return max_parallelism_; }
  KeyGroupRange range() const override { return range_; }

  template <class V>
  ValueState<V>& GetValueState(const std::string& name);
  template <class V>
  ListState<V>& GetListState(const std::string& name);
  template <class UK, class UV>
  MapState<UK, UV>& GetMapState(const std::string& name);
  template <class V>
  ReducingState<V>& GetReducingState(const std::string& name, std::function<V(const V&, const V&)> reduce);
  template <class In, class Acc, class Out>
  AggregatingState<In, Out>& GetAggregatingState(const std::string& name, AggregateFunction<In, Acc, Out> fn);

  // Keeps the restored rows; each state's are applied when it is first registered (its
  // value types are known only then). Until then they are carried into every snapshot.
  void SetRestored(std::map<std::string, RestoredKeyedState> keyed) {
    for (auto& [name, state] : keyed) {
      restored_[name] = std::make_shared<RestoredKeyedState>(std::move(state));
    }
  }

  std::unique_ptr<AsyncKeyedSnapshot> Snapshot(const SnapshotOptions& options) override;

  // Calls fn for every key with a value in state `name`, registered or still only
  // restored (then read from its canonical rows, each key once).
  void ForEachKey(const std::string& name, const std::function<void(const K&)>& fn) const {
    auto it = tables_.find(name);
    if (it != tables_.end()) {
      dynamic_cast<const KeyedTableKeys<K>&>(*it->second).ForEachKey(fn);
      return;
    }
    auto r = restored_.find(name);
    if (r == restored_.end() || r->second->legacy) return;
    for (const auto& [group, rows] : r->second->key_groups) {
      std::string previous;
      bool first = true;
      ForEachRow(rows.data(), rows.data() + rows.size(), [&](std::string_view row_key, std::string_view) {
        std::string_view key = row_key, user_key;
        if (r->second->kind == StateKind::kMap) SplitMapRowKey(row_key, &key, &user_key);
        DataInput in(reinterpret_cast<const uint8_t*>(key.data()), reinterpret_cast<const uint8_t*>(key.data()) + key.size());
        if (r->second->kind != StateKind::kMap) {
          const uint64_t n = in.ReadVarint();
          key = std::string_view(reinterpret_cast<const char*>(in.position()), n);
          in = DataInput(reinterpret_cast<const uint8_t*>(key.data()), reinterpret_cast<const uint8_t*>(key.data()) + key.size());
        }
        if (!first && key == previous) return;
        first = false;
        previous.assign(key);
        K k{};
        Serializer<K>::Read(in, k);
        fn(k);
      });
    }
  }

 private:
  template <class Table, class... Args>
  Table& GetOrCreate(const std::string& name, StateKind kind, Args&&... args);
  void SetCurrentView(const K& key, int kg) {
    current_.kg_index = kg - range_.start;
    if constexpr (kKeyComparedByBits<K>) current_.key_bits = KeyBits(key);
    ++current_.version;
  }

  int max_parallelism_;
  KeyGroupRange range_;
  K owned_key_{};
  const K* current_key_ = &owned_key_;  // &owned_key_, or a key borrowed (BorrowCurrentKey)
  int32_t current_hash_code_ = KeyHashCode<K>::Of(K{});
  CurrentKeyView current_;
  const size_t prefetch_bytes_ = PrefetchStateBytes();
  static constexpr size_t kPrefetchTableEntries = 1024;  // a smaller table stays cached
  std::map<std::string, std::unique_ptr<KeyedStateTable>> tables_;
  // The tables_ as both interfaces, and those Prefetch loads from (see PrefetchPays).
  std::vector<std::pair<const KeyedStateTable*, const KeyedTableKeys<K>*>> key_tables_;
  std::vector<const KeyedTableKeys<K>*> large_tables_;
  // What PrefetchPays found when it last counted: the tables' SizeChanges summed, the
  // number of tables, and its answer.
  struct {
    uint64_t changes = 0;
    size_t tables = 0;
    bool pays = false;
  } prefetch_counted_;
  // Not yet registered; shared with the snapshots that carry them.
  std::map<std::string, std::shared_ptr<RestoredKeyedState>> restored_;
  bool restored_carried_ = false;  // a snapshot carried some of restored_
};

namespace heap_internal {

template <class K, class S, class Codec>
class TableBase : public KeyedStateTable, public KeyedTableKeys<K> {
 public:
  explicit TableBase(HeapKeyedStateBackend<K>* b) : backend_(b), map_(b->range().size()) {
    cache_.current = b->current_key_view();
    if constexpr (kKeyComparedByBits<K>) cache_.hot = map_.hot_entries();
  }
  void ForEachKey(const std::function<void(const K&)>& fn) const override { map_.ForEachKey(fn); }
  void PrefetchSlots(const KeyHash* keys, int n, int first_kg) const override {
    map_.PrefetchSlots(keys, n, first_kg);
  }
  void PrefetchEntries(const KeyHash* keys, int n, int first_kg) const override {
    map_.PrefetchEntries(keys, n, first_kg);
  }
  size_t BytesPerEntry() const override { return GroupedMap::Map::kBytesPerEntry; }
  uint64_t SizeChanges() const override { return map_.size_changes(); }
  void ReadRow(int kg, std::string_view key, std::string_view value) override {
    Uncache();
    Codec::template Read<typename GroupedMap::Map>(key, value, map_.MutableForInsert(kg));
  }
  void ReadLegacyKeyGroup(int kg, DataInput& in) override {
    Uncache();
    uint64_t n = in.ReadVarint();
    auto& m = map_.MutableForInsert(kg);
    for (uint64_t i = 0; i < n; ++i) {
      K k{};
      S v{};
      Serializer<K>::Read(in, k);
      Serializer<S>::Read(in, v);
      m[std::move(k)] = std::move(v);
    }
  }
  std::unique_ptr<KeyedTableSnapshot> Pin() override {
    Uncache();  // a cached entry may be written in place no more
    class Pinned final : public KeyedTableSnapshot {
     public:
      explicit Pinned(std::vector<std::shared_ptr<Group>> groups) : groups_(std::move(groups)) {}
      ~Pinned() override {
        for (size_t i = 0; i < groups_.size(); ++i) Release(static_cast<int>(i));
      }
      std::string_view KeyGroupRows(int kg) override { return GroupedMap::PinnedRows(*groups_[kg]); }
      void Release(int kg) override {
        if (!groups_[kg]) return;
        GroupedMap::Unpin(*groups_[kg]);
        groups_[kg].reset();
      }

     private:
      std::vector<std::shared_ptr<Group>> groups_;
    };
    return std::make_unique<Pinned>(map_.Pin());
  }
  size_t Size() const override { return map_.Size(); }

 protected:
  // The current key's entry (nullptr when it has none). A record usually reads its key's
  // state and then writes it: the entry found first is cached for the current key, so
  // the write needs no second lookup. Entries of a FlatHashMap move when another is
  // added or erased, but under one current key the only entry added is its own (which
  // is cached then); the cache is dropped when the entry may move or go (Erase, a
  // restore) and when it stops being writable in place (Pin).
  // Each has a fast path (the entry is cached) and an out-of-line slow one.
  // A new current key whose entry its key group found last (a hot key) is found inline
  // too.
  const S* Find() {
    if (cache_.Valid()) [[likely]] return cache_.entry;
    if (S* hot = FindHot()) return hot;
    return FindSlow();
  }
  S* FindMutable() {
    if (cache_.Writable()) [[likely]] return cache_.entry;
    if (S* hot = FindHot()) return hot;
    return FindMutableSlow();
  }
  S& GetOrInsert() {
    if (cache_.Writable() && cache_.entry != nullptr) [[likely]] return *cache_.entry;
    if (S* hot = FindHot()) return *hot;
    return GetOrInsertSlow();
  }
  // Find and GetOrInsert past the checks that ValueState's inline paths made before they
  // called into the table: the cache, and the hot key when the keys are compared by their
  // bits (CurrentEntryCache::FindHot).
  const S* FindPastInlineChecks() {
    if constexpr (!kKeyComparedByBits<K>) {
      if (S* hot = FindHot()) return hot;
    }
    return FindSlow();
  }
  S& GetOrInsertPastInlineChecks() {
    if constexpr (!kKeyComparedByBits<K>) {
      if (S* hot = FindHot()) return *hot;
    }
    return GetOrInsertSlow();
  }
  void Erase() {
    Uncache();
    map_.Erase(backend_->current_kg_index(), backend_->current_hashed_key());
  }
  HeapKeyedStateBackend<K>* backend_;
  using GroupedMap = KeyGroupedMap<K, S, Codec>;
  using Group = typename GroupedMap::Group;
  GroupedMap map_;
  // The current key's entry; ValueState's inline paths read it too.
  CurrentEntryCache<S> cache_;

 private:
  void Cache(S* writable_entry) {
    cache_.entry = writable_entry;
    cache_.version = cache_.writable_version = backend_->current_key_version();
  }
  void Uncache() { cache_.version = cache_.writable_version = 0; }
  S* FindHot() {
    if constexpr (kKeyComparedByBits<K>) {
      return cache_.FindHot();
    } else {
      S* hot = map_.FindHotWritable(backend_->current_kg_index(), backend_->current_hashed_key());
      if (hot != nullptr) Cache(hot);
      return hot;
    }
  }
  [[gnu::noinline]] const S* FindSlow() {
    bool writable = false;
    cache_.entry = map_.FindEntry(backend_->current_kg_index(), backend_->current_hashed_key(), &writable);
    cache_.version = backend_->current_key_version();
    cache_.writable_version = writable ? cache_.version : 0;
    return cache_.entry;
  }
  [[gnu::noinline]] S* FindMutableSlow() {
    Cache(map_.FindMutable(backend_->current_kg_index(), backend_->current_hashed_key()));
    return cache_.entry;
  }
  [[gnu::noinline]] S& GetOrInsertSlow() {
    // Found absent under the current key (a record that reads its key's state first):
    // the entry is added without a second lookup.
    const bool absent = cache_.Valid() && cache_.entry == nullptr;
    const int kg = backend_->current_kg_index();
    Cache(absent ? &map_.InsertAbsent(kg, backend_->current_hashed_key())
                 : &map_.GetOrInsert(kg, backend_->current_hashed_key()));
    return *cache_.entry;
  }
};

template <class K, class V>
class HeapValueState final : public TableBase<K, V, ValueCodec<K, V>>, public ValueState<V> {
 public:
  explicit HeapValueState(HeapKeyedStateBackend<K>* b) : TableBase<K, V, ValueCodec<K, V>>(b) {
    this->shared_entry_ = &this->cache_;
  }
  StateKind kind() const override { return StateKind::kValue; }
  std::optional<V> Value() override {
    const V* v = this->Find();
    return v ? std::optional<V>(*v) : std::nullopt;
  }
  void Clear() override { this->Erase(); }
  // The current key's value, to change in place (nullptr when it has none): for the
  // library's operators, which would otherwise copy it out and back in.
  V* MutableValue() { return this->FindMutable(); }

 private:
  // ValueState made its inline checks before it calls these.
  V DoValueOr(const V& fallback) override {
    const V* v = this->FindPastInlineChecks();
    return v ? *v : fallback;
  }
  void DoUpdate(const V& value) override { this->GetOrInsertPastInlineChecks() = value; }
};

template <class K, class V>
class HeapListState final : public TableBase<K, std::vector<V>, ListCodec<K, V>>, public ListState<V> {
 public:
  using TableBase<K, std::vector<V>, ListCodec<K, V>>::TableBase;
  StateKind kind() const override { return StateKind::kList; }
  std::vector<V> Get() override {
    const auto* v = this->Find();
    return v ? *v : std::vector<V>{};
  }
  void Add(const V& value) override { this->GetOrInsert().push_back(value); }
  void AddAll(const std::vector<V>& values) override {
    if (values.empty()) return;
    auto& l = this->GetOrInsert();
    l.insert(l.end(), values.begin(), values.end());
  }
  void Update(const std::vector<V>& values) override {
    if (values.empty()) {
      this->Erase();
    } else {
      this->GetOrInsert() = values;
    }
  }
  void Clear() override { this->Erase(); }
};

template <class K, class UK, class UV>
class HeapMapState final : public TableBase<K, std::map<UK, UV>, MapCodec<K, UK, UV>>, public MapState<UK, UV> {
 public:
  using TableBase<K, std::map<UK, UV>, MapCodec<K, UK, UV>>::TableBase;
  StateKind kind() const override { return StateKind::kMap; }
  std::optional<UV> Get(const UK& key) override {
    const auto* m = this->Find();
    if (!m) return std::nullopt;
    auto it = m->find(key);
    return it == m->end() ? std::nullopt : std::optional<UV>(it->second);
  }
  void Put(const UK& key, const UV& value) override { this->GetOrInsert()[key] = value; }
  // The current key's map, to read and change an entry in place with one lookup (as
  // windows fold a record into their accumulator). Created empty when the key has none:
  // the caller must leave an entry in it (an empty map stands for no state).
  std::map<UK, UV>& MutableMap() { return this->GetOrInsert(); }
  void Remove(const UK& key) override {
    const auto* m = this->Find();
    if (!m || !m->count(key)) return;
    auto* mutable_map = this->FindMutable();
    mutable_map->erase(key);
    if (mutable_map->empty()) this->Erase();
  }
  bool Contains(const UK& key) override {
    const auto* m = this->Find();
    return m && m->count(key);
  }
  std::vector<std::pair<UK, UV>> Entries() override {
    const auto* m = this->Find();
    if (!m) return {};
    return {m->begin(), m->end()};
  }
  bool IsEmpty() override { return this->Find() == nullptr; }
  void Clear() override { this->Erase(); }
};

template <class K, class V>
class HeapReducingState final : public TableBase<K, V, ValueCodec<K, V>>, public ReducingState<V> {
 public:
  HeapReducingState(HeapKeyedStateBackend<K>* b, std::function<V(const V&, const V&)> reduce)
      : TableBase<K, V, ValueCodec<K, V>>(b), reduce_(std::move(reduce)) {}
  StateKind kind() const override { return StateKind::kReducing; }
  std::optional<V> Get() override {
    const V* v = this->Find();
    return v ? std::optional<V>(*v) : std::nullopt;
  }
  void Add(const V& value) override {
    V* v = this->FindMutable();
    if (v) {
      *v = reduce_(*v, value);
    } else {
      this->GetOrInsert() = value;
    }
  }
  void Clear() override { this->Erase(); }

 private:
  std::function<V(const V&, const V&)> reduce_;
};

template <class K, class In, class Acc, class Out>
class HeapAggregatingState final : public TableBase<K, Acc, ValueCodec<K, Acc>>, public AggregatingState<In, Out> {
 public:
  HeapAggregatingState(HeapKeyedStateBackend<K>* b, AggregateFunction<In, Acc, Out> fn)
      : TableBase<K, Acc, ValueCodec<K, Acc>>(b), fn_(std::move(fn)) {}
  StateKind kind() const override { return StateKind::kAggregating; }
  std::optional<Out> Get() override {
    const Acc* a = this->Find();
    return a ? std::optional<Out>(fn_.get_result(*a)) : std::nullopt;
  }
  void Add(const In& value) override {
    Acc* a = this->FindMutable();
    if (a) {
      *a = fn_.add(value, std::move(*a));
    } else {
      this->GetOrInsert() = fn_.add(value, fn_.create_accumulator());
    }
  }
  void Clear() override { this->Erase(); }

 private:
  AggregateFunction<In, Acc, Out> fn_;
};

// The asynchronous part of a hashmap snapshot: serializes the pinned key groups of
// every table, and the restored rows of states not registered since, into one stream
// in the canonical key-group format. Restored states of old snapshots (not yet
// registered, so still in their typed layout) go into a second, legacy handle.
class HeapSnapshot final : public AsyncKeyedSnapshot {
 public:
  struct Table {
    StateMeta meta;
    std::unique_ptr<KeyedTableSnapshot> pinned;         // a registered table
    std::shared_ptr<const RestoredKeyedState> restored;  // or restored rows not yet registered
  };
  HeapSnapshot(KeyGroupRange range, std::vector<Table> tables) : range_(range), tables_(std::move(tables)) {}
  Result<std::vector<KeyedStateHandle>> Write(SnapshotOutput& out) override;

 private:
  KeyGroupRange range_;
  std::vector<Table> tables_;
};

}  // namespace heap_internal

template <class K>
template <class Table, class... Args>
Table& HeapKeyedStateBackend<K>::GetOrCreate(const std::string& name, StateKind kind, Args&&... args) {
  auto it = tables_.find(name);
  if (it != tables_.end()) {
    auto* t = dynamic_cast<Table*>(it->second.get());
    if (!t) ThrowStateKindMismatch(name, it->second->kind(), kind);
    return *t;
  }
  auto table = std::make_unique<Table>(this, std::forward<Args>(args)...);
  Table& ref = *table;
  auto r = restored_.find(name);
  if (r != restored_.end()) {
    RestoredKeyedState& restored = *r->second;
    if (restored.kind != kind) ThrowStateKindMismatch(name, restored.kind, kind);
    // Unless a snapshot carried restored rows (its writer may still read them), each key
    // group's rows are freed once they are in the table: a restore holds the rows and the
    // table of a key group, not of all. States are usually asked for in Open, before any.
    const bool owned = !restored_carried_;
    for (auto& [kg, blob] : restored.key_groups) {
      if (!range_.Contains(kg)) continue;
      if (restored.legacy) {
        DataInput in(blob);
        ref.ReadLegacyKeyGroup(kg - range_.start, in);
      } else {
        ForEachRow(blob.data(), blob.data() + blob.size(), [&](std::string_view key, std::string_view value) {
          ref.ReadRow(kg - range_.start, key, value);
        });
      }
      if (owned) Bytes().swap(blob);
    }
    restored_.erase(r);
  }
  key_tables_.emplace_back(&ref, &ref);
  tables_.emplace(name, std::move(table));
  return ref;
}

template <class K>
std::unique_ptr<AsyncKeyedSnapshot> HeapKeyedStateBackend<K>::Snapshot(const SnapshotOptions&) {
  std::vector<heap_internal::HeapSnapshot::Table> tables;
  for (const auto& [name, table] : tables_) tables.push_back({{name, table->kind()}, table->Pin(), nullptr});
  for (const auto& [name, restored] : restored_) tables.push_back({{name, restored->kind}, nullptr, restored});
  restored_carried_ = restored_carried_ || !restored_.empty();
  return std::make_unique<heap_internal::HeapSnapshot>(range_, std::move(tables));
}

template <class K>
template <class V>
ValueState<V>& HeapKeyedStateBackend<K>::GetValueState(const std::string& name) {
  return GetOrCreate<heap_internal::HeapValueState<K, V>>(name, StateKind::kValue);
}
template <class K>
template <class V>
ListState<V>& HeapKeyedStateBackend<K>::GetListState(const std::string& name) {
  return GetOrCreate<heap_internal::HeapListState<K, V>>(name, StateKind::kList);
}
template <class K>
template <class UK, class UV>
MapState<UK, UV>& HeapKeyedStateBackend<K>::GetMapState(const std::string& name) {
  return GetOrCreate<heap_internal::HeapMapState<K, UK, UV>>(name, StateKind::kMap);
}
template <class K>
template <class V>
ReducingState<V>& HeapKeyedStateBackend<K>::GetReducingState(const std::string& name,
                                                             std::function<V(const V&, const V&)> reduce) {
  return GetOrCreate<heap_internal::HeapReducingState<K, V>>(name, StateKind::kReducing, std::move(reduce));
}
template <class K>
template <class In, class Acc, class Out>
AggregatingState<In, Out>& HeapKeyedStateBackend<K>::GetAggregatingState(const std::string& name,
                                                                         AggregateFunction<In, Acc, Out> fn) {
  return GetOrCreate<heap_internal::HeapAggregatingState<K, In, Acc, Out>>(name, StateKind::kAggregating,
                                                                          std::move(fn));
}

}  // namespace weir
