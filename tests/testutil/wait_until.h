#pragma once
// WaitUntil(pred, timeout): polls `pred` every 10 ms until it holds (true) or `timeout`
// passes (false, after a last try). For conditions a test cannot be notified of, such as
// the state a dispatcher reports; prefer a latch or a condition variable where there is one.

#include <chrono>
#include <thread>

namespace weir::testing {

template <class Pred>
bool WaitUntil(Pred pred, std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pred();
}

}  // namespace weir::testing
