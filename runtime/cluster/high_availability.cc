#include "runtime/cluster/high_availability.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "lib/api/serialization.h"
#include "lib/common/file_util.h"
#include "lib/common/logging.h"
#include "lib/common/string_util.h"
#include "lib/config/options.h"
#include "lib/format/checkpoint_format.h"
#include "lib/fs/file_system.h"

namespace fs = std::filesystem;

namespace weir::runtime {

namespace {

constexpr char kRecordMagic[8] = {'W', 'E', 'I', 'R', 'H', 'A', 'J', 'B'};
constexpr char kPointerMagic[8] = {'W', 'E', 'I', 'R', 'H', 'A', 'C', 'P'};
constexpr uint32_t kRecordVersion = 1;
constexpr uint32_t kPointerVersion = 1;
constexpr char kJobsDir[] = "jobs";
constexpr char kLockFile[] = "lock";
constexpr char kRecordFile[] = "record";
constexpr char kPointerFile[] = "checkpoint";
constexpr char kJobFile[] = "job.so";
constexpr char kRemovedPrefix[] = ".removed-";

std::string Errno() { return std::strerror(errno); }

Status ReadLocalFile(const std::string& path, std::vector<uint8_t>* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return Status::NotFound("'" + path + "' does not exist");
    return Status::IOError("cannot read '" + path + "': " + Errno());
  }
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad()) return Status::IOError("cannot read '" + path + "': " + Errno());
  return Status::OK();
}

Status PublishLocalFile(const std::string& path, const std::vector<uint8_t>& bytes) {
  return LocalFileSystem()->PublishAtomically(
      path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

// Copies `from` to `to` durably (LocalFileSystem's Create: temporary file, fsync, rename,
// fsync of the directory).
Status CopyFileDurably(const std::string& from, const std::string& to) {
  std::ifstream in(from, std::ios::binary);
  if (!in) return Status::IOError("cannot read the job file '" + from + "': " + Errno());
  WEIR_ASSIGN_OR_RETURN(auto out, LocalFileSystem()->Create(to));
  std::vector<char> chunk(1 << 20);
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    std::streamsize n = in.gcount();
    if (n <= 0) break;
    Status st = out->Append(std::string_view(chunk.data(), static_cast<size_t>(n)));
    if (!st.ok()) {
      out->Abort();
      return st;
    }
  }
  if (in.bad()) {
    out->Abort();
    return Status::IOError("cannot read the job file '" + from + "': " + Errno());
  }
  return out->Close().status();
}

}  // namespace

Result<HighAvailabilitySettings> HighAvailabilitySettings::FromConfig(const Configuration& config) {
  HighAvailabilitySettings s;
  WEIR_ASSIGN_OR_RETURN(auto type, config.GetEnum(options::kHighAvailabilityType));
  const std::string t = type.value_or("NONE");
  if (t == "zookeeper" || t == "kubernetes") {
    return Status::InvalidArgument("'" + options::kHighAvailabilityType.key + "' is '" + t +
                                   "': weir runs on one machine and keeps its high-availability records in a "
                                   "local directory, without ZooKeeper or Kubernetes")
        .WithHint("set high-availability.type: filesystem and high-availability.storageDir: <local directory>");
  }
  WEIR_ASSIGN_OR_RETURN(auto dir, config.GetString(options::kHighAvailabilityStorageDir));
  if (t == "NONE") return s;
  s.enabled = true;
  if (!dir || Trim(*dir).empty()) {
    return Status::InvalidArgument("'" + options::kHighAvailabilityType.key + "' is 'filesystem' but '" +
                                   options::kHighAvailabilityStorageDir.key + "' is not set")
        .WithHint("set -D high-availability.storageDir=<local directory> (for example /var/lib/weir/ha)");
  }
  WEIR_ASSIGN_OR_RETURN(Uri uri, Uri::Parse(Trim(*dir)));
  if (uri.scheme != "file") {
    return Status::InvalidArgument("'" + options::kHighAvailabilityStorageDir.key + "' must be a local directory, not '" +
                                   *dir + "': its lock must end with the runtime that holds it")
        .WithHint("use a local path; checkpoints may still go to s3:// or hdfs:// through "
                  "execution.checkpointing.dir");
  }
  if (uri.path.empty() || uri.path[0] != '/') {
    return Status::InvalidArgument("'" + options::kHighAvailabilityStorageDir.key + "' must be an absolute path, not '" +
                                   *dir + "'")
        .WithHint("a restarted runtime may run in another working directory: give the full path");
  }
  s.storage_dir = fs::path(uri.path).lexically_normal().string();
  if (s.storage_dir.size() > 1 && s.storage_dir.back() == '/') s.storage_dir.pop_back();
  return s;
}

Result<std::unique_ptr<FileSystemHaStore>> FileSystemHaStore::Open(const std::string& storage_dir) {
  std::error_code ec;
  fs::create_directories(fs::path(storage_dir) / kJobsDir, ec);
  if (ec) {
    return Status::IOError("cannot create the high-availability storage directory '" + storage_dir +
                           "': " + ec.message())
        .WithHint("choose a directory this user can write (high-availability.storageDir)");
  }
  const std::string lock_path = (fs::path(storage_dir) / kLockFile).string();
  int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status::IOError("cannot open the lock file '" + lock_path + "': " + Errno())
        .WithHint("choose a directory this user can write (high-availability.storageDir)");
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    std::string holder;
    char buf[512] = {0};
    ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
    if (n > 0) holder = Trim(std::string(buf, static_cast<size_t>(n)));
    ::close(fd);
    if (err != EWOULDBLOCK) return Status::IOError("cannot lock '" + lock_path + "': " + std::strerror(err));
    holder = Join(Split(holder, '\n'), ", ");
    return Status::FailedPrecondition("the high-availability storage directory '" + storage_dir +
                                      "' is in use by another weir runtime" +
                                      (holder.empty() ? std::string() : " (" + holder + ")") +
                                      ": two runtimes must never run the same jobs")
        .WithHint("stop that runtime first, or give this one another high-availability.storageDir");
  }
  std::string note = "pid " + std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, note.data(), note.size(), 0) < 0) {
    LogWarn("cannot write the pid into the lock file '{}': {}", lock_path, Errno());
  }
  std::unique_ptr<FileSystemHaStore> store(new FileSystemHaStore(storage_dir, fd));
  // Directories of jobs whose removal a crash interrupted.
  for (const auto& e : fs::directory_iterator(fs::path(storage_dir) / kJobsDir, ec)) {
    if (e.path().filename().string().rfind(kRemovedPrefix, 0) == 0) fs::remove_all(e.path(), ec);
  }
  return store;
}

FileSystemHaStore::~FileSystemHaStore() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the lock
}

std::string FileSystemHaStore::DefaultCheckpointDir() const { return (fs::path(dir_) / "checkpoints").string(); }

void FileSystemHaStore::NoteRestAddress(const std::string& url) {
  std::string note = "pid " + std::to_string(::getpid()) + "\nrest " + url + "\n";
  if (::ftruncate(lock_fd_, 0) != 0 || ::pwrite(lock_fd_, note.data(), note.size(), 0) < 0) {
    LogWarn("cannot write the REST address into the lock file of '{}': {}", dir_, Errno());
  }
}

std::string FileSystemHaStore::JobDir(const JobId& id) const {
  return (fs::path(dir_) / kJobsDir / id.ToHex()).string();
}

Status FileSystemHaStore::WriteRecord(const JobRecord& record) {
  const std::string path = (fs::path(JobDir(record.id)) / kRecordFile).string();
  Status st = PublishLocalFile(path, EncodeJobRecord(record));
  if (!st.ok()) return Status(st).WithContext("job '" + record.id.ToHex() + "': cannot write its high-availability record");
  return Status::OK();
}

Result<JobRecord> FileSystemHaStore::ReadRecord(const std::string& path) const {
  std::vector<uint8_t> bytes;
  WEIR_RETURN_IF_ERROR(ReadLocalFile(path, &bytes));
  return DecodeJobRecord(bytes, path);
}

// Order for crash safety: the job file first, the record last. A directory without a
// record is not a job (ListJobs skips it; the next AddJob of that id replaces it).
Status FileSystemHaStore::AddJob(const JobRecord& record, const std::string& job_file) {
  std::lock_guard lock(mu_);
  const std::string dir = JobDir(record.id);
  Status st = CopyFileDurably(job_file, (fs::path(dir) / kJobFile).string());
  if (st.ok()) st = FsyncDirectory((fs::path(dir_) / kJobsDir).string());
  if (st.ok()) st = WriteRecord(record);
  if (!st.ok()) {
    std::error_code ec;
    fs::remove_all(dir, ec);
    return Status(st).WithContext("job '" + record.id.ToHex() + "': cannot record it for high availability in '" +
                                  dir_ + "'");
  }
  return Status::OK();
}

Status FileSystemHaStore::SetState(const JobId& id, JobRecordState state) {
  std::lock_guard lock(mu_);
  const std::string path = (fs::path(JobDir(id)) / kRecordFile).string();
  WEIR_ASSIGN_OR_RETURN(JobRecord record, ReadRecord(path));
  if (record.state == state) return Status::OK();
  record.state = state;
  return WriteRecord(record);
}

Status FileSystemHaStore::PublishCheckpoint(const JobId& id, int64_t checkpoint_id, const std::string& path) {
  CheckpointPointer pointer{checkpoint_id, path};
  const std::string file = (fs::path(JobDir(id)) / kPointerFile).string();
  std::lock_guard lock(mu_);
  if (!fs::exists(fs::path(JobDir(id)) / kRecordFile)) {
    return Status::NotFound("job '" + id.ToHex() + "' has no high-availability record in '" + dir_ + "'");
  }
  Status st = PublishLocalFile(file, EncodeCheckpointPointer(pointer));
  if (!st.ok()) {
    return Status(st).WithContext("job '" + id.ToHex() + "': cannot record checkpoint " +
                                  std::to_string(checkpoint_id) + " for high availability");
  }
  return Status::OK();
}

// The directory is renamed away first (durably), so a crash during the removal never
// leaves a job that looks half recorded; Open() finishes what is left.
Status FileSystemHaStore::RemoveJob(const JobId& id) {
  std::lock_guard lock(mu_);
  const fs::path dir = JobDir(id);
  std::error_code ec;
  if (!fs::exists(dir, ec)) return Status::OK();
  const fs::path removed = fs::path(dir_) / kJobsDir / (std::string(kRemovedPrefix) + id.ToHex());
  fs::remove_all(removed, ec);
  fs::rename(dir, removed, ec);
  if (ec) return Status::IOError("cannot remove the high-availability record '" + dir.string() + "': " + ec.message());
  WEIR_RETURN_IF_ERROR(FsyncDirectory((fs::path(dir_) / kJobsDir).string()));
  fs::remove_all(removed, ec);
  return Status::OK();
}

std::vector<RecoveredJob> FileSystemHaStore::ListJobs(std::vector<Status>* errors) const {
  std::lock_guard lock(mu_);
  std::vector<RecoveredJob> jobs;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(dir_) / kJobsDir, ec)) {
    const std::string name = e.path().filename().string();
    if (!e.is_directory() || name.rfind(kRemovedPrefix, 0) == 0) continue;
    const fs::path record_path = e.path() / kRecordFile;
    if (!fs::exists(record_path)) continue;  // AddJob did not get to the record
    Result<JobRecord> record = ReadRecord(record_path.string());
    if (!record.ok()) {
      errors->push_back(record.status());
      continue;
    }
    if (record->id.ToHex() != name) {
      errors->push_back(Status::Corruption("'" + record_path.string() + "' is the record of job '" +
                                           record->id.ToHex() + "', not of '" + name + "'"));
      continue;
    }
    RecoveredJob job;
    job.record = std::move(*record);
    job.job_file = (e.path() / kJobFile).string();
    std::vector<uint8_t> bytes;
    const std::string pointer_path = (e.path() / kPointerFile).string();
    Status read = ReadLocalFile(pointer_path, &bytes);
    if (read.ok()) {
      Result<CheckpointPointer> pointer = DecodeCheckpointPointer(bytes, pointer_path);
      if (!pointer.ok()) {
        errors->push_back(pointer.status());
        continue;
      }
      job.latest = *pointer;
    } else if (!read.IsNotFound()) {
      errors->push_back(read);
      continue;
    }
    jobs.push_back(std::move(job));
  }
  if (ec) errors->push_back(Status::IOError("cannot list '" + dir_ + "/jobs': " + ec.message()));
  std::sort(jobs.begin(), jobs.end(), [](const RecoveredJob& a, const RecoveredJob& b) {
    return a.record.submitted_ms < b.record.submitted_ms;
  });
  return jobs;
}

std::vector<uint8_t> EncodeJobRecord(const JobRecord& r) {
  std::vector<uint8_t> payload;
  DataOutput out(&payload);
  Serializer<std::string>::Write(out, r.id.ToHex());
  Serializer<std::string>::Write(out, r.job_name);
  Serializer<std::string>::Write(out, r.entry_class);
  Serializer<std::vector<std::string>>::Write(out, r.program_args);
  Serializer<int32_t>::Write(out, r.parallelism.value_or(0));
  Serializer<std::map<std::string, std::string>>::Write(out, r.configuration);
  Serializer<std::string>::Write(out, r.restore_path);
  Serializer<bool>::Write(out, r.allow_non_restored_state);
  Serializer<std::string>::Write(out, r.claim_mode);
  Serializer<int64_t>::Write(out, r.submitted_ms);
  Serializer<uint8_t>::Write(out, static_cast<uint8_t>(r.state));
  return FrameFile(kRecordMagic, kRecordVersion, payload);
}

Result<JobRecord> DecodeJobRecord(const std::vector<uint8_t>& file, const std::string& what) {
  WEIR_ASSIGN_OR_RETURN(Bytes payload, UnframeFile(file, kRecordMagic, kRecordVersion, what));
  JobRecord r;
  try {
    DataInput in(payload);
    std::string id;
    Serializer<std::string>::Read(in, id);
    Result<JobId> parsed = JobId::Parse(id);
    if (!parsed.ok()) return Status::Corruption("'" + what + "' holds a bad job id '" + id + "'");
    r.id = *parsed;
    Serializer<std::string>::Read(in, r.job_name);
    Serializer<std::string>::Read(in, r.entry_class);
    Serializer<std::vector<std::string>>::Read(in, r.program_args);
    int32_t parallelism = 0;
    Serializer<int32_t>::Read(in, parallelism);
    if (parallelism > 0) r.parallelism = parallelism;
    Serializer<std::map<std::string, std::string>>::Read(in, r.configuration);
    Serializer<std::string>::Read(in, r.restore_path);
    Serializer<bool>::Read(in, r.allow_non_restored_state);
    Serializer<std::string>::Read(in, r.claim_mode);
    Serializer<int64_t>::Read(in, r.submitted_ms);
    uint8_t state = 0;
    Serializer<uint8_t>::Read(in, state);
    if (state > static_cast<uint8_t>(JobRecordState::kStopped)) {
      return Status::Corruption("'" + what + "' holds an unknown job state " + std::to_string(state));
    }
    r.state = static_cast<JobRecordState>(state);
    if (!in.AtEnd()) return Status::Corruption("'" + what + "' has bytes after its record");
  } catch (const DeserializationError& e) {
    return Status::Corruption("'" + what + "' is not a valid job record: " + e.what());
  }
  return r;
}

std::vector<uint8_t> EncodeCheckpointPointer(const CheckpointPointer& p) {
  std::vector<uint8_t> payload;
  DataOutput out(&payload);
  Serializer<int64_t>::Write(out, p.checkpoint_id);
  Serializer<std::string>::Write(out, p.path);
  return FrameFile(kPointerMagic, kPointerVersion, payload);
}

Result<CheckpointPointer> DecodeCheckpointPointer(const std::vector<uint8_t>& file, const std::string& what) {
  WEIR_ASSIGN_OR_RETURN(Bytes payload, UnframeFile(file, kPointerMagic, kPointerVersion, what));
  CheckpointPointer p;
  try {
    DataInput in(payload);
    Serializer<int64_t>::Read(in, p.checkpoint_id);
    Serializer<std::string>::Read(in, p.path);
    if (!in.AtEnd()) return Status::Corruption("'" + what + "' has bytes after its checkpoint pointer");
  } catch (const DeserializationError& e) {
    return Status::Corruption("'" + what + "' is not a valid checkpoint pointer: " + e.what());
  }
  if (p.checkpoint_id <= 0 || p.path.empty()) {
    return Status::Corruption("'" + what + "' points to no checkpoint");
  }
  return p;
}

}  // namespace weir::runtime
