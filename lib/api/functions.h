#pragma once
// The function interfaces a job implements: sources, sinks and keyed process
// functions. map / filter / flat_map take plain callables (lambdas).

#include <cstdint>
#include <stdexcept>
#include <string>

#include "lib/api/keyed_states.h"
#include "lib/api/operator.h"
#include "lib/api/side_outputs.h"
#include "lib/api/timers.h"

namespace weir {

// A source of records of type T. One instance per parallel subtask.
template <class T>
class Source {
 public:
  virtual ~Source() = default;
  virtual void Open(RuntimeContext& ctx) {}
  // Emits up to `max_records` into `out`; see SourceStatus. After the call the
  // source's position covers exactly the records emitted (checkpoints rely on it).
  virtual SourceStatus EmitNext(Collector<T>& out, int max_records, int64_t* wake_at_nanos) = 0;
  virtual void Close() {}
};

// A sink of records of type T. One instance per parallel subtask.
template <class T>
class Sink {
 public:
  virtual ~Sink() = default;
  virtual void Open(RuntimeContext& ctx) {}
  virtual void Invoke(const T& record) = 0;
  // End of input: everything must be made durable/visible before returning.
  virtual void Finish() {}
  virtual void Close() {}
  // Called before the barrier of `checkpoint_id` goes downstream: flush and
  // pre-commit whatever the checkpoint covers (two-phase commit sinks).
  virtual void PrepareCommit(int64_t checkpoint_id) {}
};

// The runtime context of a keyed operator: keyed state scoped to the current key, and
// in a KeyedCoProcessFunction the side outputs (Output(tag, value)).
template <class K>
class KeyedRuntimeContext : public RuntimeContext, public SideOutputContext {
 public:
  KeyedRuntimeContext(const OperatorContext& ctx, OperatorStateStore* store, KeyedStates<K>* backend)
      : RuntimeContext(ctx, store), backend_(backend) {}
  template <class V>
  ValueState<V>& GetState(const std::string& name) { return backend_->template GetValueState<V>(name); }
  template <class V>
  ListState<V>& GetListState(const std::string& name) { return backend_->template GetListState<V>(name); }
  template <class UK, class UV>
  MapState<UK, UV>& GetMapState(const std::string& name) {
    return backend_->template GetMapState<UK, UV>(name);
  }
  template <class V, class F>
  ReducingState<V>& GetReducingState(const std::string& name, F reduce) {
    return backend_->template GetReducingState<V>(name, std::function<V(const V&, const V&)>(reduce));
  }
  template <class In, class Acc, class Out>
  AggregatingState<In, Out>& GetAggregatingState(const std::string& name,
                                                 AggregateFunction<In, Acc, Out> fn) {
    return backend_->template GetAggregatingState<In, Acc, Out>(name, std::move(fn));
  }
  // The timers of keyed process functions (register and delete them for the current key).
  TimerService<K>& GetTimerService() {
    if (!timers_) throw std::logic_error("timers exist in keyed process functions only");
    return *timers_;
  }
  void SetTimerService(TimerService<K>* timers) { timers_ = timers; }

 private:
  KeyedStates<K>* backend_;
  TimerService<K>* timers_ = nullptr;
};

// Flink's KeyedProcessFunction: called once per record with the record's key.
template <class K, class In, class Out>
class KeyedProcessFunction {
 public:
  using Key = K;
  using InputType = In;
  using OutputType = Out;
  virtual ~KeyedProcessFunction() = default;
  virtual void Open(KeyedRuntimeContext<K>& ctx) {}
  virtual void ProcessElement(const In& value, const K& key, Collector<Out>& out) = 0;
  // A timer of `key` registered through ctx.GetTimerService() fired. Records emitted
  // from an event-time timer carry its timestamp.
  virtual void OnTimer(int64_t timestamp, const K& key, TimeDomain domain, Collector<Out>& out) {}
  virtual void Close() {}
};

}  // namespace weir
