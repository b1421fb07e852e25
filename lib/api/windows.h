#pragma once
// Windows on keyed streams (Flink's): an assigner puts each record into time windows,
// a window function folds the window's records into an accumulator (reduce, aggregate),
// and the window fires when the watermark (event time) or the wall clock (processing
// time) passes its end. With allowed lateness a window's contents stay until the
// watermark passes end + lateness, and a late record within it fires the window again;
// a record later than that is dropped, as in Flink.
//
// Window contents (an accumulator per key and window) and the windows' timers live in
// the operator's keyed state, so checkpoints and savepoints hold them and a restore at
// another parallelism moves them with their keys.

#include <algorithm>
#include <compare>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "lib/api/event_time.h"
#include "lib/api/functions.h"
#include "lib/api/operators.h"
#include "lib/api/timers.h"

namespace weir {

// [start, end) in milliseconds.
struct TimeWindow {
  int64_t start = 0;
  int64_t end = 0;
  // The largest timestamp that belongs to the window.
  int64_t MaxTimestamp() const { return end - 1; }
  auto operator<=>(const TimeWindow&) const = default;
  WEIR_FIELDS(start, end)
};

namespace internal {
// Flink's TimeWindow.getWindowStartWithOffset.
inline int64_t WindowStart(int64_t timestamp, int64_t offset, int64_t size) {
  int64_t remainder = (timestamp - offset) % size;
  return remainder < 0 ? timestamp - (remainder + size) : timestamp - remainder;
}
inline void CheckWindowSizes(const char* what, int64_t size, int64_t slide, int64_t offset) {
  if (size <= 0 || slide <= 0) {
    throw std::invalid_argument(std::string(what) + ": the size and slide must be positive milliseconds");
  }
  if (offset <= -slide || offset >= slide) {
    throw std::invalid_argument(std::string(what) + ": the offset must lie between -slide and slide");
  }
}
}  // namespace internal

// Windows of `size` ms, one after the other (Flink's TumblingEventTimeWindows).
class TumblingEventTimeWindows {
 public:
  static TumblingEventTimeWindows Of(int64_t size_ms, int64_t offset_ms = 0) {
    internal::CheckWindowSizes("tumbling windows", size_ms, size_ms, offset_ms);
    return TumblingEventTimeWindows(size_ms, offset_ms);
  }
  static constexpr bool kEventTime = true;
  void AssignWindows(int64_t timestamp, std::vector<TimeWindow>* out) const {
    int64_t start = internal::WindowStart(timestamp, offset_, size_);
    out->push_back({start, start + size_});
  }

 private:
  TumblingEventTimeWindows(int64_t size, int64_t offset) : size_(size), offset_(offset) {}
  int64_t size_, offset_;
};

// The same on the wall clock of the operator (Flink's TumblingProcessingTimeWindows).
class TumblingProcessingTimeWindows {
 public:
  static TumblingProcessingTimeWindows Of(int64_t size_ms, int64_t offset_ms = 0) {
    internal::CheckWindowSizes("tumbling windows", size_ms, size_ms, offset_ms);
    return TumblingProcessingTimeWindows(size_ms, offset_ms);
  }
  static constexpr bool kEventTime = false;
  void AssignWindows(int64_t now_ms, std::vector<TimeWindow>* out) const {
    int64_t start = internal::WindowStart(now_ms, offset_, size_);
    out->push_back({start, start + size_});
  }

 private:
  TumblingProcessingTimeWindows(int64_t size, int64_t offset) : size_(size), offset_(offset) {}
  int64_t size_, offset_;
};

// Windows of `size` ms starting every `slide` ms: a record is in size/slide windows
// (Flink's SlidingEventTimeWindows).
class SlidingEventTimeWindows {
 public:
  static SlidingEventTimeWindows Of(int64_t size_ms, int64_t slide_ms, int64_t offset_ms = 0) {
    internal::CheckWindowSizes("sliding windows", size_ms, slide_ms, offset_ms);
    return SlidingEventTimeWindows(size_ms, slide_ms, offset_ms);
  }
  static constexpr bool kEventTime = true;
  void AssignWindows(int64_t timestamp, std::vector<TimeWindow>* out) const {
    int64_t last_start = internal::WindowStart(timestamp, offset_, slide_);
    for (int64_t start = last_start; start > timestamp - size_; start -= slide_) {
      out->push_back({start, start + size_});
    }
  }

 private:
  SlidingEventTimeWindows(int64_t size, int64_t slide, int64_t offset)
      : size_(size), slide_(slide), offset_(offset) {}
  int64_t size_, slide_, offset_;
};

namespace internal {

// What a window operator does with its accumulators: the first record of a window
// makes one (init), later ones fold into it (add), a firing emits it (emit).
template <class K, class T, class Acc, class Out>
struct WindowFunctions {
  std::function<Acc(const T&)> init;
  std::function<Acc(Acc, const T&)> add;
  std::function<void(const K&, const TimeWindow&, const Acc&, Collector<Out>&)> emit;
};

template <class K, class T, class Acc, class Out, class KeyF, class Assigner>
class WindowOperator final : public KeyedOperatorBase<K>, public WithOutput<Out>, public Output<T> {
 public:
  WindowOperator(KeyF key_fn, Assigner assigner, int64_t allowed_lateness_ms, WindowFunctions<K, T, Acc, Out> fns)
      : key_fn_(std::move(key_fn)), assigner_(std::move(assigner)), lateness_(allowed_lateness_ms),
        fns_(std::move(fns)) {}
  OutputBase* Input() override { return static_cast<Output<T>*>(this); }
  void Open() override {
    contents_ = &this->keyed_context_->template GetMapState<TimeWindow, Acc>("_window-contents");
    timers_ = std::make_unique<TimerService<K>>(this->backend_.get(), "_window-timers");
    timers_->Restore();
  }

  void Collect(const T& record) override {
    this->backend_->SetCurrentKey(key_fn_(record));
    int64_t ts;
    if constexpr (Assigner::kEventTime) {
      ts = CurrentRecordTimestamp();
      if (ts == kNoTimestamp) [[unlikely]] {
        throw std::runtime_error("a record without a timestamp reached the event-time windows of '" +
                                 this->ctx_.operator_name +
                                 "': assign timestamps with AssignTimestampsAndWatermarks(...) before KeyBy");
      }
    } else {
      ts = NowMillis();
    }
    windows_.clear();
    assigner_.AssignWindows(ts, &windows_);
    const int64_t watermark = timers_->CurrentWatermark();
    for (const TimeWindow& w : windows_) {
      if constexpr (Assigner::kEventTime) {
        if (CleanupTime(w) <= watermark) continue;  // later than the allowed lateness: dropped
      }
      auto acc = contents_->Get(w);
      const bool new_window = !acc;
      Acc next = acc ? fns_.add(std::move(*acc), record) : fns_.init(record);
      contents_->Put(w, next);
      if constexpr (Assigner::kEventTime) {
        if (w.MaxTimestamp() <= watermark) {
          Fire(w, next);  // a late record within the allowed lateness fires the window again
        } else if (new_window) {
          timers_->RegisterEventTimeTimer(w.MaxTimestamp());
        }
        // A window's timers are registered with its first record (its contents live
        // until its cleanup timer has fired).
        if (new_window && lateness_ > 0) timers_->RegisterEventTimeTimer(CleanupTime(w));
      } else if (new_window) {
        timers_->RegisterProcessingTimeTimer(w.MaxTimestamp());
      }
    }
  }

  void ProcessWatermark(int64_t watermark) override {
    timers_->AdvanceWatermark(watermark, [this](int64_t ts, const K&) { OnTimer(ts); });
    this->EmitWatermark(watermark);
  }
  int64_t NextProcessingTime() override { return timers_->NextProcessingTime(); }
  void AdvanceProcessingTime(int64_t now_ms) override {
    timers_->AdvanceProcessingTime(now_ms, [this](int64_t ts, const K&) { OnTimer(ts); });
  }

 private:
  int64_t CleanupTime(const TimeWindow& w) const {
    if (!Assigner::kEventTime) return w.MaxTimestamp();
    int64_t max = w.MaxTimestamp();
    return max > std::numeric_limits<int64_t>::max() - lateness_ ? std::numeric_limits<int64_t>::max()
                                                                 : max + lateness_;
  }
  // A timer of the current key at `ts`: fires the windows that end there and drops the
  // contents of those whose lateness ran out.
  void OnTimer(int64_t ts) {
    for (const auto& [w, acc] : contents_->Entries()) {
      if (w.MaxTimestamp() == ts) Fire(w, acc);
      if (CleanupTime(w) == ts) contents_->Remove(w);
    }
  }
  void Fire(const TimeWindow& w, const Acc& acc) {
    SetCurrentRecordTimestamp(w.MaxTimestamp());
    fns_.emit(this->backend_->current_key(), w, acc, *this->out_);
  }

  KeyF key_fn_;
  Assigner assigner_;
  int64_t lateness_;
  WindowFunctions<K, T, Acc, Out> fns_;
  MapState<TimeWindow, Acc>* contents_ = nullptr;
  std::unique_ptr<TimerService<K>> timers_;
  std::vector<TimeWindow> windows_;
};

// Takes each record's timestamp from a WatermarkStrategy and makes the watermarks
// (upstream watermarks are replaced, except the end of input's MAX_WATERMARK).
template <class T>
class TimestampsAndWatermarksOperator final : public WithOutput<T>, public Output<T> {
 public:
  explicit TimestampsAndWatermarksOperator(WatermarkStrategy<T> strategy) : strategy_(std::move(strategy)) {}
  OutputBase* Input() override { return static_cast<Output<T>*>(this); }
  void Open() override {
    last_active_ms_ = NowMillis();
    next_emit_ms_ = last_active_ms_ + strategy_.interval_ms();
  }
  void Collect(const T& record) override {
    int64_t ts = strategy_.Timestamp(record);
    SetCurrentRecordTimestamp(ts);
    if (ts > max_timestamp_) max_timestamp_ = ts;
    active_ = true;
    if (idle_) [[unlikely]] {
      idle_ = false;
      StreamOperatorBase::ProcessIdleness(false);
    }
    this->out_->Collect(record);
  }
  void ProcessWatermark(int64_t watermark) override {
    if (watermark == kMaxWatermark) Emit(kMaxWatermark);
  }
  void ProcessIdleness(bool) override {}
  int64_t NextProcessingTime() override { return next_emit_ms_; }
  void AdvanceProcessingTime(int64_t now_ms) override {
    next_emit_ms_ = now_ms + strategy_.interval_ms();
    if (active_) {
      last_active_ms_ = now_ms;
      active_ = false;
    }
    if (max_timestamp_ != kMinWatermark) {
      int64_t bound = strategy_.out_of_orderness_ms();
      int64_t wm = max_timestamp_ < kMinWatermark + bound + 1 ? kMinWatermark : max_timestamp_ - bound - 1;
      if (wm > emitted_) {
        Emit(wm);
        return;
      }
    }
    int64_t idle_after = strategy_.idle_timeout_ms();
    if (idle_after > 0 && !idle_ && now_ms - last_active_ms_ >= idle_after) {
      idle_ = true;
      StreamOperatorBase::ProcessIdleness(true);
    }
  }

 private:
  void Emit(int64_t wm) {
    emitted_ = wm;
    this->EmitWatermark(wm);
  }
  WatermarkStrategy<T> strategy_;
  int64_t max_timestamp_ = kMinWatermark;
  int64_t emitted_ = kMinWatermark;
  int64_t last_active_ms_ = 0;
  int64_t next_emit_ms_ = 0;
  bool active_ = false;
  bool idle_ = false;
};

}  // namespace internal
}  // namespace weir
