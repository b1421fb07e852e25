// keyed_state: a job with as much keyed state as asked for, to measure checkpoints
// and savepoints against state size. The numbers 1..N are keyed by n mod K and
// summed per key in a ValueState, so the state holds K entries.
//
//   weir run build/examples/keyed_state.so --keys 100000 [--count 0] [--rate 0]

#include "lib/api/weir.h"

namespace {

class KeySum final : public weir::KeyedProcessFunction<int64_t, int64_t, int64_t> {
 public:
  void Open(weir::KeyedRuntimeContext<int64_t>& ctx) override { sum_ = &ctx.GetState<int64_t>("sum"); }
  void ProcessElement(const int64_t& n, const int64_t& key, weir::Collector<int64_t>& out) override {
    int64_t s = sum_->ValueOr(0) + n;
    sum_->Update(s);
    out.Collect(s);
  }

 private:
  weir::ValueState<int64_t>* sum_ = nullptr;
};

void KeyedState(weir::StreamExecutionEnvironment& env, const weir::JobArgs& args) {
  args.CheckKnown({"keys", "count", "rate"});
  int64_t keys = args.GetInt("keys", 1000);
  if (keys < 1) throw weir::JobArgumentError("--keys must be a positive number");
  int64_t count = args.GetInt("count", 0);
  if (count < 0) throw weir::JobArgumentError("--count must be 0 (unbounded) or a positive number");
  double rate = args.GetDouble("rate", 0);
  env.SetJobName("Keyed State");
  env.AddSource<int64_t>(weir::SequenceSource(1, count == 0 ? INT64_MAX : count, rate), "Sequence")
      .Uid("sequence-source")
      .KeyBy([keys](int64_t n) { return n % keys; })
      .Process(KeySum())
      .Name("Key Sum")
      .Uid("key-sum")
      .AddSink(weir::DiscardingSink<int64_t>(), "Discard")
      .Uid("discard-sink");
}

}  // namespace

WEIR_JOB("KeyedState", KeyedState, "Keeps one keyed value per key, for checkpoint and savepoint benchmarks");
