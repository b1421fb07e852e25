#pragma once
// PrintSink: one line per record on stdout. As Flink's print(), lines are prefixed
// with "<subtask index + 1>> " when the sink runs with parallelism > 1.

#include <string>

#include "lib/api/connectors/to_line.h"
#include "lib/api/functions.h"
#include "lib/api/stream.h"

namespace weir {

// Writes whole lines to stdout without interleaving between threads.
void WriteStdoutLine(const std::string& line);
void FlushStdout();

template <class T>
class PrintSink final : public Sink<T> {
 public:
  void Open(RuntimeContext& ctx) override {
    if (ctx.NumberOfParallelSubtasks() > 1) prefix_ = std::to_string(ctx.IndexOfThisSubtask() + 1) + "> ";
  }
  void Invoke(const T& record) override { WriteStdoutLine(prefix_ + ToLine(record)); }
  void Finish() override { FlushStdout(); }
  void PrepareCommit(int64_t) override { FlushStdout(); }

 private:
  std::string prefix_;
};

// Drops every record (for benchmarks).
template <class T>
class DiscardingSink final : public Sink<T> {
 public:
  void Invoke(const T&) override {}
};

template <class T>
DataStreamSink DataStream<T>::Print() {
  return AddSink(PrintSink<T>(), "Print to Std. Out");
}

}  // namespace weir
