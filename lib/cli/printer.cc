#include "lib/cli/printer.h"

#include <cassert>
#include <ostream>

namespace weir::cli {

Printer::Printer(OutputFormat format, std::ostream& out, std::ostream& err)
    : format_(format), out_(out), err_(err) {}

void Printer::Line(std::string_view line) {
  if (json()) return;
  out_ << line << '\n' << std::flush;  // progress lines must show before a long wait
}

void Printer::Json(std::string_view document) {
  if (!json()) return;
  assert(!json_written_ && "one JSON document per run");
  out_ << document << '\n' << std::flush;
  json_written_ = true;
}

void Printer::Error(std::string_view line) { err_ << line << '\n' << std::flush; }

}  // namespace weir::cli
