#include "runtime/cluster/local_runtime.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "lib/common/logging.h"
#include "lib/config/options.h"
#include "lib/fs/file_system.h"
#include "lib/fs/standard_file_systems.h"

namespace fs = std::filesystem;

namespace weir::runtime {

Result<std::unique_ptr<LocalRuntime>> LocalRuntime::Start(const Configuration& config, bool high_availability) {
  std::unique_ptr<LocalRuntime> rt(new LocalRuntime());
  if (high_availability) {
    // The lock first: a second runtime on the storage directory must not touch anything.
    WEIR_ASSIGN_OR_RETURN(HighAvailabilitySettings ha, HighAvailabilitySettings::FromConfig(config));
    if (ha.enabled) {
      WEIR_ASSIGN_OR_RETURN(rt->ha_store_, FileSystemHaStore::Open(ha.storage_dir));
      LogInfo("high availability: storage directory '{}' locked", ha.storage_dir);
    }
  }
  // Checkpoints and savepoints may live on s3:// or hdfs://, set up from this
  // configuration (as Flink's FileSystem.initialize).
  RegisterStandardFileSystems();
  ConfigureFileSystems(config);
  WEIR_ASSIGN_OR_RETURN(auto upload_dir, config.GetString(options::kWebUploadDir));
  if (upload_dir && !upload_dir->empty()) {
    rt->upload_dir_ = *upload_dir;
  } else {
    rt->upload_dir_ = (fs::temp_directory_path() / ("weir-web-upload-" + Id16::Generate().ToHex().substr(0, 12))).string();
    rt->owns_upload_dir_ = true;
  }
  RestServerOptions rest;
  WEIR_ASSIGN_OR_RETURN(auto bind_address, config.GetString(options::kRestBindAddress));
  WEIR_ASSIGN_OR_RETURN(auto port, config.GetInt(options::kRestPort));
  WEIR_ASSIGN_OR_RETURN(auto bind_port, config.GetInt(options::kRestBindPort));
  WEIR_ASSIGN_OR_RETURN(auto max_len, config.GetInt(options::kRestServerMaxContentLength));
  rest.bind_address = bind_address.value_or("localhost");
  rest.port = static_cast<int>(bind_port.value_or(port.value_or(8081)));
  if (rest.port < 0 || rest.port > 65535) {
    return Status::InvalidArgument("invalid value '" + std::to_string(rest.port) +
                                   "' for 'rest.port': expected a port number from 0 to 65535");
  }
  if (max_len) rest.max_content_length = *max_len;
  rt->rest_address_ = rest.bind_address;
  rt->dispatcher_ = std::make_unique<LocalDispatcher>(config, rt->upload_dir_);
  if (rt->ha_store_) rt->dispatcher_->EnableHighAvailability(rt->ha_store_);
  rt->server_ = std::make_unique<RestServer>(*rt->dispatcher_, rest);
  WEIR_RETURN_IF_ERROR(rt->server_->Start());
  const std::string url = "http://" + rest.bind_address + ":" + std::to_string(rt->server_->port());
  LogInfo("REST endpoint listening on {}", url);
  if (rt->ha_store_) {
    rt->ha_store_->NoteRestAddress(url);
    std::vector<JobId> resumed = rt->dispatcher_->ResumeRecordedJobs();
    LogInfo("high availability: {} job(s) resumed from '{}'", resumed.size(), rt->ha_store_->storage_dir());
  }
  return rt;
}

LocalRuntime::~LocalRuntime() { Shutdown(); }

void LocalRuntime::Shutdown() {
  if (server_) server_->Stop();
  if (dispatcher_) dispatcher_->Shutdown();
  if (owns_upload_dir_) {
    std::error_code ec;
    fs::remove_all(upload_dir_, ec);
    owns_upload_dir_ = false;
  }
}

void LocalRuntime::Suspend() {
  if (!ha_store_) {
    Shutdown();
    return;
  }
  if (server_) server_->Stop();
  dispatcher_->DetachHighAvailability();
}

Status RunRuntimeDaemon(const Configuration& config) {
  // Block the termination signals in every thread; this thread waits for them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  WEIR_ASSIGN_OR_RETURN(auto runtime, LocalRuntime::Start(config, /*high_availability=*/true));
  std::printf("weir runtime listening on http://%s:%d\n", runtime->rest_address().c_str(), runtime->rest_port());
  std::fflush(stdout);
  int sig = 0;
  sigwait(&signals, &sig);
  if (runtime->ha_store()) {
    // With high availability a stopping runtime leaves its jobs to the next one, as a
    // crash would: cancelling them would end them (and could delete their checkpoints).
    LogInfo("received signal {}: stopping; the running jobs stay recorded in '{}' and the next runtime there "
            "resumes them (cancel a job first to end it)",
            sig, runtime->ha_store()->storage_dir());
    runtime->Suspend();
    std::fflush(stdout);
    std::_Exit(0);
  }
  LogInfo("received signal {}, shutting down", sig);
  runtime->Shutdown();
  return Status::OK();
}

}  // namespace weir::runtime
