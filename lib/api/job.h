#pragma once
// Job entry points. A job is a shared object that defines one or more entry points:
//
//   void WordCount(weir::StreamExecutionEnvironment& env, const weir::JobArgs& args) {...}
//   WEIR_JOB("WordCount", WordCount, "Counts the words of a text");
//
// The loader (runtime/cluster/job_loader) finds them through one exported C
// symbol, weir_job_table_v1, that each job shared object defines for itself.

#include <stdexcept>
#include <string>
#include <vector>

#include "lib/api/stream.h"

namespace weir {

// The program arguments: everything after the job file on `weir run`'s command line.
class JobArgs {
 public:
  explicit JobArgs(std::vector<std::string> args) : args_(std::move(args)) {}
  const std::vector<std::string>& all() const { return args_; }
  // The value after `--name`, or `fallback` when absent. Throws JobArgumentError
  // when the option is last with no value.
  std::string Get(const std::string& name, const std::string& fallback = "") const;
  bool Has(const std::string& name) const;
  // Get() as an integer / number; throws JobArgumentError naming the option and
  // the value when it is not one.
  int64_t GetInt(const std::string& name, int64_t fallback) const;
  double GetDouble(const std::string& name, double fallback) const;
  // Throws JobArgumentError for any `--option` not in `known`.
  void CheckKnown(const std::vector<std::string>& known) const;

 private:
  std::vector<std::string> args_;
};

// Thrown by an entry point for bad program arguments: `weir run` reports the
// message as a usage error (exit 2).
class JobArgumentError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

using JobEntryFn = void (*)(StreamExecutionEnvironment&, const JobArgs&);

struct JobEntry {
  const char* name;
  const char* description;
  JobEntryFn fn;
};

// The version of what a job's code shares with the runtime: the loader refuses a job
// built against another. A job instantiates weir's templates (operators, state tables
// and their snapshots, channel readers and writers) in its own code, and the runtime
// calls into them through virtual interfaces and shared layouts: a change to any of
// them must bump this, or a job built before it would call through the wrong layout.
//   2: heap snapshots hand out their rows as views (KeyedTableSnapshot::KeyGroupRows),
//      and the rows of a key group are bytes written in place.
inline constexpr int kJobApiVersion = 2;

struct JobTable {
  int api_version;
  std::vector<JobEntry>* entries;
};

namespace job_internal {
// One registry per shared object (hidden visibility: never shared between jobs).
[[gnu::visibility("hidden")]] inline std::vector<JobEntry>& LocalEntries() {
  static std::vector<JobEntry> entries;
  return entries;
}
[[gnu::visibility("hidden")]] inline const JobTable* LocalTable() {
  static const JobTable table{kJobApiVersion, &LocalEntries()};
  return &table;
}
struct [[gnu::visibility("hidden")]] Registrar {
  Registrar(const char* name, JobEntryFn fn, const char* description) {
    LocalEntries().push_back({name, description, fn});
  }
};
}  // namespace job_internal

}  // namespace weir

// Each job shared object defines (once per object: an inline function) the table the loader
// looks up with dlsym.
extern "C" [[gnu::used, gnu::visibility("default")]] inline const weir::JobTable*
weir_job_table_v1() {
  return weir::job_internal::LocalTable();
}

#define WEIR_JOB_IMPL(name, fn, desc, line)                                                 \
  [[gnu::used]] static ::weir::job_internal::Registrar WEIR_CONCAT(weir_job_registrar_, line){ \
      name, fn, desc}
// WEIR_JOB("Name", function[, "description"])
#define WEIR_JOB(name, fn, ...) WEIR_JOB_IMPL(name, fn, "" __VA_ARGS__, __LINE__)
