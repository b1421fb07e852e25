#include "lib/config/config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <system_error>

#include "lib/common/string_util.h"
#include "lib/common/time_util.h"
#include "lib/config/options.h"

namespace weir {

namespace fs = std::filesystem;

namespace {

constexpr const char* kConfigFileName = "config.yaml";

// Prefixes of Flink's configuration keys. An unknown key under one of them is most
// likely a Flink option that weir does not implement rather than a typo.
constexpr const char* kFlinkPrefixes[] = {
    "akka.",          "blob.",           "classloader.",     "client.",
    "cluster.",       "containerized.",  "env.",             "execution.",
    "fs.",            "heartbeat.",      "high-availability.", "historyserver.",
    "io.",            "jobmanager.",     "kafka.",           "kubernetes.",
    "metrics.",       "parallelism.",    "pekko.",           "pipeline.",
    "python.",        "queryable-state.", "resourcemanager.", "rest.",
    "restart-strategy.", "s3.",          "security.",        "slot.",
    "slotmanager.",   "sql-gateway.",    "state.",           "table.",
    "taskmanager.",   "web.",            "yarn.",            "zookeeper.",
};

// ----------------------------------------------------------------------------
// YAML flattening

struct FlatEntry {
  std::string value;
  int line;  // 1-based
};

int LineOf(const YAML::Node& node) { return node.Mark().line + 1; }

Status FlattenNode(const YAML::Node& node, const std::string& key, int line,
                   std::map<std::string, FlatEntry>* out);

Status AddEntry(const std::string& key, std::string value, int line,
                std::map<std::string, FlatEntry>* out) {
  auto [it, inserted] = out->emplace(key, FlatEntry{std::move(value), line});
  if (!inserted) {
    return Status::InvalidArgument("configuration key '" + key + "' is set twice (line " +
                                   std::to_string(it->second.line) + " and line " +
                                   std::to_string(line) + ")")
        .WithHint("keep one of them; nested and dotted spellings of a key are the same key");
  }
  return Status::OK();
}

Status FlattenMap(const YAML::Node& map, const std::string& prefix,
                  std::map<std::string, FlatEntry>* out) {
  for (auto it = map.begin(); it != map.end(); ++it) {
    // Copies: the iterator yields a temporary pair of node handles.
    YAML::Node k = it->first;
    YAML::Node v = it->second;
    int line = LineOf(k);
    if (!k.IsScalar()) {
      return Status::InvalidArgument("line " + std::to_string(line) +
                                     ": a configuration key must be plain text");
    }
    std::string name = Trim(k.Scalar());
    if (name.empty()) {
      return Status::InvalidArgument("line " + std::to_string(line) +
                                     ": empty configuration key" +
                                     (prefix.empty() ? "" : " under '" + prefix + "'"));
    }
    WEIR_RETURN_IF_ERROR(
        FlattenNode(v, prefix.empty() ? name : prefix + "." + name, line, out));
  }
  return Status::OK();
}

Status FlattenNode(const YAML::Node& node, const std::string& key, int line,
                   std::map<std::string, FlatEntry>* out) {
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      // `key:` with no value: ignored, as if the line were commented out.
      return Status::OK();
    case YAML::NodeType::Scalar:
      return AddEntry(key, node.Scalar(), line, out);
    case YAML::NodeType::Sequence: {
      std::vector<std::string> items;
      for (const YAML::Node& item : node) {
        if (!item.IsScalar()) {
          return Status::InvalidArgument("line " + std::to_string(LineOf(item)) +
                                         ": the list for configuration key '" + key +
                                         "' may hold only plain values");
        }
        items.push_back(item.Scalar());
      }
      return AddEntry(key, Join(items, ","), line, out);
    }
    case YAML::NodeType::Map:
      return FlattenMap(node, key, out);
  }
  return Status::Internal("unexpected YAML node type for '" + key + "'");
}

// ----------------------------------------------------------------------------
// Values

const char* TypeName(OptionType t) {
  switch (t) {
    case OptionType::kString: return "string";
    case OptionType::kInt: return "integer";
    case OptionType::kBool: return "boolean";
    case OptionType::kDuration: return "duration";
    case OptionType::kDouble: return "number";
    case OptionType::kEnum: return "enum";
    case OptionType::kMemorySize: return "memory size";
  }
  return "?";
}

Status BadValue(const std::string& key, const std::string& value, const std::string& why) {
  return Status::InvalidArgument("invalid value '" + value + "' for '" + key + "': " + why);
}

Status WrongType(const ConfigOption& option, OptionType wanted) {
  return Status::Internal("configuration option '" + option.key + "' is of type " +
                          TypeName(option.type) + ", not " + TypeName(wanted));
}

// A bound for messages: integers in full ("2147483647"), byte sizes in the largest
// exact unit ("4kb", "1gb").
std::string FormatBound(double v, const char* unit) {
  if (std::string_view(unit) == " bytes" && v >= 1024 && v == std::floor(v)) {
    auto n = static_cast<int64_t>(v);
    const char* units[] = {"kb", "mb", "gb", "tb"};
    int u = -1;
    while (u < 3 && n % 1024 == 0) {
      n /= 1024;
      ++u;
    }
    if (u >= 0) return std::to_string(n) + units[u];
  }
  std::string s;
  if (v == std::floor(v) && std::fabs(v) < 1e18) {
    s = std::to_string(static_cast<int64_t>(v));
  } else {
    std::ostringstream os;
    os << v;
    s = os.str();
  }
  return s + unit;
}

// Checks `v` against the option's bounds; `unit` is appended to the bounds in the message.
Status CheckBounds(const ConfigOption& o, const std::string& key, const std::string& value,
                   double v, const char* unit) {
  bool low = o.min_value && v < *o.min_value;
  bool high = o.max_value && v > *o.max_value;
  if (!low && !high) return Status::OK();
  if (o.min_value && o.max_value) {
    return BadValue(key, value,
                    "must be between " + FormatBound(*o.min_value, unit) + " and " +
                        FormatBound(*o.max_value, unit));
  }
  if (low) return BadValue(key, value, "must be at least " + FormatBound(*o.min_value, unit));
  return BadValue(key, value, "must be at most " + FormatBound(*o.max_value, unit));
}

Result<int64_t> ParseIntValue(const ConfigOption& o, const std::string& key,
                              const std::string& value) {
  std::string t = Trim(value);
  int64_t n = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
  if (t.empty() || ec != std::errc() || ptr != t.data() + t.size()) {
    if (ec == std::errc::result_out_of_range) return BadValue(key, value, "the integer is too large");
    return BadValue(key, value, "expected an integer");
  }
  WEIR_RETURN_IF_ERROR(CheckBounds(o, key, value, static_cast<double>(n), ""));
  return n;
}

Result<bool> ParseBoolValue(const std::string& key, const std::string& value) {
  std::string t = ToLower(Trim(value));
  if (t == "true") return true;
  if (t == "false") return false;
  return BadValue(key, value, "expected true or false");
}

Result<double> ParseDoubleValue(const ConfigOption& o, const std::string& key,
                                const std::string& value) {
  std::string t = Trim(value);
  double d = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), d);
  if (t.empty() || ec != std::errc() || ptr != t.data() + t.size() || !std::isfinite(d)) {
    return BadValue(key, value, "expected a number such as '1.5'");
  }
  WEIR_RETURN_IF_ERROR(CheckBounds(o, key, value, d, ""));
  return d;
}

Result<std::chrono::milliseconds> ParseDurationValue(const ConfigOption& o, const std::string& key,
                                                     const std::string& value) {
  auto d = ParseDuration(value);
  if (!d.ok()) {
    return BadValue(key, value,
                    "expected a duration: a whole number with a unit of ms, s, min, h or d "
                    "(e.g. '500 ms', '10 s', '1 min')");
  }
  WEIR_RETURN_IF_ERROR(CheckBounds(o, key, value, static_cast<double>(d->count()), " ms"));
  return *d;
}

Result<std::string> ParseEnumValue(const ConfigOption& o, const std::string& key,
                                   const std::string& value) {
  std::string t = ToLower(Trim(value));
  for (const std::string& v : o.enum_values) {
    if (ToLower(v) == t) return v;
  }
  return BadValue(key, value, "expected one of " + Join(o.enum_values, ", "));
}

Result<int64_t> ParseMemoryValue(const ConfigOption& o, const std::string& key,
                                 const std::string& value) {
  auto m = ParseMemorySize(value);
  if (!m.ok()) {
    return BadValue(key, value,
                    "expected a memory size: a whole number of bytes with an optional unit of "
                    "b, kb, mb, gb or tb (e.g. '32kb', '100 mb')");
  }
  WEIR_RETURN_IF_ERROR(CheckBounds(o, key, value, static_cast<double>(*m), " bytes"));
  return *m;
}

// Checks one value of an option set under `key` (the option's key or a deprecated one).
Status CheckValue(const ConfigOption& o, const std::string& key, const std::string& value) {
  switch (o.type) {
    case OptionType::kString: return Status::OK();
    case OptionType::kInt: return ParseIntValue(o, key, value).status();
    case OptionType::kBool: return ParseBoolValue(key, value).status();
    case OptionType::kDuration: return ParseDurationValue(o, key, value).status();
    case OptionType::kDouble: return ParseDoubleValue(o, key, value).status();
    case OptionType::kEnum: return ParseEnumValue(o, key, value).status();
    case OptionType::kMemorySize: return ParseMemoryValue(o, key, value).status();
  }
  return Status::Internal("unknown option type for '" + o.key + "'");
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t subst = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// The known key closest to `key` when it is a likely typo (at most 2 edits); else empty.
std::string NearestKnownKey(const std::string& key) {
  std::string best;
  size_t best_d = 3;
  for (const ConfigOption* o : options::AllOptions()) {
    size_t d = EditDistance(ToLower(key), o->key);
    if (d < best_d) {
      best_d = d;
      best = o->key;
    }
  }
  return best;
}

std::string UnknownKeyWarning(const std::string& key) {
  std::string near = NearestKnownKey(key);
  if (!near.empty()) {
    return "unknown configuration key '" + key + "' (ignored); did you mean '" + near + "'?";
  }
  for (const char* p : kFlinkPrefixes) {
    if (StartsWith(key, p)) {
      return "configuration key '" + key + "' is a Flink option that weir does not implement "
             "(ignored)";
    }
  }
  return "unknown configuration key '" + key + "' (ignored)";
}

}  // namespace

// ----------------------------------------------------------------------------
// Loading

Result<std::string> Configuration::FindConfDir() {
  const char* env = std::getenv("WEIR_CONF_DIR");
  if (env != nullptr && *env != '\0') {
    std::error_code ec;
    if (!fs::exists(env, ec)) {
      return Status::NotFound(std::string("the configuration directory '") + env +
                              "', set in WEIR_CONF_DIR, does not exist")
          .WithHint("create it, or unset WEIR_CONF_DIR to use the default configuration");
    }
    if (!fs::is_directory(env, ec)) {
      return Status::InvalidArgument(std::string("the configuration directory '") + env +
                                     "', set in WEIR_CONF_DIR, is not a directory")
          .WithHint("set WEIR_CONF_DIR to the directory that holds config.yaml");
    }
    return std::string(env);
  }

  std::vector<fs::path> candidates;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && exe.has_parent_path()) {
    fs::path dir = exe.parent_path();
    candidates.push_back(dir / ".." / "conf");
    candidates.push_back(dir / ".." / ".." / "conf");
  }
  candidates.push_back(fs::path("conf"));
  for (const fs::path& c : candidates) {
    std::error_code ec2;
    if (fs::is_regular_file(c / kConfigFileName, ec2)) {
      return c.lexically_normal().string();
    }
  }
  return std::string();
}

Result<Configuration> Configuration::FromYaml(std::string_view text) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    std::string msg = "invalid YAML";
    if (!e.mark.is_null()) {
      msg += " at line " + std::to_string(e.mark.line + 1) + ", column " +
             std::to_string(e.mark.column + 1);
    }
    return Status::InvalidArgument(msg + ": " + e.msg);
  }

  std::map<std::string, FlatEntry> flat;
  if (root.IsMap()) {
    WEIR_RETURN_IF_ERROR(FlattenMap(root, "", &flat));
  } else if (root.IsDefined() && !root.IsNull()) {
    return Status::InvalidArgument("line " + std::to_string(LineOf(root)) +
                                   ": the configuration must be a map of keys to values, "
                                   "such as 'rest.port: 8081'");
  }
  Configuration conf;
  for (auto& [key, entry] : flat) conf.entries_[key] = std::move(entry.value);
  return conf;
}

Result<Configuration> Configuration::LoadFromDir(const std::string& dir) {
  fs::path file = fs::path(dir) / kConfigFileName;
  std::error_code ec;
  if (!fs::exists(file, ec)) return Configuration();
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    return Status::IOError("cannot read configuration file '" + file.string() + "'");
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) {
    return Status::IOError("cannot read configuration file '" + file.string() + "'");
  }
  auto conf = FromYaml(buf.str());
  if (!conf.ok()) return conf.status().WithContext("'" + file.string() + "'");
  return conf;
}

Result<Configuration> Configuration::LoadDefault() {
  WEIR_ASSIGN_OR_RETURN(std::string dir, FindConfDir());
  if (dir.empty()) return Configuration();
  return LoadFromDir(dir);
}

// ----------------------------------------------------------------------------
// Entries

Status Configuration::ApplyDynamicProperty(std::string_view key_equals_value) {
  size_t eq = key_equals_value.find('=');
  std::string key = Trim(key_equals_value.substr(0, eq));
  if (key.empty()) {
    return Status::InvalidArgument("invalid dynamic property '" + std::string(key_equals_value) +
                                   "': the key is empty")
        .WithHint("write -D key=value, e.g. -D rest.port=8081");
  }
  std::string value =
      eq == std::string_view::npos ? "true" : std::string(key_equals_value.substr(eq + 1));
  Set(key, value);
  return Status::OK();
}

void Configuration::Set(const std::string& key, const std::string& value) {
  if (const ConfigOption* o = options::FindOption(key)) {
    if (o->key != key) entries_.erase(o->key);
    for (const std::string& d : o->deprecated_keys) {
      if (d != key) entries_.erase(d);
    }
  }
  entries_[key] = value;
}

void Configuration::Remove(const std::string& key) { entries_.erase(key); }

bool Configuration::Contains(const ConfigOption& option) const {
  if (entries_.count(option.key)) return true;
  for (const std::string& d : option.deprecated_keys) {
    if (entries_.count(d)) return true;
  }
  return false;
}

namespace {

struct Lookup {
  std::string key;  // the key the value was set under (option.key for the default)
  std::string value;
};

std::optional<Lookup> Find(const std::map<std::string, std::string>& entries,
                           const ConfigOption& option) {
  if (auto it = entries.find(option.key); it != entries.end()) return Lookup{it->first, it->second};
  for (const std::string& d : option.deprecated_keys) {
    if (auto it = entries.find(d); it != entries.end()) return Lookup{it->first, it->second};
  }
  if (option.default_value.empty()) return std::nullopt;
  return Lookup{option.key, option.default_value};
}

}  // namespace

std::optional<std::string> Configuration::GetRaw(const ConfigOption& option) const {
  auto l = Find(entries_, option);
  if (!l) return std::nullopt;
  return l->value;
}

std::optional<std::string> Configuration::GetRaw(const std::string& key) const {
  const ConfigOption* o = options::FindOption(key);
  if (o != nullptr && o->key == key) return GetRaw(*o);
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

Result<std::optional<std::string>> Configuration::GetString(const ConfigOption& option) const {
  return GetRaw(option);
}

Result<std::optional<int64_t>> Configuration::GetInt(const ConfigOption& option) const {
  if (option.type != OptionType::kInt) return WrongType(option, OptionType::kInt);
  auto l = Find(entries_, option);
  if (!l) return std::optional<int64_t>();
  WEIR_ASSIGN_OR_RETURN(int64_t v, ParseIntValue(option, l->key, l->value));
  return std::optional<int64_t>(v);
}

Result<std::optional<bool>> Configuration::GetBool(const ConfigOption& option) const {
  if (option.type != OptionType::kBool) return WrongType(option, OptionType::kBool);
  auto l = Find(entries_, option);
  if (!l) return std::optional<bool>();
  WEIR_ASSIGN_OR_RETURN(bool v, ParseBoolValue(l->key, l->value));
  return std::optional<bool>(v);
}

Result<std::optional<double>> Configuration::GetDouble(const ConfigOption& option) const {
  if (option.type != OptionType::kDouble) return WrongType(option, OptionType::kDouble);
  auto l = Find(entries_, option);
  if (!l) return std::optional<double>();
  WEIR_ASSIGN_OR_RETURN(double v, ParseDoubleValue(option, l->key, l->value));
  return std::optional<double>(v);
}

Result<std::optional<std::chrono::milliseconds>> Configuration::GetDuration(
    const ConfigOption& option) const {
  if (option.type != OptionType::kDuration) return WrongType(option, OptionType::kDuration);
  auto l = Find(entries_, option);
  if (!l) return std::optional<std::chrono::milliseconds>();
  WEIR_ASSIGN_OR_RETURN(auto v, ParseDurationValue(option, l->key, l->value));
  return std::optional<std::chrono::milliseconds>(v);
}

Result<std::optional<std::string>> Configuration::GetEnum(const ConfigOption& option) const {
  if (option.type != OptionType::kEnum) return WrongType(option, OptionType::kEnum);
  auto l = Find(entries_, option);
  if (!l) return std::optional<std::string>();
  WEIR_ASSIGN_OR_RETURN(std::string v, ParseEnumValue(option, l->key, l->value));
  return std::optional<std::string>(std::move(v));
}

Result<std::optional<int64_t>> Configuration::GetMemorySize(const ConfigOption& option) const {
  if (option.type != OptionType::kMemorySize) return WrongType(option, OptionType::kMemorySize);
  auto l = Find(entries_, option);
  if (!l) return std::optional<int64_t>();
  WEIR_ASSIGN_OR_RETURN(int64_t v, ParseMemoryValue(option, l->key, l->value));
  return std::optional<int64_t>(v);
}

Status Configuration::Validate(std::vector<std::string>* warnings) const {
  std::vector<std::string> local;
  if (warnings == nullptr) warnings = &local;
  Status first_error;
  for (const auto& [key, value] : entries_) {
    const ConfigOption* o = options::FindOption(key);
    if (o == nullptr) {
      warnings->push_back(UnknownKeyWarning(key));
      continue;
    }
    if (key != o->key) {
      // A deprecated spelling: in use unless an earlier spelling is set too.
      auto effective = Find(entries_, *o);
      if (effective && effective->key != key) {
        warnings->push_back("configuration key '" + key + "' is deprecated and ignored because '" +
                            effective->key + "' is also set; use '" + o->key + "' only");
      } else {
        warnings->push_back("configuration key '" + key + "' is deprecated; use '" + o->key +
                            "' instead");
      }
    }
    Status st = CheckValue(*o, key, value);
    if (!st.ok() && first_error.ok()) first_error = st;
  }
  return first_error;
}

// ----------------------------------------------------------------------------

Result<int64_t> ParseMemorySize(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("invalid memory size '" + std::string(text) + "': " + why);
  };
  std::string t = Trim(text);
  size_t i = 0;
  while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
  if (i == 0) {
    return bad("expected a whole number of bytes with an optional unit (b, kb, mb, gb, tb), "
               "e.g. '32kb' or '100 mb'");
  }
  int64_t n = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + i, n);
  if (ec != std::errc() || ptr != t.data() + i) return bad("the number is too large");
  std::string unit = ToLower(Trim(std::string_view(t).substr(i)));
  int shift;
  if (unit.empty() || unit == "b" || unit == "bytes") {
    shift = 0;
  } else if (unit == "k" || unit == "kb" || unit == "kibibytes") {
    shift = 10;
  } else if (unit == "m" || unit == "mb" || unit == "mebibytes") {
    shift = 20;
  } else if (unit == "g" || unit == "gb" || unit == "gibibytes") {
    shift = 30;
  } else if (unit == "t" || unit == "tb" || unit == "tebibytes") {
    shift = 40;
  } else {
    return bad("unknown unit '" + unit + "' (use b, kb, mb, gb or tb)");
  }
  if (n > (std::numeric_limits<int64_t>::max() >> shift)) return bad("the size is too large");
  return n << shift;
}

}  // namespace weir
