#pragma once
// The one logging entry point (spdlog behind it; nothing else includes spdlog).
// Tools log only with -v, to stderr; the runtime logs to stderr or a file.

#include <string>

#include <fmt/format.h>

namespace weir {

enum class LogLevel { kDebug, kInfo, kWarn, kError, kOff };

void SetLogLevel(LogLevel level);
// Sends the log to `path` (appending) instead of stderr. Error if it cannot be opened.
bool SetLogFile(const std::string& path);
void LogMessage(LogLevel level, const std::string& message);

template <class... Args>
void LogDebug(fmt::format_string<Args...> f, Args&&... args) {
  LogMessage(LogLevel::kDebug, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void LogInfo(fmt::format_string<Args...> f, Args&&... args) {
  LogMessage(LogLevel::kInfo, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void LogWarn(fmt::format_string<Args...> f, Args&&... args) {
  LogMessage(LogLevel::kWarn, fmt::format(f, std::forward<Args>(args)...));
}
template <class... Args>
void LogError(fmt::format_string<Args...> f, Args&&... args) {
  LogMessage(LogLevel::kError, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace weir
