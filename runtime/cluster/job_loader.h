#pragma once
// JobLibrary: a job shared object loaded into this process (the counterpart of
// Flink's user JAR). Loaded with RTLD_LOCAL, so two jobs never see each other's
// symbols; weir's own code comes from the one libweir.so the process already has.
// Unloaded (dlclose) when the last reference goes: JobMaster holds one while the job
// has tasks, operator factories, types or key selectors made by the library's code,
// and drops it after them when the job ends (JobMaster::ReleaseResources). Job
// libraries are built without STB_GNU_UNIQUE symbols (the weir_job CMake target) so
// that glibc really unmaps them.

#include <memory>
#include <string>
#include <vector>

#include "lib/api/graph.h"
#include "lib/common/status.h"
#include "runtime/status/job_status.h"

namespace weir::runtime {

class JobLibrary {
 public:
  // NotFound when the file does not exist; InvalidArgument when it is not a shared
  // object, or not a weir job (no entry points, or built for another API version).
  static Result<std::shared_ptr<JobLibrary>> Open(const std::string& path);
  ~JobLibrary();
  JobLibrary() = default;
  JobLibrary(const JobLibrary&) = delete;
  JobLibrary& operator=(const JobLibrary&) = delete;

  const std::string& path() const { return path_; }
  const std::vector<JarEntryPoint>& entries() const { return entries_; }

  // Runs entry point `entry` (empty: the only one) with `args` to build the job's
  // graph. InvalidArgument for an unknown entry (listing the known ones) or bad
  // program arguments; Aborted when the entry point throws anything else.
  Result<StreamGraph> BuildGraph(const std::string& entry, const std::vector<std::string>& args,
                                 int default_parallelism) const;

 private:
  std::string path_;
  void* handle_ = nullptr;
  std::vector<JarEntryPoint> entries_;
  std::vector<void*> fns_;
};

}  // namespace weir::runtime
