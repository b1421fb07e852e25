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
//   BroadcastProcess --count N --rules R: numbers 1..N and the rules 1..R broadcast
//                   (the rules source at parallelism 1); each subtask writes "rule,<subtask>,<r>"
//                   for each rule it stores in its broadcast state, and "n,<n>" per number.

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
  void Open(weir::RuntimeContext& ctx) override { subtask_ = ctx.IndexOfThisSubtask(); }
  void ProcessElement(const int64_t& n, const weir::ReadOnlyBroadcastContext&,
                      weir::Collector<std::string>& out) override {
    out.Collect("n," + std::to_string(n));
  }
  void ProcessBroadcastElement(const int64_t& r, const weir::BroadcastContext& ctx,
                               weir::Collector<std::string>& out) override {
    auto& rules = ctx.GetBroadcastState(kRules);
    if (rules.Contains(r)) throw std::logic_error("rule " + std::to_string(r) + " arrived twice");
    rules.Put(r, true);
    out.Collect("rule," + std::to_string(subtask_) + "," + std::to_string(r));
  }

 private:
  int subtask_ = 0;
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
  Write(Numbers(env, "numbers", n).Connect(rules).Process(StoreRules()).Uid("broadcast-process"), args);
}

}  // namespace

WEIR_JOB("CoMap", CoMap, "Two sequences through a CoMapFunction");
WEIR_JOB("CoFlatMap", CoFlatMap, "Two sequences through a CoFlatMapFunction");
WEIR_JOB("KeyedCoProcess", KeyedCoProcess, "Per-key sums of two keyed sequences");
WEIR_JOB("BroadcastProcess", BroadcastProcess, "Rules broadcast to a non-keyed stream");
