#include "lib/api/connectors/print_sink.h"

#include <cstdio>
#include <mutex>

namespace weir {

namespace {
std::mutex g_stdout_mu;
}

void WriteStdoutLine(const std::string& line) {
  std::lock_guard lock(g_stdout_mu);
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fputc('\n', stdout);
}

void FlushStdout() {
  std::lock_guard lock(g_stdout_mu);
  std::fflush(stdout);
}

}  // namespace weir
