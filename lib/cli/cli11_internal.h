#pragma once
// Internal to lib/cli: the CLI11 adapter pieces shared by run_tool.cc, common_options.cc and
// the commands. Nothing outside lib/cli includes this header (CLI11 stays in the adapter).

#include <functional>
#include <set>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace weir::cli::internal {

// A usage error found while parsing (thrown from an option or final callback): RunTool
// prints `<tool>: <message>`, then `hint: <hint>` (or the --help hint when empty), exit 2.
class UsageError : public CLI::ValidationError {
 public:
  UsageError(std::string message, std::string hint = {})
      : CLI::ValidationError(std::move(message)), hint_(std::move(hint)) {}
  const std::string& hint() const { return hint_; }

 private:
  std::string hint_;
};

// The help formatter of every weir tool: a fixed usage line (the man page SYNOPSIS), and
// Flink's multi-letter single-dash options ("-cm") shown as such.
class WeirFormatter : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App* app, std::string name) const override;
  std::string make_option_name(const CLI::Option* opt, bool is_positional) const override;

  std::string usage;                        // without "Usage: "; empty: CLI11's default
  std::set<std::string> single_dash_names;  // long names written with one dash: "cm", "rm"
  // Of those, the ones --help shows with both spellings ("-type, --type").
  std::set<std::string> both_dash_names;
  // Checks run in order after a successful parse (see AddFinalCheck). Kept here because the
  // formatter is the one piece of per-App state weir owns.
  std::vector<std::function<void()>> final_checks;
};

// The WeirFormatter of `app`, installed on first use.
WeirFormatter& FormatterOf(CLI::App& app);

// Adds a check run after parsing (after CLI11's own required/extras checks, never for
// --help). It throws UsageError to reject the command line. Several checks compose; they
// use the App's final callback, so nothing else may set app.callback().
void AddFinalCheck(CLI::App& app, std::function<void()> check);

// The checks of a <jobId> positional (see AddJobIdArgument in common_options.h): throws
// UsageError `missing JobID; specify <what>` when !given, and `cannot parse JobID from
// "<text>": ...` when `text` is not 32 hex characters. `hint` replaces the default hint
// ("run 'weir list' to see the running jobs") of the malformed case when not empty.
void CheckJobIdText(bool given, const std::string& text, const std::string& what,
                    const std::string& hint = {});

// Lower-cases the first letter of a CLI11 message ("The following argument..." → "the ..."),
// unless the second letter is upper-case too ("JobID").
std::string LowerFirst(std::string message);
// CLI11's parse error messages in weir's words ("--target: x not in {a,b}" becomes
// "invalid value 'x' for '--target': expected one of a, b"); others lower-cased.
std::string DescribeParseError(const std::string& message);

}  // namespace weir::cli::internal
