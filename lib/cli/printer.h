#pragma once
// Printer: where a tool's output goes. Results go to stdout, as Flink's lines in text mode
// (--output text, the default) or as ONE JSON document in JSON mode (--output json);
// diagnostics go to stderr in both modes.
//
// Not thread-safe. Owned by the tool's ToolContext (run_tool.h), or by a test around
// std::ostringstreams.

#include <iosfwd>
#include <string>
#include <string_view>

namespace weir::cli {

enum class OutputFormat { kText, kJson };

class Printer {
 public:
  Printer(OutputFormat format, std::ostream& out, std::ostream& err);

  OutputFormat format() const { return format_; }
  bool json() const { return format_ == OutputFormat::kJson; }

  // Text mode: `line` and a newline on stdout. JSON mode: nothing.
  void Line(std::string_view line);
  // JSON mode: the serialized document and a newline on stdout; a second call is a
  // programming error (asserted) since stdout must hold one document. Text mode: nothing.
  void Json(std::string_view document);
  // Whether Json() wrote the document.
  bool json_written() const { return json_written_; }

  // A diagnostic line on stderr, in both modes ("weir-run: warning: ...").
  void Error(std::string_view line);

  std::ostream& out() { return out_; }
  std::ostream& err() { return err_; }

 private:
  OutputFormat format_;
  std::ostream& out_;
  std::ostream& err_;
  bool json_written_ = false;
};

}  // namespace weir::cli
