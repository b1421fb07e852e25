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

#include <stdexcept>

#include "examples/failure_plan.h"
#include "lib/api/weir.h"

namespace {

struct SumLine {
  int64_t n = 0;
  bool odd = false;
  int64_t sum = 0;
  WEIR_FIELDS(n, odd, sum)
};

using weir_examples::Failures;

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
  Failures().Parse(args.Get("fail-at"));
  bool may_fail = !Failures().empty();

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
