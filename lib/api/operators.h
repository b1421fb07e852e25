#pragma once
// The typed operators behind the DataStream API. Each is instantiated in the
// job's code for its record types; the runtime sees StreamOperatorBase.

#include <memory>
#include <type_traits>
#include <utility>

#include "lib/api/functions.h"
#include "lib/api/keyed_states.h"
#include "lib/api/operator.h"

namespace weir::internal {

// Calls the CheckpointedFunction / CheckpointListener hooks of `fn` when it has them.
template <class Fn>
void InitializeFunctionState(Fn& fn, RuntimeContext& ctx) {
  if constexpr (std::is_base_of_v<CheckpointedFunction, Fn>) fn.InitializeState(ctx);
}
template <class Fn>
void SnapshotFunctionState(Fn& fn, int64_t id) {
  if constexpr (std::is_base_of_v<CheckpointedFunction, Fn>) fn.SnapshotState(id);
}
template <class Fn>
void NotifyFunctionComplete(Fn& fn, int64_t id) {
  if constexpr (std::is_base_of_v<CheckpointListener, Fn>) fn.NotifyCheckpointComplete(id);
}
template <class Fn>
void NotifyFunctionAborted(Fn& fn, int64_t id) {
  if constexpr (std::is_base_of_v<CheckpointListener, Fn>) fn.NotifyCheckpointAborted(id);
}

template <class Out>
class WithOutput : public virtual StreamOperatorBase {
 public:
  void SetOutput(OutputBase* out) override { out_ = static_cast<Output<Out>*>(out); }

 protected:
  Output<Out>* out_ = nullptr;
};

template <class T, class S>
class SourceOperator final : public SourceOperatorBase, public WithOutput<T> {
 public:
  explicit SourceOperator(S source) : source_(std::move(source)) {}
  void SetOutput(OutputBase* out) override { WithOutput<T>::SetOutput(out); }
  OutputBase* Input() override { return nullptr; }
  void InitializeState() override { InitializeFunctionState(source_, runtime_context()); }
  void Open() override { source_.Open(runtime_context()); }
  void Close() override { source_.Close(); }
  SourceStatus EmitNext(int max_records, int64_t* wake_at_nanos) override {
    return source_.EmitNext(*this->out_, max_records, wake_at_nanos);
  }
  OperatorSnapshot SnapshotState(const SnapshotOptions& options) override {
    SnapshotFunctionState(source_, options.checkpoint_id);
    return StreamOperatorBase::SnapshotState(options);
  }
  void NotifyCheckpointComplete(int64_t id) override { NotifyFunctionComplete(source_, id); }
  void NotifyCheckpointAborted(int64_t id) override { NotifyFunctionAborted(source_, id); }

 private:
  S source_;
};

template <class In, class Out, class F>
class MapOperator final : public WithOutput<Out>, public Output<In> {
 public:
  explicit MapOperator(F f) : f_(std::move(f)) {}
  OutputBase* Input() override { return static_cast<Output<In>*>(this); }
  void Collect(const In& r) override { this->out_->Collect(f_(r)); }

 private:
  F f_;
};

template <class T, class F>
class FilterOperator final : public WithOutput<T>, public Output<T> {
 public:
  explicit FilterOperator(F f) : f_(std::move(f)) {}
  OutputBase* Input() override { return static_cast<Output<T>*>(this); }
  void Collect(const T& r) override {
    if (f_(r)) this->out_->Collect(r);
  }

 private:
  F f_;
};

template <class In, class Out, class F>
class FlatMapOperator final : public WithOutput<Out>, public Output<In> {
 public:
  explicit FlatMapOperator(F f) : f_(std::move(f)) {}
  OutputBase* Input() override { return static_cast<Output<In>*>(this); }
  void Collect(const In& r) override { f_(r, *this->out_); }

 private:
  F f_;
};

// Base of operators on a keyed stream: owns the keyed state of the subtask (on the
// heap, or in the byte-level backend the runtime gives it).
template <class K>
class KeyedOperatorBase : public virtual StreamOperatorBase {
 public:
  void Setup(const OperatorContext& ctx) override {
    StreamOperatorBase::Setup(ctx);
    if (ctx.keyed_backend) {
      backend_ = std::make_unique<KeyedStates<K>>(ctx.keyed_backend);
    } else {
      int max_p = ctx.task.max_parallelism;
      std::map<std::string, RestoredKeyedState> restored;
      // Taken over, not copied: the task keeps its RestoredState for the subtask's whole
      // life, so a copy would hold a second image of the restored state (as the task
      // itself moves the rows into a byte-level backend).
      if (ctx.restored && ctx.restored->restored) {
        restored = std::exchange(const_cast<RestoredState*>(ctx.restored)->keyed, {});
      }
      backend_ = std::make_unique<KeyedStates<K>>(
          max_p, KeyGroupRangeForOperator(max_p, ctx.task.parallelism, ctx.task.subtask_index), std::move(restored));
    }
    keyed_context_ = std::make_unique<KeyedRuntimeContext<K>>(ctx_, &operator_state_, backend_.get());
  }
  OperatorSnapshot SnapshotState(const SnapshotOptions& options) override {
    OperatorSnapshot snap = StreamOperatorBase::SnapshotState(options);
    snap.keyed = backend_->backend().Snapshot(options);
    return snap;
  }
  KeyedStates<K>& keyed_states() { return *backend_; }

 protected:
  std::unique_ptr<KeyedStates<K>> backend_;
  std::unique_ptr<KeyedRuntimeContext<K>> keyed_context_;
};

// Base of the keyed operators with timers (process functions, one or two inputs): keyed
// state and the timers of the keys.
// `Derived::FireTimer(ts, key, domain)` handles a timer that fired.
template <class K, class Out, class Derived>
class KeyedTimerOperatorBase : public KeyedOperatorBase<K>, public WithOutput<Out> {
 public:
  void OpenTimers() {
    timers_ = std::make_unique<TimerService<K>>(this->backend_.get());
    timers_->Restore();
    this->keyed_context_->SetTimerService(timers_.get());
  }
  void ProcessWatermark(int64_t watermark) override {
    timers_->AdvanceWatermark(watermark, [this](int64_t ts, const K& key) {
      SetCurrentRecordTimestamp(ts);
      static_cast<Derived*>(this)->FireTimer(ts, key, TimeDomain::kEventTime);
    });
    this->EmitWatermark(watermark);
  }
  int64_t NextProcessingTime() override { return timers_->NextProcessingTime(); }
  void AdvanceProcessingTime(int64_t now_ms) override {
    timers_->AdvanceProcessingTime(now_ms, [this](int64_t ts, const K& key) {
      SetCurrentRecordTimestamp(kNoTimestamp);
      static_cast<Derived*>(this)->FireTimer(ts, key, TimeDomain::kProcessingTime);
    });
  }

 protected:
  std::unique_ptr<TimerService<K>> timers_;
};

// The input of a keyed operator whose records carry their key (key selector KeyF):
// records one by one (Collect) or prepared by the reader (KeyedInput). Either way it
// makes the record's key current and hands the record to Derived::Process, with the key
// (the current key's value, where the record or the reader holds it).
template <class Derived, class K, class T, class KeyF>
class KeyedOperatorInput : public Output<T>, public KeyedInput<T> {
 public:
  explicit KeyedOperatorInput(KeyF key_fn) : key_fn_(std::move(key_fn)) {}
  void Collect(const T& r) override {
    const K& key = key_fn_(r);
    States().SetCurrentKey(key);
    static_cast<Derived*>(this)->Process(r, key);
  }
  void CollectHashed(const T& r, KeyHash hash) override {
    const K& key = key_fn_(r);
    States().SetCurrentKey(key, HashCodeOf<K>(key, hash), hash.key_group);
    static_cast<Derived*>(this)->Process(r, key);
  }
  bool StartBuffer() override { return keys_.Start(States()); }
  void Prepare(const T* records, const KeyHash* hashes, int first_slot, int count) override {
    keys_.Prepare(key_fn_, records, hashes, first_slot, count, States());
  }
  void CollectPrepared(const T& r, int slot) override {
    static_cast<Derived*>(this)->Process(r, keys_.SetCurrent(slot, States()));
  }
  void ReuseSlots() override { keys_.Reuse(States()); }

 private:
  KeyedStates<K>& States() { return static_cast<Derived*>(this)->keyed_states(); }

  KeyF key_fn_;
  PreparedKeys<K, T, KeyF> keys_;
};

template <class K, class In, class Out, class KeyF, class Fn>
class KeyedProcessOperator final
    : public KeyedTimerOperatorBase<K, Out, KeyedProcessOperator<K, In, Out, KeyF, Fn>>,
      public KeyedOperatorInput<KeyedProcessOperator<K, In, Out, KeyF, Fn>, K, In, KeyF> {
 public:
  KeyedProcessOperator(KeyF key_fn, Fn fn)
      : KeyedOperatorInput<KeyedProcessOperator, K, In, KeyF>(std::move(key_fn)), fn_(std::move(fn)) {}
  OutputBase* Input() override { return static_cast<Output<In>*>(this); }
  void InitializeState() override { InitializeFunctionState(fn_, *this->keyed_context_); }
  void Open() override {
    this->OpenTimers();
    fn_.Open(*this->keyed_context_);
  }
  void Close() override { fn_.Close(); }
  void FireTimer(int64_t ts, const K& key, TimeDomain domain) { fn_.OnTimer(ts, key, domain, *this->out_); }
  OperatorSnapshot SnapshotState(const SnapshotOptions& options) override {
    SnapshotFunctionState(fn_, options.checkpoint_id);
    return KeyedOperatorBase<K>::SnapshotState(options);
  }
  void NotifyCheckpointComplete(int64_t id) override { NotifyFunctionComplete(fn_, id); }
  void NotifyCheckpointAborted(int64_t id) override { NotifyFunctionAborted(fn_, id); }

 private:
  friend class KeyedOperatorInput<KeyedProcessOperator, K, In, KeyF>;
  // Processes `r` under its key, the current key.
  void Process(const In& r, const K& key) { fn_.ProcessElement(r, key, *this->out_); }

  Fn fn_;
};

// Rolling reduce per key (Flink's KeyedStream.reduce): emits the reduced value
// after every record. F is f(const T& previous, const T& record) -> T, or
// f(T& accumulator, const T& record) -> void, which folds the record in place.
template <class K, class T, class KeyF, class F>
class ReduceOperator final : public KeyedOperatorBase<K>,
                             public WithOutput<T>,
                             public KeyedOperatorInput<ReduceOperator<K, T, KeyF, F>, K, T, KeyF> {
 public:
  ReduceOperator(KeyF key_fn, F f) : KeyedOperatorInput<ReduceOperator, K, T, KeyF>(std::move(key_fn)), f_(std::move(f)) {}
  OutputBase* Input() override { return static_cast<Output<T>*>(this); }
  void Open() override {
    state_ = &this->keyed_context_->template GetState<T>("_reduce");
    heap_state_ = dynamic_cast<heap_internal::HeapValueState<K, T>*>(state_);
  }

 private:
  friend class KeyedOperatorInput<ReduceOperator, K, T, KeyF>;
  // Processes `r` under its key, the current key.
  void Process(const T& r, const K&) {
    if (heap_state_) {
      // On the heap: reduced in place, not copied out of the state and back.
      if (T* current = heap_state_->MutableValue()) {
        Fold(*current, r);
        this->out_->Collect(*current);
      } else {
        heap_state_->Update(r);
        this->out_->Collect(r);
      }
      return;
    }
    auto current = state_->Value();
    if (!current) {
      state_->Update(r);
      this->out_->Collect(r);
      return;
    }
    Fold(*current, r);
    state_->Update(*current);
    this->out_->Collect(*current);
  }
  void Fold(T& accumulator, const T& r) {
    if constexpr (std::is_void_v<std::invoke_result_t<F&, T&, const T&>>) {
      f_(accumulator, r);
    } else {
      accumulator = f_(std::as_const(accumulator), r);
    }
  }

  F f_;
  ValueState<T>* state_ = nullptr;
  heap_internal::HeapValueState<K, T>* heap_state_ = nullptr;  // state_, when on the heap
};

template <class T, class S>
class SinkOperator final : public virtual StreamOperatorBase, public Output<T> {
 public:
  explicit SinkOperator(S sink) : sink_(std::move(sink)) {}
  void SetOutput(OutputBase*) override {}
  OutputBase* Input() override { return static_cast<Output<T>*>(this); }
  void InitializeState() override { InitializeFunctionState(sink_, runtime_context()); }
  void Open() override { sink_.Open(runtime_context()); }
  void Collect(const T& r) override { sink_.Invoke(r); }
  void Finish() override { sink_.Finish(); }
  void Close() override { sink_.Close(); }
  void PrepareSnapshotPreBarrier(int64_t id) override { sink_.PrepareCommit(id); }
  OperatorSnapshot SnapshotState(const SnapshotOptions& options) override {
    SnapshotFunctionState(sink_, options.checkpoint_id);
    return StreamOperatorBase::SnapshotState(options);
  }
  void NotifyCheckpointComplete(int64_t id) override { NotifyFunctionComplete(sink_, id); }
  void NotifyCheckpointAborted(int64_t id) override { NotifyFunctionAborted(sink_, id); }

 private:
  S sink_;
};

}  // namespace weir::internal
