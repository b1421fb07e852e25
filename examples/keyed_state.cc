// keyed_state: a job with as much keyed state as asked for, to measure checkpoints
// and savepoints against state size. The numbers 1..N are keyed by n mod K and
// summed per key in a ValueState, so the state holds K entries. With --value-bytes B
// each key also keeps B bytes of payload in a second ValueState, written once, on the
// key's first number: K keys then hold about K * (B + 8) bytes of state (B = 1000 and
// 1 M keys make 1 GB). The payload is pseudo-random, derived from the key, so that
// compression (RocksDB's Snappy) cannot shrink it.
//
//   weir run build/examples/keyed_state.so --keys 100000 [--count 0] [--rate 0] [--value-bytes 0]

#include <cstring>
#include <string>

#include "lib/api/weir.h"

namespace {

constexpr int64_t kMaxValueBytes = 64 << 20;

// B bytes that depend on the key only (splitmix64), the same in every run.
std::string Payload(int64_t key, int64_t bytes) {
  std::string payload(static_cast<size_t>(bytes), '\0');
  uint64_t x = static_cast<uint64_t>(key);
  for (size_t i = 0; i < payload.size(); i += sizeof(uint64_t)) {
    uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    std::memcpy(payload.data() + i, &z, std::min(sizeof z, payload.size() - i));
  }
  return payload;
}

class KeySum final : public weir::KeyedProcessFunction<int64_t, int64_t, int64_t> {
 public:
  explicit KeySum(int64_t value_bytes) : value_bytes_(value_bytes) {}
  void Open(weir::KeyedRuntimeContext<int64_t>& ctx) override {
    sum_ = &ctx.GetState<int64_t>("sum");
    if (value_bytes_ > 0) payload_ = &ctx.GetState<std::string>("payload");
  }
  void ProcessElement(const int64_t& n, const int64_t& key, weir::Collector<int64_t>& out) override {
    std::optional<int64_t> sum = sum_->Value();
    if (!sum && payload_) payload_->Update(Payload(key, value_bytes_));
    int64_t s = sum.value_or(0) + n;
    sum_->Update(s);
    out.Collect(s);
  }

 private:
  int64_t value_bytes_;
  weir::ValueState<int64_t>* sum_ = nullptr;
  weir::ValueState<std::string>* payload_ = nullptr;
};

void KeyedState(weir::StreamExecutionEnvironment& env, const weir::JobArgs& args) {
  args.CheckKnown({"keys", "count", "rate", "value-bytes"});
  int64_t keys = args.GetInt("keys", 1000);
  if (keys < 1) throw weir::JobArgumentError("--keys must be a positive number");
  int64_t count = args.GetInt("count", 0);
  if (count < 0) throw weir::JobArgumentError("--count must be 0 (unbounded) or a positive number");
  double rate = args.GetDouble("rate", 0);
  int64_t value_bytes = args.GetInt("value-bytes", 0);
  if (value_bytes < 0 || value_bytes > kMaxValueBytes) {
    throw weir::JobArgumentError("--value-bytes must be between 0 (no payload) and " +
                                 std::to_string(kMaxValueBytes) + " (64 MiB per key); got " +
                                 std::to_string(value_bytes));
  }
  env.SetJobName("Keyed State");
  env.AddSource<int64_t>(weir::SequenceSource(1, count == 0 ? INT64_MAX : count, rate), "Sequence")
      .Uid("sequence-source")
      .KeyBy([keys](int64_t n) { return n % keys; })
      .Process(KeySum(value_bytes))
      .Name("Key Sum")
      .Uid("key-sum")
      .AddSink(weir::DiscardingSink<int64_t>(), "Discard")
      .Uid("discard-sink");
}

}  // namespace

WEIR_JOB("KeyedState", KeyedState, "Keeps one keyed value per key, for checkpoint and savepoint benchmarks");
