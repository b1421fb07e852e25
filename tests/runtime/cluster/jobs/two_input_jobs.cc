// Jobs with two-input operators for the connected-stream tests, built as a job shared
// object like the examples (tests/runtime/cluster/CMakeLists.txt). Each writes
// committed part files into --output DIR.
//
//   CoMap           --count N: numbers 1..N (input 1) and 1..N/2 (input 2) through a
//                   CoMapFunction: lines "a,<n>" and "b,<n>".
//   CoFlatMap       --count N: the same through a CoFlatMapFunction that emits each
//                   number of input 1 twice ("a,<n>" twice) and drops the odd ones of input 2.
//   KeyedCoProcess  --count N [--fail-at n] [--rate R] [--pause-us U]: numbers 1..N on both inputs with event time n,
//                   keyed by n % 10; per key the sums of each input in keyed state, emitted
//                   by an event-time timer at N: lines "<key>,<sum 1>,<sum 2>". --pause-us
//                   makes each record take U microseconds (backpressure on both inputs).
//   BroadcastProcess --count N --rules R [--pause-us U]: numbers 1..N and the rules 1..R
//                   broadcast (the rules source at parallelism 1); each subtask writes
//                   "rule,<subtask>,<r>" for each rule it stores in its broadcast state (and
//                   fails on a rule it holds already), and "n,<n>" per number. --pause-us
//                   makes each rule take U microseconds (backpressure on the broadcast input).
//   SideOutputs     --kind co|keyed-co|broadcast|keyed-broadcast --count N [--fail-at n]
//                   --output DIR --odd-output DIR --other-output DIR: numbers 1..N (input 1)
//                   and 1..3 (input 2, broadcast for the broadcast kinds) through the
//                   process function of that kind: "n,<n>" for even n to the main output,
//                   odd n (int64) to the side output "odd", and to the side output "other"
//                   (strings) per record m of input 2 "b,<m>" (co), "b,<key>,<m>" (keyed-co) or
//                   "b,<subtask>,<m>" from every subtask (broadcast kinds) and, for the
//                   keyed kinds, "timer,<key>" from an event-time timer at N per key of input 1.

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

#include "lib/api/weir.h"

namespace {

std::atomic<int64_t> g_fail_at{-1};

class Tag final : public weir::CoMapFunction<int64_t, int64_t, std::string> {
 public:
  std::string Map1(const int64_t& n) override { return "a," + std::to_string(n); }
  std::string Map2(const int64_t& n) override { return "b," + std::to_string(n); }
};

class TwiceAndEven final : public weir::CoFlatMapFunction<int64_t, int64_t, std::string> {
 public:
  void FlatMap1(const int64_t& n, weir::Collector<std::string>& out) override {
    out.Collect("a," + std::to_string(n));
    out.Collect("a," + std::to_string(n));
  }
  void FlatMap2(const int64_t& n, weir::Collector<std::string>& out) override {
    if (n % 2 == 0) out.Collect("b," + std::to_string(n));
  }
};

class SumsPerKey final : public weir::KeyedCoProcessFunction<int64_t, int64_t, int64_t, std::string> {
 public:
  SumsPerKey(int64_t end, int64_t pause_us) : end_(end), pause_us_(pause_us) {}
  void Open(weir::KeyedRuntimeContext<int64_t>& ctx) override {
    sum1_ = &ctx.GetState<int64_t>("sum-1");
    sum2_ = &ctx.GetState<int64_t>("sum-2");
    timers_ = &ctx.GetTimerService();
  }
  void ProcessElement1(const int64_t& n, const int64_t&, weir::Collector<std::string>&) override {
    int64_t fail = g_fail_at.load();
    if (n == fail && g_fail_at.compare_exchange_strong(fail, -1)) {
      throw std::runtime_error("injected failure at n=" + std::to_string(n));
    }
    Pause();
    sum1_->Update(sum1_->Value().value_or(0) + n);
    timers_->RegisterEventTimeTimer(end_);
  }
  void ProcessElement2(const int64_t& n, const int64_t&, weir::Collector<std::string>&) override {
    Pause();
    sum2_->Update(sum2_->Value().value_or(0) + n);
    timers_->RegisterEventTimeTimer(end_);
  }
  void OnTimer(int64_t, const int64_t& key, weir::TimeDomain, weir::Collector<std::string>& out) override {
    out.Collect(std::to_string(key) + "," + std::to_string(sum1_->Value().value_or(0)) + "," +
                std::to_string(sum2_->Value().value_or(0)));
  }

 private:
  void Pause() const {
    if (pause_us_ > 0) std::this_thread::sleep_for(std::chrono::microseconds(pause_us_));
  }
  int64_t end_;
  int64_t pause_us_;
  weir::ValueState<int64_t>* sum1_ = nullptr;
  weir::ValueState<int64_t>* sum2_ = nullptr;
  weir::TimerService<int64_t>* timers_ = nullptr;
};

const weir::MapStateDescriptor<int64_t, bool> kRules("rules");

class StoreRules final : public weir::BroadcastProcessFunction<int64_t, int64_t, std::string> {
 public:
  explicit StoreRules(int64_t pause_us) : pause_us_(pause_us) {}
  void Open(weir::RuntimeContext& ctx) override { subtask_ = ctx.IndexOfThisSubtask(); }
  void ProcessElement(const int64_t& n, const weir::ReadOnlyBroadcastContext&,
                      weir::Collector<std::string>& out) override {
    out.Collect("n," + std::to_string(n));
  }
  void ProcessBroadcastElement(const int64_t& r, const weir::BroadcastContext& ctx,
                               weir::Collector<std::string>& out) override {
    auto& rules = ctx.GetBroadcastState(kRules);
    if (rules.Contains(r)) throw std::logic_error("rule " + std::to_string(r) + " arrived twice");
    if (pause_us_ > 0) std::this_thread::sleep_for(std::chrono::microseconds(pause_us_));
    rules.Put(r, true);
    out.Collect("rule," + std::to_string(subtask_) + "," + std::to_string(r));
  }

 private:
  int64_t pause_us_;
  int subtask_ = 0;
};

const weir::OutputTag<int64_t> kOdd("odd");
const weir::OutputTag<std::string> kOther("other");

void FailAt(int64_t n) {
  int64_t fail = g_fail_at.load();
  if (n == fail && g_fail_at.compare_exchange_strong(fail, -1)) {
    throw std::runtime_error("injected failure at n=" + std::to_string(n));
  }
}

// Even numbers to the main output, odd ones to the side output "odd".
void SplitEvenOdd(int64_t n, const weir::SideOutputContext& ctx, weir::Collector<std::string>& out) {
  FailAt(n);
  if (n % 2 == 0) {
    out.Collect("n," + std::to_string(n));
  } else {
    ctx.Output(kOdd, n);
  }
}

class CoSplit final : public weir::CoProcessFunction<int64_t, int64_t, std::string> {
 public:
  void ProcessElement1(const int64_t& n, const Context& ctx, weir::Collector<std::string>& out) override {
    SplitEvenOdd(n, ctx, out);
  }
  void ProcessElement2(const int64_t& m, const Context& ctx, weir::Collector<std::string>&) override {
    ctx.Output(kOther, "b," + std::to_string(m));
  }
};

class KeyedCoSplit final : public weir::KeyedCoProcessFunction<int64_t, int64_t, int64_t, std::string> {
 public:
  explicit KeyedCoSplit(int64_t end) : end_(end) {}
  void Open(weir::KeyedRuntimeContext<int64_t>& ctx) override { ctx_ = &ctx; }
  void ProcessElement1(const int64_t& n, const int64_t&, weir::Collector<std::string>& out) override {
    SplitEvenOdd(n, *ctx_, out);
    ctx_->GetTimerService().RegisterEventTimeTimer(end_);
  }
  void ProcessElement2(const int64_t& m, const int64_t& key, weir::Collector<std::string>&) override {
    ctx_->Output(kOther, "b," + std::to_string(key) + "," + std::to_string(m));
  }
  void OnTimer(int64_t, const int64_t& key, weir::TimeDomain, weir::Collector<std::string>&) override {
    ctx_->Output(kOther, "timer," + std::to_string(key));
  }

 private:
  int64_t end_;
  weir::KeyedRuntimeContext<int64_t>* ctx_ = nullptr;
};

class BroadcastSplit final : public weir::BroadcastProcessFunction<int64_t, int64_t, std::string> {
 public:
  void Open(weir::RuntimeContext& ctx) override { subtask_ = ctx.IndexOfThisSubtask(); }
  void ProcessElement(const int64_t& n, const weir::ReadOnlyBroadcastContext& ctx,
                      weir::Collector<std::string>& out) override {
    SplitEvenOdd(n, ctx, out);
  }
  void ProcessBroadcastElement(const int64_t& m, const weir::BroadcastContext& ctx,
                               weir::Collector<std::string>&) override {
    ctx.Output(kOther, "b," + std::to_string(subtask_) + "," + std::to_string(m));
  }

 private:
  int subtask_ = 0;
};

class KeyedBroadcastSplit final : public weir::KeyedBroadcastProcessFunction<int64_t, int64_t, int64_t, std::string> {
 public:
  explicit KeyedBroadcastSplit(int64_t end) : end_(end) {}
  void Open(weir::KeyedRuntimeContext<int64_t>& ctx) override {
    timers_ = &ctx.GetTimerService();
    subtask_ = ctx.IndexOfThisSubtask();
  }
  void ProcessElement(const int64_t& n, const int64_t&, const weir::ReadOnlyBroadcastContext& ctx,
                      weir::Collector<std::string>& out) override {
    SplitEvenOdd(n, ctx, out);
    timers_->RegisterEventTimeTimer(end_);
  }
  void ProcessBroadcastElement(const int64_t& m, const weir::BroadcastContext& ctx,
                               weir::Collector<std::string>&) override {
    ctx.Output(kOther, "b," + std::to_string(subtask_) + "," + std::to_string(m));
  }
  void OnTimer(int64_t, const int64_t& key, weir::TimeDomain, const weir::ReadOnlyBroadcastContext& ctx,
               weir::Collector<std::string>&) override {
    ctx.Output(kOther, "timer," + std::to_string(key));
  }

 private:
  int64_t end_;
  int subtask_ = 0;
  weir::TimerService<int64_t>* timers_ = nullptr;
};

weir::DataStream<int64_t> Numbers(weir::StreamExecutionEnvironment& env, const std::string& uid, int64_t count,
                                  bool timestamped = false, double rate = 0) {
  auto s = env.AddSource<int64_t>(weir::SequenceSource(1, count, rate), uid).Uid(uid);
  if (!timestamped) return s;
  return s
      .AssignTimestampsAndWatermarks(weir::WatermarkStrategy<int64_t>::ForMonotonousTimestamps()
                                         .WithTimestampAssigner([](const int64_t& n) { return n; }))
      .Uid(uid + "-timestamps");
}

void Write(weir::DataStream<std::string> lines, const weir::JobArgs& args) {
  lines.AddSink(weir::FileSink<std::string>(args.Get("output")), "File Sink").Uid("file-sink");
}

void CoMap(weir::StreamExecutionEnvironment& env, const weir::JobArgs& args) {
  int64_t n = args.GetInt("count", 100);
  Write(Numbers(env, "a", n).Connect(Numbers(env, "b", n / 2)).Map(Tag()).Uid("co-map"), args);
}

void CoFlatMap(weir::StreamExecutionEnvironment& env, const weir::JobArgs& args) {
  int64_t n = args.GetInt("count", 100);
  Write(Numbers(env, "a", n).Connect(Numbers(env, "b", n / 2)).FlatMap(TwiceAndEven()).Uid("co-flat-map"), args);
}

void KeyedCoProcess(weir::StreamExecutionEnvironment& env, const weir::JobArgs& args) {
  int64_t n = args.GetInt("count", 100);
  g_fail_at = args.GetInt("fail-at", -1);
  const double rate = args.GetDouble("rate", 0);
  auto key = [](int64_t v) { return v % 10; };
  Write(Numbers(env, "a", n, true, rate)
            .KeyBy(key)
            .Connect(Numbers(env, "b", n, true, rate).KeyBy(key))
            .Process(SumsPerKey(n, args.GetInt("pause-us", 0)))
            .Uid("co-process"),
        args);
}

void BroadcastProcess(weir::StreamExecutionEnvironment& env, const weir::JobArgs& args) {
  int64_t n = args.GetInt("count", 100);
  auto rules = Numbers(env, "rules", args.GetInt("rules", 5)).SetParallelism(1).Broadcast(kRules);
  Write(Numbers(env, "numbers", n)
            .Connect(rules)
            .Process(StoreRules(args.GetInt("pause-us", 0)))
            .Uid("broadcast-process"),
        args);
}

void SideOutputs(weir::StreamExecutionEnvironment& env, const weir::JobArgs& args) {
  int64_t n = args.GetInt("count", 100);
  g_fail_at = args.GetInt("fail-at", -1);
  const std::string kind = args.Get("kind");
  auto key = [](int64_t v) { return v % 10; };
  auto numbers = Numbers(env, "a", n, true);
  auto second = Numbers(env, "b", 3, true).SetParallelism(1);
  auto split = [&]() -> weir::SingleOutputStreamOperator<std::string> {
    if (kind == "co") return numbers.Connect(second).Process(CoSplit());
    if (kind == "keyed-co") return numbers.KeyBy(key).Connect(second.KeyBy(key)).Process(KeyedCoSplit(n));
    if (kind == "broadcast") return numbers.Connect(second.Broadcast(kRules)).Process(BroadcastSplit());
    if (kind == "keyed-broadcast") return numbers.KeyBy(key).Connect(second.Broadcast(kRules)).Process(KeyedBroadcastSplit(n));
    throw std::invalid_argument("--kind must be co, keyed-co, broadcast or keyed-broadcast, not '" + kind + "'");
  }();
  split.Uid("split");
  split.GetSideOutput(kOdd)
      .Map([](const int64_t& v) { return "odd," + std::to_string(v); })
      .Uid("odd-lines")
      .AddSink(weir::FileSink<std::string>(args.Get("odd-output")), "Odd Sink")
      .Uid("odd-sink");
  split.GetSideOutput(kOther).AddSink(weir::FileSink<std::string>(args.Get("other-output")), "Other Sink").Uid("other-sink");
  Write(split, args);
}

}  // namespace

WEIR_JOB("CoMap", CoMap, "Two sequences through a CoMapFunction");
WEIR_JOB("CoFlatMap", CoFlatMap, "Two sequences through a CoFlatMapFunction");
WEIR_JOB("KeyedCoProcess", KeyedCoProcess, "Per-key sums of two keyed sequences");
WEIR_JOB("BroadcastProcess", BroadcastProcess, "Rules broadcast to a non-keyed stream");
WEIR_JOB("SideOutputs", SideOutputs, "Two-input process functions with side outputs");
