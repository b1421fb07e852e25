// Jobs for the runtime's edge-case tests, built as a job shared object like the
// examples (tests/runtime/cluster/CMakeLists.txt).
//
//   TwoPipelines  --bounded N --output-a DIR --output-b DIR --rate R
//       two independent pipelines: numbers 1..N into DIR a (ends soon), and an
//       unbounded sequence at R numbers/s into DIR b. Pipeline a finishes while b runs,
//       so checkpoints record it as finished.
//   DrainFailover --output DIR --rate R
//       an unbounded sequence into a file sink that throws once (per process) when its
//       input ends, i.e. during a stop --drain.
//   UnevenUnion   --output DIR --count N --rate R
//       a source that keeps its position in union list state (as sources written
//       before split-based ones did): subtask i emits i+1, i+1+p, ... and subtask 0
//       stops after 10 numbers while the others go on to N, so its subtasks end at
//       different times.
//   SchedulingPolicy --output DIR --count N
//       numbers 1..N, each written as the scheduling policy of the task thread that
//       handled it ("batch", "other" or the policy's number).

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <string>

#include "lib/api/connectors/rate_limiter.h"
#include "lib/api/weir.h"

namespace {

std::atomic<bool> g_finish_failed{false};

// A file sink whose end of input fails once in this process.
class FailingOnceAtEndSink final : public weir::Sink<int64_t>,
                                   public weir::CheckpointedFunction,
                                   public weir::CheckpointListener {
 public:
  explicit FailingOnceAtEndSink(std::string dir) : writer_(std::move(dir)) {}
  void InitializeState(weir::RuntimeContext& ctx) override { writer_.InitializeState(ctx); }
  void Open(weir::RuntimeContext& ctx) override { writer_.Open(ctx); }
  void Invoke(const int64_t& n) override { writer_.Write(std::to_string(n)); }
  void PrepareCommit(int64_t id) override { writer_.PrepareCommit(id); }
  void SnapshotState(int64_t id) override { writer_.SnapshotState(id); }
  void NotifyCheckpointComplete(int64_t id) override { writer_.NotifyCheckpointComplete(id); }
  void Finish() override {
    if (!g_finish_failed.exchange(true)) throw std::runtime_error("injected failure at the end of input");
    writer_.Finish();
  }
  void Close() override { writer_.Close(); }

 private:
  weir::FileSinkWriter writer_;
};

// Emits its share of 1..N, subtask 0 stopping early; position in union list state.
class UnevenUnionSource final : public weir::Source<int64_t>, public weir::CheckpointedFunction {
 public:
  UnevenUnionSource(int64_t count, double rate) : count_(count), limiter_(rate) {}
  void InitializeState(weir::RuntimeContext& ctx) override {
    index_ = ctx.IndexOfThisSubtask();
    step_ = ctx.NumberOfParallelSubtasks();
    next_ = index_ + 1;
    last_ = index_ == 0 ? std::min<int64_t>(count_, 1 + 9 * step_) : count_;
    state_ = &ctx.GetOperatorStateStore().GetUnionListState<std::pair<int64_t, int64_t>>("positions");
    for (const auto& [idx, next] : state_->Get()) {
      if (idx == index_) next_ = next;
    }
  }
  void SnapshotState(int64_t) override { state_->Update({{index_, next_}}); }
  weir::SourceStatus EmitNext(weir::Collector<int64_t>& out, int max, int64_t* wake) override {
    int64_t budget = limiter_.Allow(max, emitted_, wake);
    if (budget == 0) return weir::SourceStatus::kNothingAvailable;
    for (int64_t i = 0; i < budget && next_ <= last_; ++i, ++emitted_, next_ += step_) out.Collect(next_);
    return next_ > last_ ? weir::SourceStatus::kEndOfInput : weir::SourceStatus::kMoreAvailable;
  }

 private:
  int64_t count_;
  weir::RateLimiter limiter_;
  int64_t emitted_ = 0;
  int index_ = 0, step_ = 1;
  int64_t next_ = 1, last_ = 0;
  weir::ListState<std::pair<int64_t, int64_t>>* state_ = nullptr;
};

void UnevenUnion(weir::StreamExecutionEnvironment& env, const weir::JobArgs& args) {
  args.CheckKnown({"output", "count", "rate"});
  env.AddSource<int64_t>(UnevenUnionSource(args.GetInt("count", 1000), args.GetDouble("rate", 0)), "Uneven")
      .Uid("uneven-source")
      .AddSink(weir::FileSink<int64_t>(args.Get("output")), "Sink")
      .Uid("sink");
}

void SchedulingPolicy(weir::StreamExecutionEnvironment& env, const weir::JobArgs& args) {
  args.CheckKnown({"output", "count"});
  env.AddSource<int64_t>(weir::SequenceSource(1, args.GetInt("count", 100)), "Sequence")
      .Uid("sequence-source")
      .Map([](int64_t) -> std::string {
        const int policy = sched_getscheduler(0);
        if (policy == SCHED_BATCH) return "batch";
        if (policy == SCHED_OTHER) return "other";
        return std::to_string(policy);
      })
      .Uid("policy")
      .AddSink(weir::FileSink<std::string>(args.Get("output")), "Sink")
      .Uid("sink");
}

void TwoPipelines(weir::StreamExecutionEnvironment& env, const weir::JobArgs& args) {
  args.CheckKnown({"bounded", "output-a", "output-b", "rate"});
  env.AddSource<int64_t>(weir::SequenceSource(1, args.GetInt("bounded", 100)), "Bounded")
      .Uid("bounded-source")
      .AddSink(weir::FileSink<int64_t>(args.Get("output-a")), "Sink A")
      .Uid("sink-a");
  env.AddSource<int64_t>(weir::SequenceSource(1, INT64_MAX, args.GetDouble("rate", 1000)), "Unbounded")
      .Uid("unbounded-source")
      .AddSink(weir::FileSink<int64_t>(args.Get("output-b")), "Sink B")
      .Uid("sink-b");
}

void DrainFailover(weir::StreamExecutionEnvironment& env, const weir::JobArgs& args) {
  args.CheckKnown({"output", "rate"});
  env.AddSource<int64_t>(weir::SequenceSource(1, INT64_MAX, args.GetDouble("rate", 1000)), "Sequence")
      .Uid("sequence-source")
      .AddSink(FailingOnceAtEndSink(args.Get("output")), "Failing Sink")
      .Uid("failing-sink");
}

}  // namespace

WEIR_JOB("TwoPipelines", TwoPipelines, "A bounded and an unbounded pipeline side by side");
WEIR_JOB("DrainFailover", DrainFailover, "A sink that fails once at the end of input");
WEIR_JOB("SchedulingPolicy", SchedulingPolicy, "Numbers written as their task thread's scheduling policy");
WEIR_JOB("UnevenUnion", UnevenUnion, "Source subtasks with union list state that end at different times");
