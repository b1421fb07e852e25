#pragma once
// InputGate: the inbox of one task. It holds the task's input channels (one per
// upstream subtask and input edge) and its mailbox of control actions, under one
// lock, so the task thread waits in one place for whichever comes first.
//
// Backpressure is availability-based, as in Flink's mailbox model: a channel holding
// `capacity` data buffers or more (its exclusive buffers) has room only while the gate's
// `floating` buffers, shared by all its channels, are not all in use; then it is full,
// and its producer takes no more input until the consumer makes room (the producer keeps
// serving its mailbox meanwhile: barriers, notifications, timers). A channel's buffers
// beyond its capacity count as floating. A producer may push past that the output of
// what it is processing, up to `capacity + floating + overdraft` buffers; only there
// does a push block (overdraft 0: every push into a full channel blocks). Events never
// block.
//
// The floating buffers matter when producers and consumers share the cores: a
// producer that loses its core for a scheduler time slice (milliseconds) leaves its
// consumers that much queued work, not an idle core.
//
// Alignment: the task may block a channel (BlockChannel); the gate then hands out
// nothing from it until UnblockAll, and its buffers stay queued in order.
//
// Unaligned checkpoints: a checkpoint barrier pushed with `unaligned` set (and, with
// EnableBarrierNotices, every checkpoint barrier) is also reported to the consumer at
// once as a notice, ahead of the data queued before it. The consumer then captures
// the in-flight data of the checkpoint: StartCapture.
//
// Thread-safe. Producers are other tasks' threads; the consumer is the owning
// task's thread; mail may come from any thread.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <set>
#include <vector>

#include "runtime/core/buffer.h"

namespace weir::runtime {

class InputGate {
 public:
  using Mail = std::function<void()>;

  InputGate(int num_channels, int capacity, int overdraft = 0, int floating = 0);

  int num_channels() const { return static_cast<int>(channels_.size()); }

  // Producer side. Returns false when the gate was cancelled (the buffer is dropped).
  // Blocks only when the channel holds capacity + floating + overdraft buffers; adds the time
  // spent waiting to `*blocked_nanos` (the producer's backpressure; optional).
  bool PushData(int channel, std::vector<uint8_t>&& bytes, int64_t* blocked_nanos = nullptr);
  void PushEvent(int channel, Buffer&& event);
  // A byte vector to fill, recycled from consumed buffers when possible: its size and
  // bytes are those of a consumed buffer (so that resizing it to full size writes only
  // what it grows by), or it is empty with `capacity` reserved.
  std::vector<uint8_t> TakeRecycledBuffer(int channel, size_t capacity);
  // Whether `channel` has room: its producer may process more input (lock-free).
  bool HasRoom(int channel) const {
    return channels_[channel].data_count.load(std::memory_order_acquire) < capacity_ ||
           floating_used_.load(std::memory_order_acquire) < floating_;
  }
  // The buffer size the consumer asks its producers for (buffer debloating: see
  // BufferDebloater), 0 when it asks for none (the producers' full size). A producer
  // hands over a buffer once it holds this many bytes (lock-free).
  size_t announced_buffer_size() const { return announced_buffer_size_.load(std::memory_order_relaxed); }
  void AnnounceBufferSize(size_t bytes) { announced_buffer_size_.store(bytes, std::memory_order_relaxed); }
  // The data buffers queued in all channels (lock-free; a snapshot).
  int QueuedDataBuffers() const {
    int n = 0;
    for (const Channel& ch : channels_) n += ch.data_count.load(std::memory_order_relaxed);
    return n;
  }
  // The gate of the task producing into `channel`: it is woken (WakeForOutput) when the
  // channel stops being full (it has room of its own again, or a floating buffer came
  // free).
  void SetProducer(int channel, InputGate* producer);
  // Wakes the owning task when it waits for room in its output (Take with
  // `take_buffers` false).
  void WakeForOutput();

  // Mailbox. Returns false (and drops the mail) once the gate is closed: the task has
  // ended, so nothing would ever run it.
  bool PutMail(Mail mail);
  // Whether mail or a notice waits (read without the lock).
  bool HasMail() const { return mail_count_.load(std::memory_order_acquire) > 0; }
  // Non-zero while mail or a notice waits: the task stops processing a buffer between
  // records to serve it (RecordReaderBase::Process).
  const std::atomic<int>* urgent() const { return &mail_count_; }

  // Reports every checkpoint barrier as a notice, not only unaligned ones (the aligned
  // checkpoint timeout runs from a barrier's arrival in the queue).
  void EnableBarrierNotices() { notify_all_barriers_ = true; }

  struct Next {
    enum class Kind {
      kMail,
      kBuffer,
      kNotice,           // `buffer` is a checkpoint barrier just pushed into `channel`
      kOutputAvailable,  // WakeForOutput: the task may check its output again
      kEndOfInput,
      kCancelled,
      kTimeout,
    } kind = Kind::kTimeout;
    Mail mail{};
    int channel = -1;
    Buffer buffer{};
  };
  // Blocks until mail, a notice, a buffer from an unblocked channel (only if
  // `take_buffers`; else a WakeForOutput), the end of all channels, cancellation, or
  // `deadline_nanos` (monotonic; <0 = none). `on_idle` runs (unlocked) once before
  // it would wait, e.g. to flush the task's outputs, and returns whether buffers may
  // still be taken (false: flushing filled the task's output).
  Next Take(const std::function<bool()>& on_idle, int64_t deadline_nanos = -1, bool take_buffers = true);
  // Blocks until mail or cancellation (ignores the channels).
  Next WaitForMail();
  // Non-blocking: mail only.
  bool TakeMail(Mail* mail);

  // Returns a consumed data buffer's memory for reuse by the channel's producer (bytes
  // and all: see TakeRecycledBuffer).
  void Recycle(int channel, std::vector<uint8_t>&& bytes);

  void BlockChannel(int channel);
  void UnblockAll();
  bool IsBlocked(int channel);
  // Marks a channel as finished (its EndOfPartition was consumed).
  void MarkEnded(int channel);
  // Number of channels not yet ended.
  int OpenChannels();

  // Unaligned checkpoint `id` starts at the consumer (its operators' snapshot is being
  // taken): for every channel not in `delivered` (those whose barrier `id` the task
  // took already), the data queued before the channel's barrier `id` is copied (the
  // in-flight data the checkpoint persists) and that barrier is marked handled (the
  // task drops it); a channel whose barrier has not arrived yet keeps being copied as
  // data is pushed into it, until its barrier `id`, an EndOfPartition or a cancel
  // barrier arrives. Once every channel is complete, `on_complete` is posted as mail
  // (at once when every channel is complete already). One capture at a time. Returns
  // the ids of older checkpoint barriers found queued before the barriers `id`: the
  // unaligned checkpoint overtook them, so their checkpoints cannot complete here.
  std::set<int64_t> StartCapture(int64_t id, const std::set<int>& delivered, Mail on_complete);
  // The captured buffers per channel (call after `on_complete` ran); the capture ends.
  std::vector<std::vector<std::vector<uint8_t>>> TakeCapture();
  // Ends the capture (its checkpoint was aborted); its mail will not be posted.
  void AbortCapture();

  // Nanoseconds the consumer spent waiting in Take and WaitForMail with nothing to do:
  // its idle time, not counting waits of Take for room in the outputs (take_buffers
  // false: backpressure). Read from any thread.
  int64_t idle_nanos() const { return idle_nanos_.load(std::memory_order_relaxed); }

  void Cancel();
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }
  // The owning task has ended: queued and later mail is dropped, so a finished task's
  // mailbox never grows (notifications keep coming for the rest of the job).
  void Close();

 private:
  struct Channel {
    std::deque<Buffer> queue;
    std::atomic<int> data_count{0};  // written under mu_
    bool blocked = false;
    bool ended = false;
    bool capturing = false;  // copies pushed data into captured
    std::vector<std::vector<uint8_t>> captured;
    std::vector<std::vector<uint8_t>> recycled;
    InputGate* producer = nullptr;
  };
  // Requires mu_. Ends the capture of a channel; posts the completion mail after the last.
  void CompleteCaptureLocked(Channel& ch);
  // Requires mu_. Counts a data buffer taken from `ch`, and collects the producers that
  // may have room again into `wake`.
  void CountTakenLocked(Channel& ch, std::vector<InputGate*>* wake);

  mutable std::mutex mu_;
  std::condition_variable consumer_cv_;
  std::condition_variable producer_cv_;
  std::vector<Channel> channels_;
  std::deque<Mail> mail_;
  std::deque<Next> notices_;
  std::atomic<int> mail_count_{0};  // mail and notices
  int capacity_;
  int floating_;
  int limit_;  // capacity + floating + overdraft: a push blocks here
  // The data buffers of all channels beyond their capacity (written under mu_).
  std::atomic<int> floating_used_{0};
  // Every floating buffer was in use at some point since its channels' producers were
  // last woken for them (guarded by mu_).
  bool floating_exhausted_ = false;
  int next_channel_ = 0;  // round-robin start
  std::atomic<bool> cancelled_{false};
  std::atomic<int64_t> idle_nanos_{0};
  std::atomic<size_t> announced_buffer_size_{0};
  bool closed_ = false;         // guarded by mu_
  bool output_available_ = false;  // guarded by mu_: WakeForOutput came
  bool notify_all_barriers_ = false;
  // The capture of an unaligned checkpoint (guarded by mu_).
  int64_t capture_id_ = -1;
  int capture_open_ = 0;  // channels still capturing
  Mail capture_done_;
};

}  // namespace weir::runtime
