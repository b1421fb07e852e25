#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "lib/common/time_util.h"
#include "runtime/core/input_gate.h"

using weir::runtime::Buffer;
using weir::runtime::InputGate;
using Kind = InputGate::Next::Kind;

namespace {
std::vector<uint8_t> Bytes(uint8_t v) { return std::vector<uint8_t>{v}; }
}  // namespace

TEST_CASE("input gate: buffers and events keep their order within a channel", "[runtime]") {
  InputGate gate(1, 8);
  REQUIRE(gate.PushData(0, Bytes(1)));
  gate.PushEvent(0, Buffer::Event(Buffer::Kind::kBarrier, {7}));
  REQUIRE(gate.PushData(0, Bytes(2)));
  auto a = gate.Take(nullptr);
  auto b = gate.Take(nullptr);
  auto c = gate.Take(nullptr);
  CHECK(a.buffer.data == Bytes(1));
  CHECK(b.buffer.kind == Buffer::Kind::kBarrier);
  CHECK(b.buffer.barrier.id == 7);
  CHECK(c.buffer.data == Bytes(2));
}

TEST_CASE("input gate: a blocked channel holds its buffers until unblocked", "[runtime]") {
  InputGate gate(2, 8);
  REQUIRE(gate.PushData(0, Bytes(1)));
  REQUIRE(gate.PushData(1, Bytes(2)));
  gate.BlockChannel(0);
  auto first = gate.Take(nullptr);
  CHECK(first.channel == 1);
  auto timeout = gate.Take(nullptr, 0);  // only the blocked channel has data
  CHECK(timeout.kind == Kind::kTimeout);
  gate.UnblockAll();
  auto held = gate.Take(nullptr);
  CHECK(held.channel == 0);
  CHECK(held.buffer.data == Bytes(1));
}

TEST_CASE("input gate: a full channel blocks its producer until the consumer takes", "[runtime]") {
  InputGate gate(1, 2);
  REQUIRE(gate.PushData(0, Bytes(1)));
  REQUIRE(gate.PushData(0, Bytes(2)));
  std::atomic<bool> pushed{false};
  std::thread producer([&] {
    REQUIRE(gate.PushData(0, Bytes(3)));
    pushed = true;
  });
  // The producer can only finish after the consumer took a buffer.
  auto a = gate.Take(nullptr);
  producer.join();
  CHECK(pushed);
  CHECK(a.buffer.data == Bytes(1));
  CHECK(gate.Take(nullptr).buffer.data == Bytes(2));
  CHECK(gate.Take(nullptr).buffer.data == Bytes(3));
}

TEST_CASE("input gate: cancellation wakes a blocked producer and the consumer", "[runtime]") {
  InputGate gate(1, 1);
  REQUIRE(gate.PushData(0, Bytes(1)));
  bool push_result = true;
  std::thread producer([&] { push_result = gate.PushData(0, Bytes(2)); });
  std::thread canceller([&] { gate.Cancel(); });
  producer.join();
  canceller.join();
  CHECK_FALSE(push_result);
  CHECK(gate.Take(nullptr).kind == Kind::kCancelled);
}

TEST_CASE("input gate: mail comes before data; end of input when every channel ended", "[runtime]") {
  InputGate gate(2, 4);
  int ran = 0;
  REQUIRE(gate.PushData(0, Bytes(1)));
  gate.PutMail([&] { ++ran; });
  auto m = gate.Take(nullptr);
  REQUIRE(m.kind == Kind::kMail);
  m.mail();
  CHECK(ran == 1);
  CHECK(gate.Take(nullptr).kind == Kind::kBuffer);
  gate.MarkEnded(0);
  gate.MarkEnded(1);
  CHECK(gate.Take(nullptr).kind == Kind::kEndOfInput);
}

TEST_CASE("input gate: once closed (its task ended) the mailbox drops queued mail and takes no more",
          "[runtime]") {
  InputGate gate(1, 4);
  auto token = std::make_shared<int>(0);
  for (int i = 0; i < 3; ++i) REQUIRE(gate.PutMail([token] { ++*token; }));
  CHECK(gate.HasMail());
  CHECK(token.use_count() == 4);
  gate.Close();
  CHECK_FALSE(gate.HasMail());
  CHECK(token.use_count() == 1);  // the queued mail (and what it captured) is gone
  // Notifications keep coming for the rest of the job: none is kept.
  for (int i = 0; i < 1000; ++i) CHECK_FALSE(gate.PutMail([token] { ++*token; }));
  CHECK_FALSE(gate.HasMail());
  CHECK(token.use_count() == 1);
  CHECK(*token == 0);
}

TEST_CASE("input gate: the idle callback runs before the consumer waits", "[runtime]") {
  InputGate gate(1, 4);
  int idle = 0;
  auto n = gate.Take(
      [&] {
        ++idle;
        return true;
      },
      0);
  CHECK(n.kind == Kind::kTimeout);
  CHECK(idle == 1);
}

TEST_CASE("input gate: a producer's time on a full channel counts as its backpressure",
          "[runtime]") {
  InputGate gate(1, 1);
  int64_t blocked = 0;
  REQUIRE(gate.PushData(0, Bytes(1), &blocked));
  CHECK(blocked == 0);  // there was room
  std::atomic<bool> pushed{false};
  bool push_result = false;  // read after join (Catch's assertions are not thread-safe)
  const auto start = std::chrono::steady_clock::now();
  std::thread producer([&] {
    push_result = gate.PushData(0, Bytes(2), &blocked);
    pushed = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  const bool was_blocked = !pushed.load();
  auto first = gate.Take(nullptr);
  producer.join();
  CHECK(push_result);
  CHECK(first.buffer.data == Bytes(1));
  const int64_t elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::steady_clock::now() - start)
                              .count();
  CHECK(blocked <= elapsed);
  if (was_blocked) CHECK(blocked > 0);
}

TEST_CASE("input gate: a consumer's wait with nothing to take counts as idle time", "[runtime]") {
  InputGate gate(1, 4);
  CHECK(gate.idle_nanos() == 0);
  const int64_t wait = 20'000'000;  // 20 ms
  auto n = gate.Take(nullptr, weir::MonotonicNanos() + wait);
  CHECK(n.kind == Kind::kTimeout);
  CHECK(gate.idle_nanos() >= wait / 2);  // less the time before its wait began
  // Taking what is there is not idle.
  const int64_t before = gate.idle_nanos();
  REQUIRE(gate.PushData(0, Bytes(1)));
  CHECK(gate.Take(nullptr).buffer.data == Bytes(1));
  CHECK(gate.idle_nanos() == before);
}

TEST_CASE("input gate: a consumer's wait for room in its outputs is not idle time", "[runtime]") {
  InputGate gate(1, 4);
  auto n = gate.Take(nullptr, weir::MonotonicNanos() + 20'000'000, /*take_buffers=*/false);
  CHECK(n.kind == Kind::kTimeout);
  CHECK(gate.idle_nanos() == 0);
  // Nor once the idle callback says the flush filled the outputs.
  n = gate.Take([] { return false; }, weir::MonotonicNanos() + 20'000'000);
  CHECK(n.kind == Kind::kTimeout);
  CHECK(gate.idle_nanos() == 0);
}

TEST_CASE("input gate: with an overdraft a full channel takes pushes up to its limit; HasRoom says full",
          "[runtime]") {
  InputGate gate(1, 2, /*overdraft=*/2);
  REQUIRE(gate.PushData(0, Bytes(1)));
  CHECK(gate.HasRoom(0));
  REQUIRE(gate.PushData(0, Bytes(2)));
  CHECK_FALSE(gate.HasRoom(0));  // full at the capacity
  REQUIRE(gate.PushData(0, Bytes(3)));  // the overdraft: no wait
  REQUIRE(gate.PushData(0, Bytes(4)));
  bool push_result = false;  // read after join (Catch's assertions are not thread-safe)
  std::thread producer([&] { push_result = gate.PushData(0, Bytes(5)); });  // at the limit: waits
  CHECK(gate.Take(nullptr).buffer.data == Bytes(1));
  producer.join();
  CHECK(push_result);
}

TEST_CASE("input gate: the producer's gate is woken when a full channel has room again", "[runtime]") {
  InputGate producer(0, 4);
  InputGate consumer(1, 1, 1);
  consumer.SetProducer(0, &producer);
  REQUIRE(consumer.PushData(0, Bytes(1)));
  CHECK_FALSE(consumer.HasRoom(0));
  // The producer waits for its output: no wake yet.
  CHECK(producer.Take(nullptr, 0, /*take_buffers=*/false).kind == Kind::kTimeout);
  CHECK(consumer.Take(nullptr).kind == Kind::kBuffer);
  CHECK(consumer.HasRoom(0));
  CHECK(producer.Take(nullptr, -1, /*take_buffers=*/false).kind == Kind::kOutputAvailable);
}

TEST_CASE("input gate: floating buffers give a channel room past its capacity while they last", "[runtime]") {
  InputGate producer_a(0, 4);
  InputGate producer_b(0, 4);
  InputGate gate(2, 2, /*overdraft=*/4, /*floating=*/3);
  gate.SetProducer(0, &producer_a);
  gate.SetProducer(1, &producer_b);
  // Channel 0 fills its two buffers, then takes all three floating ones.
  for (uint8_t i = 0; i < 5; ++i) {
    CHECK(gate.HasRoom(0));
    REQUIRE(gate.PushData(0, Bytes(i)));
  }
  CHECK_FALSE(gate.HasRoom(0));
  // Channel 1 still has its own two buffers, and no floating one.
  CHECK(gate.HasRoom(1));
  REQUIRE(gate.PushData(1, Bytes(10)));
  CHECK(gate.HasRoom(1));
  REQUIRE(gate.PushData(1, Bytes(11)));
  CHECK_FALSE(gate.HasRoom(1));
  CHECK(producer_b.Take(nullptr, 0, /*take_buffers=*/false).kind == Kind::kTimeout);
  // Taking a floating buffer from channel 0 frees one for both channels: a producer
  // that looks finds room. Those waiting for it are woken once half of the floating
  // buffers are free again (here, 2 of 3), so that each wake is worth several buffers.
  CHECK(gate.Take(nullptr).buffer.data == Bytes(0));
  CHECK(gate.HasRoom(0));
  CHECK(gate.HasRoom(1));
  CHECK(producer_a.Take(nullptr, 0, /*take_buffers=*/false).kind == Kind::kTimeout);
  CHECK(producer_b.Take(nullptr, 0, /*take_buffers=*/false).kind == Kind::kTimeout);
  // A channel below its capacity has room of its own: its producer is woken at once.
  CHECK(gate.Take(nullptr).buffer.data == Bytes(10));
  CHECK(producer_a.Take(nullptr, 0, /*take_buffers=*/false).kind == Kind::kTimeout);
  CHECK(producer_b.Take(nullptr, -1, /*take_buffers=*/false).kind == Kind::kOutputAvailable);
  CHECK(gate.Take(nullptr).buffer.data == Bytes(1));  // the second floating buffer free
  CHECK(producer_a.Take(nullptr, -1, /*take_buffers=*/false).kind == Kind::kOutputAvailable);
  CHECK(producer_b.Take(nullptr, 0, /*take_buffers=*/false).kind == Kind::kTimeout);
  REQUIRE(gate.PushData(1, Bytes(12)));  // its own again
  REQUIRE(gate.PushData(1, Bytes(13)));  // and the two floating ones
  CHECK(gate.HasRoom(0));
  REQUIRE(gate.PushData(1, Bytes(14)));
  CHECK_FALSE(gate.HasRoom(0));
  CHECK_FALSE(gate.HasRoom(1));
  // Every buffer comes out in its channel's order; at the end both channels have room
  // of their own.
  std::vector<std::vector<uint8_t>> zero, one;
  for (int i = 0; i < 7; ++i) {
    auto next = gate.Take(nullptr);
    REQUIRE(next.kind == Kind::kBuffer);
    (next.channel == 0 ? zero : one).push_back(next.buffer.data);
  }
  CHECK(zero == std::vector<std::vector<uint8_t>>{Bytes(2), Bytes(3), Bytes(4)});
  CHECK(one == std::vector<std::vector<uint8_t>>{Bytes(11), Bytes(12), Bytes(13), Bytes(14)});
  CHECK(gate.HasRoom(0));
  CHECK(gate.HasRoom(1));
}

TEST_CASE("input gate: without floating buffers a channel is full at its capacity, overdraft or not", "[runtime]") {
  InputGate gate(2, 1, /*overdraft=*/2, /*floating=*/0);
  REQUIRE(gate.PushData(0, Bytes(1)));
  REQUIRE(gate.PushData(0, Bytes(2)));  // the overdraft
  CHECK_FALSE(gate.HasRoom(0));
  CHECK(gate.HasRoom(1));
  CHECK(gate.Take(nullptr).buffer.data == Bytes(1));
  CHECK_FALSE(gate.HasRoom(0));
  CHECK(gate.Take(nullptr).buffer.data == Bytes(2));
  CHECK(gate.HasRoom(0));
}

TEST_CASE("input gate: an unaligned barrier is noticed ahead of the data queued before it", "[runtime]") {
  InputGate gate(1, 8);
  REQUIRE(gate.PushData(0, Bytes(1)));
  weir::runtime::CheckpointBarrier b{3};
  b.unaligned = true;
  gate.PushEvent(0, Buffer::Event(Buffer::Kind::kBarrier, b));
  CHECK(gate.HasMail());  // a notice interrupts the task between records
  auto notice = gate.Take(nullptr);
  REQUIRE(notice.kind == Kind::kNotice);
  CHECK(notice.buffer.barrier.id == 3);
  CHECK(notice.channel == 0);
  CHECK(gate.Take(nullptr).buffer.data == Bytes(1));
  CHECK(gate.Take(nullptr).buffer.kind == Buffer::Kind::kBarrier);  // in its place too, until handled
}

TEST_CASE("input gate: a capture copies the data before each channel's barrier and what arrives until it",
          "[runtime]") {
  InputGate gate(3, 8);
  REQUIRE(gate.PushData(0, Bytes(1)));
  gate.PushEvent(0, Buffer::Event(Buffer::Kind::kBarrier, {5}));
  REQUIRE(gate.PushData(0, Bytes(2)));  // after the barrier: not in flight
  REQUIRE(gate.PushData(1, Bytes(10)));
  int done = 0;
  gate.StartCapture(5, /*delivered=*/{2}, [&] { ++done; });
  REQUIRE(gate.PushData(1, Bytes(11)));
  REQUIRE(gate.PushData(2, Bytes(20)));  // channel 2 delivered its barrier already
  CHECK_FALSE(gate.HasMail());            // channel 1 has not delivered it
  gate.PushEvent(1, Buffer::Event(Buffer::Kind::kBarrier, {5}));
  REQUIRE(gate.PushData(1, Bytes(12)));
  auto mail = gate.Take(nullptr);
  REQUIRE(mail.kind == Kind::kMail);
  mail.mail();
  CHECK(done == 1);
  auto captured = gate.TakeCapture();
  REQUIRE(captured.size() == 3);
  CHECK(captured[0] == std::vector<std::vector<uint8_t>>{Bytes(1)});
  CHECK(captured[1] == std::vector<std::vector<uint8_t>>{Bytes(10), Bytes(11)});
  CHECK(captured[2].empty());
  // The data stays queued for the task; the handled barriers are dropped.
  std::vector<uint8_t> order;
  for (int i = 0; i < 6; ++i) {
    auto n = gate.Take(nullptr, 0);
    REQUIRE(n.kind == Kind::kBuffer);
    REQUIRE(n.buffer.is_data());
    order.push_back(n.buffer.data[0]);
  }
  std::sort(order.begin(), order.end());
  CHECK(order == std::vector<uint8_t>{1, 2, 10, 11, 12, 20});
  CHECK(gate.Take(nullptr, 0).kind == Kind::kTimeout);
}

TEST_CASE("input gate: an aborted capture posts nothing; an ended channel completes one", "[runtime]") {
  InputGate gate(2, 8);
  int done = 0;
  gate.StartCapture(1, {}, [&] { ++done; });
  gate.AbortCapture();
  gate.PushEvent(0, Buffer::Event(Buffer::Kind::kBarrier, {1}));
  gate.PushEvent(1, Buffer::Event(Buffer::Kind::kBarrier, {1}));
  CHECK(gate.Take(nullptr).kind == Kind::kBuffer);
  CHECK(gate.Take(nullptr).kind == Kind::kBuffer);
  CHECK(done == 0);
  gate.StartCapture(2, {}, [&] { ++done; });
  gate.PushEvent(0, Buffer::Event(Buffer::Kind::kEndOfPartition));
  gate.PushEvent(1, Buffer::Event(Buffer::Kind::kBarrier, {2}));
  auto mail = gate.Take(nullptr);
  REQUIRE(mail.kind == Kind::kMail);
  mail.mail();
  CHECK(done == 1);
}
