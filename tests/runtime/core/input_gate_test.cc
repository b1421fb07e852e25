#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
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

TEST_CASE("input gate: the idle callback runs before the consumer waits", "[runtime]") {
  InputGate gate(1, 4);
  int idle = 0;
  auto n = gate.Take([&] { ++idle; }, 0);
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
