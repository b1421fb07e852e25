#pragma once
// SequenceSource: the numbers from..to (inclusive), optionally at a fixed rate.
//
// Split-based, as Flink's FLIP-27 sources: a split is an arithmetic progression
// (next, step, last); the splits are the source's state (split list state), so a
// restore at another parallelism redistributes them and every number is emitted
// exactly once. A fresh start gives subtask i of p the split (from+i, p, to). A
// subtask holding several splits merges them in ascending order, so one subtask
// holding every split emits from, from+1, ... as a parallelism-1 source does. A
// restored split keeps its range, clipped to the restoring job's `to`.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "lib/api/connectors/rate_limiter.h"
#include "lib/api/functions.h"

namespace weir {

class SequenceSource final : public Source<int64_t>, public CheckpointedFunction {
 public:
  struct Split {
    int64_t next = 0;  // the next number to emit
    int64_t step = 1;
    int64_t last = 0;  // the last number of the progression (may not be hit exactly)
    WEIR_FIELDS(next, step, last)
  };

  // `to` = INT64_MAX means unbounded. `rate` records/s over all subtasks; 0 = no limit.
  SequenceSource(int64_t from, int64_t to, double rate = 0) : from_(from), to_(to), rate_(rate) {}

  void InitializeState(RuntimeContext& ctx) override {
    const int p = ctx.NumberOfParallelSubtasks();
    limiter_ = RateLimiter(rate_ > 0 ? rate_ / p : 0);
    auto& store = ctx.GetOperatorStateStore();
    split_state_ = &store.GetListState<Split>("sequence-splits");
    if (ctx.IsRestored()) {
      // A restored split keeps its range, clipped to this job's end: a job restored
      // with a smaller `to` stops there.
      for (Split s : split_state_->Get()) {
        s.last = std::min(s.last, to_);
        if (s.next <= s.last) splits_.push_back(s);
      }
      RestoreOldPositions(ctx);
    } else {
      int64_t first = from_ + ctx.IndexOfThisSubtask();
      if (first <= to_) splits_.push_back({first, p, to_});
    }
  }
  void SnapshotState(int64_t) override { split_state_->Update(splits_); }

  SourceStatus EmitNext(Collector<int64_t>& out, int max_records, int64_t* wake_at_nanos) override {
    int64_t budget = limiter_.Allow(max_records, emitted_, wake_at_nanos);
    if (budget == 0) return SourceStatus::kNothingAvailable;
    int64_t i = 0;
    if (splits_.size() == 1) {
      // One split (the common case): its numbers a batch at a time.
      Split& s = splits_[0];
      int64_t batch[kBatch];
      while (i < budget) {
        const int64_t left = (s.last - s.next) / s.step + 1;  // s.next <= s.last
        const int n = static_cast<int>(std::min({budget - i, left, static_cast<int64_t>(kBatch)}));
        // In locals: `batch` escaped into an earlier CollectBatch, so the compiler must
        // assume a store into it may change `s`, and would load s.next and s.step again
        // for every number (a tenth of a source's time with 2 keys).
        const int64_t next = s.next;
        const int64_t step = s.step;
        for (int j = 0; j < n; ++j) batch[j] = next + j * step;  // <= s.last: no overflow
        out.CollectBatch(batch, n);
        emitted_ += n;
        i += n;
        if (n == left) {
          splits_.clear();
          break;
        }
        s.next = batch[n - 1] + s.step;
      }
    }
    for (; i < budget && !splits_.empty(); ++i) {
      size_t k = 0;
      for (size_t j = 1; j < splits_.size(); ++j) {
        if (splits_[j].next < splits_[k].next) k = j;
      }
      Split& s = splits_[k];
      out.Collect(s.next);
      ++emitted_;
      if (s.last - s.next < s.step) {
        splits_.erase(splits_.begin() + static_cast<long>(k));
      } else {
        s.next += s.step;
      }
    }
    return splits_.empty() ? SourceStatus::kEndOfInput : SourceStatus::kMoreAvailable;
  }

 private:
  static constexpr int kBatch = 64;

  // Snapshots of weir before split-based sources kept union list state
  // "sequence-positions": (old subtask, next number), the old parallelism being the
  // step. Union state gives every subtask all entries; each takes a share, as split
  // state would, and the old list is emptied.
  void RestoreOldPositions(RuntimeContext& ctx) {
    auto& old = ctx.GetOperatorStateStore().GetUnionListState<std::pair<int64_t, int64_t>>("sequence-positions");
    auto positions = old.Get();
    const auto old_parallelism = static_cast<int64_t>(positions.size());
    for (size_t i = 0; i < positions.size(); ++i) {
      if (static_cast<int>(i) % ctx.NumberOfParallelSubtasks() != ctx.IndexOfThisSubtask()) continue;
      if (positions[i].second <= to_) splits_.push_back({positions[i].second, old_parallelism, to_});
    }
    old.Clear();
  }

 private:
  int64_t from_, to_;
  double rate_;
  RateLimiter limiter_;
  int64_t emitted_ = 0;
  std::vector<Split> splits_;
  ListState<Split>* split_state_ = nullptr;
};

}  // namespace weir
