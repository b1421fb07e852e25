#include <catch2/catch.hpp>

#include "runtime/core/buffer_debloater.h"

using weir::runtime::BufferDebloater;
using weir::runtime::BufferDebloatSettings;

namespace {
BufferDebloatSettings Settings(int samples, int threshold_percent = 25) {
  BufferDebloatSettings s;
  s.enabled = true;
  s.target_ms = 1000;
  s.samples = samples;
  s.threshold_percent = threshold_percent;
  s.min_size = 256;
  s.max_size = 128 * 1024;
  return s;
}
}  // namespace

TEST_CASE("buffer debloater: a consumer that keeps up keeps the largest buffers", "[debloat]") {
  BufferDebloater d(Settings(20));
  CHECK(d.size() == 128 * 1024);
  // 100 MB/s into 10 buffers wants 10 MB each: more than the maximum.
  for (int i = 0; i < 50; ++i) CHECK_FALSE(d.Recalculate(100'000'000, 10).has_value());
  CHECK(d.size() == 128 * 1024);
}

TEST_CASE("buffer debloater: the size moves to what the buffers in use hold of the target", "[debloat]") {
  // One sample: the average is the last measurement, within the bounds.
  BufferDebloater d(Settings(1));
  // 40 KB/s for 1 s into 10 buffers: 4 KB each.
  auto size = d.Recalculate(40'000, 10);
  REQUIRE(size.has_value());
  CHECK(*size == 4000);
  // No buffer queued counts as one.
  size = d.Recalculate(2'000, 0);
  REQUIRE(size.has_value());
  CHECK(*size == 2000);
  // Nothing processed: the minimum.
  size = d.Recalculate(0, 10);
  REQUIRE(size.has_value());
  CHECK(*size == 256);
  CHECK_FALSE(d.Recalculate(0, 10).has_value());  // unchanged: nothing to announce
}

TEST_CASE("buffer debloater: a size grows by at most twice itself a step", "[debloat]") {
  BufferDebloater d(Settings(1));
  REQUIRE(d.Recalculate(0, 1) == std::optional<size_t>(256));
  CHECK(d.Recalculate(1'000'000'000, 1) == std::optional<size_t>(512));
  CHECK(d.Recalculate(1'000'000'000, 1) == std::optional<size_t>(1024));
  // Three periods in one measurement: three steps.
  CHECK(d.Recalculate(1'000'000'000, 1, 3) == std::optional<size_t>(8192));
}

TEST_CASE("buffer debloater: the moving average over the samples, and its threshold", "[debloat]") {
  // Three samples: alpha = 0.5.
  BufferDebloater d(Settings(3, 25));
  // Wanted 32 KB: the average goes halfway, 128 K -> 80 K (a 37.5 % change: announced).
  auto size = d.Recalculate(32 * 1024, 1);
  REQUIRE(size.has_value());
  CHECK(*size == 80 * 1024);
  // Wanted 72 K: the average moves to 76 K, 5 % from the announced 80 K: not announced.
  CHECK_FALSE(d.Recalculate(72 * 1024, 1).has_value());
  CHECK(d.size() == 80 * 1024);
  // Several periods in one measurement move the average as far as that many samples.
  size = d.Recalculate(1024, 1, 8);
  REQUIRE(size.has_value());
  CHECK(*size < 2 * 1024);
  CHECK(*size > 1024);
}
