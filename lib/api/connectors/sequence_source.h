#pragma once
// SequenceSource: the numbers from..to (inclusive), optionally at a fixed rate.
// Replayable: its position (the next number of each subtask) is operator state,
// so a restore resumes exactly after the last number the checkpoint covered.
// Subtask i of p emits from+i, from+i+p, ... .

#include <cstdint>
#include <limits>

#include "lib/api/functions.h"
#include "lib/common/time_util.h"

namespace weir {

class SequenceSource final : public Source<int64_t>, public CheckpointedFunction {
 public:
  // `to` = INT64_MAX means unbounded. `rate` records/s over all subtasks; 0 = no limit.
  SequenceSource(int64_t from, int64_t to, double rate = 0) : from_(from), to_(to), rate_(rate) {}

  void InitializeState(RuntimeContext& ctx) override {
    index_ = ctx.IndexOfThisSubtask();
    stride_ = ctx.NumberOfParallelSubtasks();
    position_state_ = &ctx.GetOperatorStateStore().GetUnionListState<std::pair<int64_t, int64_t>>(
        "sequence-positions");
    next_ = from_ + index_;
    if (ctx.IsRestored()) {
      // Entries are (subtask index, next number) of the previous run. A restore at
      // the same parallelism resumes each subtask where it was.
      for (const auto& [idx, next] : position_state_->Get()) {
        if (idx == index_) next_ = next;
      }
    }
  }
  void SnapshotState(int64_t) override { position_state_->Update({{index_, next_}}); }

  void Open(RuntimeContext& ctx) override {
    start_nanos_ = MonotonicNanos();
    first_ = next_;
  }

  SourceStatus EmitNext(Collector<int64_t>& out, int max_records, int64_t* wake_at_nanos) override {
    int64_t budget = max_records;
    if (rate_ > 0) {
      double per_subtask = rate_ / stride_;
      int64_t now = MonotonicNanos();
      int64_t allowed = static_cast<int64_t>((now - start_nanos_) * 1e-9 * per_subtask) + 1;
      int64_t emitted = (next_ - first_) / stride_;
      if (emitted >= allowed) {
        *wake_at_nanos = start_nanos_ + static_cast<int64_t>((emitted) / per_subtask * 1e9);
        return SourceStatus::kNothingAvailable;
      }
      if (allowed - emitted < budget) budget = allowed - emitted;
    }
    for (int64_t i = 0; i < budget; ++i) {
      if (next_ > to_) return SourceStatus::kEndOfInput;
      out.Collect(next_);
      if (to_ - next_ < stride_) {
        next_ = to_ + 1;
      } else {
        next_ += stride_;
      }
    }
    return next_ > to_ ? SourceStatus::kEndOfInput : SourceStatus::kMoreAvailable;
  }

 private:
  int64_t from_, to_;
  double rate_;
  int index_ = 0, stride_ = 1;
  int64_t next_ = 0, first_ = 0;
  int64_t start_nanos_ = 0;
  ListState<std::pair<int64_t, int64_t>>* position_state_ = nullptr;
};

}  // namespace weir
