#pragma once
// BufferDebloater: the size of the buffers a task asks its producers for, from the
// throughput of its input (taskmanager.network.memory.buffer-debloat.*, as in Flink).
//
// The buffers queued at a task's input should take it about `target` to process. A task
// that keeps up with its input queues little and its buffers stay at the maximum; a
// backpressured one, whose input gate holds every buffer it may, would hold
// `buffers × maximum` bytes, which an aligned barrier waits behind and an unaligned
// checkpoint persists. Every `period` (or after the buffer it was in, when that took
// longer) the task measures what it processed per second of
// the time it was not waiting for input, and computes the size at which the buffers in
// use hold `target` of it. The size moves there as an exponential moving average over
// `samples` measurements, by at most the current size a step either way, within
// [min_size, max_size]; a new size is announced only when it differs from the last by
// `threshold_percent` or more, or reaches a bound.

#include <cstddef>
#include <cstdint>
#include <optional>

namespace weir::runtime {

struct BufferDebloatSettings {
  bool enabled = false;
  int64_t target_ms = 1000;
  int64_t period_ms = 200;
  int samples = 20;
  int threshold_percent = 25;
  size_t min_size = 256;
  size_t max_size = 0;  // the buffer size: the task sets it from its TaskSpec::buffer_size
};

class BufferDebloater {
 public:
  // Starts at settings.max_size. Requires 0 < min_size <= max_size and samples >= 1.
  explicit BufferDebloater(const BufferDebloatSettings& settings);

  // A measurement: the input's throughput in bytes per second and the data buffers
  // queued at it, taken over `periods` periods (a task that spent several periods in one
  // buffer measures once for all of them: the average moves as for that many samples).
  // Returns the new size to announce, or nothing when it stays.
  std::optional<size_t> Recalculate(int64_t bytes_per_second, int buffers_in_use, int periods = 1);

  size_t size() const { return announced_; }

 private:
  BufferDebloatSettings settings_;
  double alpha_;     // the moving average's weight of a new measurement
  double average_;   // the moving average of the desired size
  size_t announced_;  // the size last announced (the maximum at first)
};

}  // namespace weir::runtime
