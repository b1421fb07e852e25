// rising_temperature: alerts for sensors whose temperature keeps rising, with
// event-time timers in a keyed process function (Flink's classic timer example).
//
// Readings n = 1..N (--count N, 0 = unbounded) come from sensor n mod S (--sensors S)
// at event time n ms with temperature (n * 7919) mod 101. When a sensor's temperature
// rises and no drop follows within --rise-ms D of event time, the alert "<sensor>,<T>"
// is emitted at T, D ms after the rise (the timer registered then fires). A drop deletes
// the sensor's pending timer; a timer already due (T before the drop's time) fires anyway,
// so the alerts do not depend on when watermarks arrive.
//
//   weir run build/examples/rising_temperature.so --count 10000 [--sensors 10] [--rise-ms 30]
//                                                [--rate R] [--output DIR] [--fail-at n1,...]
//
// Timers are keyed state: checkpoints, savepoints and rescaled restores keep them.

#include <cstdint>
#include <stdexcept>
#include <string>

#include "examples/failure_plan.h"
#include "lib/api/weir.h"

namespace {

struct Reading {
  int64_t sensor = 0;
  int64_t time_ms = 0;
  int64_t temperature = 0;
  WEIR_FIELDS(sensor, time_ms, temperature)
};

class RisingTemperature final : public weir::KeyedProcessFunction<int64_t, Reading, std::string> {
 public:
  RisingTemperature(int64_t rise_ms, bool may_fail) : rise_ms_(rise_ms), may_fail_(may_fail) {}
  void Open(weir::KeyedRuntimeContext<int64_t>& ctx) override {
    last_ = &ctx.GetState<int64_t>("last-temperature");
    timer_ = &ctx.GetState<int64_t>("timer");
    timers_ = &ctx.GetTimerService();
  }
  void ProcessElement(const Reading& r, const int64_t&, weir::Collector<std::string>&) override {
    if (may_fail_ && Failures().ShouldFail(r.time_ms)) {
      throw std::runtime_error("injected failure at n=" + std::to_string(r.time_ms) + " (--fail-at)");
    }
    auto last = last_->Value();
    int64_t timer = timer_->ValueOr(0);
    if (timer != 0 && timer < r.time_ms) timer = 0;  // due: it fires by itself
    if (last && r.temperature > *last) {
      if (timer == 0) {
        timer = r.time_ms + rise_ms_;
        timers_->RegisterEventTimeTimer(timer);
      }
    } else if (timer != 0) {
      timers_->DeleteEventTimeTimer(timer);
      timer = 0;
    }
    last_->Update(r.temperature);
    if (timer == 0) {
      timer_->Clear();
    } else {
      timer_->Update(timer);
    }
  }
  void OnTimer(int64_t timestamp, const int64_t& sensor, weir::TimeDomain,
               weir::Collector<std::string>& out) override {
    out.Collect(std::to_string(sensor) + "," + std::to_string(timestamp));
    if (timer_->ValueOr(0) == timestamp) timer_->Clear();
  }

 private:
  int64_t rise_ms_;
  bool may_fail_;
  weir::ValueState<int64_t>* last_ = nullptr;
  weir::ValueState<int64_t>* timer_ = nullptr;
  weir::TimerService<int64_t>* timers_ = nullptr;
};

void RisingTemperatureJob(weir::StreamExecutionEnvironment& env, const weir::JobArgs& args) {
  args.CheckKnown({"count", "sensors", "rise-ms", "rate", "output", "fail-at"});
  int64_t count = args.GetInt("count", 10000);
  if (count < 0) throw weir::JobArgumentError("--count must be 0 (unbounded) or a positive number");
  int64_t sensors = args.GetInt("sensors", 10);
  if (sensors < 1) throw weir::JobArgumentError("--sensors must be a positive number");
  int64_t rise_ms = args.GetInt("rise-ms", 30);
  if (rise_ms < 1) throw weir::JobArgumentError("--rise-ms must be a positive number of milliseconds");
  double rate = args.GetDouble("rate", 0);
  if (rate < 0) throw weir::JobArgumentError("--rate must be 0 (no limit) or a positive number");
  Failures().Parse(args.Get("fail-at"));
  const bool may_fail = !Failures().empty();
  std::string output = args.Get("output");
  env.SetJobName("Rising Temperature");
  auto alerts =
      env.AddSource<int64_t>(weir::SequenceSource(1, count == 0 ? INT64_MAX : count, rate), "Readings")
          .Uid("readings")
          .SetParallelism(1)  // one source chain: each sensor's readings reach its subtask in order
          .Map([sensors](int64_t n) { return Reading{n % sensors, n, (n * 7919) % 101}; })
          .Uid("reading")
          .SetParallelism(1)
          .AssignTimestampsAndWatermarks(weir::WatermarkStrategy<Reading>::ForMonotonousTimestamps()
                                             .WithTimestampAssigner([](const Reading& r) { return r.time_ms; }))
          .Uid("timestamps")
          .SetParallelism(1)
          .KeyBy([](const Reading& r) { return r.sensor; })
          .Process(RisingTemperature(rise_ms, may_fail))
          .Name("Rising Temperature")
          .Uid("rising-temperature");
  if (output.empty()) {
    alerts.Print().Uid("print-sink");
  } else {
    alerts.AddSink(weir::FileSink<std::string>(output), "File Sink").Uid("file-sink");
  }
}

}  // namespace

WEIR_JOB("RisingTemperature", RisingTemperatureJob, "Alerts for sensors whose temperature keeps rising (event-time timers)");
