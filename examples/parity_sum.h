#pragma once
// The pipeline of the number_sum examples: the natural numbers 1..N, keyed by n mod K
// (--keys K, default 2: by parity), summed per key in a ValueState, one SumLine per
// input n. Shared by
// number_sum (files, stdout), pg_number_sum (PostgreSQL) and kafka_number_sum (which
// reads its numbers from Kafka and uses ParitySum and FormatSumLine).
//
// Included by one source file of each example shared object; everything is in an
// anonymous namespace so that two examples loaded into one process never share the
// failure plan.

#include <cstdint>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>

#include "examples/failure_plan.h"
#include "lib/api/weir.h"

namespace {

struct SumLine {
  int64_t n = 0;
  int64_t key = 0;        // n mod keys
  bool by_parity = true;  // keys == 2: the key is named odd or even
  int64_t sum = 0;
  WEIR_FIELDS(n, key, by_parity, sum)
};

// The key of a line as printed: "odd"/"even" with two keys, else the number.
std::string KeyName(const SumLine& line) {
  if (line.by_parity) return line.key == 1 ? "odd" : "even";
  return std::to_string(line.key);
}

class ParitySum final : public weir::KeyedProcessFunction<int64_t, int64_t, SumLine> {
 public:
  ParitySum(bool may_fail, int64_t keys) : may_fail_(may_fail), keys_(keys) {}
  void Open(weir::KeyedRuntimeContext<int64_t>& ctx) override { sum_ = &ctx.GetState<int64_t>("sum"); }
  void ProcessElement(const int64_t& n, const int64_t& key, weir::Collector<SumLine>& out) override {
    if (may_fail_) [[unlikely]] FailIfPlanned(n);
    int64_t sum = sum_->ValueOr(0) + n;
    sum_->Update(sum);
    out.Collect(SumLine{n, key, keys_ == 2, sum});
  }

 private:
  // Out of line and cold: the path every other record takes keeps a small frame.
  [[gnu::noinline, gnu::cold]] static void FailIfPlanned(int64_t n) {
    if (Failures().ShouldFail(n)) throw std::runtime_error("injected failure at n=" + std::to_string(n) + " (--fail-at)");
  }

  bool may_fail_;
  int64_t keys_;
  weir::ValueState<int64_t>* sum_ = nullptr;
};

// "<n>,<key>,<sum>": the line every number_sum example writes.
[[maybe_unused]] std::string FormatSumLine(const SumLine& line) {
  std::string s = std::to_string(line.n);
  s += ',';
  s += KeyName(line);
  s += ',';
  s += std::to_string(line.sum);
  return s;
}

// The options every number_sum example shares: --count, --rate, --keys and --fail-at.
struct ParitySumOptions {
  int64_t count = 1000;  // 0: unbounded
  double rate = 0;       // records per second, 0: no limit
  bool may_fail = false;  // --fail-at listed numbers (now in Failures())
  int64_t keys = 2;       // the key of n is n mod keys
};

[[maybe_unused]] ParitySumOptions ParseParitySumOptions(const weir::JobArgs& args) {
  ParitySumOptions o;
  o.count = args.GetInt("count", 1000);
  if (o.count < 0) throw weir::JobArgumentError("--count must be 0 (unbounded) or a positive number");
  o.rate = args.GetDouble("rate", 0);
  if (o.rate < 0) throw weir::JobArgumentError("--rate must be 0 (no limit) or a positive number");
  o.keys = args.GetInt("keys", 2);
  if (o.keys < 1) throw weir::JobArgumentError("--keys must be a positive number");
  Failures().Parse(args.Get("fail-at"));
  o.may_fail = !Failures().empty();
  return o;
}

// Adds the source and the sums per key; the caller adds the sink.
[[maybe_unused]] weir::DataStream<SumLine> AddParitySums(weir::StreamExecutionEnvironment& env, const ParitySumOptions& o) {
  int64_t last = o.count == 0 ? INT64_MAX : o.count;
  // One source subtask keeps each parity's numbers in order, so running sums are exact.
  return env.AddSource<int64_t>(weir::SequenceSource(1, last, o.rate), "Sequence")
      .Uid("sequence-source")
      .SetParallelism(1)
      .KeyBy([keys = o.keys](int64_t n) { return n % keys; })
      .Process(ParitySum(o.may_fail, o.keys))
      .Name("Parity Sum")
      .Uid("parity-sum");
}

}  // namespace
