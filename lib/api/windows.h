#pragma once
// Windows on keyed streams (Flink's): an assigner puts each record into time windows,
// a window function folds the window's records into an accumulator (reduce, aggregate)
// or keeps them all (process), and the window fires when the watermark (event time) or
// the wall clock (processing time) passes its end. Session windows merge: a record opens
// a window [t, t + gap), and windows of a key that overlap or touch become one. With
// allowed lateness a window's contents stay until the watermark passes end + lateness,
// and a late record within it fires the window again; a record later than that is
// dropped, or sent to the late-data side output, as in Flink.
//
// Window contents (an accumulator, or the records, per key and window) and the windows'
// timers live in the operator's keyed state, so checkpoints and savepoints hold them and
// a restore at another parallelism moves them with their keys.

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
#include "lib/api/output.h"
#include "lib/api/side_outputs.h"
#include "lib/api/timers.h"
#include "lib/common/time_util.h"

namespace weir {

// [start, end) in milliseconds.
struct TimeWindow {
  int64_t start = 0;
  int64_t end = 0;
  // The largest timestamp that belongs to the window.
  int64_t MaxTimestamp() const { return end - 1; }
  // Overlapping or touching (Flink's TimeWindow.intersects): session windows merge then.
  bool Intersects(const TimeWindow& other) const { return start <= other.end && end >= other.start; }
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

// Windows of `size` ms, one after the other, on event time or on the wall clock of the
// operator (Flink's TumblingEventTimeWindows and TumblingProcessingTimeWindows).
template <bool kIsEventTime>
class TumblingWindows {
 public:
  static TumblingWindows Of(int64_t size_ms, int64_t offset_ms = 0) {
    internal::CheckWindowSizes("tumbling windows", size_ms, size_ms, offset_ms);
    return TumblingWindows(size_ms, offset_ms);
  }
  static constexpr bool kEventTime = kIsEventTime;
  static constexpr bool kMerging = false;
  // Every window is size() ms long: a window is known by its end.
  static constexpr bool kFixedSize = true;
  int64_t size() const { return size_; }
  // `time` is the record's timestamp (event time) or the operator's clock (processing time).
  void AssignWindows(int64_t time, std::vector<TimeWindow>* out) const {
    int64_t start = internal::WindowStart(time, offset_, size_);
    out->push_back({start, start + size_});
  }

 private:
  TumblingWindows(int64_t size, int64_t offset) : size_(size), offset_(offset) {}
  int64_t size_, offset_;
};
using TumblingEventTimeWindows = TumblingWindows<true>;
using TumblingProcessingTimeWindows = TumblingWindows<false>;

// Windows of `size` ms starting every `slide` ms: a record is in size/slide windows, on
// event time or on the wall clock of the operator (Flink's SlidingEventTimeWindows and
// SlidingProcessingTimeWindows).
template <bool kIsEventTime>
class SlidingWindows {
 public:
  static SlidingWindows Of(int64_t size_ms, int64_t slide_ms, int64_t offset_ms = 0) {
    internal::CheckWindowSizes("sliding windows", size_ms, slide_ms, offset_ms);
    return SlidingWindows(size_ms, slide_ms, offset_ms);
  }
  static constexpr bool kEventTime = kIsEventTime;
  static constexpr bool kMerging = false;
  static constexpr bool kFixedSize = true;  // see TumblingWindows
  int64_t size() const { return size_; }
  // A new window starts every slide() ms: a record's windows all hold the slide-long pane
  // [s, s + slide) that holds the record (s: the latest of their starts).
  int64_t slide() const { return slide_; }
  void AssignWindows(int64_t time, std::vector<TimeWindow>* out) const {
    int64_t last_start = internal::WindowStart(time, offset_, slide_);
    for (int64_t start = last_start; start > time - size_; start -= slide_) {
      out->push_back({start, start + size_});
    }
  }

 private:
  SlidingWindows(int64_t size, int64_t slide, int64_t offset) : size_(size), slide_(slide), offset_(offset) {}
  int64_t size_, slide_, offset_;
};
using SlidingEventTimeWindows = SlidingWindows<true>;
using SlidingProcessingTimeWindows = SlidingWindows<false>;

// A window per record, [t, t + gap), merged with the key's windows it overlaps or
// touches: a session ends after `gap` ms without records of its key (Flink's
// EventTimeSessionWindows and ProcessingTimeSessionWindows).
template <bool kIsEventTime>
class SessionWindows {
 public:
  static SessionWindows WithGap(int64_t gap_ms) {
    if (gap_ms <= 0) throw std::invalid_argument("session windows: the gap must be positive milliseconds");
    return SessionWindows(gap_ms);
  }
  static constexpr bool kEventTime = kIsEventTime;
  static constexpr bool kMerging = true;
  static constexpr bool kFixedSize = false;
  void AssignWindows(int64_t timestamp, std::vector<TimeWindow>* out) const {
    int64_t end = timestamp > std::numeric_limits<int64_t>::max() - gap_ ? std::numeric_limits<int64_t>::max()
                                                                        : timestamp + gap_;
    out->push_back({timestamp, end});
  }
  int64_t gap() const { return gap_; }

 private:
  explicit SessionWindows(int64_t gap) : gap_(gap) {}
  int64_t gap_;
};
using EventTimeSessionWindows = SessionWindows<true>;
using ProcessingTimeSessionWindows = SessionWindows<false>;

// What a process window function learns about the window that fires (Flink's
// ProcessWindowFunction.Context).
class WindowContext {
 public:
  WindowContext(const TimeWindow& window, int64_t watermark) : window_(window), watermark_(watermark) {}
  const TimeWindow& window() const { return window_; }
  // The operator's input watermark (kMinWatermark before the first).
  int64_t CurrentWatermark() const { return watermark_; }
  int64_t CurrentProcessingTime() const { return NowMillis(); }

 private:
  TimeWindow window_;
  int64_t watermark_;
};

// Flink's ProcessWindowFunction: called when a window fires, with the window and all its
// records (WindowedStream::Process), or with the one result of a reduce or aggregate
// (WindowedStream::Reduce(f, fn), Aggregate(agg, fn)). Copied once per subtask.
template <class K, class In, class Out>
class ProcessWindowFunction {
 public:
  using Key = K;
  using InputType = In;
  using OutputType = Out;
  using Context = WindowContext;
  virtual ~ProcessWindowFunction() = default;
  virtual void Process(const K& key, const Context& ctx, const std::vector<In>& elements, Collector<Out>& out) = 0;
};

namespace internal {

// The contents of a key's windows as one accumulator each (reduce, aggregate): the first
// record of a window makes it (init), later ones fold into it (add), merging windows
// combine theirs (merge), a firing hands it to emit.
template <class K, class T, class Acc, class Result>
struct WindowFunctions {
  std::function<Acc(const T&)> init;
  std::function<Acc(Acc, const T&)> add;
  std::function<Acc(Acc, const Acc&)> merge;  // session windows; sliding ones when panes_merge
  std::function<void(const K&, const WindowContext&, const Acc&, Collector<Result>&)> emit;
  // The user gave `merge` (an AggregateFunction's merge), so merging accumulators in
  // another order than the records came is theirs to allow: sliding windows then keep one
  // accumulator per pane. A reduce function folds in the records' order only.
  bool panes_merge = false;
};

template <class K, class T, class Acc, class Result>
class AccumulatorContents {
 public:
  explicit AccumulatorContents(WindowFunctions<K, T, Acc, Result> fns) : fns_(std::move(fns)) {}
  void Open(KeyedStates<K>* states) {
    accumulators_ = &states->template GetMapState<TimeWindow, Acc>("_window-contents");
    heap_accumulators_ = dynamic_cast<heap_internal::HeapMapState<K, TimeWindow, Acc>*>(accumulators_);
  }
  // The windows of the current key that have contents.
  std::vector<TimeWindow> Windows() {
    std::vector<TimeWindow> out;
    for (auto& [w, unused] : accumulators_->Entries()) out.push_back(w);
    return out;
  }
  // Whether sliding windows of this slide may keep their contents by pane: one
  // accumulator per `slide` ms of the key's time, which each record is folded into once
  // (not once per window: size/slide times), merged when a window fires. Entries of the
  // whole window, as a restored snapshot of an earlier weir may hold, are merged too.
  // Without merge, a window that fires refuses the panes a restored snapshot may hold.
  bool UsePanes(int64_t slide) {
    pane_ms_ = slide;
    return fns_.panes_merge;
  }
  // Adds the record to `w` (a window, or a pane); true when that made it.
  bool Add(const TimeWindow& w, const T& record) {
    if (heap_accumulators_) {
      // On the heap: folded in place, one lookup, no copy out of the state and back.
      auto& windows = heap_accumulators_->MutableMap();
      auto it = windows.lower_bound(w);
      if (it != windows.end() && it->first == w) {
        it->second = fns_.add(std::move(it->second), record);
        return false;
      }
      windows.emplace_hint(it, w, fns_.init(record));
      return true;
    }
    auto acc = accumulators_->Get(w);
    accumulators_->Put(w, acc ? fns_.add(std::move(*acc), record) : fns_.init(record));
    return !acc;
  }
  // Moves the contents of `from` (windows in start order) into the new window `into`.
  void Merge(const std::vector<TimeWindow>& from, const TimeWindow& into) {
    std::optional<Acc> merged;
    for (const TimeWindow& w : from) {
      auto acc = accumulators_->Get(w);
      if (!acc) continue;
      merged = merged ? fns_.merge(std::move(*merged), *acc) : std::move(*acc);
      accumulators_->Remove(w);
    }
    if (merged) accumulators_->Put(into, *merged);
  }
  void Fire(const K& key, const WindowContext& ctx, Collector<Result>& out) {
    const TimeWindow& w = ctx.window();
    std::optional<Acc> acc = accumulators_->Get(w);
    if (pane_ms_ > 0) {
      // The window's panes, in time order (a window's length is a multiple of the slide).
      for (int64_t start = w.start; start < w.end; start += pane_ms_) {
        if (auto pane = accumulators_->Get({start, start + pane_ms_})) {
          if (!fns_.panes_merge) [[unlikely]] ThrowPanesWithoutMerge(w);
          acc = acc ? fns_.merge(std::move(*acc), *pane) : std::move(*pane);
        }
      }
    }
    if (acc) fns_.emit(key, ctx, *acc, out);
  }
  // Drops the contents of `w`, whose lateness ran out: with panes, also the pane that
  // starts with it (`w` is the last window it belongs to).
  void Remove(const TimeWindow& w) {
    accumulators_->Remove(w);
    if (pane_ms_ > 0) accumulators_->Remove({w.start, w.start + pane_ms_});
  }

 private:
  WindowFunctions<K, T, Acc, Result> fns_;
  [[noreturn]] static void ThrowPanesWithoutMerge(const TimeWindow& w) {
    throw std::runtime_error(
        "the window state of [" + std::to_string(w.start) + ", " + std::to_string(w.end) +
        ") is kept by slide, as a sliding window's AggregateFunction with a merge function keeps it: give the "
        "AggregateFunction its merge function again to restore this snapshot (a reduce cannot read it)");
  }

  int64_t pane_ms_ = 0;  // > 0: a sliding window's slide (UsePanes); panes when fns_.panes_merge
  MapState<TimeWindow, Acc>* accumulators_ = nullptr;
  heap_internal::HeapMapState<K, TimeWindow, Acc>* heap_accumulators_ = nullptr;  // accumulators_, when on the heap
};

// The contents of a key's windows as all their records (process window functions): a
// record count per window, and each record under (window, its position).
template <class K, class T, class Result>
class ElementContents {
 public:
  using Emit = std::function<void(const K&, const WindowContext&, const std::vector<T>&, Collector<Result>&)>;
  explicit ElementContents(Emit emit) : emit_(std::move(emit)) {}
  void Open(KeyedStates<K>* states) {
    counts_ = &states->template GetMapState<TimeWindow, int64_t>("_window-counts");
    elements_ = &states->template GetMapState<std::pair<TimeWindow, int64_t>, T>("_window-elements");
  }
  std::vector<TimeWindow> Windows() {
    std::vector<TimeWindow> out;
    for (auto& [w, unused] : counts_->Entries()) out.push_back(w);
    return out;
  }
  // All of a window's records are kept, each once per window.
  bool UsePanes(int64_t) { return false; }
  bool Add(const TimeWindow& w, const T& record) {
    auto count = counts_->Get(w);
    int64_t n = count.value_or(0);
    elements_->Put({w, n}, record);
    counts_->Put(w, n + 1);
    return !count;
  }
  void Merge(const std::vector<TimeWindow>& from, const TimeWindow& into) {
    std::vector<T> moved;
    for (const TimeWindow& w : from) {
      for (T& e : Take(w)) moved.push_back(std::move(e));
    }
    for (size_t i = 0; i < moved.size(); ++i) elements_->Put({into, static_cast<int64_t>(i)}, moved[i]);
    if (!moved.empty()) counts_->Put(into, static_cast<int64_t>(moved.size()));
  }
  void Fire(const K& key, const WindowContext& ctx, Collector<Result>& out) {
    if (!counts_->Contains(ctx.window())) return;
    emit_(key, ctx, Elements(ctx.window()), out);
  }
  void Remove(const TimeWindow& w) { Take(w); }

 private:
  // The records of `w` in the order they were added: at positions 0 to its count - 1
  // (looked up, not found by a walk of every record of the key's windows).
  std::vector<T> Elements(const TimeWindow& w) {
    const int64_t count = counts_->Get(w).value_or(0);
    std::vector<T> out;
    out.reserve(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
      auto e = elements_->Get({w, i});
      if (!e) throw std::logic_error("window state: record " + std::to_string(i) + " of a window of " +
                                     std::to_string(count) + " is missing");
      out.push_back(std::move(*e));
    }
    return out;
  }
  // Removes the window's records and returns them.
  std::vector<T> Take(const TimeWindow& w) {
    std::vector<T> out = Elements(w);
    for (size_t i = 0; i < out.size(); ++i) elements_->Remove({w, static_cast<int64_t>(i)});
    counts_->Remove(w);
    return out;
  }

  Emit emit_;
  MapState<TimeWindow, int64_t>* counts_ = nullptr;
  MapState<std::pair<TimeWindow, int64_t>, T>* elements_ = nullptr;
};

// One window operator for every assigner and window function. `Contents` keeps the
// windows' contents (AccumulatorContents, ElementContents); with kLateSideOutput the
// operator emits SideOutputRecord<Result>s, the late records as the side output
// `late_tag` (side_outputs.h), else Result.
template <class K, class T, class Result, class KeyF, class Assigner, class Contents, bool kLateSideOutput = false>
class WindowOperator final
    : public KeyedOperatorBase<K>,
      public WithOutput<std::conditional_t<kLateSideOutput, SideOutputRecord<Result>, Result>>,
      public KeyedOperatorInput<WindowOperator<K, T, Result, KeyF, Assigner, Contents, kLateSideOutput>, K, T, KeyF> {
  using Out = std::conditional_t<kLateSideOutput, SideOutputRecord<Result>, Result>;
  using Input_ = KeyedOperatorInput<WindowOperator, K, T, KeyF>;

 public:
  WindowOperator(KeyF key_fn, Assigner assigner, int64_t allowed_lateness_ms, Contents contents,
                 OutputTag<T> late_tag = OutputTag<T>("late data"))
      : Input_(std::move(key_fn)), assigner_(std::move(assigner)), lateness_(allowed_lateness_ms),
        contents_(std::move(contents)), late_tag_(std::move(late_tag)) {
    if constexpr (requires { assigner_.slide(); }) {
      const int64_t size = assigner_.size(), slide = assigner_.slide();
      if (size > slide && size % slide == 0 && contents_.UsePanes(slide)) pane_ms_ = slide;
    }
  }
  OutputBase* Input() override { return static_cast<Output<T>*>(this); }
  void SetOutput(OutputBase* out) override {
    WithOutput<Out>::SetOutput(out);
    if constexpr (kLateSideOutput) {
      emitter_.SetOutput(this->out_);
      results_ = &emitter_;
    } else {
      results_ = this->out_;
    }
  }
  void Open() override {
    contents_.Open(this->backend_.get());
    timers_ = std::make_unique<TimerService<K>>(this->backend_.get(), "_window-timers");
    timers_->Restore();
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
  friend Input_;
  // Processes `record` under its key, the current key (KeyedOperatorInput made it so).
  void Process(const T& record, const K&) {
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
    if (pane_ms_ > 0) {
      CollectInPane(record, ts);
      return;
    }
    bool skipped = true;
    for (const TimeWindow& assigned : windows_) {
      TimeWindow w = assigned;
      std::vector<TimeWindow> merged;
      if constexpr (Assigner::kMerging) w = MergeWith(assigned, &merged);
      if (IsLate(w)) continue;  // later than the allowed lateness
      skipped = false;
      bool new_window;
      if (merged.empty()) {
        new_window = contents_.Add(w, record);
      } else {
        contents_.Merge(merged, w);
        contents_.Add(w, record);
        new_window = true;
      }
      if (new_window) RegisterTimers(w);
      if constexpr (Assigner::kEventTime) {
        // A late record within the allowed lateness fires the window again.
        if (w.MaxTimestamp() <= timers_->CurrentWatermark()) Fire(w);
      }
      if (!merged.empty()) DeleteTimersOf(merged);
    }
    if (skipped && Assigner::kEventTime && CleanupTime(ts) <= timers_->CurrentWatermark()) {
      if constexpr (kLateSideOutput) emitter_.EmitSide(late_tag_, record);
    }
  }

  // Sliding windows kept by pane (see AccumulatorContents::UsePanes): the record is folded
  // into the pane its windows (windows_, the latest start first) share; each window that
  // pane is in gets its timers when the pane is made, and those that fired already fire
  // again (a late record within the allowed lateness). The pane goes with the last of its
  // windows, the one that starts with it.
  void CollectInPane(const T& record, int64_t ts) {
    const TimeWindow& last = windows_.front();
    if (IsLate(last)) {  // and so are the record's other windows, which end before it
      if constexpr (kLateSideOutput && Assigner::kEventTime) {
        if (CleanupTime(ts) <= timers_->CurrentWatermark()) emitter_.EmitSide(late_tag_, record);
      }
      return;
    }
    const TimeWindow pane{last.start, last.start + pane_ms_};
    if (contents_.Add(pane, record)) {
      for (const TimeWindow& w : windows_) {
        if (!IsLate(w)) RegisterTimers(w);
      }
    }
    if constexpr (Assigner::kEventTime) {
      // Only a window the watermark passed fires again; the earliest ends first (last).
      if (windows_.back().MaxTimestamp() > timers_->CurrentWatermark()) return;
      for (const TimeWindow& w : windows_) {
        if (!IsLate(w) && w.MaxTimestamp() <= timers_->CurrentWatermark()) Fire(w);
      }
    }
  }
  // The time at which a window's contents go: its end, plus the allowed lateness in event
  // time (Flink's cleanupTime).
  int64_t CleanupTime(const TimeWindow& w) const { return CleanupTime(w.MaxTimestamp()); }
  int64_t CleanupTime(int64_t max_timestamp) const {
    if (!Assigner::kEventTime) return max_timestamp;
    return max_timestamp > std::numeric_limits<int64_t>::max() - lateness_ ? std::numeric_limits<int64_t>::max()
                                                                         : max_timestamp + lateness_;
  }
  bool IsLate(const TimeWindow& w) const {
    return Assigner::kEventTime && CleanupTime(w) <= timers_->CurrentWatermark();
  }
  // The window `w` becomes when merged with the current key's windows it intersects
  // (those go into `merged`, in start order; empty when `w` is new or lies inside one).
  TimeWindow MergeWith(const TimeWindow& w, std::vector<TimeWindow>* merged) {
    TimeWindow cover = w;
    for (const TimeWindow& existing : contents_.Windows()) {
      if (!existing.Intersects(w)) continue;
      merged->push_back(existing);
      cover.start = std::min(cover.start, existing.start);
      cover.end = std::max(cover.end, existing.end);
    }
    std::sort(merged->begin(), merged->end());
    if (merged->size() == 1 && merged->front() == cover) merged->clear();  // no change of windows
    return cover;
  }
  // A window's timers are registered when it is made (its contents live until its
  // cleanup timer has fired).
  void RegisterTimers(const TimeWindow& w) {
    if constexpr (Assigner::kEventTime) {
      if (w.MaxTimestamp() > timers_->CurrentWatermark()) timers_->RegisterEventTimeTimer(w.MaxTimestamp());
      if (lateness_ > 0) timers_->RegisterEventTimeTimer(CleanupTime(w));
    } else {
      timers_->RegisterProcessingTimeTimer(w.MaxTimestamp());
    }
  }
  // Deletes the timers of windows merged away, except those a window of the key still
  // needs (two windows' times may coincide).
  void DeleteTimersOf(const std::vector<TimeWindow>& gone) {
    const std::vector<TimeWindow> live = contents_.Windows();
    auto needed = [&](int64_t ts) {
      return std::any_of(live.begin(), live.end(), [&](const TimeWindow& w) {
        return w.MaxTimestamp() == ts || (lateness_ > 0 && CleanupTime(w) == ts);
      });
    };
    for (const TimeWindow& w : gone) {
      if constexpr (Assigner::kEventTime) {
        if (!needed(w.MaxTimestamp())) timers_->DeleteEventTimeTimer(w.MaxTimestamp());
        if (lateness_ > 0 && !needed(CleanupTime(w))) timers_->DeleteEventTimeTimer(CleanupTime(w));
      } else {
        if (!needed(w.MaxTimestamp())) timers_->DeleteProcessingTimeTimer(w.MaxTimestamp());
      }
    }
  }
  // A timer of the current key at `ts`: fires the windows that end there and drops the
  // contents of those whose lateness ran out.
  void OnTimer(int64_t ts) {
    if constexpr (Assigner::kFixedSize) {
      // Windows of one size are known by their ends: the window to fire and the one to
      // drop are looked up, not found by a walk of the key's windows (which are many when
      // the watermark lags far behind the records, each of its timers walking them all).
      const int64_t size = assigner_.size();
      const int64_t lateness = Assigner::kEventTime ? lateness_ : 0;
      if (ts <= std::numeric_limits<int64_t>::max() - 1 - lateness && ts - lateness >= std::numeric_limits<int64_t>::min() + size) {
        const TimeWindow fired{ts + 1 - size, ts + 1};
        const TimeWindow dropped{ts - lateness + 1 - size, ts - lateness + 1};
        Fire(fired);
        if (CleanupTime(dropped) == ts) contents_.Remove(dropped);
        return;
      }
    }
    for (const TimeWindow& w : contents_.Windows()) {
      if (w.MaxTimestamp() == ts) Fire(w);
      if (CleanupTime(w) == ts) contents_.Remove(w);
    }
  }
  void Fire(const TimeWindow& w) {
    SetCurrentRecordTimestamp(w.MaxTimestamp());
    contents_.Fire(this->backend_->current_key(), WindowContext(w, timers_->CurrentWatermark()), *results_);
  }

  Assigner assigner_;
  int64_t lateness_;
  Contents contents_;
  std::unique_ptr<TimerService<K>> timers_;
  std::vector<TimeWindow> windows_;
  int64_t pane_ms_ = 0;  // > 0: contents by pane of this many ms (sliding windows, CollectInPane)
  OutputTag<T> late_tag_;
  Output<Result>* results_ = nullptr;
  SideOutputEmitter<Result> emitter_;
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
