#include "lib/common/logging.h"

#include <memory>
#include <mutex>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace weir {

namespace {
std::mutex g_mu;
std::shared_ptr<spdlog::logger> g_logger;
LogLevel g_level = LogLevel::kWarn;

spdlog::level::level_enum ToSpd(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return spdlog::level::debug;
    case LogLevel::kInfo: return spdlog::level::info;
    case LogLevel::kWarn: return spdlog::level::warn;
    case LogLevel::kError: return spdlog::level::err;
    case LogLevel::kOff: return spdlog::level::off;
  }
  return spdlog::level::info;
}

spdlog::logger& Logger() {
  if (!g_logger) {
    g_logger = std::make_shared<spdlog::logger>(
        "weir", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    g_logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ %v");
    g_logger->set_level(ToSpd(g_level));
    g_logger->flush_on(spdlog::level::info);
  }
  return *g_logger;
}
}  // namespace

void SetLogLevel(LogLevel level) {
  std::lock_guard lock(g_mu);
  g_level = level;
  Logger().set_level(ToSpd(level));
}

bool SetLogFile(const std::string& path) {
  std::lock_guard lock(g_mu);
  try {
    auto sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(path, false);
    g_logger = std::make_shared<spdlog::logger>("weir", sink);
    g_logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %l %v");
    g_logger->set_level(ToSpd(g_level));
    g_logger->flush_on(spdlog::level::info);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

void LogMessage(LogLevel level, const std::string& message) {
  if (level < g_level) return;
  std::lock_guard lock(g_mu);
  Logger().log(ToSpd(level), message);
}

}  // namespace weir
