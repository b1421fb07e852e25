#include "lib/api/connectors/sequence_source.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <vector>

#include "lib/api/operator_state.h"

namespace {

// Keeps what a source emits, and the size of every batch it was handed in.
class Emitted final : public weir::Output<int64_t> {
 public:
  void Collect(const int64_t& n) override {
    numbers.push_back(n);
    batches.push_back(1);
  }
  void CollectBatch(const int64_t* records, int count) override {
    REQUIRE(count > 0);
    numbers.insert(numbers.end(), records, records + count);
    batches.push_back(count);
  }
  std::vector<int64_t> numbers;
  std::vector<int> batches;
};

// Runs subtask `index` of `parallelism` of SequenceSource(from, to), `max_records` per
// EmitNext, until its end; every EmitNext emits at most `max_records`.
Emitted RunToEnd(int64_t from, int64_t to, int index, int parallelism, int max_records) {
  weir::OperatorContext ctx;
  ctx.task.subtask_index = index;
  ctx.task.parallelism = parallelism;
  weir::OperatorStateStore store;
  weir::RuntimeContext runtime(ctx, &store);
  weir::SequenceSource source(from, to);
  source.InitializeState(runtime);
  Emitted out;
  int64_t wake = 0;
  for (int calls = 0;; ++calls) {
    REQUIRE(calls < 1'000'000);
    const size_t before = out.numbers.size();
    const weir::SourceStatus status = source.EmitNext(out, max_records, &wake);
    REQUIRE(out.numbers.size() - before <= static_cast<size_t>(max_records));
    if (status == weir::SourceStatus::kEndOfInput) break;
    REQUIRE(status == weir::SourceStatus::kMoreAvailable);
    REQUIRE(out.numbers.size() - before == static_cast<size_t>(max_records));
  }
  return out;
}

std::vector<int64_t> Progression(int64_t first, int64_t last, int64_t step) {
  std::vector<int64_t> v;
  for (int64_t n = first;; n += step) {
    v.push_back(n);
    if (last - n < step) break;
  }
  return v;
}

}  // namespace

TEST_CASE("SequenceSource: a subtask emits its numbers in order, a batch at a time", "[api][sequence-source]") {
  const int max_records = GENERATE(1, 7, 64, 512);
  INFO("max_records " << max_records);
  const Emitted one = RunToEnd(1, 1000, 0, 1, max_records);
  CHECK(one.numbers == Progression(1, 1000, 1));
  if (max_records > 1) {
    CHECK(one.batches.front() == std::min(max_records, 64));  // not one by one
  }
  // Subtask 1 of 3: 2, 5, .., 98 (the last number, 100, is not one of its own).
  CHECK(RunToEnd(1, 100, 1, 3, max_records).numbers == Progression(2, 100, 3));
  // Up to the largest number, with no overflow past it.
  const int64_t max = std::numeric_limits<int64_t>::max();
  CHECK(RunToEnd(max - 200, max, 0, 1, max_records).numbers == Progression(max - 200, max, 1));
  CHECK(RunToEnd(max - 200, max, 2, 3, max_records).numbers == Progression(max - 198, max, 3));
  // A subtask with no number of its own ends at once.
  CHECK(RunToEnd(5, 5, 1, 2, max_records).numbers.empty());
}
