// broadcast_rules: the broadcast state pattern. A rules stream (the divisors of
// --divisors) is broadcast to every subtask of a keyed stream of the numbers 1..N
// (event time n milliseconds, keyed by parity); each subtask keeps the rules in its
// broadcast state. Each number is answered once the rules are all in, when the
// watermark passes it, by the line
//   "<n>,<odd|even>,<position of n among the numbers of its parity>,<divisors of n among the rules, ';'-separated, or ->"
// so the output does not depend on how the two inputs interleave.
//
//   weir run build/examples/broadcast_rules.so --count 1000 [--divisors 3,5,7] [--rate R]
//                                              [--output DIR] [--fail-at n1,n2,...]
//                                              [--sink print|file|discard]
//
// --count 0 runs unbounded; --rate limits numbers per second (0: as fast as possible);
// --output writes committed part files into DIR (stdout otherwise); --fail-at makes the
// rules operator throw the first time, in this process, that it answers each listed number;
// --sink discard drops the lines (for benchmarks).
// Restored at another parallelism, every new subtask reads the broadcast state of an old one.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "examples/failure_plan.h"
#include "lib/api/weir.h"

namespace {

const weir::MapStateDescriptor<int64_t, bool> kDivisors("divisors");

class ApplyRules final : public weir::KeyedBroadcastProcessFunction<int64_t, int64_t, int64_t, std::string> {
 public:
  explicit ApplyRules(bool may_fail) : may_fail_(may_fail) {}
  void Open(weir::KeyedRuntimeContext<int64_t>& ctx) override {
    position_ = &ctx.GetState<int64_t>("position");
    timers_ = &ctx.GetTimerService();
  }
  // A number waits, as an event-time timer of its key, for the watermark: the rules
  // input holds the watermark back until it ended, so every rule is in by then.
  void ProcessElement(const int64_t& n, const int64_t&, const weir::ReadOnlyBroadcastContext&,
                      weir::Collector<std::string>&) override {
    timers_->RegisterEventTimeTimer(n);
  }
  void ProcessBroadcastElement(const int64_t& divisor, const weir::BroadcastContext& ctx,
                               weir::Collector<std::string>&) override {
    ctx.GetBroadcastState(kDivisors).Put(divisor, true);
  }
  void OnTimer(int64_t n, const int64_t& parity, weir::TimeDomain, const weir::ReadOnlyBroadcastContext& ctx,
               weir::Collector<std::string>& out) override {
    if (may_fail_ && Failures().ShouldFail(n)) {
      throw std::runtime_error("injected failure at n=" + std::to_string(n) + " (--fail-at)");
    }
    const int64_t position = position_->Value().value_or(0) + 1;
    position_->Update(position);
    std::string divisors;
    for (const auto& [d, unused] : ctx.GetBroadcastState(kDivisors).Entries()) {
      if (n % d == 0) divisors += (divisors.empty() ? "" : ";") + std::to_string(d);
    }
    out.Collect(std::to_string(n) + "," + (parity == 1 ? "odd" : "even") + "," + std::to_string(position) + "," +
                (divisors.empty() ? "-" : divisors));
  }

 private:
  bool may_fail_;
  weir::ValueState<int64_t>* position_ = nullptr;
  weir::TimerService<int64_t>* timers_ = nullptr;
};

std::vector<int64_t> ParseDivisors(const std::string& list) {
  std::vector<int64_t> divisors;
  for (const auto& part : weir::Split(list, ',')) {
    size_t used = 0;
    int64_t d = 0;
    try {
      d = std::stoll(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != part.size() || d <= 0) {
      throw weir::JobArgumentError("--divisors takes positive numbers separated by commas, not '" + list + "'");
    }
    divisors.push_back(d);
  }
  return divisors;
}

void BroadcastRules(weir::StreamExecutionEnvironment& env, const weir::JobArgs& args) {
  args.CheckKnown({"count", "rate", "output", "fail-at", "divisors", "sink"});
  int64_t count = args.GetInt("count", 1000);
  if (count < 0) throw weir::JobArgumentError("--count must be 0 (unbounded) or a positive number");
  double rate = args.GetDouble("rate", 0);
  if (rate < 0) throw weir::JobArgumentError("--rate must be 0 (no limit) or a positive number");
  const std::vector<int64_t> divisors = ParseDivisors(args.Get("divisors", "3,5,7"));
  Failures().Parse(args.Get("fail-at"));
  const bool may_fail = !Failures().empty();
  std::string output = args.Get("output");
  std::string sink = args.Get("sink", output.empty() ? "print" : "file");
  if (sink != "print" && sink != "file" && sink != "discard") {
    throw weir::JobArgumentError("--sink must be print, file or discard, not '" + sink + "'");
  }
  if (sink == "file" && output.empty()) throw weir::JobArgumentError("--sink file needs --output DIR");
  env.SetJobName("Broadcast Rules");

  auto rules = env.AddSource<int64_t>(weir::SequenceSource(0, static_cast<int64_t>(divisors.size()) - 1, 0), "Rules")
                   .Uid("rules-source")
                   .SetParallelism(1)
                   .Map([divisors](const int64_t& i) { return divisors[static_cast<size_t>(i)]; })
                   .Name("Divisors")
                   .Uid("divisors")
                   .SetParallelism(1)
                   .Broadcast(kDivisors);
  auto lines = env.AddSource<int64_t>(weir::SequenceSource(1, count == 0 ? INT64_MAX : count, rate), "Numbers")
                   .Uid("numbers-source")
                   .AssignTimestampsAndWatermarks(weir::WatermarkStrategy<int64_t>::ForMonotonousTimestamps()
                                                      .WithTimestampAssigner([](const int64_t& n) { return n; }))
                   .Uid("timestamps")
                   .KeyBy([](int64_t n) { return n % 2; })
                   .Connect(rules)
                   .Process(ApplyRules(may_fail))
                   .Name("Apply Rules")
                   .Uid("apply-rules");
  if (sink == "discard") {
    lines.AddSink(weir::DiscardingSink<std::string>(), "Discard").Uid("discard-sink");
  } else if (sink == "file") {
    lines.AddSink(weir::FileSink<std::string>(output), "File Sink").Uid("file-sink");
  } else {
    lines.Print().Uid("print-sink");
  }
}

}  // namespace

WEIR_JOB("BroadcastRules", BroadcastRules, "Divisor rules broadcast to a keyed stream of numbers");
