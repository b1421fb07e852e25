#pragma once
// InputGate: the inbox of one task. It holds the task's input channels (one per
// upstream subtask and input edge) and its mailbox of control actions, under one
// lock, so the task thread waits in one place for whichever comes first.
//
// Backpressure: a channel holds at most `capacity` data buffers; a producer
// pushing into a full channel blocks until the consumer takes one (or the gate is
// cancelled). Events never block.
//
// Alignment: the task may block a channel (BlockChannel); the gate then hands out
// nothing from it until UnblockAll, and its buffers stay queued in order.
//
// Thread-safe. Producers are other tasks' threads; the consumer is the owning
// task's thread; mail may come from any thread.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <vector>

#include "runtime/core/buffer.h"

namespace weir::runtime {

class InputGate {
 public:
  using Mail = std::function<void()>;

  InputGate(int num_channels, int capacity);

  int num_channels() const { return static_cast<int>(channels_.size()); }

  // Producer side. Returns false when the gate was cancelled (the buffer is dropped).
  // When the channel was full, adds the time spent waiting to `*blocked_nanos` (the
  // producer's backpressure; optional).
  bool PushData(int channel, std::vector<uint8_t>&& bytes, int64_t* blocked_nanos = nullptr);
  void PushEvent(int channel, Buffer&& event);
  // Puts an event at the front of the channel, before its queued data (unaligned
  // barriers overtake in-flight buffers).
  void PushPriorityEvent(int channel, Buffer&& event);
  // An empty byte vector with capacity, recycled from consumed buffers when possible.
  std::vector<uint8_t> TakeEmptyBuffer(int channel, size_t capacity);

  // Mailbox. Returns false (and drops the mail) once the gate is closed: the task has
  // ended, so nothing would ever run it.
  bool PutMail(Mail mail);
  bool HasMail() const { return mail_count_.load(std::memory_order_acquire) > 0; }

  struct Next {
    enum class Kind { kMail, kBuffer, kEndOfInput, kCancelled, kTimeout } kind = Kind::kTimeout;
    Mail mail{};
    int channel = -1;
    Buffer buffer{};
  };
  // Blocks until mail, a buffer from an unblocked channel, the end of all channels,
  // cancellation, or `deadline_nanos` (monotonic; <0 = none). `on_idle` runs
  // (unlocked) once before each wait, e.g. to flush the task's outputs.
  Next Take(const std::function<void()>& on_idle, int64_t deadline_nanos = -1);
  // Blocks until mail or cancellation (ignores the channels).
  Next WaitForMail();
  // Non-blocking: mail only.
  bool TakeMail(Mail* mail);

  // Returns a consumed data buffer's memory for reuse by the channel's producer.
  void Recycle(int channel, std::vector<uint8_t>&& bytes);

  void BlockChannel(int channel);
  void UnblockAll();
  bool IsBlocked(int channel);
  // Marks a channel as finished (its EndOfPartition was consumed).
  void MarkEnded(int channel);
  // Number of channels not yet ended.
  int OpenChannels();
  // Removes and returns the data buffers queued in `channel` before its first event
  // (the in-flight data an unaligned checkpoint persists), keeping them queued.
  std::vector<std::vector<uint8_t>> PeekQueuedData(int channel);

  // Nanoseconds the consumer spent waiting in Take and WaitForMail with nothing to do
  // (its idle time; read from any thread).
  int64_t idle_nanos() const { return idle_nanos_.load(std::memory_order_relaxed); }

  void Cancel();
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }
  // The owning task has ended: queued and later mail is dropped, so a finished task's
  // mailbox never grows (notifications keep coming for the rest of the job).
  void Close();

 private:
  struct Channel {
    std::deque<Buffer> queue;
    int data_count = 0;
    bool blocked = false;
    bool ended = false;
    std::vector<std::vector<uint8_t>> recycled;
  };

  std::mutex mu_;
  std::condition_variable consumer_cv_;
  std::condition_variable producer_cv_;
  std::vector<Channel> channels_;
  std::deque<Mail> mail_;
  std::atomic<int> mail_count_{0};
  int capacity_;
  int next_channel_ = 0;  // round-robin start
  std::atomic<bool> cancelled_{false};
  std::atomic<int64_t> idle_nanos_{0};
  bool closed_ = false;  // guarded by mu_
};

}  // namespace weir::runtime
