#pragma once
// KeyedStates<K>: the keyed state of one keyed operator subtask, as its typed states
// see it: on the heap (HeapKeyedStateBackend, objects), or in a byte-level backend the
// runtime provides (RocksDB), through thin typed wrappers that serialize keys and
// values. Which one is decided once, when the operator is set up; per record the only
// cost of the choice is one predictable branch.
//
// Used from the task's thread only.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "lib/api/channel_io.h"
#include "lib/api/heap_state.h"
#include "lib/api/keyed_state_backend.h"
#include "lib/api/keyed_state_rows.h"
#include "lib/api/output.h"
#include "lib/api/serialization.h"
#include "lib/api/state.h"

namespace weir {

namespace bytes_internal {

// A typed state over a byte-level backend.
class StateBase {
 public:
  virtual ~StateBase() = default;
};

template <class V>
class ValueStateOnBytes final : public StateBase, public ValueState<V> {
 public:
  ValueStateOnBytes(BytesKeyedStateBackend* b, int id) : b_(b), id_(id) {}
  std::optional<V> Value() override {
    if (!b_->Get(id_, &value_)) return std::nullopt;
    V v{};
    heap_internal::ParseSerialized(value_, &v);
    return v;
  }
  void Clear() override { b_->Delete(id_); }

 private:
  void DoUpdate(const V& v) override { b_->Put(id_, SerializeInto(v, &scratch_)); }

  BytesKeyedStateBackend* b_;
  int id_;
  std::string value_;
  Bytes scratch_;
};

template <class V>
class ListStateOnBytes final : public StateBase, public ListState<V> {
 public:
  ListStateOnBytes(BytesKeyedStateBackend* b, int id) : b_(b), id_(id) {}
  std::vector<V> Get() override {
    std::vector<V> out;
    if (!b_->Get(id_, &value_)) return out;
    ForEachListElement(value_, [&](std::string_view e) {
      V v{};
      heap_internal::ParseSerialized(e, &v);
      out.push_back(std::move(v));
    });
    return out;
  }
  void Add(const V& v) override { b_->Append(id_, SerializeInto(v, &scratch_)); }
  void AddAll(const std::vector<V>& vs) override {
    for (const auto& v : vs) Add(v);
  }
  void Update(const std::vector<V>& vs) override {
    if (vs.empty()) {
      b_->Delete(id_);
      return;
    }
    value_.clear();
    for (const auto& v : vs) {
      std::string_view e = SerializeInto(v, &scratch_);
      AppendVarint(&value_, e.size());
      value_.append(e);
    }
    b_->Put(id_, value_);
  }
  void Clear() override { b_->Delete(id_); }

 private:
  BytesKeyedStateBackend* b_;
  int id_;
  std::string value_;
  Bytes scratch_;
};

template <class UK, class UV>
class MapStateOnBytes final : public StateBase, public MapState<UK, UV> {
 public:
  MapStateOnBytes(BytesKeyedStateBackend* b, int id) : b_(b), id_(id) {}
  std::optional<UV> Get(const UK& key) override {
    if (!b_->MapGet(id_, SerializeInto(key, &scratch_), &value_)) return std::nullopt;
    UV v{};
    heap_internal::ParseSerialized(value_, &v);
    return v;
  }
  void Put(const UK& key, const UV& value) override {
    std::string k(SerializeInto(key, &scratch_));
    b_->MapPut(id_, k, SerializeInto(value, &scratch_));
  }
  void Remove(const UK& key) override { b_->MapRemove(id_, SerializeInto(key, &scratch_)); }
  bool Contains(const UK& key) override { return b_->MapContains(id_, SerializeInto(key, &scratch_)); }
  std::vector<std::pair<UK, UV>> Entries() override {
    std::vector<std::pair<UK, UV>> out;
    b_->MapForEach(id_, [&](std::string_view k, std::string_view v) {
      std::pair<UK, UV> e{};
      heap_internal::ParseSerialized(k, &e.first);
      heap_internal::ParseSerialized(v, &e.second);
      out.push_back(std::move(e));
    });
    return out;
  }
  bool IsEmpty() override { return b_->MapIsEmpty(id_); }
  void Clear() override { b_->MapClear(id_); }

 private:
  BytesKeyedStateBackend* b_;
  int id_;
  std::string value_;
  Bytes scratch_;
};

template <class V>
class ReducingStateOnBytes final : public StateBase, public ReducingState<V> {
 public:
  ReducingStateOnBytes(BytesKeyedStateBackend* b, int id, std::function<V(const V&, const V&)> reduce)
      : b_(b), id_(id), reduce_(std::move(reduce)) {}
  std::optional<V> Get() override {
    if (!b_->Get(id_, &value_)) return std::nullopt;
    V v{};
    heap_internal::ParseSerialized(value_, &v);
    return v;
  }
  void Add(const V& value) override {
    auto current = Get();
    b_->Put(id_, SerializeInto(current ? reduce_(*current, value) : value, &scratch_));
  }
  void Clear() override { b_->Delete(id_); }

 private:
  BytesKeyedStateBackend* b_;
  int id_;
  std::function<V(const V&, const V&)> reduce_;
  std::string value_;
  Bytes scratch_;
};

template <class In, class Acc, class Out>
class AggregatingStateOnBytes final : public StateBase, public AggregatingState<In, Out> {
 public:
  AggregatingStateOnBytes(BytesKeyedStateBackend* b, int id, AggregateFunction<In, Acc, Out> fn)
      : b_(b), id_(id), fn_(std::move(fn)) {}
  std::optional<Out> Get() override {
    auto acc = Accumulator();
    return acc ? std::optional<Out>(fn_.get_result(*acc)) : std::nullopt;
  }
  void Add(const In& value) override {
    auto acc = Accumulator();
    Acc next = fn_.add(value, acc ? std::move(*acc) : fn_.create_accumulator());
    b_->Put(id_, SerializeInto(next, &scratch_));
  }
  void Clear() override { b_->Delete(id_); }

 private:
  std::optional<Acc> Accumulator() {
    if (!b_->Get(id_, &value_)) return std::nullopt;
    Acc a{};
    heap_internal::ParseSerialized(value_, &a);
    return a;
  }
  BytesKeyedStateBackend* b_;
  int id_;
  AggregateFunction<In, Acc, Out> fn_;
  std::string value_;
  Bytes scratch_;
};

}  // namespace bytes_internal

template <class K>
class KeyedStates {
 public:
  // On the heap, with the restored rows of the subtask's key groups.
  KeyedStates(int max_parallelism, KeyGroupRange range, std::map<std::string, RestoredKeyedState> restored)
      : heap_(std::make_unique<HeapKeyedStateBackend<K>>(max_parallelism, range)),
        max_parallelism_(max_parallelism), range_(range) {
    heap_->SetRestored(std::move(restored));
  }
  // In a byte-level backend (already restored by the runtime).
  explicit KeyedStates(BytesKeyedStateBackend* bytes)
      : bytes_(bytes), max_parallelism_(bytes->max_parallelism()), range_(bytes->range()) {}

  // Throws std::logic_error when the key's key group is not this subtask's (see
  // HeapKeyedStateBackend::SetCurrentKey).
  void SetCurrentKey(const K& key) {
    const int32_t hash_code = KeyHashCode<K>::Of(key);
    SetCurrentKey(key, hash_code, AssignToKeyGroup(hash_code, max_parallelism_));
  }
  // The same, with the key's hash code and key group computed already (PreparedKeys).
  // The heap's few stores are inline; the byte-level backend's serialization is not.
  void SetCurrentKey(const K& key, int32_t hash_code, int kg) {
    if (!bytes_) {
      heap_->SetCurrentKey(key, hash_code, kg);
      return;
    }
    SetCurrentKeyBytes(key, kg);
  }
  // The same without a copy of the key on the heap (see HeapKeyedStateBackend::
  // BorrowCurrentKey): `key` stays where it is, unchanged, until KeepCurrentKey or the
  // next key.
  void BorrowCurrentKey(const K& key, int32_t hash_code, int kg) {
    if (!bytes_) {
      heap_->BorrowCurrentKey(key, hash_code, kg);
      return;
    }
    SetCurrentKey(key, hash_code, kg);
  }
  // A borrowed current key's place is about to be reused.
  void KeepCurrentKey() {
    if (!bytes_) heap_->KeepCurrentKey();
  }
  const K& current_key() const { return bytes_ ? current_key_ : heap_->current_key(); }
  int max_parallelism() const { return max_parallelism_; }
  // Prefetching of state entries (see KeyedInput). On the heap by the keys' hash codes;
  // in a byte-level backend by each key's bytes (PrefetchKey).
  bool PrefetchPays() { return bytes_ ? bytes_->PrefetchPays() : heap_->PrefetchPays(); }
  bool prefetches_bytes() const { return bytes_ != nullptr; }
  void Prefetch(const KeyHash* next, int n, const KeyHash* soon, int m) const { heap_->Prefetch(next, n, soon, m); }
  void PrefetchKey(const K& key, int key_group) { bytes_->PrefetchKey(SerializeInto(key, &prefetch_bytes_), key_group); }

  KeyedStateBackend& backend() { return bytes_ ? static_cast<KeyedStateBackend&>(*bytes_) : *heap_; }

  // Calls fn with every key that has state in `name` (registered before, of `kind`).
  // Setting the current key or changing that state inside fn is not allowed.
  void ForEachKey(const std::string& name, StateKind kind, const std::function<void(const K&)>& fn) {
    if (!bytes_) {
      heap_->ForEachKey(name, fn);
      return;
    }
    bytes_->ForEachKey(bytes_->RegisterState(name, kind), [&](std::string_view key) {
      K k{};
      heap_internal::ParseSerialized(key, &k);
      fn(k);
    });
  }

  template <class V>
  ValueState<V>& GetValueState(const std::string& name) {
    if (!bytes_) return heap_->template GetValueState<V>(name);
    return Get<bytes_internal::ValueStateOnBytes<V>>(name, StateKind::kValue);
  }
  template <class V>
  ListState<V>& GetListState(const std::string& name) {
    if (!bytes_) return heap_->template GetListState<V>(name);
    return Get<bytes_internal::ListStateOnBytes<V>>(name, StateKind::kList);
  }
  template <class UK, class UV>
  MapState<UK, UV>& GetMapState(const std::string& name) {
    if (!bytes_) return heap_->template GetMapState<UK, UV>(name);
    return Get<bytes_internal::MapStateOnBytes<UK, UV>>(name, StateKind::kMap);
  }
  template <class V>
  ReducingState<V>& GetReducingState(const std::string& name, std::function<V(const V&, const V&)> reduce) {
    if (!bytes_) return heap_->template GetReducingState<V>(name, std::move(reduce));
    return Get<bytes_internal::ReducingStateOnBytes<V>>(name, StateKind::kReducing, std::move(reduce));
  }
  template <class In, class Acc, class Out>
  AggregatingState<In, Out>& GetAggregatingState(const std::string& name, AggregateFunction<In, Acc, Out> fn) {
    if (!bytes_) return heap_->template GetAggregatingState<In, Acc, Out>(name, std::move(fn));
    return Get<bytes_internal::AggregatingStateOnBytes<In, Acc, Out>>(name, StateKind::kAggregating, std::move(fn));
  }

 private:
  [[gnu::noinline]] void SetCurrentKeyBytes(const K& key, int kg) {
    if (!range_.Contains(kg)) [[unlikely]] ThrowKeyGroupOutOfRange(kg, range_);
    current_key_ = key;
    bytes_->SetCurrentKey(SerializeInto(key, &key_bytes_), kg);
  }
  template <class State, class... Args>
  State& Get(const std::string& name, StateKind kind, Args&&... args) {
    auto it = states_.find(name);
    if (it != states_.end()) {
      auto* s = dynamic_cast<State*>(it->second.get());
      if (!s) throw std::logic_error("keyed state '" + name + "' was registered with other types");
      return *s;
    }
    int id = bytes_->RegisterState(name, kind);
    auto state = std::make_unique<State>(bytes_, id, std::forward<Args>(args)...);
    State& ref = *state;
    states_.emplace(name, std::move(state));
    return ref;
  }

  std::unique_ptr<HeapKeyedStateBackend<K>> heap_;
  BytesKeyedStateBackend* bytes_ = nullptr;
  int max_parallelism_;
  KeyGroupRange range_;
  K current_key_{};
  Bytes key_bytes_;
  Bytes prefetch_bytes_;  // PrefetchKey's serialized key
  std::map<std::string, std::unique_ptr<bytes_internal::StateBase>> states_;
};

// The keys of the records a keyed operator's reader prepared (see KeyedInput): each
// slot holds a record's key (where the record holds it, or a copy), its hash code and
// its key group, so that processing the record takes them as they are.
// KeyF is the operator's key selector: a key it returns by reference into the record
// is not copied (the record stays put until it is processed); any other key is.
template <class K, class T, class KeyF>
class PreparedKeys {
 public:
  // Whether the records' state is worth prefetching (see KeyedInput::StartBuffer):
  // records are prepared, and their state prefetched, only when it is.
  bool Start(KeyedStates<K>& states) {
    prepared_count_ = 0;
    return states.PrefetchPays();
  }
  // `hashes`: the records' KeyHash, or null to compute them. Starts loading the slots
  // where the lookups of these records' keys start, and the entries of the batch
  // prepared before (processed next: its slots had a batch's time to arrive).
  void Prepare(KeyF& key_fn, const T* records, const KeyHash* hashes, int first_slot, int count,
               KeyedStates<K>& states) {
    for (int i = 0; i < count; ++i) {
      Slot& s = slots_[first_slot + i];
      KeyHash& place = places_[first_slot + i];
      TakeKey(key_fn, records[i], s);
      if (hashes != nullptr) {
        place.hash_code = HashCodeOf(*s.key, hashes[i]);
        place.key_group = hashes[i].key_group;
      } else {
        place.hash_code = KeyHashCode<K>::Of(*s.key);
        place.key_group = AssignToKeyGroup(place.hash_code, states.max_parallelism());
      }
    }
    if (states.prefetches_bytes()) {
      for (int i = first_slot; i < first_slot + count; ++i) states.PrefetchKey(*slots_[i].key, places_[i].key_group);
    } else {
      states.Prefetch(&places_[first_slot], count, &places_[prepared_first_], prepared_count_);
    }
    prepared_first_ = first_slot;
    prepared_count_ = count;
  }
  // Makes the key of `slot` the current key, borrowed from the slot (or from its record),
  // and returns it: Reuse must come before either is changed.
  const K& SetCurrent(int slot, KeyedStates<K>& states) const {
    const KeyHash& place = places_[slot];
    const K& key = *slots_[slot].key;
    states.BorrowCurrentKey(key, place.hash_code, place.key_group);
    return key;
  }
  // The slots, and the records they point into, are about to be reused.
  void Reuse(KeyedStates<K>& states) { states.KeepCurrentKey(); }

 private:
  struct Slot {
    const K* key = nullptr;
    K copy{};
  };
  // Points the slot at the record's key (in the record, or copied into the slot).
  static void TakeKey(KeyF& key_fn, const T& record, Slot& s) {
    decltype(auto) key = key_fn(record);
    using Key = decltype(key);
    if constexpr (std::is_lvalue_reference_v<Key> && std::is_same_v<std::remove_cvref_t<Key>, K>) {
      const auto at = reinterpret_cast<uintptr_t>(&key);
      const auto in = reinterpret_cast<uintptr_t>(&record);
      if (at >= in && at + sizeof(K) <= in + sizeof(T)) {
        s.key = &key;
      } else {
        s.copy = key;
        s.key = &s.copy;
      }
    } else {
      s.copy = std::move(key);
      s.key = &s.copy;
    }
  }

  Slot slots_[KeyedInput<T>::kSlots];
  KeyHash places_[KeyedInput<T>::kSlots];  // by slot: its key's hash code and key group
  // The batch Prepare prepared last in this buffer (count 0: none).
  int prepared_first_ = 0;
  int prepared_count_ = 0;
};

}  // namespace weir
