#pragma once
// The pipeline of the number_sum examples: the natural numbers 1..N, partitioned by
// parity, summed per key in a ValueState, one SumLine per input n. Shared by
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
  bool odd = false;
  int64_t sum = 0;
  WEIR_FIELDS(n, odd, sum)
};

class ParitySum final : public weir::KeyedProcessFunction<int64_t, int64_t, SumLine> {
 public:
  explicit ParitySum(bool may_fail) : may_fail_(may_fail) {}
  void Open(weir::KeyedRuntimeContext<int64_t>& ctx) override { sum_ = &ctx.GetState<int64_t>("sum"); }
  void ProcessElement(const int64_t& n, const int64_t& parity, weir::Collector<SumLine>& out) override {
    if (may_fail_ && Failures().ShouldFail(n)) {
      throw std::runtime_error("injected failure at n=" + std::to_string(n) + " (--fail-at)");
    }
    int64_t sum = sum_->ValueOr(0) + n;
    sum_->Update(sum);
    out.Collect(SumLine{n, parity == 1, sum});
  }

 private:
  bool may_fail_;
  weir::ValueState<int64_t>* sum_ = nullptr;
};

// "<n>,<odd|even>,<sum>": the line every number_sum example writes.
std::string FormatSumLine(const SumLine& line) {
  std::string s = std::to_string(line.n);
  s += line.odd ? ",odd," : ",even,";
  s += std::to_string(line.sum);
  return s;
}

// The options every number_sum example shares: --count, --rate and --fail-at.
struct ParitySumOptions {
  int64_t count = 1000;  // 0: unbounded
  double rate = 0;       // records per second, 0: no limit
  bool may_fail = false;  // --fail-at listed numbers (now in Failures())
};

ParitySumOptions ParseParitySumOptions(const weir::JobArgs& args) {
  ParitySumOptions o;
  o.count = args.GetInt("count", 1000);
  if (o.count < 0) throw weir::JobArgumentError("--count must be 0 (unbounded) or a positive number");
  o.rate = args.GetDouble("rate", 0);
  if (o.rate < 0) throw weir::JobArgumentError("--rate must be 0 (no limit) or a positive number");
  Failures().Parse(args.Get("fail-at"));
  o.may_fail = !Failures().empty();
  return o;
}

// Adds the source and the per-parity sums; the caller adds the sink.
weir::DataStream<SumLine> AddParitySums(weir::StreamExecutionEnvironment& env, const ParitySumOptions& o) {
  int64_t last = o.count == 0 ? INT64_MAX : o.count;
  // One source subtask keeps each parity's numbers in order, so running sums are exact.
  return env.AddSource<int64_t>(weir::SequenceSource(1, last, o.rate), "Sequence")
      .Uid("sequence-source")
      .SetParallelism(1)
      .KeyBy([](int64_t n) { return n % 2; })
      .Process(ParitySum(o.may_fail))
      .Name("Parity Sum")
      .Uid("parity-sum");
}

}  // namespace
