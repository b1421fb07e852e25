// window_sum: the natural numbers 1..N with event time n milliseconds, keyed by parity
// (or by n mod K with --keys K), summed in tumbling event-time windows of W milliseconds.
// Each window and key fires once, when the watermark passes the window's end, as the line
// "<window_start>,<window_end>,<key>,<sum>,<count>" (window_end exclusive, key odd/even;
// with --keys K other than 2, the number n mod K).
//
//   weir run build/examples/window_sum.so --count 1000 --window-ms 100 [--rate R]
//                                         [--output DIR] [--fail-at n1,n2,...]
//                                         [--slide-ms S] [--sink print|file|discard]
//                                         [--keys K]
//
// --count 0 runs unbounded; --rate limits records per second (0: as fast as possible);
// --output writes committed part files into DIR (stdout otherwise); --fail-at makes the
// window operator throw the first time, in this process, that it sees each listed number.
// --slide-ms S makes the windows sliding (W/S windows per record, lines as above);
// --sink discard drops the lines (for benchmarks).
// The end of input (and stop --drain) fires the open windows; stop without --drain
// leaves them in the savepoint, and the restored job fires them.

#include <cstdint>
#include <stdexcept>
#include <string>

#include "examples/failure_plan.h"
#include "lib/api/weir.h"

namespace {

struct SumCount {
  int64_t sum = 0;
  int64_t count = 0;
  WEIR_FIELDS(sum, count)
};

std::string WindowLine(int64_t key, bool by_parity, const weir::TimeWindow& w, const SumCount& r) {
  std::string name = by_parity ? (key == 1 ? "odd" : "even") : std::to_string(key);
  return std::to_string(w.start) + "," + std::to_string(w.end) + "," + name + "," + std::to_string(r.sum) + "," +
         std::to_string(r.count);
}

void WindowSum(weir::StreamExecutionEnvironment& env, const weir::JobArgs& args) {
  args.CheckKnown({"count", "rate", "output", "fail-at", "window-ms", "slide-ms", "sink", "keys"});
  const int64_t keys = args.GetInt("keys", 2);
  if (keys < 1) throw weir::JobArgumentError("--keys must be a positive number");
  int64_t count = args.GetInt("count", 1000);
  if (count < 0) throw weir::JobArgumentError("--count must be 0 (unbounded) or a positive number");
  double rate = args.GetDouble("rate", 0);
  if (rate < 0) throw weir::JobArgumentError("--rate must be 0 (no limit) or a positive number");
  int64_t window_ms = args.GetInt("window-ms", 100);
  if (window_ms <= 0) throw weir::JobArgumentError("--window-ms must be a positive number of milliseconds");
  Failures().Parse(args.Get("fail-at"));
  const bool may_fail = !Failures().empty();
  int64_t slide_ms = args.GetInt("slide-ms", 0);
  if (slide_ms < 0 || slide_ms > window_ms) {
    throw weir::JobArgumentError("--slide-ms must lie between 1 and --window-ms (0: tumbling windows)");
  }
  std::string output = args.Get("output");
  std::string sink = args.Get("sink", output.empty() ? "print" : "file");
  if (sink != "print" && sink != "file" && sink != "discard") {
    throw weir::JobArgumentError("--sink must be print, file or discard, not '" + sink + "'");
  }
  if (sink == "file" && output.empty()) throw weir::JobArgumentError("--sink file needs --output DIR");
  env.SetJobName("Window Sum");

  weir::AggregateFunction<int64_t, SumCount, SumCount> sum_count;
  sum_count.create_accumulator = [] { return SumCount{}; };
  sum_count.add = [may_fail](const int64_t& n, SumCount acc) {
    if (may_fail && Failures().ShouldFail(n)) {
      throw std::runtime_error("injected failure at n=" + std::to_string(n) + " (--fail-at)");
    }
    return SumCount{acc.sum + n, acc.count + 1};
  };
  sum_count.get_result = [](const SumCount& acc) { return acc; };
  // Sums and counts add up in any order: sliding windows keep one accumulator per slide
  // and merge a window's when it fires.
  sum_count.merge = [](SumCount a, const SumCount& b) { return SumCount{a.sum + b.sum, a.count + b.count}; };

  auto keyed =
      env.AddSource<int64_t>(weir::SequenceSource(1, count == 0 ? INT64_MAX : count, rate), "Sequence")
          .Uid("sequence-source")
          .AssignTimestampsAndWatermarks(weir::WatermarkStrategy<int64_t>::ForMonotonousTimestamps()
                                             .WithTimestampAssigner([](const int64_t& n) { return n; }))
          .Uid("timestamps")
          .KeyBy([keys](int64_t n) { return n % keys; });
  auto format = [keys](const int64_t& key, const weir::TimeWindow& w, const SumCount& r,
                       weir::Collector<std::string>& out) { out.Collect(WindowLine(key, keys == 2, w, r)); };
  auto lines = slide_ms == 0
                   ? keyed.Window(weir::TumblingEventTimeWindows::Of(window_ms))
                         .Aggregate<std::string>(sum_count, format)
                   : keyed.Window(weir::SlidingEventTimeWindows::Of(window_ms, slide_ms))
                         .Aggregate<std::string>(sum_count, format);
  lines.Name("Window Sum").Uid("window-sum");
  if (sink == "discard") {
    lines.AddSink(weir::DiscardingSink<std::string>(), "Discard").Uid("discard-sink");
  } else if (sink == "file") {
    lines.AddSink(weir::FileSink<std::string>(output), "File Sink").Uid("file-sink");
  } else {
    lines.Print().Uid("print-sink");
  }
}

}  // namespace

WEIR_JOB("WindowSum", WindowSum, "Sums the natural numbers per parity in tumbling event-time windows");
