#pragma once
// The state API that user functions use: keyed state (scoped to the current key of a
// keyed stream) and operator state (scoped to the parallel instance). Handles are
// owned by the state backend and stay valid until the operator is closed.

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace weir {

template <class V>
class ValueState {
 public:
  virtual ~ValueState() = default;
  // The value for the current key, nullopt when none was set (Flink's null).
  virtual std::optional<V> Value() = 0;
  virtual void Update(const V& value) = 0;
  virtual void Clear() = 0;
  // The value for the current key, `fallback` when none was set. A backend that holds
  // values as objects overrides it to read the value in place, without an optional.
  virtual V ValueOr(const V& fallback) {
    auto v = Value();
    return v ? *v : fallback;
  }
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
