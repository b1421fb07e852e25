#include "lib/format/snapshot_io.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "lib/common/string_util.h"
#include "lib/fs/file_system.h"

namespace weir {

namespace {

std::string_view AsText(const Bytes& b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

// State files written at once to a remote store.
constexpr size_t kMaxConcurrentUploads = 8;

Result<WrittenFile> WriteWholeFile(FileSystem& fs, const std::string& path, const Bytes& contents) {
  WEIR_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> out, fs.Create(path));
  WEIR_RETURN_IF_ERROR(out->Append(AsText(contents)));
  return out->Close();
}

// "chk-<n>" -> n; -1 for other names.
int64_t CheckpointNumber(const std::string& name) {
  if (name.rfind("chk-", 0) != 0 || name.size() == 4) return -1;
  char* end = nullptr;
  long long n = std::strtoll(name.c_str() + 4, &end, 10);
  return *end == '\0' && n >= 0 ? n : -1;
}

}  // namespace

Status WriteSnapshot(const std::string& dir, CompletedSnapshot& snapshot) {
  WEIR_ASSIGN_OR_RETURN(std::shared_ptr<FileSystem> fs, GetFileSystem(dir));
  Status made = fs->MakeDirectories(dir);
  if (!made.ok()) {
    return Status(made).WithContext("cannot create checkpoint directory '" + dir + "'");
  }
  CheckpointMetadata meta;
  meta.job_id = snapshot.job_id;
  meta.checkpoint_id = snapshot.id;
  meta.timestamp = snapshot.timestamp;
  meta.kind = snapshot.kind;
  meta.format = snapshot.format;
  struct StateFile {
    const OperatorSubtaskSnapshot* subtask;
    SubtaskStateHandle* handle;
  };
  std::vector<StateFile> files;
  meta.operators.reserve(snapshot.operators.size());
  for (const auto& [uid, op] : snapshot.operators) {
    OperatorStateMeta& om = meta.operators.emplace_back();
    om.uid = uid;
    om.name = op.name;
    om.parallelism = op.parallelism;
    om.max_parallelism = op.max_parallelism;
    om.subtasks.resize(op.subtasks.size());
    for (size_t s = 0; s < op.subtasks.size(); ++s) {
      om.subtasks[s].subtask = static_cast<int>(s);
      if (op.subtasks[s].finished) {
        om.subtasks[s].finished = true;  // no state, no file
        continue;
      }
      om.subtasks[s].file = Id16::Generate().ToHex();
      files.push_back({&op.subtasks[s], &om.subtasks[s]});
    }
  }
  // The state files go up concurrently: on a remote store each costs a round trip or
  // more (an HDFS file close takes hundreds of milliseconds), so one at a time would
  // make a checkpoint as slow as the sum of them.
  std::atomic<size_t> next{0};
  std::mutex error_mu;
  Status first_error;
  auto worker = [&] {
    for (size_t i = next++; i < files.size(); i = next++) {
      {
        std::lock_guard lock(error_mu);
        if (!first_error.ok()) return;
      }
      SubtaskStateHandle& h = *files[i].handle;
      Bytes payload = EncodeSubtaskSnapshot(*files[i].subtask);
      Bytes file = FrameFile(kStateMagic, kStateFileVersion, payload);
      h.crc = Crc32cOf(payload);
      Result<WrittenFile> written = WriteWholeFile(*fs, JoinPath(dir, h.file), file);
      if (!written.ok()) {
        std::lock_guard lock(error_mu);
        if (first_error.ok()) first_error = written.status();
        return;
      }
      h.size = written->size;
    }
  };
  const size_t threads = std::min<size_t>(fs->scheme() == "file" ? 1 : kMaxConcurrentUploads, files.size());
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (!first_error.ok()) return first_error;
  int64_t total = 0;
  for (const auto& f : files) total += static_cast<int64_t>(f.handle->size);
  Bytes meta_file = FrameFile(kMetaMagic, kMetadataVersion, EncodeMetadata(meta));
  WEIR_RETURN_IF_ERROR(fs->PublishAtomically(JoinPath(dir, kMetadataFileName), AsText(meta_file)));
  snapshot.external_path = dir;
  snapshot.state_size = total + static_cast<int64_t>(meta_file.size());
  return Status::OK();
}

Result<std::string> ResolveSnapshotPath(const std::string& path_or_uri, std::string* chosen_note) {
  WEIR_ASSIGN_OR_RETURN(Uri uri, Uri::Parse(path_or_uri));
  const std::string path = uri.ToString();
  WEIR_ASSIGN_OR_RETURN(std::shared_ptr<FileSystem> fs, GetFileSystem(path));
  auto info = fs->Stat(path);
  if (!info.ok() && info.status().IsNotFound()) {
    return Status::NotFound("cannot find checkpoint or savepoint '" + path + "'")
        .WithHint("pass a savepoint directory, a chk-<n> directory or its _metadata file");
  }
  if (!info.ok()) return info.status();
  if (!info->is_directory) {
    if (BaseName(path) != kMetadataFileName) {
      return Status::InvalidArgument("'" + path + "' is neither a snapshot directory nor a _metadata file");
    }
    return ParentPath(path);
  }
  WEIR_ASSIGN_OR_RETURN(bool has_metadata, fs->Exists(JoinPath(path, kMetadataFileName)));
  if (has_metadata) return path;
  // A job's checkpoint directory: take the newest chk-<n> that has a _metadata (a
  // checkpoint without one is incomplete: `_metadata` is written last).
  WEIR_ASSIGN_OR_RETURN(std::vector<FileInfo> children, fs->List(path));
  std::vector<std::pair<int64_t, std::string>> checkpoints;
  for (const auto& child : children) {
    int64_t n = CheckpointNumber(BaseName(child.path));
    if (n >= 0 && child.is_directory) checkpoints.emplace_back(n, child.path);
  }
  std::sort(checkpoints.rbegin(), checkpoints.rend());
  for (const auto& [n, dir] : checkpoints) {
    WEIR_ASSIGN_OR_RETURN(bool complete, fs->Exists(JoinPath(dir, kMetadataFileName)));
    if (!complete) continue;
    if (chosen_note) *chosen_note = "restoring from the newest complete checkpoint '" + dir + "'";
    return dir;
  }
  return Status::NotFound("'" + path + "' holds no _metadata and no complete chk-<n> checkpoint")
      .WithHint("a checkpoint without _metadata is incomplete and is never used");
}

Result<Bytes> ReadSnapshotFile(const std::string& path) {
  WEIR_ASSIGN_OR_RETURN(std::shared_ptr<FileSystem> fs, GetFileSystem(path));
  return fs->ReadAll(path);
}

namespace {

Result<CompletedSnapshot> LoadSnapshotDirectory(const std::string& dir) {
  WEIR_ASSIGN_OR_RETURN(std::shared_ptr<FileSystem> fs, GetFileSystem(dir));
  std::string meta_path = JoinPath(dir, kMetadataFileName);
  WEIR_ASSIGN_OR_RETURN(Bytes meta_file, fs->ReadAll(meta_path));
  uint32_t version = 0;
  WEIR_ASSIGN_OR_RETURN(Bytes meta_payload, UnframeFile(meta_file, kMetaMagic, kMetadataVersion, meta_path, &version));
  WEIR_ASSIGN_OR_RETURN(CheckpointMetadata meta, DecodeMetadata(meta_payload, meta_path, version));
  CompletedSnapshot snap;
  snap.job_id = meta.job_id;
  snap.id = meta.checkpoint_id;
  snap.timestamp = meta.timestamp;
  snap.kind = meta.kind;
  snap.format = meta.format;
  snap.external_path = dir;
  for (const auto& om : meta.operators) {
    CompletedSnapshot::Operator op;
    op.uid = om.uid;
    op.name = om.name;
    op.parallelism = om.parallelism;
    op.max_parallelism = om.max_parallelism;
    op.subtasks.resize(om.parallelism);
    for (const auto& h : om.subtasks) {
      if (h.subtask < 0 || h.subtask >= om.parallelism) {
        return Status::Corruption("metadata file '" + meta_path + "' names subtask " + std::to_string(h.subtask) +
                                  " of operator '" + om.uid + "', which has parallelism " +
                                  std::to_string(om.parallelism));
      }
      if (h.finished) op.subtasks[h.subtask].finished = true;
      if (h.file.empty()) continue;
      std::string file_path = JoinPath(dir, h.file);
      auto file = fs->ReadAll(file_path);
      if (!file.ok()) {
        if (!file.status().IsNotFound()) return file.status();
        return Status::NotFound("state file '" + file_path + "' of operator '" + om.uid + "' is missing");
      }
      if (file->size() != h.size) {
        return Status::Corruption("state file '" + file_path + "' of operator '" + om.uid + "' has " +
                                  std::to_string(file->size()) + " bytes; its metadata says " + std::to_string(h.size));
      }
      WEIR_ASSIGN_OR_RETURN(Bytes payload, UnframeFile(*file, kStateMagic, kStateFileVersion, file_path));
      if (Crc32cOf(payload) != h.crc) {
        return Status::Corruption("state file '" + file_path + "' does not match the checksum in its metadata");
      }
      WEIR_ASSIGN_OR_RETURN(op.subtasks[h.subtask], DecodeSubtaskSnapshot(payload, file_path));
      snap.state_size += static_cast<int64_t>(file->size());
    }
    snap.operators[op.uid] = std::move(op);
  }
  return snap;
}

}  // namespace

Result<CompletedSnapshot> LoadSnapshot(const std::string& path) {
  // The newest checkpoint of a running job may be subsumed and deleted while it is
  // read: then the newest one is taken again.
  constexpr int kAttempts = 3;
  for (int attempt = 1;; ++attempt) {
    std::string note;
    WEIR_ASSIGN_OR_RETURN(std::string dir, ResolveSnapshotPath(path, &note));
    auto loaded = LoadSnapshotDirectory(dir);
    if (loaded.ok() || note.empty() || !loaded.status().IsNotFound() || attempt == kAttempts) return loaded;
  }
}

Status DiscardSnapshotDirectory(const std::string& dir) {
  WEIR_ASSIGN_OR_RETURN(std::shared_ptr<FileSystem> fs, GetFileSystem(dir));
  WEIR_RETURN_IF_ERROR(fs->DeleteFiles({JoinPath(dir, kMetadataFileName)}));
  return fs->DeleteRecursively(dir);
}

}  // namespace weir
