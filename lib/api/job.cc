#include "lib/api/job.h"

#include "lib/api/event_time.h"

#include <cerrno>
#include <cstdlib>
#include <set>

namespace weir {

namespace internal {
thread_local constinit int64_t current_record_timestamp [[gnu::tls_model("initial-exec")]] = kNoTimestamp;
}  // namespace internal

const char* ShipStrategyName(ShipStrategy s) {
  switch (s) {
    case ShipStrategy::kForward: return "FORWARD";
    case ShipStrategy::kHash: return "HASH";
    case ShipStrategy::kRebalance: return "REBALANCE";
    case ShipStrategy::kBroadcast: return "BROADCAST";
  }
  return "UNKNOWN";
}

std::string JobArgs::Get(const std::string& name, const std::string& fallback) const {
  std::string flag = "--" + name;
  for (size_t i = 0; i < args_.size(); ++i) {
    if (args_[i] == flag) {
      if (i + 1 >= args_.size()) throw JobArgumentError("option '" + flag + "' needs a value");
      return args_[i + 1];
    }
    if (args_[i].rfind(flag + "=", 0) == 0) return args_[i].substr(flag.size() + 1);
  }
  return fallback;
}

bool JobArgs::Has(const std::string& name) const {
  std::string flag = "--" + name;
  for (const auto& a : args_) {
    if (a == flag || a.rfind(flag + "=", 0) == 0) return true;
  }
  return false;
}

int64_t JobArgs::GetInt(const std::string& name, int64_t fallback) const {
  if (!Has(name)) return fallback;
  std::string v = Get(name);
  errno = 0;
  char* end = nullptr;
  long long n = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno == ERANGE) {
    throw JobArgumentError("invalid value '" + v + "' for '--" + name + "': expected an integer");
  }
  return n;
}

double JobArgs::GetDouble(const std::string& name, double fallback) const {
  if (!Has(name)) return fallback;
  std::string v = Get(name);
  char* end = nullptr;
  double d = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0') {
    throw JobArgumentError("invalid value '" + v + "' for '--" + name + "': expected a number");
  }
  return d;
}

void JobArgs::CheckKnown(const std::vector<std::string>& known) const {
  std::set<std::string> names(known.begin(), known.end());
  for (size_t i = 0; i < args_.size(); ++i) {
    const auto& a = args_[i];
    if (a.rfind("--", 0) != 0) continue;
    std::string name = a.substr(2, a.find('=') == std::string::npos ? std::string::npos : a.find('=') - 2);
    if (!names.count(name)) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "--" : ", --") + k;
      throw JobArgumentError("unknown option '" + a + "' (this job takes " + list + ")");
    }
    if (a.find('=') == std::string::npos) ++i;  // skip its value
  }
}

}  // namespace weir
