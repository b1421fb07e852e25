#pragma once
// The hashmap state backend: keyed state as objects on the heap, one hash map per
// key group, so snapshots and rescaling work key group by key group.
//
// Owned by one operator subtask and used only from its task thread; not thread-safe.
// SetCurrentKey() must be called before state is accessed for a record.

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "lib/api/key_groups.h"
#include "lib/api/serialization.h"
#include "lib/api/state.h"
#include "lib/api/state_snapshot.h"

namespace weir {

// Throws the error of HeapKeyedStateBackend::SetCurrentKey (out of line: cold).
[[noreturn]] void ThrowKeyGroupOutOfRange(int key_group, const KeyGroupRange& range);

// A state table, type-erased for snapshots.
class KeyedStateTable {
 public:
  virtual ~KeyedStateTable() = default;
  virtual const char* kind() const = 0;
  // Serializes every entry of key group index `kg_index` (kg - range.start).
  virtual void WriteKeyGroup(int kg_index, DataOutput& out) const = 0;
  // Adds the entries of a serialized key group (from WriteKeyGroup) into `kg_index`.
  virtual void ReadKeyGroup(int kg_index, DataInput& in) = 0;
  virtual size_t Size() const = 0;
};

template <class K>
class HeapKeyedStateBackend {
 public:
  HeapKeyedStateBackend(int max_parallelism, KeyGroupRange range)
      : max_parallelism_(max_parallelism), range_(range) {}

  // Throws std::logic_error when the key's key group is not this subtask's: the record
  // was routed by a different key than the one computed here (a key selector that is
  // not deterministic).
  void SetCurrentKey(const K& key) {
    const int kg = KeyGroupOf(key, max_parallelism_);
    if (!range_.Contains(kg)) [[unlikely]] ThrowKeyGroupOutOfRange(kg, range_);
    current_key_ = key;
    current_kg_index_ = kg - range_.start;
  }
  const K& current_key() const { return current_key_; }
  int current_kg_index() const { return current_kg_index_; }
  int max_parallelism() const { return max_parallelism_; }
  const KeyGroupRange& range() const { return range_; }

  template <class V>
  ValueState<V>& GetValueState(const std::string& name);
  template <class V>
  ListState<V>& GetListState(const std::string& name);
  template <class UK, class UV>
  MapState<UK, UV>& GetMapState(const std::string& name);
  template <class V>
  ReducingState<V>& GetReducingState(const std::string& name, std::function<V(const V&, const V&)> reduce);
  template <class In, class Acc, class Out>
  AggregatingState<In, Out>& GetAggregatingState(const std::string& name,
                                                 AggregateFunction<In, Acc, Out> fn);

  // Every state of the subtask: the registered ones, and the restored ones that the
  // job has not asked for since the restore (carried over as they were restored, so a
  // state survives any number of checkpoints in which it is not used).
  KeyedStateSnapshot Snapshot() const {
    KeyedStateSnapshot snap;
    snap.max_parallelism = max_parallelism_;
    snap.range = range_;
    for (const auto& [name, table] : tables_) {
      KeyedStateSnapshot::Table t;
      t.name = name;
      t.kind = table->kind();
      t.key_groups.resize(range_.size());
      for (int i = 0; i < range_.size(); ++i) {
        DataOutput out(&t.key_groups[i]);
        table->WriteKeyGroup(i, out);
      }
      snap.tables.push_back(std::move(t));
    }
    for (const auto& [name, restored] : restored_) {
      KeyedStateSnapshot::Table t;
      t.name = name;
      t.kind = restored.kind;
      t.key_groups.resize(range_.size());
      for (const auto& [kg, blob] : restored.key_groups) {
        if (range_.Contains(kg)) t.key_groups[kg - range_.start] = blob;
      }
      snap.tables.push_back(std::move(t));
    }
    return snap;
  }

  // Keeps the restored blobs; each is applied when its state is first registered
  // (the state's value types are known only then).
  void SetRestored(const std::map<std::string, RestoredKeyedState>& keyed) { restored_ = keyed; }

 private:
  template <class Table, class... Args>
  Table& GetOrCreate(const std::string& name, Args&&... args) {
    auto it = tables_.find(name);
    if (it != tables_.end()) {
      auto* t = dynamic_cast<Table*>(it->second.get());
      if (!t) throw std::logic_error("state '" + name + "' was registered with another type");
      return *t;
    }
    auto table = std::make_unique<Table>(this, std::forward<Args>(args)...);
    Table& ref = *table;
    auto r = restored_.find(name);
    if (r != restored_.end()) {
      for (const auto& [kg, blob] : r->second.key_groups) {
        if (!range_.Contains(kg)) continue;
        DataInput in(blob);
        ref.ReadKeyGroup(kg - range_.start, in);
      }
      restored_.erase(r);
    }
    tables_.emplace(name, std::move(table));
    return ref;
  }

  int max_parallelism_;
  KeyGroupRange range_;
  K current_key_{};
  int current_kg_index_ = 0;
  std::map<std::string, std::unique_ptr<KeyedStateTable>> tables_;
  std::map<std::string, RestoredKeyedState> restored_;  // restored, not yet registered
};

namespace heap_internal {

// One map per key group from key to a value of type S.
template <class K, class S>
class KeyGroupedMap {
 public:
  using Map = std::unordered_map<K, S, StableKeyHash<K>, KeyEqual<K>>;
  explicit KeyGroupedMap(int num_key_groups) : maps_(num_key_groups) {}
  S* Find(int kg, const K& key) {
    auto& m = maps_[kg];
    auto it = m.find(key);
    return it == m.end() ? nullptr : &it->second;
  }
  S& GetOrInsert(int kg, const K& key) { return maps_[kg][key]; }
  void Erase(int kg, const K& key) { maps_[kg].erase(key); }
  void Write(int kg, DataOutput& out) const {
    const auto& m = maps_[kg];
    out.WriteVarint(m.size());
    for (const auto& [k, v] : m) {
      Serializer<K>::Write(out, k);
      Serializer<S>::Write(out, v);
    }
  }
  void Read(int kg, DataInput& in) {
    uint64_t n = in.ReadVarint();
    for (uint64_t i = 0; i < n; ++i) {
      K k{};
      S v{};
      Serializer<K>::Read(in, k);
      Serializer<S>::Read(in, v);
      maps_[kg][std::move(k)] = std::move(v);
    }
  }
  size_t Size() const {
    size_t n = 0;
    for (const auto& m : maps_) n += m.size();
    return n;
  }

 private:
  std::vector<Map> maps_;
};

template <class K, class S>
class TableBase : public KeyedStateTable {
 public:
  explicit TableBase(HeapKeyedStateBackend<K>* b) : backend_(b), map_(b->range().size()) {}
  void WriteKeyGroup(int kg, DataOutput& out) const override { map_.Write(kg, out); }
  void ReadKeyGroup(int kg, DataInput& in) override { map_.Read(kg, in); }
  size_t Size() const override { return map_.Size(); }

 protected:
  S* Find() { return map_.Find(backend_->current_kg_index(), backend_->current_key()); }
  S& GetOrInsert() { return map_.GetOrInsert(backend_->current_kg_index(), backend_->current_key()); }
  void Erase() { map_.Erase(backend_->current_kg_index(), backend_->current_key()); }
  HeapKeyedStateBackend<K>* backend_;
  KeyGroupedMap<K, S> map_;
};

template <class K, class V>
class HeapValueState final : public TableBase<K, V>, public ValueState<V> {
 public:
  using TableBase<K, V>::TableBase;
  const char* kind() const override { return "value"; }
  std::optional<V> Value() override {
    V* v = this->Find();
    return v ? std::optional<V>(*v) : std::nullopt;
  }
  void Update(const V& value) override { this->GetOrInsert() = value; }
  void Clear() override { this->Erase(); }
};

template <class K, class V>
class HeapListState final : public TableBase<K, std::vector<V>>, public ListState<V> {
 public:
  using TableBase<K, std::vector<V>>::TableBase;
  const char* kind() const override { return "list"; }
  std::vector<V> Get() override {
    auto* v = this->Find();
    return v ? *v : std::vector<V>{};
  }
  void Add(const V& value) override { this->GetOrInsert().push_back(value); }
  void AddAll(const std::vector<V>& values) override {
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
class HeapMapState final : public TableBase<K, std::map<UK, UV>>, public MapState<UK, UV> {
 public:
  using TableBase<K, std::map<UK, UV>>::TableBase;
  const char* kind() const override { return "map"; }
  std::optional<UV> Get(const UK& key) override {
    auto* m = this->Find();
    if (!m) return std::nullopt;
    auto it = m->find(key);
    return it == m->end() ? std::nullopt : std::optional<UV>(it->second);
  }
  void Put(const UK& key, const UV& value) override { this->GetOrInsert()[key] = value; }
  void Remove(const UK& key) override {
    auto* m = this->Find();
    if (!m) return;
    m->erase(key);
    if (m->empty()) this->Erase();
  }
  bool Contains(const UK& key) override {
    auto* m = this->Find();
    return m && m->count(key);
  }
  std::vector<std::pair<UK, UV>> Entries() override {
    auto* m = this->Find();
    if (!m) return {};
    return {m->begin(), m->end()};
  }
  bool IsEmpty() override { return this->Find() == nullptr; }
  void Clear() override { this->Erase(); }
};

template <class K, class V>
class HeapReducingState final : public TableBase<K, V>, public ReducingState<V> {
 public:
  HeapReducingState(HeapKeyedStateBackend<K>* b, std::function<V(const V&, const V&)> reduce)
      : TableBase<K, V>(b), reduce_(std::move(reduce)) {}
  const char* kind() const override { return "reducing"; }
  std::optional<V> Get() override {
    V* v = this->Find();
    return v ? std::optional<V>(*v) : std::nullopt;
  }
  void Add(const V& value) override {
    V* v = this->Find();
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
class HeapAggregatingState final : public TableBase<K, Acc>, public AggregatingState<In, Out> {
 public:
  HeapAggregatingState(HeapKeyedStateBackend<K>* b, AggregateFunction<In, Acc, Out> fn)
      : TableBase<K, Acc>(b), fn_(std::move(fn)) {}
  const char* kind() const override { return "aggregating"; }
  std::optional<Out> Get() override {
    Acc* a = this->Find();
    return a ? std::optional<Out>(fn_.get_result(*a)) : std::nullopt;
  }
  void Add(const In& value) override {
    Acc* a = this->Find();
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

}  // namespace heap_internal

template <class K>
template <class V>
ValueState<V>& HeapKeyedStateBackend<K>::GetValueState(const std::string& name) {
  return GetOrCreate<heap_internal::HeapValueState<K, V>>(name);
}
template <class K>
template <class V>
ListState<V>& HeapKeyedStateBackend<K>::GetListState(const std::string& name) {
  return GetOrCreate<heap_internal::HeapListState<K, V>>(name);
}
template <class K>
template <class UK, class UV>
MapState<UK, UV>& HeapKeyedStateBackend<K>::GetMapState(const std::string& name) {
  return GetOrCreate<heap_internal::HeapMapState<K, UK, UV>>(name);
}
template <class K>
template <class V>
ReducingState<V>& HeapKeyedStateBackend<K>::GetReducingState(
    const std::string& name, std::function<V(const V&, const V&)> reduce) {
  return GetOrCreate<heap_internal::HeapReducingState<K, V>>(name, std::move(reduce));
}
template <class K>
template <class In, class Acc, class Out>
AggregatingState<In, Out>& HeapKeyedStateBackend<K>::GetAggregatingState(
    const std::string& name, AggregateFunction<In, Acc, Out> fn) {
  return GetOrCreate<heap_internal::HeapAggregatingState<K, In, Acc, Out>>(name, std::move(fn));
}

}  // namespace weir
