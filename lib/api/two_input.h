#pragma once
// Two-input functions (Flink's connected streams) and the broadcast state pattern.
//
//   a.Connect(b).Map(CoMapFunction)              Map1 for a's records, Map2 for b's
//   a.Connect(b).FlatMap(CoFlatMapFunction)      FlatMap1 / FlatMap2
//   a.KeyBy(ka).Connect(b.KeyBy(kb)).Process(KeyedCoProcessFunction)
//                                                keyed state and timers per key, both inputs
//   a.Connect(rules.Broadcast(descriptor)).Process(BroadcastProcessFunction)
//   a.KeyBy(k).Connect(rules.Broadcast(descriptor)).Process(KeyedBroadcastProcessFunction)
//   a.Connect(b).Process(CoProcessFunction)
//
// The process functions emit to side outputs with ctx.Output(tag, value); GetSideOutput(tag)
// on their result reads them (side_outputs.h).
//
// Broadcast state: every record of the broadcast input reaches every subtask, which
// writes it into its broadcast state (ProcessBroadcastElement); the other input reads
// that state only (ProcessElement), so all subtasks keep the same state. It is operator
// state in OperatorStateMode::kBroadcast: a restore at another parallelism gives new
// subtask i the copy of old subtask i mod the old parallelism.
//
// Used from the task's thread only.

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "lib/api/functions.h"
#include "lib/api/keyed_states.h"
#include "lib/api/state_snapshot.h"
#include "lib/api/operator.h"
#include "lib/api/side_outputs.h"

namespace weir {

// Names a broadcast state of keys K and values V (Flink's MapStateDescriptor).
template <class K, class V>
class MapStateDescriptor {
 public:
  explicit MapStateDescriptor(std::string name) : name_(std::move(name)) {
    if (name_.empty()) throw std::invalid_argument("a map state descriptor needs a non-empty name");
  }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

// One broadcast state: a map the broadcast input writes and the other input reads
// (through a const reference: ReadOnlyBroadcastState).
template <class K, class V>
class BroadcastState;
template <class K, class V>
using ReadOnlyBroadcastState = const BroadcastState<K, V>;

namespace internal {
class BroadcastStateBase {
 public:
  virtual ~BroadcastStateBase() = default;
  // Writes the map into its operator state list (before a snapshot).
  virtual void Store() = 0;
};
}  // namespace internal

template <class K, class V>
class BroadcastState final : public internal::BroadcastStateBase {
 public:
  explicit BroadcastState(ListState<std::pair<K, V>>* list) : list_(list) {
    for (auto& [k, v] : list_->Get()) entries_[k] = v;
  }
  std::optional<V> Get(const K& key) const {
    auto it = entries_.find(key);
    if (it == entries_.end()) return std::nullopt;
    return it->second;
  }
  bool Contains(const K& key) const { return entries_.count(key) > 0; }
  const std::map<K, V>& Entries() const { return entries_; }
  size_t size() const { return entries_.size(); }
  void Put(const K& key, const V& value) { entries_[key] = value; }
  void Remove(const K& key) { entries_.erase(key); }
  void Clear() { entries_.clear(); }
  void Store() override { list_->Update(std::vector<std::pair<K, V>>(entries_.begin(), entries_.end())); }

 private:
  ListState<std::pair<K, V>>* list_;
  std::map<K, V> entries_;
};

// The broadcast states of one operator subtask, by name; only the names the stream
// was broadcast with (Broadcast(descriptors...)) exist.
class BroadcastStateStore {
 public:
  BroadcastStateStore(OperatorStateStore* store, std::set<std::string> declared)
      : store_(store), declared_(std::move(declared)) {}
  template <class K, class V>
  BroadcastState<K, V>& Get(const MapStateDescriptor<K, V>& descriptor) {
    const std::string& name = descriptor.name();
    auto it = states_.find(name);
    if (it != states_.end()) {
      auto* state = dynamic_cast<BroadcastState<K, V>*>(it->second.get());
      if (!state) throw std::logic_error("broadcast state '" + name + "' was asked for with other types");
      return *state;
    }
    if (!declared_.count(name)) {
      throw std::logic_error("no broadcast state named '" + name +
                             "': give its descriptor to Broadcast(...) on the broadcast stream");
    }
    auto state = std::make_unique<BroadcastState<K, V>>(
        &store_->template GetBroadcastListState<std::pair<K, V>>(name));
    auto& ref = *state;
    states_.emplace(name, std::move(state));
    return ref;
  }
  void Store() {
    for (auto& [name, state] : states_) state->Store();
  }

 private:
  OperatorStateStore* store_;
  std::set<std::string> declared_;
  std::map<std::string, std::unique_ptr<internal::BroadcastStateBase>> states_;
};

// What ProcessElement of a broadcast process function sees: the broadcast state,
// read-only, and the side outputs (Output(tag, value)).
class ReadOnlyBroadcastContext : public SideOutputContext {
 public:
  explicit ReadOnlyBroadcastContext(BroadcastStateStore* states) : states_(states) {}
  template <class K, class V>
  ReadOnlyBroadcastState<K, V>& GetBroadcastState(const MapStateDescriptor<K, V>& descriptor) const {
    return states_->Get(descriptor);
  }

 protected:
  BroadcastStateStore* states_;
};

// What ProcessBroadcastElement sees: the broadcast state, writable, and the side outputs.
class BroadcastContext : public ReadOnlyBroadcastContext {
 public:
  using ReadOnlyBroadcastContext::ReadOnlyBroadcastContext;
  template <class K, class V>
  BroadcastState<K, V>& GetBroadcastState(const MapStateDescriptor<K, V>& descriptor) const {
    return states_->Get(descriptor);
  }
};

// Name keyed states of values V (Flink's ValueStateDescriptor, ListStateDescriptor;
// MapStateDescriptor above names map states): what ApplyToKeyedState runs over.
template <class V>
class ValueStateDescriptor {
 public:
  explicit ValueStateDescriptor(std::string name) : name_(std::move(name)) {
    if (name_.empty()) throw std::invalid_argument("a value state descriptor needs a non-empty name");
  }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};
template <class V>
class ListStateDescriptor {
 public:
  explicit ListStateDescriptor(std::string name) : name_(std::move(name)) {
    if (name_.empty()) throw std::invalid_argument("a list state descriptor needs a non-empty name");
  }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
};

// What ProcessBroadcastElement of a KeyedBroadcastProcessFunction sees: the broadcast
// state, writable, the side outputs, and the keyed state of every key of this subtask
// (Flink's Context.applyToKeyedState).
template <class K>
class KeyedBroadcastContext : public BroadcastContext {
 public:
  KeyedBroadcastContext(BroadcastStateStore* states, KeyedStates<K>* keyed)
      : BroadcastContext(states), keyed_(keyed) {}
  // fn(const K& key, ValueState<V>& state) for every key of this subtask that has a value
  // in the state `descriptor` names (the same name and types as the function's
  // GetState<V>(name)); fn may read, update or clear it.
  template <class V, class F>
  void ApplyToKeyedState(const ValueStateDescriptor<V>& descriptor, F fn) const {
    ForEachKey(descriptor.name(), StateKind::kValue, keyed_->template GetValueState<V>(descriptor.name()), fn);
  }
  // The same for a list state (GetListState<V>(name)).
  template <class V, class F>
  void ApplyToKeyedState(const ListStateDescriptor<V>& descriptor, F fn) const {
    ForEachKey(descriptor.name(), StateKind::kList, keyed_->template GetListState<V>(descriptor.name()), fn);
  }
  // The same for a map state (GetMapState<UK, UV>(name)).
  template <class UK, class UV, class F>
  void ApplyToKeyedState(const MapStateDescriptor<UK, UV>& descriptor, F fn) const {
    ForEachKey(descriptor.name(), StateKind::kMap, keyed_->template GetMapState<UK, UV>(descriptor.name()), fn);
  }

 private:
  // The keys are listed first: fn sets the current key and may change the state.
  template <class State, class F>
  void ForEachKey(const std::string& name, StateKind kind, State& state, F& fn) const {
    std::vector<K> keys;
    keyed_->ForEachKey(name, kind, [&](const K& key) { keys.push_back(key); });
    for (const K& key : keys) {
      keyed_->SetCurrentKey(key);
      fn(key, state);
    }
  }
  KeyedStates<K>* keyed_;
};

// Flink's CoMapFunction: one output record per record of either input.
template <class In1, class In2, class Out>
class CoMapFunction {
 public:
  using FirstInputType = In1;
  using SecondInputType = In2;
  using OutputType = Out;
  virtual ~CoMapFunction() = default;
  virtual void Open(RuntimeContext& ctx) {}
  virtual Out Map1(const In1& value) = 0;
  virtual Out Map2(const In2& value) = 0;
  virtual void Close() {}
};

// Flink's CoFlatMapFunction: zero or more output records per record of either input.
template <class In1, class In2, class Out>
class CoFlatMapFunction {
 public:
  using FirstInputType = In1;
  using SecondInputType = In2;
  using OutputType = Out;
  virtual ~CoFlatMapFunction() = default;
  virtual void Open(RuntimeContext& ctx) {}
  virtual void FlatMap1(const In1& value, Collector<Out>& out) = 0;
  virtual void FlatMap2(const In2& value, Collector<Out>& out) = 0;
  virtual void Close() {}
};

// Flink's CoProcessFunction: ProcessElement1 for a's records, ProcessElement2 for b's;
// ctx.Output(tag, value) emits to a side output. (Timers need keyed streams:
// KeyedCoProcessFunction.)
template <class In1, class In2, class Out>
class CoProcessFunction {
 public:
  using FirstInputType = In1;
  using SecondInputType = In2;
  using OutputType = Out;
  using Context = SideOutputContext;
  virtual ~CoProcessFunction() = default;
  virtual void Open(RuntimeContext& ctx) {}
  virtual void ProcessElement1(const In1& value, const Context& ctx, Collector<Out>& out) = 0;
  virtual void ProcessElement2(const In2& value, const Context& ctx, Collector<Out>& out) = 0;
  virtual void Close() {}
};

// Flink's KeyedCoProcessFunction: both inputs keyed by a key of type K; keyed state
// and timers (ctx.GetTimerService()) are those of the record's key, as in
// KeyedProcessFunction; ctx.Output(tag, value) emits to a side output (ctx: the
// KeyedRuntimeContext that Open gets).
template <class K, class In1, class In2, class Out>
class KeyedCoProcessFunction {
 public:
  using Key = K;
  using FirstInputType = In1;
  using SecondInputType = In2;
  using OutputType = Out;
  virtual ~KeyedCoProcessFunction() = default;
  virtual void Open(KeyedRuntimeContext<K>& ctx) {}
  virtual void ProcessElement1(const In1& value, const K& key, Collector<Out>& out) = 0;
  virtual void ProcessElement2(const In2& value, const K& key, Collector<Out>& out) = 0;
  virtual void OnTimer(int64_t timestamp, const K& key, TimeDomain domain, Collector<Out>& out) {}
  virtual void Close() {}
};

// Flink's BroadcastProcessFunction: In1 from a non-keyed stream, In2 from the
// broadcast stream.
template <class In1, class In2, class Out>
class BroadcastProcessFunction {
 public:
  using FirstInputType = In1;
  using SecondInputType = In2;
  using OutputType = Out;
  virtual ~BroadcastProcessFunction() = default;
  virtual void Open(RuntimeContext& ctx) {}
  virtual void ProcessElement(const In1& value, const ReadOnlyBroadcastContext& ctx, Collector<Out>& out) = 0;
  virtual void ProcessBroadcastElement(const In2& value, const BroadcastContext& ctx, Collector<Out>& out) = 0;
  virtual void Close() {}
};

// Flink's KeyedBroadcastProcessFunction: In1 from a keyed stream (keyed state and
// timers of the record's key, as in KeyedProcessFunction), In2 from the broadcast
// stream. Timers see the broadcast state read-only. ProcessBroadcastElement takes a
// Context (ApplyToKeyedState over the keyed state of all keys) or, as before it had
// one, a BroadcastContext: override either.
template <class K, class In1, class In2, class Out>
class KeyedBroadcastProcessFunction {
 public:
  using Key = K;
  using FirstInputType = In1;
  using SecondInputType = In2;
  using OutputType = Out;
  using Context = KeyedBroadcastContext<K>;
  virtual ~KeyedBroadcastProcessFunction() = default;
  virtual void Open(KeyedRuntimeContext<K>& ctx) {}
  virtual void ProcessElement(const In1& value, const K& key, const ReadOnlyBroadcastContext& ctx,
                              Collector<Out>& out) = 0;
  virtual void ProcessBroadcastElement(const In2& value, const Context& ctx, Collector<Out>& out) {
    ProcessBroadcastElement(value, static_cast<const BroadcastContext&>(ctx), out);
  }
  virtual void ProcessBroadcastElement(const In2& value, const BroadcastContext& ctx, Collector<Out>& out) {
    throw std::logic_error("a KeyedBroadcastProcessFunction must override ProcessBroadcastElement");
  }
  virtual void OnTimer(int64_t timestamp, const K& key, TimeDomain domain, const ReadOnlyBroadcastContext& ctx,
                       Collector<Out>& out) {}
  virtual void Close() {}
};

}  // namespace weir
