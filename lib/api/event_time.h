#pragma once
// Event time (Flink's): records carry a timestamp (milliseconds) and watermarks flow
// with them. A watermark t says no record with a timestamp <= t follows; the runtime
// combines the watermarks of a task's input channels as their minimum (idle and ended
// channels left out) and sends MAX_WATERMARK at the end of input and on stop --drain.
//
// A record's timestamp travels with it: set by AssignTimestampsAndWatermarks, kept
// through Map, Filter, FlatMap and KeyBy (chained calls and network edges alike), set
// to the window's MaxTimestamp() on window results. User code reads it with
// CurrentRecordTimestamp() while it handles the record.

#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>

namespace weir {

inline constexpr int64_t kMinWatermark = std::numeric_limits<int64_t>::min();
inline constexpr int64_t kMaxWatermark = std::numeric_limits<int64_t>::max();
// The timestamp of a record that has none (no timestamp assigner upstream).
inline constexpr int64_t kNoTimestamp = std::numeric_limits<int64_t>::min();

namespace internal {
// The timestamp of the record being handled on this thread (defined in job.cc), read and
// written several times per record. It lives in libweir.so, which is loaded with the
// program, so its thread-local storage is allocated at start (initial-exec): a job's
// shared object, opened later, reaches it at a fixed offset from the thread pointer
// instead of calling __tls_get_addr each time. constinit: no initialization wrapper
// is called before a use.
extern thread_local constinit int64_t current_record_timestamp [[gnu::tls_model("initial-exec")]];
}  // namespace internal

inline int64_t CurrentRecordTimestamp() { return internal::current_record_timestamp; }
inline void SetCurrentRecordTimestamp(int64_t ts) { internal::current_record_timestamp = ts; }

// Where an operator sends the watermark and the idleness of its output (the next
// operator of the chain and the task's output channels). Implemented by the runtime.
class WatermarkOutput {
 public:
  virtual ~WatermarkOutput() = default;
  virtual void EmitWatermark(int64_t watermark) = 0;
  // An idle output holds no watermark back downstream until it emits again.
  virtual void MarkIdle(bool idle) = 0;
};

// Flink's WatermarkStrategy: how timestamps are taken from records and watermarks made.
//
//   WatermarkStrategy<Event>::ForBoundedOutOfOrderness(5000)
//       .WithTimestampAssigner([](const Event& e) { return e.time_ms; })
//       .WithIdleness(60000)
//
// The watermark is the largest timestamp seen minus the bound minus 1, emitted every
// `pipeline.auto-watermark-interval` (200 ms, as Flink) when it advanced; an input
// without records for the idleness timeout is marked idle.
template <class T>
class WatermarkStrategy {
 public:
  // Timestamps may arrive up to `max_out_of_orderness_ms` late.
  static WatermarkStrategy ForBoundedOutOfOrderness(int64_t max_out_of_orderness_ms) {
    if (max_out_of_orderness_ms < 0) {
      throw std::invalid_argument("the out-of-orderness bound must be 0 or more milliseconds, not " +
                                  std::to_string(max_out_of_orderness_ms));
    }
    WatermarkStrategy s;
    s.out_of_orderness_ms_ = max_out_of_orderness_ms;
    return s;
  }
  // Ascending timestamps (a bound of 0).
  static WatermarkStrategy ForMonotonousTimestamps() { return ForBoundedOutOfOrderness(0); }

  // f(const T&) -> int64_t milliseconds.
  template <class F>
  WatermarkStrategy WithTimestampAssigner(F f) const {
    WatermarkStrategy s = *this;
    s.assigner_ = std::function<int64_t(const T&)>(std::move(f));
    return s;
  }
  WatermarkStrategy WithIdleness(int64_t idle_timeout_ms) const {
    if (idle_timeout_ms <= 0) {
      throw std::invalid_argument("the idleness timeout must be a positive number of milliseconds");
    }
    WatermarkStrategy s = *this;
    s.idle_timeout_ms_ = idle_timeout_ms;
    return s;
  }
  // Watermarks every `interval_ms` (default 200).
  WatermarkStrategy WithEmitInterval(int64_t interval_ms) const {
    if (interval_ms <= 0) throw std::invalid_argument("the watermark interval must be positive");
    WatermarkStrategy s = *this;
    s.interval_ms_ = interval_ms;
    return s;
  }

  int64_t out_of_orderness_ms() const { return out_of_orderness_ms_; }
  int64_t idle_timeout_ms() const { return idle_timeout_ms_; }  // 0: never idle
  int64_t interval_ms() const { return interval_ms_; }
  // The record's timestamp: the assigner's, else the timestamp it already carries.
  int64_t Timestamp(const T& record) const { return assigner_ ? assigner_(record) : CurrentRecordTimestamp(); }

 private:
  int64_t out_of_orderness_ms_ = 0;
  int64_t idle_timeout_ms_ = 0;
  int64_t interval_ms_ = 200;
  std::function<int64_t(const T&)> assigner_;
};

}  // namespace weir
