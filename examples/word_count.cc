// word_count: counts words. Reads the lines of --input (a file or a directory of
// files), splits them into lower-case words, counts per word and writes
// "<word>,<count so far>" for every occurrence into committed part files in
// --output (stdout when absent). The last line of a word holds its total; whatever
// the order, a word seen T times gives the lines "<word>,1" .. "<word>,T".
//
//   weir run build/examples/word_count.so --input text.txt --output out/
//                                        [--rate R] [--sink print|file|discard]
//
// --rate limits each source subtask to R lines per second (0: as fast as possible),
// so a running job can be stopped with a savepoint and restored at another
// parallelism; the source's splits (a file and an offset) move with its state.

#include "lib/api/weir.h"
#include "lib/common/ascii_words.h"
#include "lib/common/decimal.h"

namespace {

using WordCount = std::pair<std::string, int64_t>;

// Emits {word, 1} for every word of a line. One per subtask (FlatMap copies it): the
// record it emits is reused, so a word costs a copy into a buffer that is already large
// enough (inline, with weir::AssignBytes), and no allocation.
class SplitWords {
 public:
  void operator()(const std::string& line, weir::Collector<WordCount>& out) {
    words_.Split(line, [&](std::string_view word) {
      weir::AssignBytes(record_.first, word);
      out.Collect(record_);
    });
  }

 private:
  weir::AsciiWordSplitter words_;
  WordCount record_{std::string(), 1};
};

// "<word>,<count>", written in place into a line that is reused (one per subtask: Map
// copies it), so a word costs no string made or freed; Map passes the line on by
// reference.
class FormatCount {
 public:
  const std::string& operator()(const WordCount& wc) {
    const size_t n = wc.first.size();
    // The word, a comma and the room WriteDecimal needs: room for CopyString's 16 bytes too.
    weir::OverwriteString(line_, n + 1 + weir::kMaxDecimalChars, [&](char* line) {
      weir::CopyString(line, wc.first);
      line[n] = ',';
      return static_cast<size_t>(weir::WriteDecimal(line + n + 1, wc.second) - line);
    });
    return line_;
  }

 private:
  std::string line_;
};

void WordCountJob(weir::StreamExecutionEnvironment& env, const weir::JobArgs& args) {
  args.CheckKnown({"input", "output", "rate", "sink"});
  std::string input = args.Get("input");
  if (input.empty()) throw weir::JobArgumentError("--input PATH is required (a file or a directory)");
  std::string output = args.Get("output");
  double rate = args.GetDouble("rate", 0);
  if (rate < 0) throw weir::JobArgumentError("--rate must be 0 (no limit) or a positive number of lines per second");
  std::string sink = args.Get("sink", output.empty() ? "print" : "file");
  if (sink != "print" && sink != "file" && sink != "discard") {
    throw weir::JobArgumentError("--sink must be print, file or discard, not '" + sink + "'");
  }
  if (sink == "file" && output.empty()) throw weir::JobArgumentError("--sink file needs --output DIR");
  env.SetJobName("Word Count");
  auto counts = env.AddSource<std::string>(weir::FileSource(input, rate), "File Source")
                    .Uid("file-source")
                    .FlatMap<WordCount>(SplitWords())
                    .Name("Tokenizer")
                    .Uid("tokenizer")
                    .KeyBy([](const WordCount& wc) -> const std::string& { return wc.first; })
                    .Sum()
                    .Name("Count")
                    .Uid("count")
                    .Map(FormatCount())
                    .Name("Format")
                    .Uid("format");
  if (sink == "discard") {
    counts.AddSink(weir::DiscardingSink<std::string>(), "Discard").Uid("discard-sink");
  } else if (sink == "file") {
    counts.AddSink(weir::FileSink<std::string>(output), "File Sink").Uid("file-sink");
  } else {
    counts.Print().Uid("print-sink");
  }
}

}  // namespace

WEIR_JOB("WordCount", WordCountJob, "Counts the words of a text file or directory");
