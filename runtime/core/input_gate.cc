#include "runtime/core/input_gate.h"

#include <algorithm>
#include <chrono>

#include "lib/common/time_util.h"

namespace weir::runtime {

InputGate::InputGate(int num_channels, int capacity, int overdraft, int floating)
    : channels_(num_channels), capacity_(capacity), floating_(floating), limit_(capacity + floating + overdraft) {}

bool InputGate::PushData(int channel, std::vector<uint8_t>&& bytes, int64_t* blocked_nanos) {
  std::unique_lock lock(mu_);
  Channel& ch = channels_[channel];
  auto has_room = [&] { return ch.data_count.load(std::memory_order_relaxed) < limit_ || cancelled_.load(); };
  if (!has_room()) {
    // Backpressure: the clock is read only when the producer has to wait.
    const int64_t start = MonotonicNanos();
    producer_cv_.wait(lock, has_room);
    if (blocked_nanos) *blocked_nanos += MonotonicNanos() - start;
  }
  if (cancelled_.load()) return false;
  if (ch.capturing) ch.captured.push_back(bytes);  // in flight for an unaligned checkpoint
  ch.queue.push_back(Buffer::Data(std::move(bytes)));
  if (ch.data_count.fetch_add(1, std::memory_order_release) >= capacity_) {
    if (floating_used_.fetch_add(1, std::memory_order_release) + 1 >= floating_) floating_exhausted_ = true;
  }
  lock.unlock();
  consumer_cv_.notify_one();
  return true;
}

void InputGate::PushEvent(int channel, Buffer&& event) {
  {
    std::lock_guard lock(mu_);
    Channel& ch = channels_[channel];
    const bool is_barrier = event.kind == Buffer::Kind::kBarrier;
    if (ch.capturing) {
      const bool ends_capture = (is_barrier && event.barrier.id >= capture_id_) ||
                                (event.kind == Buffer::Kind::kCancelBarrier && event.barrier.id >= capture_id_) ||
                                event.kind == Buffer::Kind::kEndOfPartition;
      if (ends_capture) {
        // The barrier of the checkpoint being captured is handled already.
        if (is_barrier && event.barrier.id == capture_id_) event.kind = Buffer::Kind::kHandledBarrier;
        CompleteCaptureLocked(ch);
      }
    }
    if (event.kind == Buffer::Kind::kBarrier && event.barrier.kind == CheckpointKind::kCheckpoint &&
        (event.barrier.unaligned || notify_all_barriers_)) {
      Next notice{Next::Kind::kNotice};
      notice.channel = channel;
      notice.buffer = event.EventCopy();
      notices_.push_back(std::move(notice));
      mail_count_.fetch_add(1, std::memory_order_release);
    }
    ch.queue.push_back(std::move(event));
  }
  consumer_cv_.notify_one();
}

void InputGate::CountTakenLocked(Channel& ch, std::vector<InputGate*>* wake) {
  // Room again: a push waiting at the limit goes on (the caller notifies it); a producer
  // waiting for availability is woken when its channel stops being full.
  const int before = ch.data_count.fetch_sub(1, std::memory_order_release);
  if (before == capacity_ && ch.producer) wake->push_back(ch.producer);
  if (before <= capacity_) return;
  // The buffer was a floating one. If every floating buffer was in use since the last
  // wake, the channels at or past their capacity were full: their producers are woken
  // once half of the floating buffers are free again, so that each wake is followed by
  // several buffers' worth of work rather than one (a wake costs the consumer a system
  // call, and may take its core for a moment).
  const int used = floating_used_.fetch_sub(1, std::memory_order_release) - 1;
  if (!floating_exhausted_ || used > floating_ / 2) return;
  floating_exhausted_ = false;
  for (Channel& other : channels_) {
    if (other.producer && other.data_count.load(std::memory_order_relaxed) >= capacity_ &&
        std::find(wake->begin(), wake->end(), other.producer) == wake->end()) {
      wake->push_back(other.producer);
    }
  }
}

void InputGate::SetProducer(int channel, InputGate* producer) {
  std::lock_guard lock(mu_);
  channels_[channel].producer = producer;
}

void InputGate::WakeForOutput() {
  {
    std::lock_guard lock(mu_);
    output_available_ = true;
  }
  consumer_cv_.notify_one();
}

std::vector<uint8_t> InputGate::TakeRecycledBuffer(int channel, size_t capacity) {
  {
    std::lock_guard lock(mu_);
    auto& r = channels_[channel].recycled;
    if (!r.empty()) {
      auto v = std::move(r.back());
      r.pop_back();
      return v;
    }
  }
  std::vector<uint8_t> v;
  v.reserve(capacity);
  return v;
}

void InputGate::Recycle(int channel, std::vector<uint8_t>&& bytes) {
  std::lock_guard lock(mu_);
  auto& r = channels_[channel].recycled;
  // Enough for the channel's own buffers and its share of the floating ones.
  const size_t keep = static_cast<size_t>(capacity_) + 1 + static_cast<size_t>(floating_) / channels_.size();
  if (r.size() < keep) r.push_back(std::move(bytes));
}

bool InputGate::PutMail(Mail mail) {
  {
    std::lock_guard lock(mu_);
    if (closed_) return false;
    mail_.push_back(std::move(mail));
    mail_count_.fetch_add(1, std::memory_order_release);
  }
  consumer_cv_.notify_one();
  return true;
}

void InputGate::Close() {
  std::deque<Mail> dropped;
  {
    std::lock_guard lock(mu_);
    closed_ = true;
    dropped.swap(mail_);
    notices_.clear();
    mail_count_.store(0, std::memory_order_release);
  }
  // `dropped` is destroyed unlocked: a mail's captures may run destructors.
}

bool InputGate::TakeMail(Mail* mail) {
  if (!HasMail()) return false;
  std::lock_guard lock(mu_);
  if (mail_.empty()) return false;
  *mail = std::move(mail_.front());
  mail_.pop_front();
  mail_count_.fetch_sub(1, std::memory_order_release);
  return true;
}

InputGate::Next InputGate::Take(const std::function<bool()>& on_idle, int64_t deadline_nanos, bool take_buffers) {
  std::unique_lock lock(mu_);
  bool idle_ran = false;
  while (true) {
    if (!mail_.empty()) {
      Next n{Next::Kind::kMail, std::move(mail_.front())};
      mail_.pop_front();
      mail_count_.fetch_sub(1, std::memory_order_release);
      return n;
    }
    if (cancelled_.load()) return Next{Next::Kind::kCancelled};
    if (!notices_.empty()) {
      Next n = std::move(notices_.front());
      notices_.pop_front();
      mail_count_.fetch_sub(1, std::memory_order_release);
      return n;
    }
    const int n = static_cast<int>(channels_.size());
    bool any_open = false;
    if (!take_buffers) {
      if (output_available_) {
        output_available_ = false;
        return Next{Next::Kind::kOutputAvailable};
      }
      any_open = true;  // input is not looked at
    }
    for (int k = 0; take_buffers && k < n; ++k) {
      int c = (next_channel_ + k) % n;
      Channel& ch = channels_[c];
      if (!ch.ended) any_open = true;
      while (!ch.queue.empty() && ch.queue.front().kind == Buffer::Kind::kHandledBarrier) ch.queue.pop_front();
      if (ch.blocked || ch.queue.empty()) continue;
      Next next{Next::Kind::kBuffer};
      next.channel = c;
      next.buffer = std::move(ch.queue.front());
      ch.queue.pop_front();
      next_channel_ = (c + 1) % n;
      if (next.buffer.is_data()) {
        std::vector<InputGate*> wake;
        const bool at_limit = ch.data_count.load(std::memory_order_relaxed) >= limit_;
        CountTakenLocked(ch, &wake);
        lock.unlock();
        if (at_limit) producer_cv_.notify_all();
        for (InputGate* producer : wake) producer->WakeForOutput();
      }
      return next;
    }
    if (n > 0 && !any_open) return Next{Next::Kind::kEndOfInput};
    if (!idle_ran && on_idle) {
      idle_ran = true;
      lock.unlock();
      take_buffers = on_idle() && take_buffers;
      lock.lock();
      continue;
    }
    // Waiting for input (or mail) is idle time; waiting for room in the outputs
    // (take_buffers false) is the task's backpressure, which the task counts.
    const int64_t idle_start = MonotonicNanos();
    if (deadline_nanos >= 0) {
      int64_t wait = deadline_nanos - idle_start;
      if (wait <= 0) return Next{Next::Kind::kTimeout};
      consumer_cv_.wait_for(lock, std::chrono::nanoseconds(wait));
      const int64_t now = MonotonicNanos();
      if (take_buffers) idle_nanos_.fetch_add(now - idle_start, std::memory_order_relaxed);
      if (now >= deadline_nanos && mail_.empty() && notices_.empty()) return Next{Next::Kind::kTimeout};
    } else {
      consumer_cv_.wait(lock);
      if (take_buffers) idle_nanos_.fetch_add(MonotonicNanos() - idle_start, std::memory_order_relaxed);
    }
  }
}

InputGate::Next InputGate::WaitForMail() {
  std::unique_lock lock(mu_);
  if (mail_.empty() && !cancelled_.load()) {
    const int64_t idle_start = MonotonicNanos();
    consumer_cv_.wait(lock, [&] { return !mail_.empty() || cancelled_.load(); });
    idle_nanos_.fetch_add(MonotonicNanos() - idle_start, std::memory_order_relaxed);
  }
  if (mail_.empty()) return Next{Next::Kind::kCancelled};
  Next n{Next::Kind::kMail, std::move(mail_.front())};
  mail_.pop_front();
  mail_count_.fetch_sub(1, std::memory_order_release);
  return n;
}

void InputGate::BlockChannel(int channel) {
  std::lock_guard lock(mu_);
  channels_[channel].blocked = true;
}

void InputGate::UnblockAll() {
  std::lock_guard lock(mu_);
  for (auto& ch : channels_) ch.blocked = false;
}

bool InputGate::IsBlocked(int channel) {
  std::lock_guard lock(mu_);
  return channels_[channel].blocked;
}

void InputGate::MarkEnded(int channel) {
  std::lock_guard lock(mu_);
  channels_[channel].ended = true;
}

int InputGate::OpenChannels() {
  std::lock_guard lock(mu_);
  int open = 0;
  for (const auto& ch : channels_) open += ch.ended ? 0 : 1;
  return open;
}

std::set<int64_t> InputGate::StartCapture(int64_t id, const std::set<int>& delivered, Mail on_complete) {
  std::set<int64_t> overtaken;
  {
    std::lock_guard lock(mu_);
    capture_id_ = id;
    capture_open_ = 0;
    capture_done_ = std::move(on_complete);
    for (int c = 0; c < static_cast<int>(channels_.size()); ++c) {
      Channel& ch = channels_[c];
      ch.captured.clear();
      ch.capturing = false;
      if (delivered.count(c) || ch.ended) continue;
      bool complete = false;
      for (Buffer& b : ch.queue) {
        if (b.is_data()) {
          ch.captured.push_back(b.data);
        } else if (b.kind == Buffer::Kind::kBarrier && b.barrier.id < id) {
          overtaken.insert(b.barrier.id);
        } else if ((b.kind == Buffer::Kind::kBarrier || b.kind == Buffer::Kind::kCancelBarrier) &&
                   b.barrier.id >= id) {
          if (b.kind == Buffer::Kind::kBarrier && b.barrier.id == id) b.kind = Buffer::Kind::kHandledBarrier;
          complete = true;
          break;
        } else if (b.kind == Buffer::Kind::kEndOfPartition) {
          complete = true;
          break;
        }
      }
      if (!complete) {
        ch.capturing = true;
        ++capture_open_;
      }
    }
    if (capture_open_ == 0) {
      mail_.push_back(std::move(capture_done_));
      mail_count_.fetch_add(1, std::memory_order_release);
      capture_done_ = nullptr;
    }
  }
  consumer_cv_.notify_one();
  return overtaken;
}

// Requires mu_.
void InputGate::CompleteCaptureLocked(Channel& ch) {
  ch.capturing = false;
  if (--capture_open_ > 0 || !capture_done_) return;
  if (!closed_) {
    mail_.push_back(std::move(capture_done_));
    mail_count_.fetch_add(1, std::memory_order_release);
  }
  capture_done_ = nullptr;
}

std::vector<std::vector<std::vector<uint8_t>>> InputGate::TakeCapture() {
  std::lock_guard lock(mu_);
  std::vector<std::vector<std::vector<uint8_t>>> out(channels_.size());
  for (size_t c = 0; c < channels_.size(); ++c) {
    out[c] = std::move(channels_[c].captured);
    channels_[c].captured.clear();
    channels_[c].capturing = false;
  }
  capture_id_ = -1;
  capture_open_ = 0;
  capture_done_ = nullptr;
  return out;
}

void InputGate::AbortCapture() { TakeCapture(); }

void InputGate::Cancel() {
  cancelled_.store(true);
  std::lock_guard lock(mu_);
  consumer_cv_.notify_all();
  producer_cv_.notify_all();
}

}  // namespace weir::runtime
