#pragma once
// The state API that user functions use: keyed state (scoped to the current key of a
// keyed stream) and operator state (scoped to the parallel instance). Handles are
// owned by the state backend and stay valid until the operator is closed.

#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace weir {

// Keys of these types are compared by their bits (at most 8 bytes, zero-extended) on the
// inline paths of the heap's state handles, which do not know the key type.
template <class K>
inline constexpr bool kKeyComparedByBits = (std::is_integral_v<K> || std::is_enum_v<K>) && sizeof(K) <= 8;
template <class K>
uint64_t KeyBits(const K& key) {
  static_assert(kKeyComparedByBits<K>);
  uint64_t bits = 0;
  std::memcpy(&bits, &key, sizeof(K));
  return bits;
}

// The current key, as a backend that holds its values as objects (the heap backend) shows
// it to the inline paths of its state handles. `version` changes with every new current
// key; `key_bits` is the key's KeyBits when its type is compared by bits.
struct CurrentKeyView {
  uint64_t version = 1;
  uint64_t key_bits = 0;
  int32_t kg_index = 0;  // the key group's index in the backend's range
};

// What a state table knows of one key group: the entry it found last (a hot key, found
// without a lookup when it comes again), in a form that needs no key type.
template <class S>
struct HotEntry {
  S* value = nullptr;     // that entry's value (nullptr: none)
  uint64_t key_bits = 0;  // its key's KeyBits, for keys compared by their bits
  // The group was seen writable since the task last pinned it for a snapshot: `value`
  // may be changed in place. False means "look" (see KeyGroupedMap).
  bool writable = true;

  // `value` when the entry is the key's with these bits, else nullptr.
  S* ValueFor(uint64_t bits) const { return value != nullptr && key_bits == bits ? value : nullptr; }
};

// The current key's entry, as the heap backend shares it with the inline paths of its
// state handles. `entry` is the current key's entry (nullptr: it has none) while
// `version` equals the current key's, and may be written in place while
// `writable_version` does (0: it may not, a snapshot may read it). `hot`, by key group
// index, is the table's hot entries when its keys are compared by their bits (else
// nullptr): a new current key that is its group's hot key is found here too.
template <class S>
struct CurrentEntryCache {
  const CurrentKeyView* current = nullptr;
  S* entry = nullptr;
  uint64_t version = 0;  // 0: nothing cached
  uint64_t writable_version = 0;
  const HotEntry<S>* hot = nullptr;

  bool Valid() const { return version == current->version; }
  bool Writable() const { return writable_version == current->version; }
  // The current key's entry when it is its group's hot key and writable (cached then,
  // writable); nullptr: ask the table.
  S* FindHot() {
    if (hot == nullptr) return nullptr;
    const HotEntry<S>& h = hot[current->kg_index];
    S* found = h.writable ? h.ValueFor(current->key_bits) : nullptr;
    if (found == nullptr) return nullptr;
    entry = found;
    version = writable_version = current->version;
    return found;
  }
};

template <class V>
class ValueState {
 public:
  virtual ~ValueState() = default;
  // The value for the current key, nullopt when none was set (Flink's null).
  virtual std::optional<V> Value() = 0;
  // A record usually reads its key's value and then writes it: with the heap backend,
  // the write after the read, a read of the key read last, and a read or write of a
  // key its key group found last (a hot key) are done here, without a call into the
  // backend.
  void Update(const V& value) {
    if (shared_entry_ != nullptr) [[likely]] {
      if (shared_entry_->Writable()) [[likely]] {
        if (shared_entry_->entry != nullptr) [[likely]] {
          *shared_entry_->entry = value;
          return;
        }
        // Read absent under this key: the backend adds it.
      } else if (V* hot = shared_entry_->FindHot()) {
        *hot = value;
        return;
      }
    }
    DoUpdate(value);
  }
  virtual void Clear() = 0;
  // The value for the current key, `fallback` when none was set.
  V ValueOr(const V& fallback) {
    if (shared_entry_ != nullptr) [[likely]] {
      if (shared_entry_->Valid()) return shared_entry_->entry ? *shared_entry_->entry : fallback;
      if (const V* hot = shared_entry_->FindHot()) return *hot;
    }
    return DoValueOr(fallback);
  }

 protected:
  virtual void DoUpdate(const V& value) = 0;
  // A backend that holds values as objects overrides it to read the value in place,
  // without an optional.
  virtual V DoValueOr(const V& fallback) {
    auto v = Value();
    return v ? *v : fallback;
  }
  // Set by such a backend for the life of the handle.
  CurrentEntryCache<V>* shared_entry_ = nullptr;
};

template <class V>
class ListState {
 public:
  virtual ~ListState() = default;
  virtual std::vector<V> Get() = 0;
  virtual void Add(const V& value) = 0;
  virtual void AddAll(const std::vector<V>& values) = 0;
  virtual void Update(const std::vector<V>& values) = 0;
  virtual void Clear() = 0;
};

template <class UK, class UV>
class MapState {
 public:
  virtual ~MapState() = default;
  virtual std::optional<UV> Get(const UK& key) = 0;
  virtual void Put(const UK& key, const UV& value) = 0;
  virtual void Remove(const UK& key) = 0;
  virtual bool Contains(const UK& key) = 0;
  virtual std::vector<std::pair<UK, UV>> Entries() = 0;
  virtual bool IsEmpty() = 0;
  virtual void Clear() = 0;
};

// Adds values with a reduce function; Get returns the reduced value.
template <class V>
class ReducingState {
 public:
  virtual ~ReducingState() = default;
  virtual std::optional<V> Get() = 0;
  virtual void Add(const V& value) = 0;
  virtual void Clear() = 0;
};

// Flink's AggregateFunction: an accumulator of type Acc built from inputs In,
// producing Out.
template <class In, class Acc, class Out>
struct AggregateFunction {
  std::function<Acc()> create_accumulator;
  std::function<Acc(const In&, Acc)> add;
  std::function<Out(const Acc&)> get_result;
  // Two accumulators as one (Flink's merge): what session windows need when they merge.
  // Sliding windows use it to keep one accumulator per slide, merged when a window fires,
  // so it must give what folding both accumulators' records in any order gives. May stay
  // empty for other uses.
  std::function<Acc(Acc, const Acc&)> merge = {};
};

template <class In, class Out>
class AggregatingState {
 public:
  virtual ~AggregatingState() = default;
  virtual std::optional<Out> Get() = 0;
  virtual void Add(const In& value) = 0;
  virtual void Clear() = 0;
};

}  // namespace weir
