// number_sum: the natural numbers 1..N, partitioned by parity, summed per key in a
// ValueState. For every input n it emits "<n>,<odd|even>,<sum of that parity up to n>".
//
//   weir run build/examples/number_sum.so --count 1000 [--rate R] [--output DIR]
//                                        [--sink print|file|discard] [--fail-at n1,n2,...]
//
// --count 0 runs unbounded; --rate limits records per second (0: as fast as possible);
// --output writes committed part files into DIR (stdout otherwise); --fail-at makes
// the summing operator throw the first time, in this process, that it sees each
// listed number (to test recovery).

#include <mutex>
#include <set>
#include <stdexcept>

#include "lib/api/weir.h"

namespace {

struct SumLine {
  int64_t n = 0;
  bool odd = false;
  int64_t sum = 0;
  WEIR_FIELDS(n, odd, sum)
};

// The numbers that still have to fail, shared by every subtask and attempt in this
// process: each fails once.
class FailurePlan {
 public:
  void Add(int64_t n) {
    std::lock_guard lock(mu_);
    pending_.insert(n);
  }
  bool ShouldFail(int64_t n) {
    std::lock_guard lock(mu_);
    return pending_.erase(n) > 0;
  }
  bool empty() {
    std::lock_guard lock(mu_);
    return pending_.empty();
  }

 private:
  std::mutex mu_;
  std::set<int64_t> pending_;
};

FailurePlan& Failures() {
  static FailurePlan plan;
  return plan;
}

class ParitySum final : public weir::KeyedProcessFunction<int64_t, int64_t, SumLine> {
 public:
  explicit ParitySum(bool may_fail) : may_fail_(may_fail) {}
  void Open(weir::KeyedRuntimeContext<int64_t>& ctx) override { sum_ = &ctx.GetState<int64_t>("sum"); }
  void ProcessElement(const int64_t& n, const int64_t& parity, weir::Collector<SumLine>& out) override {
    if (may_fail_ && Failures().ShouldFail(n)) {
      throw std::runtime_error("injected failure at n=" + std::to_string(n) + " (--fail-at)");
    }
    int64_t sum = sum_->ValueOr(0) + n;
    sum_->Update(sum);
    out.Collect(SumLine{n, parity == 1, sum});
  }

 private:
  bool may_fail_;
  weir::ValueState<int64_t>* sum_ = nullptr;
};

std::string Format(const SumLine& line) {
  std::string s = std::to_string(line.n);
  s += line.odd ? ",odd," : ",even,";
  s += std::to_string(line.sum);
  return s;
}

void NumberSum(weir::StreamExecutionEnvironment& env, const weir::JobArgs& args) {
  args.CheckKnown({"count", "rate", "output", "sink", "fail-at"});
  int64_t count = args.GetInt("count", 1000);
  if (count < 0) throw weir::JobArgumentError("--count must be 0 (unbounded) or a positive number");
  double rate = args.GetDouble("rate", 0);
  if (rate < 0) throw weir::JobArgumentError("--rate must be 0 (no limit) or a positive number");
  std::string output = args.Get("output");
  std::string sink = args.Get("sink", output.empty() ? "print" : "file");
  if (sink != "print" && sink != "file" && sink != "discard") {
    throw weir::JobArgumentError("--sink must be print, file or discard, not '" + sink + "'");
  }
  if (sink == "file" && output.empty()) throw weir::JobArgumentError("--sink file needs --output DIR");
  std::string fail_at = args.Get("fail-at");
  bool may_fail = false;
  if (!fail_at.empty()) {
    for (const auto& part : weir::Split(fail_at, ',')) {
      try {
        size_t used = 0;
        int64_t n = std::stoll(part, &used);
        if (used != part.size()) throw std::invalid_argument(part);
        Failures().Add(n);
        may_fail = true;
      } catch (const std::exception&) {
        throw weir::JobArgumentError("--fail-at takes numbers separated by commas, not '" + fail_at + "'");
      }
    }
  }

  env.SetJobName("Number Sum");
  int64_t last = count == 0 ? INT64_MAX : count;
  // One source subtask keeps each parity's numbers in order, so running sums are exact.
  auto sums = env.AddSource<int64_t>(weir::SequenceSource(1, last, rate), "Sequence")
                  .Uid("sequence-source")
                  .SetParallelism(1)
                  .KeyBy([](int64_t n) { return n % 2; })
                  .Process(ParitySum(may_fail))
                  .Name("Parity Sum")
                  .Uid("parity-sum");
  if (sink == "discard") {
    sums.AddSink(weir::DiscardingSink<SumLine>(), "Discard").Uid("discard-sink");
    return;
  }
  auto lines = sums.Map(Format).Name("Format").Uid("format");
  if (sink == "file") {
    lines.AddSink(weir::FileSink<std::string>(output), "File Sink").Uid("file-sink");
  } else {
    lines.Print().Uid("print-sink");
  }
}

}  // namespace

WEIR_JOB("NumberSum", NumberSum, "Sums the natural numbers per parity (the textbook checkpointing example)");
