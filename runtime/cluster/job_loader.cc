#include "runtime/cluster/job_loader.h"

#include <dlfcn.h>

#include <cstring>
#include <filesystem>
#include <mutex>
#include <fstream>

#include "lib/api/job.h"
#include "lib/common/string_util.h"

namespace weir::runtime {

namespace {
bool LooksLikeElf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  return in.gcount() == 4 && std::memcmp(magic, "\x7f" "ELF", 4) == 0;
}
}  // namespace

Result<std::shared_ptr<JobLibrary>> JobLibrary::Open(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return Status::NotFound("job file '" + path + "' does not exist")
        .WithHint("build the examples with scripts/build.sh; they land in build/examples/");
  }
  if (std::filesystem::is_directory(path, ec)) {
    return Status::InvalidArgument("job file '" + path + "' is a directory, not a job shared object");
  }
  if (!LooksLikeElf(path)) {
    return Status::InvalidArgument("'" + path + "' is not a weir job: it is not an ELF shared object")
        .WithHint("a job is a shared library (.so) built against weir's lib/api with WEIR_JOB entry points");
  }
  std::string abs = std::filesystem::absolute(path, ec).string();
  // One job file at a time: a library's static initializers register its entry
  // points, and a second thread loading the same library must see them complete.
  static std::mutex loader_mu;
  std::lock_guard loading(loader_mu);
  void* handle = ::dlopen(abs.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = ::dlerror();
    return Status::InvalidArgument("cannot load job file '" + path + "': " + (err ? err : "unknown error"))
        .WithHint("a job must be a shared library linked against libweir, built for this machine");
  }
  using TableFn = const JobTable* (*)();
  auto fn = reinterpret_cast<TableFn>(::dlsym(handle, "weir_job_table_v1"));
  if (!fn) {
    ::dlclose(handle);
    return Status::InvalidArgument("'" + path + "' is not a weir job: it defines no entry point")
        .WithHint("declare one with WEIR_JOB(\"Name\", function) (lib/api/job.h)");
  }
  const JobTable* table = fn();
  if (!table || table->api_version != kJobApiVersion) {
    const int version = table ? table->api_version : -1;
    ::dlclose(handle);
    return Status::InvalidArgument("'" + path + "' was built for job API version " +
                                   std::to_string(version) + ", this weir runs version " +
                                   std::to_string(kJobApiVersion))
        .WithHint("rebuild the job against this weir");
  }
  if (table->entries->empty()) {
    ::dlclose(handle);
    return Status::InvalidArgument("'" + path + "' is not a weir job: it defines no entry point")
        .WithHint("declare one with WEIR_JOB(\"Name\", function) (lib/api/job.h)");
  }
  auto lib = std::make_shared<JobLibrary>();
  lib->path_ = path;
  lib->handle_ = handle;
  for (const auto& e : *table->entries) {
    lib->entries_.push_back({e.name, e.description ? e.description : ""});
    lib->fns_.push_back(reinterpret_cast<void*>(e.fn));
  }
  return lib;
}

JobLibrary::~JobLibrary() {
  if (handle_ != nullptr) ::dlclose(handle_);
}

Result<StreamGraph> JobLibrary::BuildGraph(const std::string& entry, const std::vector<std::string>& args,
                                           int default_parallelism) const {
  std::vector<std::string> names;
  for (const auto& e : entries_) names.push_back(e.name);
  int index = -1;
  if (entry.empty()) {
    if (entries_.size() > 1) {
      return Status::InvalidArgument("'" + path_ + "' has several entry points (" + Join(names, ", ") +
                                     "): choose one with -c <name>");
    }
    index = 0;
  } else {
    for (size_t i = 0; i < entries_.size(); ++i) {
      if (entries_[i].name == entry) index = static_cast<int>(i);
    }
    if (index < 0) {
      return Status::InvalidArgument("entry point '" + entry + "' not found in '" + path_ + "'; it has: " +
                                     Join(names, ", "));
    }
  }
  auto fn = reinterpret_cast<JobEntryFn>(fns_[index]);
  StreamExecutionEnvironment env(default_parallelism);
  try {
    fn(env, JobArgs(args));
  } catch (const JobArgumentError& e) {
    return Status::InvalidArgument(std::string("job '") + entries_[index].name + "': " + e.what());
  } catch (const std::exception& e) {
    return Status::Aborted(std::string("the entry point '") + entries_[index].name + "' failed: " + e.what());
  }
  StreamGraph graph = std::move(env.graph());
  if (graph.job_name.empty()) graph.job_name = entries_[index].name;
  if (graph.nodes.empty()) {
    return Status::InvalidArgument(std::string("the entry point '") + entries_[index].name +
                                   "' defined no operators: it must add at least a source and a sink");
  }
  return graph;
}

}  // namespace weir::runtime
