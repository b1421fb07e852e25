#pragma once
// Configuration: Flink's key names, read from <conf dir>/config.yaml and overridden
// by `-D key=value`. Nested YAML maps flatten with '.', as in Flink's config.yaml.
//
// Every key weir knows is declared once in options.h with its default, its
// deprecated spellings and a description. Typed getters validate on read; Validate()
// checks every known key that is set, so a malformed value is rejected up front,
// naming the key. Unknown keys are reported as warnings, not errors.
//
// Syntax accepted in values (Flink's): durations "500 ms", "10 s", "1 min", "2 h", "1 d"
// (a bare number is milliseconds); memory sizes "4096", "32kb", "100 mb", "1 g" (powers
// of 1024); booleans true/false in any case; enums case-insensitively. YAML lists become
// comma-joined strings; a key with no value (`key:` or `key: ~`) is ignored as if absent.
//
// Thread-compatible: const methods may be called concurrently. The options in
// options.h are namespace-scope objects: don't read them from static initializers.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lib/common/status.h"

namespace weir {

enum class OptionType { kString, kInt, kBool, kDuration, kDouble, kEnum, kMemorySize };

// The declaration of one configuration key. Instances live in options.h.
struct ConfigOption {
  std::string key;
  OptionType type = OptionType::kString;
  std::string default_value = {};             // empty: no default
  std::vector<std::string> deprecated_keys = {};
  std::vector<std::string> enum_values = {};  // for kEnum; matched case-insensitively
  std::string description = {};
  // Inclusive bounds checked on read, for kInt and kDouble (the number), kDuration
  // (milliseconds) and kMemorySize (bytes). Unset: no bound.
  std::optional<double> min_value = std::nullopt;
  std::optional<double> max_value = std::nullopt;
};

class Configuration {
 public:
  Configuration() = default;

  // The directory to read config.yaml from: $WEIR_CONF_DIR if set (it must exist),
  // otherwise the first of <dir of the executable>/../conf, <dir of the executable>/../../conf
  // and ./conf that holds a config.yaml; empty when there is none (defaults only).
  // An empty $WEIR_CONF_DIR counts as unset. Errors: kNotFound when $WEIR_CONF_DIR does
  // not exist ("the configuration directory '<dir>', set in WEIR_CONF_DIR, does not
  // exist"), kInvalidArgument when it is not a directory.
  static Result<std::string> FindConfDir();
  // Parses YAML text (a map, possibly nested). Error names the line; a key given twice
  // (e.g. nested and dotted) is an error naming both lines.
  static Result<Configuration> FromYaml(std::string_view text);
  // Reads <dir>/config.yaml. A missing file gives an empty configuration; a file that
  // cannot be parsed is an error naming the file.
  static Result<Configuration> LoadFromDir(const std::string& dir);
  // FindConfDir() + LoadFromDir().
  static Result<Configuration> LoadDefault();

  // Applies one `-D` argument, "key=value" ("key" alone means "true"). The key is
  // split at the first '=', so the value may contain '='. Error for an empty key.
  Status ApplyDynamicProperty(std::string_view key_equals_value);

  // Sets `key`. When `key` is a spelling (current or deprecated) of a known option,
  // the option's other spellings are removed, so the last value set wins.
  void Set(const std::string& key, const std::string& value);
  void Remove(const std::string& key);
  bool Contains(const ConfigOption& option) const;

  // The raw value of the option: its key, else the first deprecated key that is set,
  // else the default (nullopt when there is none).
  std::optional<std::string> GetRaw(const ConfigOption& option) const;
  // For the current key of a known option, the same as GetRaw(option); for any other key
  // (unknown or deprecated), the value set under exactly that key.
  std::optional<std::string> GetRaw(const std::string& key) const;

  // Typed getters. An error (kInvalidArgument) names the key that was set and the bad
  // value, e.g. "invalid value 'abc' for 'rest.port': expected an integer", and lists
  // the accepted values for enums. A missing key with no default gives nullopt.
  // GetString accepts an option of any type (the raw text); the others need an option
  // of their own type (kInternal otherwise).
  Result<std::optional<std::string>> GetString(const ConfigOption& option) const;
  Result<std::optional<int64_t>> GetInt(const ConfigOption& option) const;
  Result<std::optional<bool>> GetBool(const ConfigOption& option) const;
  Result<std::optional<double>> GetDouble(const ConfigOption& option) const;
  Result<std::optional<std::chrono::milliseconds>> GetDuration(const ConfigOption& option) const;
  // Returns the canonical spelling from enum_values (e.g. "EXACTLY_ONCE").
  Result<std::optional<std::string>> GetEnum(const ConfigOption& option) const;
  // Bytes; accepts "20kb", "100 mb", "104857600".
  Result<std::optional<int64_t>> GetMemorySize(const ConfigOption& option) const;

  // Checks the value of every known key that is set (current and deprecated spellings);
  // returns the first bad one as an error. Fills `warnings` (may be null) with one line
  // per unknown key ("unknown configuration key 'x' (ignored)", with "; did you mean 'y'?"
  // for a near miss, or "configuration key 'x' is a Flink option that weir does not
  // implement (ignored)" for keys under Flink's prefixes) and one per deprecated
  // spelling in use ("configuration key 'old' is deprecated; use 'new' instead").
  Status Validate(std::vector<std::string>* warnings) const;

  // All set entries (flattened), sorted by key.
  const std::map<std::string, std::string>& entries() const { return entries_; }

 private:
  std::map<std::string, std::string> entries_;
};

// Parses a memory size ("20kb", "100 mb", "1g", "4096"). Error names the text.
Result<int64_t> ParseMemorySize(std::string_view text);

}  // namespace weir
