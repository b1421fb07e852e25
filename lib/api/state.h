#pragma once
// The state API that user functions use: keyed state (scoped to the current key of a
// keyed stream) and operator state (scoped to the parallel instance). Handles are
// owned by the state backend and stay valid until the operator is closed.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace weir {

// The current key's entry, as a backend that holds its values as objects (the heap
// backend) shares it with the inline paths of its state handles. The backend's key
// version (*key_version) changes with every new current key; `entry` is the current
// key's entry (nullptr: it has none) while it equals `version`, and may be written in
// place while it equals `writable_version` (0: it may not, a snapshot may read it).
template <class S>
struct CurrentEntryCache {
  const uint64_t* key_version = nullptr;
  S* entry = nullptr;
  uint64_t version = 0;  // 0: nothing cached
  uint64_t writable_version = 0;

  bool Valid() const { return version == *key_version; }
  bool Writable() const { return writable_version == *key_version; }
};

template <class V>
class ValueState {
 public:
  virtual ~ValueState() = default;
  // The value for the current key, nullopt when none was set (Flink's null).
  virtual std::optional<V> Value() = 0;
  // A record usually reads its key's value and then writes it: with the heap backend,
  // the write after the read (and a read of the key read last) is done here, without a
  // call into the backend.
  void Update(const V& value) {
    if (shared_entry_ != nullptr && shared_entry_->Writable() && shared_entry_->entry != nullptr) [[likely]] {
      *shared_entry_->entry = value;
      return;
    }
    DoUpdate(value);
  }
  virtual void Clear() = 0;
  // The value for the current key, `fallback` when none was set.
  V ValueOr(const V& fallback) {
    if (shared_entry_ != nullptr && shared_entry_->Valid()) [[likely]] {
      return shared_entry_->entry ? *shared_entry_->entry : fallback;
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
  const CurrentEntryCache<V>* shared_entry_ = nullptr;
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
