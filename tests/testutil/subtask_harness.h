#pragma once
// SubtaskHarness: one operator subtask set up the way the runtime sets it up, so that a
// test can drive a source or a sink by hand: its task facts (OperatorContext), its
// operator state store, restored from a snapshot or fresh, and the RuntimeContext its
// functions see. Set what the test needs in context() before the operator uses runtime().
// Neither copyable nor movable: the runtime context refers to the harness's members.
//
//   SubtaskHarness subtask(/*index=*/1, /*parallelism=*/2, &restored);
//   subtask.context().task.checkpointing_enabled = true;
//   sink.InitializeState(subtask.runtime());
//   ...
//   OperatorStateSnapshot lists = subtask.Snapshot();

#include "lib/api/operator.h"

namespace weir::testing {

class SubtaskHarness {
 public:
  // `restored` (copied; null: a fresh start) is the state this subtask restores.
  SubtaskHarness(int index, int parallelism, const RestoredState* restored = nullptr)
      : restored_(restored ? *restored : RestoredState{}),
        store_(restored ? &restored_.operator_lists : nullptr, index),
        runtime_(ctx_, &store_) {
    ctx_.task.subtask_index = index;
    ctx_.task.parallelism = parallelism;
    ctx_.restored = restored ? &restored_ : nullptr;
  }
  SubtaskHarness(const SubtaskHarness&) = delete;
  SubtaskHarness& operator=(const SubtaskHarness&) = delete;

  OperatorContext& context() { return ctx_; }
  RuntimeContext& runtime() { return runtime_; }
  OperatorStateStore& store() { return store_; }

  // The subtask's operator state lists, as its checkpoint records them.
  OperatorStateSnapshot Snapshot() const { return store_.Snapshot(); }

 private:
  OperatorContext ctx_;
  RestoredState restored_;
  OperatorStateStore store_;
  RuntimeContext runtime_;
};

}  // namespace weir::testing
