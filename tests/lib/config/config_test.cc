#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "lib/config/config.h"
#include "lib/config/options.h"
#include "tests/testutil/scoped_env.h"
#include "tests/testutil/temp_dir.h"

namespace fs = std::filesystem;
namespace opt = weir::options;
using weir::Configuration;
using std::chrono::milliseconds;

namespace {

Configuration Yaml(const std::string& text) {
  auto c = Configuration::FromYaml(text);
  INFO(text);
  REQUIRE(c.ok());
  return std::move(c).value();
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  REQUIRE(in.good());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

using weir::testing::ScopedEnv;
using weir::testing::TempDir;

const fs::path kSourceDir = WEIR_SOURCE_DIR;

}  // namespace

TEST_CASE("config: nested and dotted YAML keys are the same key", "[config]") {
  Configuration nested = Yaml(
      "execution:\n"
      "  checkpointing:\n"
      "    interval: 10 s\n"
      "    mode: AT_LEAST_ONCE\n"
      "rest:\n"
      "  port: 9091\n");
  Configuration dotted = Yaml(
      "execution.checkpointing.interval: 10 s\n"
      "execution.checkpointing.mode: AT_LEAST_ONCE\n"
      "rest.port: 9091\n");
  Configuration mixed = Yaml(
      "execution:\n"
      "  checkpointing.interval: 10 s\n"
      "  checkpointing: {mode: AT_LEAST_ONCE}\n"
      "rest: {port: 9091}\n");
  CHECK(nested.entries() == dotted.entries());
  CHECK(mixed.entries() == dotted.entries());
  CHECK(nested.entries().size() == 3);
  CHECK(*nested.GetDuration(opt::kCheckpointingInterval).value() == milliseconds(10'000));
  CHECK(*nested.GetEnum(opt::kCheckpointingMode).value() == "AT_LEAST_ONCE");
  CHECK(*nested.GetInt(opt::kRestPort).value() == 9091);
}

TEST_CASE("config: scalars keep their text, lists join with commas, empty values are ignored",
          "[config]") {
  Configuration c = Yaml(
      "a: 010\n"
      "b: 'quoted text'\n"
      "c: TRUE\n"
      "d: [x, y, 'z z']\n"
      "e:\n"
      "  - 1\n"
      "  - 2\n"
      "f:\n"
      "g: ~\n"
      "h: {}\n"
      "i: ''\n");
  CHECK(c.GetRaw("a") == "010");
  CHECK(c.GetRaw("b") == "quoted text");
  CHECK(c.GetRaw("c") == "TRUE");
  CHECK(c.GetRaw("d") == "x,y,z z");
  CHECK(c.GetRaw("e") == "1,2");
  CHECK_FALSE(c.GetRaw("f"));
  CHECK_FALSE(c.GetRaw("g"));
  CHECK_FALSE(c.GetRaw("h"));
  CHECK(c.GetRaw("i") == "");
  CHECK(c.entries().size() == 6);

  CHECK(Yaml("").entries().empty());
  CHECK(Yaml("# only a comment\n").entries().empty());
}

TEST_CASE("config: malformed YAML names the line", "[config]") {
  struct Case { const char* text; const char* line; };
  const Case cases[] = {
      {"rest:\n  port: 8081\n address: x\n", "line 3"},
      {"a: 1\nb: [1, 2\n", "line "},
      {"a: 1\nb: c: d\n", "line 2"},
      {"a: 1\nb: {c: 1\n", "line 3"},
      {"a: 1\n\tb: 2\n", "line 2"},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    auto r = Configuration::FromYaml(c.text);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().IsInvalidArgument());
    CHECK(Contains(r.status().message(), "invalid YAML"));
    CHECK(Contains(r.status().message(), c.line));
  }
}

TEST_CASE("config: structural errors name the line and key", "[config]") {
  SECTION("a key set twice, nested and dotted") {
    auto r = Configuration::FromYaml("rest:\n  port: 1\nrest.port: 2\n");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message() ==
          "configuration key 'rest.port' is set twice (line 2 and line 3)");
    CHECK_FALSE(r.status().hint().empty());
  }
  SECTION("the same key twice in one map") {
    auto r = Configuration::FromYaml("a: 1\nb: 2\na: 3\n");
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message() == "configuration key 'a' is set twice (line 1 and line 3)");
  }
  SECTION("a key that is not plain text") {
    auto r = Configuration::FromYaml("a: 1\n? [x, y]\n: 2\n");
    REQUIRE_FALSE(r.ok());
    CHECK(Contains(r.status().message(), "line 2"));
  }
  SECTION("the top level is not a map") {
    auto r = Configuration::FromYaml("- a\n- b\n");
    REQUIRE_FALSE(r.ok());
    CHECK(Contains(r.status().message(), "line 1"));
    CHECK(Contains(r.status().message(), "map of keys to values"));
  }
  SECTION("a list of maps") {
    auto r = Configuration::FromYaml("x:\n  y:\n    - a: 1\n");
    REQUIRE_FALSE(r.ok());
    CHECK(Contains(r.status().message(), "line 3"));
    CHECK(Contains(r.status().message(), "'x.y'"));
  }
}

TEST_CASE("config: -D key=value", "[config]") {
  Configuration c;
  REQUIRE(c.ApplyDynamicProperty("rest.port=9000").ok());
  CHECK(c.GetRaw("rest.port") == "9000");

  REQUIRE(c.ApplyDynamicProperty("execution.attached").ok());
  CHECK(c.GetRaw("execution.attached") == "true");
  CHECK(*c.GetBool(opt::kExecutionAttached).value());

  REQUIRE(c.ApplyDynamicProperty("my.key=a=b=c").ok());
  CHECK(c.GetRaw("my.key") == "a=b=c");

  REQUIRE(c.ApplyDynamicProperty("empty.value=").ok());
  CHECK(c.GetRaw("empty.value") == "");

  REQUIRE(c.ApplyDynamicProperty("rest.port=9001").ok());  // the later one wins
  CHECK(*c.GetInt(opt::kRestPort).value() == 9001);

  for (const char* bad : {"=b", "", "=", "  =x"}) {
    INFO(bad);
    weir::Status st = c.ApplyDynamicProperty(bad);
    REQUIRE_FALSE(st.ok());
    CHECK(st.IsInvalidArgument());
    CHECK(st.message() == "invalid dynamic property '" + std::string(bad) + "': the key is empty");
    CHECK(Contains(st.hint(), "key=value"));
  }
}

TEST_CASE("config: every option's default is valid for its type", "[config]") {
  Configuration empty;
  std::set<std::string> keys;
  for (const weir::ConfigOption* o : opt::AllOptions()) {
    INFO(o->key);
    CHECK(keys.insert(o->key).second);
    CHECK_FALSE(o->description.empty());
    CHECK(opt::FindOption(o->key) == o);
    for (const auto& d : o->deprecated_keys) CHECK(opt::FindOption(d) == o);
    CHECK(empty.GetRaw(*o) ==
          (o->default_value.empty() ? std::nullopt : std::optional(o->default_value)));
    bool has_default = !o->default_value.empty();
    switch (o->type) {
      case weir::OptionType::kString: CHECK(empty.GetString(*o).ok()); break;
      case weir::OptionType::kInt: {
        auto r = empty.GetInt(*o);
        REQUIRE(r.ok());
        CHECK(r->has_value() == has_default);
        break;
      }
      case weir::OptionType::kBool: {
        auto r = empty.GetBool(*o);
        REQUIRE(r.ok());
        CHECK(r->has_value() == has_default);
        break;
      }
      case weir::OptionType::kDouble: {
        auto r = empty.GetDouble(*o);
        REQUIRE(r.ok());
        CHECK(r->has_value() == has_default);
        break;
      }
      case weir::OptionType::kDuration: {
        auto r = empty.GetDuration(*o);
        REQUIRE(r.ok());
        CHECK(r->has_value() == has_default);
        break;
      }
      case weir::OptionType::kEnum: {
        CHECK_FALSE(o->enum_values.empty());
        auto r = empty.GetEnum(*o);
        REQUIRE(r.ok());
        CHECK(r->has_value() == has_default);
        break;
      }
      case weir::OptionType::kMemorySize: {
        auto r = empty.GetMemorySize(*o);
        REQUIRE(r.ok());
        CHECK(r->has_value() == has_default);
        break;
      }
    }
  }
  CHECK(opt::FindOption("no.such.key") == nullptr);
}

TEST_CASE("config: weir's defaults", "[config]") {
  Configuration c;
  CHECK(*c.GetEnum(opt::kExecutionTarget).value() == "local");
  CHECK(*c.GetString(opt::kRestAddress).value() == "localhost");
  CHECK(*c.GetInt(opt::kRestPort).value() == 8081);
  CHECK(*c.GetString(opt::kRestBindAddress).value() == "localhost");
  CHECK_FALSE(c.GetInt(opt::kRestBindPort).value().has_value());
  CHECK(*c.GetInt(opt::kRestServerMaxContentLength).value() == 104857600);
  CHECK(*c.GetInt(opt::kRestClientMaxContentLength).value() == 104857600);
  CHECK(*c.GetDuration(opt::kRestAsyncStoreDuration).value() == milliseconds(300'000));
  CHECK(*c.GetDuration(opt::kRestConnectionTimeout).value() == milliseconds(15'000));
  CHECK(*c.GetDuration(opt::kClientTimeout).value() == milliseconds(60'000));
  CHECK_FALSE(c.GetString(opt::kWebUploadDir).value().has_value());
  CHECK(*c.GetInt(opt::kParallelismDefault).value() == 1);
  CHECK_FALSE(c.GetInt(opt::kPipelineMaxParallelism).value().has_value());
  CHECK(*c.GetMemorySize(opt::kTaskBufferSize).value() == 128 * 1024);
  CHECK(*c.GetInt(opt::kTaskBuffersPerChannel).value() == 2);
  CHECK(*c.GetInt(opt::kTaskFloatingBuffers).value() == 8);

  CHECK_FALSE(c.GetDuration(opt::kCheckpointingInterval).value().has_value());
  CHECK(*c.GetEnum(opt::kCheckpointingMode).value() == "EXACTLY_ONCE");
  CHECK(*c.GetDuration(opt::kCheckpointingTimeout).value() == milliseconds(600'000));
  CHECK(*c.GetInt(opt::kCheckpointingMaxConcurrent).value() == 1);
  CHECK(*c.GetDuration(opt::kCheckpointingMinPause).value() == milliseconds(0));
  CHECK(*c.GetInt(opt::kCheckpointingTolerableFailures).value() == 0);
  CHECK(*c.GetEnum(opt::kCheckpointingExternalizedRetention).value() ==
        "NO_EXTERNALIZED_CHECKPOINTS");
  CHECK(*c.GetInt(opt::kCheckpointingNumRetained).value() == 1);
  CHECK_FALSE(c.GetString(opt::kCheckpointingDir).value().has_value());
  CHECK_FALSE(c.GetString(opt::kCheckpointingSavepointDir).value().has_value());
  CHECK_FALSE(c.GetEnum(opt::kCheckpointingStorage).value().has_value());
  CHECK_FALSE(*c.GetBool(opt::kCheckpointingUnaligned).value());
  CHECK(*c.GetDuration(opt::kCheckpointingAlignedTimeout).value() == milliseconds(0));
  CHECK_FALSE(*c.GetBool(opt::kCheckpointingIncremental).value());
  CHECK(*c.GetEnum(opt::kStateBackendType).value() == "hashmap");

  CHECK_FALSE(c.GetEnum(opt::kRestartStrategyType).value().has_value());
  CHECK(*c.GetInt(opt::kFixedDelayAttempts).value() == 1);
  CHECK(*c.GetDuration(opt::kFixedDelayDelay).value() == milliseconds(1000));
  CHECK(*c.GetInt(opt::kFailureRateMaxFailures).value() == 1);
  CHECK(*c.GetDuration(opt::kFailureRateInterval).value() == milliseconds(60'000));
  CHECK(*c.GetDuration(opt::kFailureRateDelay).value() == milliseconds(1000));
  CHECK(*c.GetDuration(opt::kExpDelayInitialBackoff).value() == milliseconds(1000));
  CHECK(*c.GetDuration(opt::kExpDelayMaxBackoff).value() == milliseconds(60'000));
  CHECK(*c.GetDouble(opt::kExpDelayMultiplier).value() == 1.5);
  CHECK(*c.GetDuration(opt::kExpDelayResetThreshold).value() == milliseconds(3'600'000));
  CHECK(*c.GetDouble(opt::kExpDelayJitter).value() == 0.1);
  CHECK(*c.GetInt(opt::kExpDelayAttemptsBeforeReset).value() == 2147483647);

  CHECK_FALSE(c.GetString(opt::kStateRecoveryPath).value().has_value());
  CHECK_FALSE(*c.GetBool(opt::kStateRecoveryIgnoreUnclaimed).value());
  CHECK(*c.GetEnum(opt::kStateRecoveryClaimMode).value() == "NO_CLAIM");
  CHECK_FALSE(c.GetString(opt::kRuntimeLogFile).value().has_value());
  CHECK(*c.GetEnum(opt::kRuntimeLogLevel).value() == "INFO");
  CHECK_FALSE(*c.GetBool(opt::kS3PathStyleAccess).value());
}

TEST_CASE("config: typed getters accept good values", "[config]") {
  Configuration c;
  c.Set("rest.port", " 9091 ");
  c.Set("execution.checkpointing.unaligned.enabled", "TRUE");
  c.Set("execution.checkpointing.incremental", "False");
  c.Set("restart-strategy.exponential-delay.backoff-multiplier", "2");
  c.Set("restart-strategy.exponential-delay.jitter-factor", "0.25");
  c.Set("execution.checkpointing.interval", "3 min");
  c.Set("execution.checkpointing.timeout", "90s");
  c.Set("execution.checkpointing.min-pause", "250");
  c.Set("execution.checkpointing.mode", "at_least_once");
  c.Set("state.backend.type", "RocksDB");
  c.Set("taskmanager.memory.segment-size", "64 KB");
  c.Set("rest.address", "example.org");

  CHECK(*c.GetInt(opt::kRestPort).value() == 9091);
  CHECK(*c.GetBool(opt::kCheckpointingUnaligned).value());
  CHECK_FALSE(*c.GetBool(opt::kCheckpointingIncremental).value());
  CHECK(*c.GetDouble(opt::kExpDelayMultiplier).value() == 2.0);
  CHECK(*c.GetDouble(opt::kExpDelayJitter).value() == 0.25);
  CHECK(*c.GetDuration(opt::kCheckpointingInterval).value() == milliseconds(180'000));
  CHECK(*c.GetDuration(opt::kCheckpointingTimeout).value() == milliseconds(90'000));
  CHECK(*c.GetDuration(opt::kCheckpointingMinPause).value() == milliseconds(250));
  CHECK(*c.GetEnum(opt::kCheckpointingMode).value() == "AT_LEAST_ONCE");  // canonical spelling
  CHECK(*c.GetEnum(opt::kStateBackendType).value() == "rocksdb");
  CHECK(*c.GetMemorySize(opt::kTaskBufferSize).value() == 64 * 1024);
  CHECK(*c.GetString(opt::kRestAddress).value() == "example.org");
  CHECK(*c.GetString(opt::kRestPort).value() == " 9091 ");  // GetString gives the raw text
  CHECK(c.Contains(opt::kRestPort));
  CHECK_FALSE(c.Contains(opt::kRestBindPort));

  c.Remove("rest.port");
  CHECK_FALSE(c.Contains(opt::kRestPort));
  CHECK(*c.GetInt(opt::kRestPort).value() == 8081);
}

TEST_CASE("config: typed getters reject bad values, naming key and value", "[config]") {
  struct Case {
    const weir::ConfigOption* option;
    const char* value;
    const char* message;
  };
  const Case cases[] = {
      {&opt::kRestPort, "abc", "invalid value 'abc' for 'rest.port': expected an integer"},
      {&opt::kRestPort, "80.5", "invalid value '80.5' for 'rest.port': expected an integer"},
      {&opt::kRestPort, "", "invalid value '' for 'rest.port': expected an integer"},
      {&opt::kRestPort, "70000",
       "invalid value '70000' for 'rest.port': must be between 1 and 65535"},
      {&opt::kRestPort, "99999999999999999999",
       "invalid value '99999999999999999999' for 'rest.port': the integer is too large"},
      {&opt::kParallelismDefault, "0",
       "invalid value '0' for 'parallelism.default': must be between 1 and 32768"},
      {&opt::kCheckpointingTolerableFailures, "-1",
       "invalid value '-1' for 'execution.checkpointing.tolerable-failed-checkpoints': must be "
       "between 0 and 2147483647"},
      {&opt::kCheckpointingUnaligned, "yes",
       "invalid value 'yes' for 'execution.checkpointing.unaligned.enabled': expected true or "
       "false"},
      {&opt::kExpDelayMultiplier, "fast",
       "invalid value 'fast' for 'restart-strategy.exponential-delay.backoff-multiplier': "
       "expected a number such as '1.5'"},
      {&opt::kExpDelayMultiplier, "0.5",
       "invalid value '0.5' for 'restart-strategy.exponential-delay.backoff-multiplier': must "
       "be at least 1"},
      {&opt::kExpDelayJitter, "1.5",
       "invalid value '1.5' for 'restart-strategy.exponential-delay.jitter-factor': must be "
       "between 0 and 1"},
      {&opt::kExpDelayJitter, "nan",
       "invalid value 'nan' for 'restart-strategy.exponential-delay.jitter-factor': expected a "
       "number such as '1.5'"},
      {&opt::kCheckpointingInterval, "5 parsecs",
       "invalid value '5 parsecs' for 'execution.checkpointing.interval': expected a duration: "
       "a whole number with a unit of ms, s, min, h or d (e.g. '500 ms', '10 s', '1 min')"},
      {&opt::kCheckpointingInterval, "5 ms",
       "invalid value '5 ms' for 'execution.checkpointing.interval': must be at least 10 ms"},
      {&opt::kClientTimeout, "-1 s",
       "invalid value '-1 s' for 'client.timeout': expected a duration: a whole number with a "
       "unit of ms, s, min, h or d (e.g. '500 ms', '10 s', '1 min')"},
      {&opt::kCheckpointingMode, "exactly-once",
       "invalid value 'exactly-once' for 'execution.checkpointing.mode': expected one of "
       "EXACTLY_ONCE, AT_LEAST_ONCE"},
      {&opt::kExecutionTarget, "yarn-session",
       "invalid value 'yarn-session' for 'execution.target': expected one of local, remote"},
      {&opt::kStateRecoveryClaimMode, "steal",
       "invalid value 'steal' for 'execution.state-recovery.claim-mode': expected one of CLAIM, "
       "NO_CLAIM, LEGACY"},
      {&opt::kTaskBufferSize, "32 parsecs",
       "invalid value '32 parsecs' for 'taskmanager.memory.segment-size': expected a memory "
       "size: a whole number of bytes with an optional unit of b, kb, mb, gb or tb (e.g. "
       "'32kb', '100 mb')"},
      {&opt::kTaskBufferSize, "1kb",
       "invalid value '1kb' for 'taskmanager.memory.segment-size': must be between 4kb and "
       "1gb"},
  };
  for (const auto& c : cases) {
    INFO(c.option->key << " = '" << c.value << "'");
    Configuration conf;
    conf.Set(c.option->key, c.value);
    weir::Status st;
    switch (c.option->type) {
      case weir::OptionType::kInt: st = conf.GetInt(*c.option).status(); break;
      case weir::OptionType::kBool: st = conf.GetBool(*c.option).status(); break;
      case weir::OptionType::kDouble: st = conf.GetDouble(*c.option).status(); break;
      case weir::OptionType::kDuration: st = conf.GetDuration(*c.option).status(); break;
      case weir::OptionType::kEnum: st = conf.GetEnum(*c.option).status(); break;
      case weir::OptionType::kMemorySize: st = conf.GetMemorySize(*c.option).status(); break;
      case weir::OptionType::kString: FAIL("strings are never invalid"); break;
    }
    REQUIRE_FALSE(st.ok());
    CHECK(st.IsInvalidArgument());
    CHECK(st.message() == c.message);
    // Validate reports the same error.
    weir::Status v = conf.Validate(nullptr);
    REQUIRE_FALSE(v.ok());
    CHECK(v.message() == c.message);
  }
}

TEST_CASE("config: a getter of the wrong type is an internal error", "[config]") {
  Configuration c;
  auto r = c.GetInt(opt::kClientTimeout);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == weir::StatusCode::kInternal);
  CHECK(Contains(r.status().message(), "'client.timeout'"));
  CHECK(c.GetString(opt::kClientTimeout).ok());
}

TEST_CASE("config: deprecated keys fall back and warn", "[config]") {
  SECTION("only the deprecated key is set") {
    Configuration c = Yaml(
        "state:\n"
        "  checkpoints:\n"
        "    dir: file:///tmp/chk\n"
        "    num-retained: 3\n"
        "  savepoints.dir: /tmp/sp\n"
        "execution.savepoint-restore-mode: claim\n");
    CHECK(c.Contains(opt::kCheckpointingDir));
    CHECK(*c.GetString(opt::kCheckpointingDir).value() == "file:///tmp/chk");
    CHECK(*c.GetInt(opt::kCheckpointingNumRetained).value() == 3);
    CHECK(*c.GetString(opt::kCheckpointingSavepointDir).value() == "/tmp/sp");
    CHECK(*c.GetEnum(opt::kStateRecoveryClaimMode).value() == "CLAIM");
    CHECK(c.GetRaw("execution.checkpointing.dir") == "file:///tmp/chk");
    CHECK(c.GetRaw("state.checkpoints.dir") == "file:///tmp/chk");

    std::vector<std::string> warnings;
    REQUIRE(c.Validate(&warnings).ok());
    CHECK(warnings == std::vector<std::string>{
        "configuration key 'execution.savepoint-restore-mode' is deprecated; use "
        "'execution.state-recovery.claim-mode' instead",
        "configuration key 'state.checkpoints.dir' is deprecated; use "
        "'execution.checkpointing.dir' instead",
        "configuration key 'state.checkpoints.num-retained' is deprecated; use "
        "'execution.checkpointing.num-retained' instead",
        "configuration key 'state.savepoints.dir' is deprecated; use "
        "'execution.checkpointing.savepoint-dir' instead",
    });
  }
  SECTION("the current key wins over a deprecated one in the same file") {
    Configuration c = Yaml(
        "state.backend: rocksdb\n"
        "state.backend.type: hashmap\n");
    CHECK(*c.GetEnum(opt::kStateBackendType).value() == "hashmap");
    std::vector<std::string> warnings;
    REQUIRE(c.Validate(&warnings).ok());
    CHECK(warnings == std::vector<std::string>{
        "configuration key 'state.backend' is deprecated and ignored because "
        "'state.backend.type' is also set; use 'state.backend.type' only"});
  }
  SECTION("the first deprecated key wins over a later one") {
    Configuration c = Yaml(
        "state.backend.fs.checkpointdir: /b\n"
        "state.checkpoints.dir: /a\n");
    CHECK(*c.GetString(opt::kCheckpointingDir).value() == "/a");
  }
  SECTION("a bad value under a deprecated key names that key") {
    Configuration c = Yaml("state.checkpoints.num-retained: many\n");
    auto r = c.GetInt(opt::kCheckpointingNumRetained);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message() ==
          "invalid value 'many' for 'state.checkpoints.num-retained': expected an integer");
  }
  SECTION("Set replaces every other spelling, so the last value wins") {
    Configuration c = Yaml("execution.checkpointing.dir: /from-file\n");
    c.Set("state.checkpoints.dir", "/from-flag");
    CHECK(*c.GetString(opt::kCheckpointingDir).value() == "/from-flag");
    CHECK_FALSE(c.GetRaw("execution.checkpointing.dir").value() == "/from-file");
    REQUIRE(c.ApplyDynamicProperty("execution.checkpointing.dir=/new").ok());
    CHECK(*c.GetString(opt::kCheckpointingDir).value() == "/new");
    CHECK(c.entries().size() == 1);
  }
}

TEST_CASE("config: unknown keys are warnings, not errors", "[config]") {
  Configuration c = Yaml(
      "taskmanager.numberOfTaskSlots: 4\n"
      "high-availability:\n"
      "  zookeeper.quorum: zk:2181\n"
      "rest.prot: 8081\n"
      "my.own.setting: x\n"
      "rest.port: 8081\n");
  std::vector<std::string> warnings;
  REQUIRE(c.Validate(&warnings).ok());
  CHECK(warnings == std::vector<std::string>{
      "configuration key 'high-availability.zookeeper.quorum' is a Flink option that weir does not "
      "implement (ignored)",
      "unknown configuration key 'my.own.setting' (ignored)",
      "unknown configuration key 'rest.prot' (ignored); did you mean 'rest.port'?",
      "configuration key 'taskmanager.numberOfTaskSlots' is a Flink option that weir does not "
      "implement (ignored)",
  });
  CHECK(c.GetRaw("my.own.setting") == "x");
  CHECK(c.Validate(nullptr).ok());
}

TEST_CASE("config: the shipped conf/config.yaml validates without warnings", "[config]") {
  auto c = Configuration::LoadFromDir((kSourceDir / "conf").string());
  REQUIRE(c.ok());
  std::vector<std::string> warnings;
  weir::Status st = c->Validate(&warnings);
  INFO(st.ToString());
  CHECK(st.ok());
  CHECK(warnings.empty());
  for (const auto& w : warnings) UNSCOPED_INFO(w);
  // The values it sets are weir's defaults.
  CHECK(c->entries() == std::map<std::string, std::string>{
      {"execution.target", "local"}, {"parallelism.default", "1"},
      {"rest.address", "localhost"}, {"rest.bind-address", "localhost"},
      {"rest.port", "8081"}});
}

TEST_CASE("config: the shipped config.yaml documents every key with its default", "[config]") {
  // Commented-out settings are lines "# key: value"; uncommenting them all must give a
  // valid configuration that holds every option, at its default where it has one.
  std::string text = ReadFile(kSourceDir / "conf" / "config.yaml");
  static const std::regex kSetting(R"(^(\s*)# ([a-z0-9][a-zA-Z0-9.-]*: .*)$)");
  std::istringstream in(text);
  std::string line, uncommented;
  while (std::getline(in, line)) {
    uncommented += std::regex_replace(line, kSetting, "$1$2") + "\n";
  }
  auto c = Configuration::FromYaml(uncommented);
  INFO(c.status().ToString());
  REQUIRE(c.ok());
  std::vector<std::string> warnings;
  CHECK(c->Validate(&warnings).ok());
  CHECK(warnings.empty());
  for (const auto& w : warnings) UNSCOPED_INFO(w);
  for (const weir::ConfigOption* o : opt::AllOptions()) {
    INFO(o->key);
    auto it = c->entries().find(o->key);
    REQUIRE(it != c->entries().end());
    if (!o->default_value.empty()) CHECK(it->second == o->default_value);
  }
  CHECK(c->entries().size() == opt::AllOptions().size());
}

TEST_CASE("config: man/weir-conf.5 documents every key", "[config]") {
  std::string man = ReadFile(kSourceDir / "man" / "weir-conf.5");
  man = std::regex_replace(man, std::regex(R"(\\-)"), "-");
  for (const weir::ConfigOption* o : opt::AllOptions()) {
    INFO(o->key);
    CHECK(Contains(man, ".B " + o->key + "\n"));
    for (const auto& d : o->deprecated_keys) CHECK(Contains(man, d));
  }
}

TEST_CASE("config: memory sizes", "[config]") {
  struct Case { const char* text; int64_t bytes; };
  const Case cases[] = {
      {"4096", 4096}, {"0", 0}, {"20kb", 20 << 10}, {"20 KB", 20 << 10}, {"1k", 1024},
      {"100 mb", 100LL << 20}, {"1m", 1 << 20}, {"1g", 1LL << 30}, {"2 gb", 2LL << 30},
      {"1t", 1LL << 40}, {"3 b", 3}, {"5 bytes", 5}, {"2 kibibytes", 2048},
      {"1 mebibytes", 1 << 20}, {" 32kb ", 32 << 10},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    auto r = weir::ParseMemorySize(c.text);
    REQUIRE(r.ok());
    CHECK(*r == c.bytes);
  }
  for (const char* bad : {"", "kb", "-1kb", "1.5mb", "12 parsecs", "1 kb x", "99999999999t",
                          "99999999999999999999"}) {
    INFO(bad);
    auto r = weir::ParseMemorySize(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().IsInvalidArgument());
    CHECK(Contains(r.status().message(), "invalid memory size '" + std::string(bad) + "'"));
  }
}

TEST_CASE("config: WEIR_CONF_DIR", "[config]") {
  SECTION("a missing directory is an error naming it") {
    ScopedEnv env("WEIR_CONF_DIR", "/nonexistent/weir-conf");
    auto r = Configuration::FindConfDir();
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message() ==
          "the configuration directory '/nonexistent/weir-conf', set in WEIR_CONF_DIR, does not "
          "exist");
    CHECK_FALSE(r.status().hint().empty());
    CHECK_FALSE(Configuration::LoadDefault().ok());
  }
  SECTION("a file instead of a directory is an error") {
    TempDir dir;
    std::ofstream(dir.path() / "f") << "x";
    std::string f = (dir.path() / "f").string();
    ScopedEnv env("WEIR_CONF_DIR", f.c_str());
    auto r = Configuration::FindConfDir();
    REQUIRE_FALSE(r.ok());
    CHECK(Contains(r.status().message(), "is not a directory"));
  }
  SECTION("an existing directory is used") {
    TempDir dir;
    std::ofstream(dir.path() / "config.yaml") << "rest:\n  port: 7000\n";
    ScopedEnv env("WEIR_CONF_DIR", dir.path().c_str());
    auto found = Configuration::FindConfDir();
    REQUIRE(found.ok());
    CHECK(*found == dir.path().string());
    auto c = Configuration::LoadDefault();
    REQUIRE(c.ok());
    CHECK(*c->GetInt(opt::kRestPort).value() == 7000);
  }
  SECTION("an existing directory without config.yaml gives the defaults") {
    TempDir dir;
    ScopedEnv env("WEIR_CONF_DIR", dir.path().c_str());
    auto c = Configuration::LoadDefault();
    REQUIRE(c.ok());
    CHECK(c->entries().empty());
  }
  SECTION("unset: found beside the executable or in ./conf, if anywhere") {
    ScopedEnv env("WEIR_CONF_DIR", nullptr);
    auto r = Configuration::FindConfDir();
    REQUIRE(r.ok());
    if (!r->empty()) CHECK(fs::is_regular_file(fs::path(*r) / "config.yaml"));
  }
  SECTION("unset: ./conf is searched") {
    ScopedEnv env("WEIR_CONF_DIR", nullptr);
    TempDir dir;
    fs::create_directories(dir.path() / "conf");
    std::ofstream(dir.path() / "conf" / "config.yaml") << "rest.port: 7001\n";
    fs::path old = fs::current_path();
    fs::current_path(dir.path());
    auto r = Configuration::FindConfDir();
    auto c = Configuration::LoadDefault();
    fs::current_path(old);
    REQUIRE(r.ok());
    REQUIRE(c.ok());
    // The executable's own ../conf may come first (e.g. inside the build tree).
    std::error_code ec;
    fs::path exe_dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
    bool beside_exe = fs::is_regular_file(exe_dir / ".." / "conf" / "config.yaml") ||
                      fs::is_regular_file(exe_dir / ".." / ".." / "conf" / "config.yaml");
    if (!beside_exe) {
      CHECK(*r == "conf");
      CHECK(*c->GetInt(opt::kRestPort).value() == 7001);
    } else {
      fs::path expected = fs::is_regular_file(exe_dir / ".." / "conf" / "config.yaml")
                              ? exe_dir / ".." / "conf"
                              : exe_dir / ".." / ".." / "conf";
      CHECK(*r == expected.lexically_normal().string());
    }
  }
}

TEST_CASE("config: LoadFromDir", "[config]") {
  TempDir dir;
  SECTION("no config.yaml gives an empty configuration") {
    auto c = Configuration::LoadFromDir(dir.path().string());
    REQUIRE(c.ok());
    CHECK(c->entries().empty());
  }
  SECTION("a bad file is an error naming the file and the line") {
    std::ofstream(dir.path() / "config.yaml") << "rest:\n  port: 1\n bad: [\n";
    auto c = Configuration::LoadFromDir(dir.path().string());
    REQUIRE_FALSE(c.ok());
    CHECK(Contains(c.status().message(), (dir.path() / "config.yaml").string()));
    CHECK(Contains(c.status().message(), "line 3"));
  }
}
