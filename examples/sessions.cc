// sessions: event-time session windows with a process window function and a side output
// for late records.
//
// Numbers n = 1..N (--count N, 0 = unbounded) belong to key n mod K (--keys K) and happen
// at event time n + (n / S) * P ms: every S numbers (--session-length S) the clock jumps
// P ms (--pause-ms P). A key's session closes after --gap-ms G without its records, so
// with K < G < P each key has one session per block of S numbers. Every L-th number
// (--late-every L, 0: none) comes late instead, at event time -1000 * n; records that
// arrive behind the watermark go to the late-data side output.
//
// Each session fires once, as "<key>,<start>,<end>,<count>,<n1 n2 ...>" (its numbers in
// ascending order, end exclusive), into --output DIR (stdout otherwise); each late record
// as "late,<n>" into --late-output DIR (stdout otherwise). A late record that arrives
// before the first watermark of a run is not behind it: it makes a session of its own.
//
//   weir run build/examples/sessions.so --count 10000 [--keys 4] [--gap-ms 50]
//            [--session-length 100] [--pause-ms 1000] [--late-every 0] [--rate R]
//            [--output DIR] [--late-output DIR] [--fail-at n1,...]

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "examples/failure_plan.h"
#include "lib/api/weir.h"

namespace {

class SessionLine final : public weir::ProcessWindowFunction<int64_t, int64_t, std::string> {
 public:
  void Process(const int64_t& key, const Context& ctx, const std::vector<int64_t>& numbers,
               weir::Collector<std::string>& out) override {
    std::vector<int64_t> sorted = numbers;
    std::sort(sorted.begin(), sorted.end());
    std::string line = std::to_string(key) + "," + std::to_string(ctx.window().start) + "," +
                       std::to_string(ctx.window().end) + "," + std::to_string(sorted.size()) + ",";
    for (size_t i = 0; i < sorted.size(); ++i) line += (i ? " " : "") + std::to_string(sorted[i]);
    out.Collect(line);
  }
};

int64_t PositiveArg(const weir::JobArgs& args, const std::string& name, int64_t fallback) {
  int64_t v = args.GetInt(name, fallback);
  if (v <= 0) throw weir::JobArgumentError("--" + name + " must be a positive number");
  return v;
}

void Sessions(weir::StreamExecutionEnvironment& env, const weir::JobArgs& args) {
  args.CheckKnown({"count", "keys", "gap-ms", "session-length", "pause-ms", "late-every", "rate", "output",
                   "late-output", "fail-at"});
  const int64_t count = args.GetInt("count", 10000);
  if (count < 0) throw weir::JobArgumentError("--count must be 0 (unbounded) or a positive number");
  const int64_t keys = PositiveArg(args, "keys", 4);
  const int64_t gap_ms = PositiveArg(args, "gap-ms", 50);
  const int64_t session_length = PositiveArg(args, "session-length", 100);
  const int64_t pause_ms = PositiveArg(args, "pause-ms", 1000);
  const int64_t late_every = args.GetInt("late-every", 0);
  if (late_every < 0) throw weir::JobArgumentError("--late-every must be 0 (no late records) or a positive number");
  const double rate = args.GetDouble("rate", 0);
  if (rate < 0) throw weir::JobArgumentError("--rate must be 0 (no limit) or a positive number");
  Failures().Parse(args.Get("fail-at"));
  const bool may_fail = !Failures().empty();
  env.SetJobName("Sessions");

  auto event_time = [session_length, pause_ms, late_every](const int64_t& n) {
    if (late_every > 0 && n % late_every == 0) return -1000 * n;
    return n + (n / session_length) * pause_ms;
  };
  weir::OutputTag<int64_t> late("late-numbers");
  auto sessions = env.AddSource<int64_t>(weir::SequenceSource(1, count == 0 ? INT64_MAX : count, rate), "Sequence")
                      .Uid("sequence-source")
                      .AssignTimestampsAndWatermarks(
                          weir::WatermarkStrategy<int64_t>::ForMonotonousTimestamps().WithTimestampAssigner(event_time))
                      .Uid("timestamps")
                      .Map([may_fail](const int64_t& n) {
                        if (may_fail && Failures().ShouldFail(n)) {
                          throw std::runtime_error("injected failure at n=" + std::to_string(n) + " (--fail-at)");
                        }
                        return n;
                      })
                      .Uid("failures")
                      .KeyBy([keys](const int64_t& n) { return n % keys; })
                      .Window(weir::EventTimeSessionWindows::WithGap(gap_ms))
                      .SideOutputLateData(late)
                      .Process(SessionLine());
  sessions.Name("Sessions").Uid("sessions");
  auto late_lines = sessions.GetSideOutput(late).Map([](const int64_t& n) { return "late," + std::to_string(n); });
  late_lines.Uid("late-lines");

  const std::string output = args.Get("output");
  const std::string late_output = args.Get("late-output");
  if (output.empty()) {
    sessions.Print().Uid("print-sink");
  } else {
    sessions.AddSink(weir::FileSink<std::string>(output), "File Sink").Uid("file-sink");
  }
  if (late_output.empty()) {
    late_lines.Print().Uid("late-print-sink");
  } else {
    if (late_output == output) throw weir::JobArgumentError("--late-output must be another directory than --output");
    late_lines.AddSink(weir::FileSink<std::string>(late_output), "Late File Sink").Uid("late-file-sink");
  }
}

}  // namespace

WEIR_JOB("Sessions", Sessions, "Event-time session windows with a side output for late records");
