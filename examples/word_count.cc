// word_count: counts words. Reads the lines of --input (a file or a directory of
// files), splits them into lower-case words, counts per word and writes
// "<word>,<count so far>" for every occurrence into committed part files in
// --output (stdout when absent). The last line of a word holds its total.
//
//   weir run build/examples/word_count.so --input text.txt --output out/

#include <cctype>

#include "lib/api/weir.h"

namespace {

using WordCount = std::pair<std::string, int64_t>;

void SplitWords(const std::string& line, weir::Collector<WordCount>& out) {
  std::string word;
  for (char c : line) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    } else if (!word.empty()) {
      out.Collect({word, 1});
      word.clear();
    }
  }
  if (!word.empty()) out.Collect({word, 1});
}

void WordCountJob(weir::StreamExecutionEnvironment& env, const weir::JobArgs& args) {
  args.CheckKnown({"input", "output"});
  std::string input = args.Get("input");
  if (input.empty()) throw weir::JobArgumentError("--input PATH is required (a file or a directory)");
  std::string output = args.Get("output");
  env.SetJobName("Word Count");
  auto counts = env.AddSource<std::string>(weir::FileSource(input), "File Source")
                    .Uid("file-source")
                    .FlatMap<WordCount>(SplitWords)
                    .Name("Tokenizer")
                    .Uid("tokenizer")
                    .KeyBy([](const WordCount& wc) { return wc.first; })
                    .Sum()
                    .Name("Count")
                    .Uid("count")
                    .Map([](const WordCount& wc) { return wc.first + "," + std::to_string(wc.second); })
                    .Name("Format")
                    .Uid("format");
  if (output.empty()) {
    counts.Print().Uid("print-sink");
  } else {
    counts.AddSink(weir::FileSink<std::string>(output), "File Sink").Uid("file-sink");
  }
}

}  // namespace

WEIR_JOB("WordCount", WordCountJob, "Counts the words of a text file or directory");
