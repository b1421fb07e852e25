#pragma once
// The typed two-input operators behind connected streams (two_input.h). Input 0 is
// the operator itself (an Output<In1>), input 1 a member adapter (an Output<In2>):
// the runtime reads each input edge into its own input (InputAt). The process operators
// emit SideOutputRecords (their functions' side outputs, side_outputs.h).

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "lib/api/operators.h"
#include "lib/api/two_input.h"

namespace weir::internal {

// Input 1 of a two-input operator: hands each record to `f`.
template <class T, class F>
class SecondInput final : public Output<T> {
 public:
  explicit SecondInput(F f) : f_(std::move(f)) {}
  void Collect(const T& record) override { f_(record); }

 private:
  F f_;
};

// A CoMapFunction (kFlat false: Map1 / Map2) or CoFlatMapFunction (kFlat true:
// FlatMap1 / FlatMap2).
template <class In1, class In2, class Out, class Fn, bool kFlat>
class CoFunctionOperator final : public WithOutput<Out>, public Output<In1> {
 public:
  explicit CoFunctionOperator(Fn fn) : fn_(std::move(fn)) {}
  OutputBase* Input() override { return static_cast<Output<In1>*>(this); }
  OutputBase* InputAt(int index) override { return index == 0 ? Input() : &second_; }
  void InitializeState() override { InitializeFunctionState(fn_, this->runtime_context()); }
  void Open() override { fn_.Open(this->runtime_context()); }
  void Close() override { fn_.Close(); }
  void Collect(const In1& r) override {
    if constexpr (kFlat) {
      fn_.FlatMap1(r, *this->out_);
    } else {
      this->out_->Collect(fn_.Map1(r));
    }
  }
  OperatorSnapshot SnapshotState(const SnapshotOptions& options) override {
    SnapshotFunctionState(fn_, options.checkpoint_id);
    return StreamOperatorBase::SnapshotState(options);
  }
  void NotifyCheckpointComplete(int64_t id) override { NotifyFunctionComplete(fn_, id); }
  void NotifyCheckpointAborted(int64_t id) override { NotifyFunctionAborted(fn_, id); }

 private:
  Fn fn_;
  SecondInput<In2, std::function<void(const In2&)>> second_{[this](const In2& r) {
    if constexpr (kFlat) {
      fn_.FlatMap2(r, *this->out_);
    } else {
      this->out_->Collect(fn_.Map2(r));
    }
  }};
};

// A CoProcessFunction; emits SideOutputRecord<Out>s (side_outputs.h), as the other
// process operators below.
template <class In1, class In2, class Out, class Fn>
class CoProcessOperator final : public WithOutput<SideOutputRecord<Out>>, public Output<In1> {
 public:
  explicit CoProcessOperator(Fn fn) : fn_(std::move(fn)) {}
  OutputBase* Input() override { return static_cast<Output<In1>*>(this); }
  OutputBase* InputAt(int index) override { return index == 0 ? Input() : &second_; }
  void SetOutput(OutputBase* out) override {
    WithOutput<SideOutputRecord<Out>>::SetOutput(out);
    emitter_.SetOutput(this->out_);
    ctx_.SetSideOutputs(&emitter_);
  }
  void InitializeState() override { InitializeFunctionState(fn_, this->runtime_context()); }
  void Open() override { fn_.Open(this->runtime_context()); }
  void Close() override { fn_.Close(); }
  void Collect(const In1& r) override { fn_.ProcessElement1(r, ctx_, emitter_); }
  OperatorSnapshot SnapshotState(const SnapshotOptions& options) override {
    SnapshotFunctionState(fn_, options.checkpoint_id);
    return StreamOperatorBase::SnapshotState(options);
  }
  void NotifyCheckpointComplete(int64_t id) override { NotifyFunctionComplete(fn_, id); }
  void NotifyCheckpointAborted(int64_t id) override { NotifyFunctionAborted(fn_, id); }

 private:
  Fn fn_;
  SideOutputEmitter<Out> emitter_;
  SideOutputContext ctx_;
  SecondInput<In2, std::function<void(const In2&)>> second_{
      [this](const In2& r) { fn_.ProcessElement2(r, ctx_, emitter_); }};
};

template <class K, class In1, class In2, class Out, class KeyF1, class KeyF2, class Fn>
class KeyedCoProcessOperator final
    : public KeyedTimerOperatorBase<K, SideOutputRecord<Out>, KeyedCoProcessOperator<K, In1, In2, Out, KeyF1, KeyF2, Fn>>,
      public Output<In1> {
 public:
  KeyedCoProcessOperator(KeyF1 key1, KeyF2 key2, Fn fn)
      : key1_(std::move(key1)), key2_(std::move(key2)), fn_(std::move(fn)) {}
  OutputBase* Input() override { return static_cast<Output<In1>*>(this); }
  OutputBase* InputAt(int index) override { return index == 0 ? Input() : &second_; }
  void SetOutput(OutputBase* out) override {
    WithOutput<SideOutputRecord<Out>>::SetOutput(out);
    emitter_.SetOutput(this->out_);
  }
  void InitializeState() override {
    this->keyed_context_->SetSideOutputs(&emitter_);
    InitializeFunctionState(fn_, *this->keyed_context_);
  }
  void Open() override {
    this->OpenTimers();
    fn_.Open(*this->keyed_context_);
  }
  void Close() override { fn_.Close(); }
  void Collect(const In1& r) override {
    this->backend_->SetCurrentKey(key1_(r));
    fn_.ProcessElement1(r, this->backend_->current_key(), emitter_);
  }
  void FireTimer(int64_t ts, const K& key, TimeDomain domain) { fn_.OnTimer(ts, key, domain, emitter_); }
  OperatorSnapshot SnapshotState(const SnapshotOptions& options) override {
    SnapshotFunctionState(fn_, options.checkpoint_id);
    return KeyedOperatorBase<K>::SnapshotState(options);
  }
  void NotifyCheckpointComplete(int64_t id) override { NotifyFunctionComplete(fn_, id); }
  void NotifyCheckpointAborted(int64_t id) override { NotifyFunctionAborted(fn_, id); }

 private:
  KeyF1 key1_;
  KeyF2 key2_;
  Fn fn_;
  SideOutputEmitter<Out> emitter_;
  SecondInput<In2, std::function<void(const In2&)>> second_{[this](const In2& r) {
    this->backend_->SetCurrentKey(key2_(r));
    fn_.ProcessElement2(r, this->backend_->current_key(), emitter_);
  }};
};

// Shared by the broadcast process operators: the broadcast states, written into their
// operator state lists at each snapshot.
class BroadcastStates {
 public:
  void Init(OperatorStateStore* store, const std::set<std::string>& declared, internal::SideOutputSink* side) {
    store_ = std::make_unique<BroadcastStateStore>(store, declared);
    read_only_ = std::make_unique<ReadOnlyBroadcastContext>(store_.get());
    writable_ = std::make_unique<BroadcastContext>(store_.get());
    read_only_->SetSideOutputs(side);
    writable_->SetSideOutputs(side);
  }
  void Store() { store_->Store(); }
  BroadcastStateStore* store() { return store_.get(); }
  const ReadOnlyBroadcastContext& read_only() const { return *read_only_; }
  const BroadcastContext& writable() const { return *writable_; }

 private:
  std::unique_ptr<BroadcastStateStore> store_;
  std::unique_ptr<ReadOnlyBroadcastContext> read_only_;
  std::unique_ptr<BroadcastContext> writable_;
};

template <class In1, class In2, class Out, class Fn>
class BroadcastProcessOperator final : public WithOutput<SideOutputRecord<Out>>, public Output<In1> {
 public:
  BroadcastProcessOperator(Fn fn, std::set<std::string> declared) : fn_(std::move(fn)), declared_(std::move(declared)) {}
  OutputBase* Input() override { return static_cast<Output<In1>*>(this); }
  OutputBase* InputAt(int index) override { return index == 0 ? Input() : &second_; }
  void SetOutput(OutputBase* out) override {
    WithOutput<SideOutputRecord<Out>>::SetOutput(out);
    emitter_.SetOutput(this->out_);
  }
  void InitializeState() override {
    states_.Init(&this->operator_state_, declared_, &emitter_);
    InitializeFunctionState(fn_, this->runtime_context());
  }
  void Open() override { fn_.Open(this->runtime_context()); }
  void Close() override { fn_.Close(); }
  void Collect(const In1& r) override { fn_.ProcessElement(r, states_.read_only(), emitter_); }
  OperatorSnapshot SnapshotState(const SnapshotOptions& options) override {
    SnapshotFunctionState(fn_, options.checkpoint_id);
    states_.Store();
    return StreamOperatorBase::SnapshotState(options);
  }
  void NotifyCheckpointComplete(int64_t id) override { NotifyFunctionComplete(fn_, id); }
  void NotifyCheckpointAborted(int64_t id) override { NotifyFunctionAborted(fn_, id); }

 private:
  Fn fn_;
  std::set<std::string> declared_;
  SideOutputEmitter<Out> emitter_;
  BroadcastStates states_;
  SecondInput<In2, std::function<void(const In2&)>> second_{
      [this](const In2& r) { fn_.ProcessBroadcastElement(r, states_.writable(), emitter_); }};
};

template <class K, class In1, class In2, class Out, class KeyF, class Fn>
class KeyedBroadcastProcessOperator final
    : public KeyedTimerOperatorBase<K, SideOutputRecord<Out>, KeyedBroadcastProcessOperator<K, In1, In2, Out, KeyF, Fn>>,
      public Output<In1> {
 public:
  KeyedBroadcastProcessOperator(KeyF key_fn, Fn fn, std::set<std::string> declared)
      : key_fn_(std::move(key_fn)), fn_(std::move(fn)), declared_(std::move(declared)) {}
  OutputBase* Input() override { return static_cast<Output<In1>*>(this); }
  OutputBase* InputAt(int index) override { return index == 0 ? Input() : &second_; }
  void SetOutput(OutputBase* out) override {
    WithOutput<SideOutputRecord<Out>>::SetOutput(out);
    emitter_.SetOutput(this->out_);
  }
  void InitializeState() override {
    states_.Init(&this->operator_state_, declared_, &emitter_);
    keyed_writable_ = std::make_unique<KeyedBroadcastContext<K>>(states_.store(), this->backend_.get());
    keyed_writable_->SetSideOutputs(&emitter_);
    this->keyed_context_->SetSideOutputs(&emitter_);
    InitializeFunctionState(fn_, *this->keyed_context_);
  }
  void Open() override {
    this->OpenTimers();
    fn_.Open(*this->keyed_context_);
  }
  void Close() override { fn_.Close(); }
  void Collect(const In1& r) override {
    this->backend_->SetCurrentKey(key_fn_(r));
    fn_.ProcessElement(r, this->backend_->current_key(), states_.read_only(), emitter_);
  }
  void FireTimer(int64_t ts, const K& key, TimeDomain domain) {
    fn_.OnTimer(ts, key, domain, states_.read_only(), emitter_);
  }
  OperatorSnapshot SnapshotState(const SnapshotOptions& options) override {
    SnapshotFunctionState(fn_, options.checkpoint_id);
    states_.Store();
    return KeyedOperatorBase<K>::SnapshotState(options);
  }
  void NotifyCheckpointComplete(int64_t id) override { NotifyFunctionComplete(fn_, id); }
  void NotifyCheckpointAborted(int64_t id) override { NotifyFunctionAborted(fn_, id); }

 private:
  KeyF key_fn_;
  Fn fn_;
  std::set<std::string> declared_;
  SideOutputEmitter<Out> emitter_;
  BroadcastStates states_;
  std::unique_ptr<KeyedBroadcastContext<K>> keyed_writable_;
  // Through the base class: a function may override either ProcessBroadcastElement.
  SecondInput<In2, std::function<void(const In2&)>> second_{[this](const In2& r) {
    static_cast<KeyedBroadcastProcessFunction<K, In1, In2, Out>&>(fn_).ProcessBroadcastElement(r, *keyed_writable_,
                                                                                               emitter_);
  }};
};

}  // namespace weir::internal
