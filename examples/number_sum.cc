// number_sum: the natural numbers 1..N, keyed by n mod K, summed per key in a
// ValueState. For every input n it emits "<n>,<key>,<sum of that key up to n>", the
// key being odd/even with K = 2 (the default) and the number n mod K otherwise.
//
//   weir run build/examples/number_sum.so --count 1000 [--keys K] [--rate R] [--output DIR]
//                                        [--sink print|file|discard] [--fail-at n1,n2,...]
//                                        [--sink-rate R]
//
// --count 0 runs unbounded; --rate limits records per second (0: as fast as possible);
// --output writes committed part files into DIR (stdout otherwise); --fail-at makes
// the summing operator throw the first time, in this process, that it sees each
// listed number (to test recovery). --sink-rate R makes each sink subtask take at most R
// records per second (0: no limit), after a rebalance: backpressure on demand.

#include <chrono>
#include <thread>

#include "examples/parity_sum.h"

namespace {

// Passes records on at most `rate` per second, sleeping between them (one subtask each).
class Throttle {
 public:
  explicit Throttle(double rate) : interval_(std::chrono::nanoseconds(static_cast<int64_t>(1e9 / rate))) {}
  std::string operator()(const std::string& line) {
    const auto now = std::chrono::steady_clock::now();
    if (next_ < now) next_ = now;
    std::this_thread::sleep_until(next_);
    next_ += interval_;
    return line;
  }

 private:
  std::chrono::nanoseconds interval_;
  std::chrono::steady_clock::time_point next_{};
};

void NumberSum(weir::StreamExecutionEnvironment& env, const weir::JobArgs& args) {
  args.CheckKnown({"count", "rate", "keys", "output", "sink", "fail-at", "sink-rate"});
  const double sink_rate = args.GetDouble("sink-rate", 0);
  if (sink_rate < 0) throw weir::JobArgumentError("--sink-rate must be 0 (no limit) or a positive number");
  ParitySumOptions options = ParseParitySumOptions(args);
  std::string output = args.Get("output");
  std::string sink = args.Get("sink", output.empty() ? "print" : "file");
  if (sink != "print" && sink != "file" && sink != "discard") {
    throw weir::JobArgumentError("--sink must be print, file or discard, not '" + sink + "'");
  }
  if (sink == "file" && output.empty()) throw weir::JobArgumentError("--sink file needs --output DIR");
  env.SetJobName("Number Sum");
  auto sums = AddParitySums(env, options);
  if (sink == "discard") {
    sums.AddSink(weir::DiscardingSink<SumLine>(), "Discard").Uid("discard-sink");
    return;
  }
  auto lines = sums.Map(FormatSumLine).Name("Format").Uid("format");
  if (sink_rate > 0) {
    lines = lines.Rebalance().Uid("rebalance").Map(Throttle(sink_rate)).Name("Throttle").Uid("throttle");
  }
  if (sink == "file") {
    lines.AddSink(weir::FileSink<std::string>(output), "File Sink").Uid("file-sink");
  } else {
    lines.Print().Uid("print-sink");
  }
}

}  // namespace

WEIR_JOB("NumberSum", NumberSum, "Sums the natural numbers per parity (the textbook checkpointing example)");
