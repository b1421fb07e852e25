// number_sum: the natural numbers 1..N, keyed by n mod K, summed per key in a
// ValueState. For every input n it emits "<n>,<key>,<sum of that key up to n>", the
// key being odd/even with K = 2 (the default) and the number n mod K otherwise.
//
//   weir run build/examples/number_sum.so --count 1000 [--keys K] [--rate R] [--output DIR]
//                                        [--sink print|file|discard] [--fail-at n1,n2,...]
//
// --count 0 runs unbounded; --rate limits records per second (0: as fast as possible);
// --output writes committed part files into DIR (stdout otherwise); --fail-at makes
// the summing operator throw the first time, in this process, that it sees each
// listed number (to test recovery).

#include "examples/parity_sum.h"

namespace {

void NumberSum(weir::StreamExecutionEnvironment& env, const weir::JobArgs& args) {
  args.CheckKnown({"count", "rate", "keys", "output", "sink", "fail-at"});
  ParitySumOptions options = ParseParitySumOptions(args);
  std::string output = args.Get("output");
  std::string sink = args.Get("sink", output.empty() ? "print" : "file");
  if (sink != "print" && sink != "file" && sink != "discard") {
    throw weir::JobArgumentError("--sink must be print, file or discard, not '" + sink + "'");
  }
  if (sink == "file" && output.empty()) throw weir::JobArgumentError("--sink file needs --output DIR");
  env.SetJobName("Number Sum");
  auto sums = AddParitySums(env, options);
  if (sink == "discard") {
    sums.AddSink(weir::DiscardingSink<SumLine>(), "Discard").Uid("discard-sink");
    return;
  }
  auto lines = sums.Map(FormatSumLine).Name("Format").Uid("format");
  if (sink == "file") {
    lines.AddSink(weir::FileSink<std::string>(output), "File Sink").Uid("file-sink");
  } else {
    lines.Print().Uid("print-sink");
  }
}

}  // namespace

WEIR_JOB("NumberSum", NumberSum, "Sums the natural numbers per parity (the textbook checkpointing example)");
