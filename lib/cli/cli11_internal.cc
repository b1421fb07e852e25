#include <regex>
#include "lib/cli/cli11_internal.h"

#include <cctype>

#include "lib/common/ids.h"

namespace weir::cli::internal {

std::string WeirFormatter::make_usage(const CLI::App* app, std::string name) const {
  if (usage.empty()) return CLI::Formatter::make_usage(app, std::move(name));
  return get_label("Usage") + ": " + usage + "\n";
}

std::string WeirFormatter::make_option_name(const CLI::Option* opt, bool is_positional) const {
  if (is_positional) return CLI::Formatter::make_option_name(opt, is_positional);
  std::vector<std::string> names;
  for (const auto& lname : opt->get_lnames()) {
    if (single_dash_names.count(lname) != 0) names.push_back("-" + lname);
  }
  for (const auto& sname : opt->get_snames()) names.push_back("-" + sname);
  for (const auto& lname : opt->get_lnames()) {
    if (single_dash_names.count(lname) == 0 || both_dash_names.count(lname) != 0) {
      names.push_back("--" + lname);
    }
  }
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

WeirFormatter& FormatterOf(CLI::App& app) {
  auto existing = std::dynamic_pointer_cast<WeirFormatter>(app.get_formatter());
  if (existing) return *existing;
  auto formatter = std::make_shared<WeirFormatter>();
  formatter->column_width(34);
  app.formatter(formatter);
  return *formatter;
}

void AddFinalCheck(CLI::App& app, std::function<void()> check) {
  WeirFormatter& formatter = FormatterOf(app);
  bool first = formatter.final_checks.empty();
  formatter.final_checks.push_back(std::move(check));
  if (first) {
    WeirFormatter* f = &formatter;  // owned by the App through a shared_ptr
    app.callback([f] {
      for (const auto& c : f->final_checks) c();
    });
  }
}

void CheckJobIdText(bool given, const std::string& text, const std::string& what,
                    const std::string& hint) {
  const std::string list_hint = "run 'weir list' to see the running jobs";
  if (!given) throw UsageError("missing JobID; specify " + what, list_hint);
  if (!Id16::Parse(text).ok()) {
    throw UsageError("cannot parse JobID from \"" + text + "\": a JobID is 32 hex characters",
                     hint.empty() ? list_hint : hint);
  }
}

std::string LowerFirst(std::string message) {
  if (message.size() >= 2 && std::isupper(static_cast<unsigned char>(message[0])) &&
      !std::isupper(static_cast<unsigned char>(message[1]))) {
    message[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(message[0])));
  }
  return message;
}

}  // namespace weir::cli::internal

namespace weir::cli::internal {

std::string DescribeParseError(const std::string& message) {
  static const std::regex kNotIn(R"(^(-[-\w]+): (.*) not in \{(.*)\}$)");
  static const std::regex kMissing(R"(^(-[-\w]+): 1 required \w+ missing$)");
  static const std::regex kTooMany(R"(^(-[-\w]+): At Most 1 required but received (\d+)$)");
  std::smatch m;
  if (std::regex_match(message, m, kNotIn)) {
    std::string values = m[3].str();
    for (size_t i = 0; (i = values.find(',', i)) != std::string::npos; i += 2) values.replace(i, 1, ", ");
    return "invalid value '" + m[2].str() + "' for '" + m[1].str() + "': expected one of " + values;
  }
  if (std::regex_match(message, m, kMissing)) return "option '" + m[1].str() + "' needs a value";
  if (std::regex_match(message, m, kTooMany)) {
    return "option '" + m[1].str() + "' was given " + m[2].str() + " times; give it once";
  }
  return LowerFirst(message);
}

}  // namespace weir::cli::internal
