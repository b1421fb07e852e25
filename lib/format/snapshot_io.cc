#include "lib/format/snapshot_io.h"

#include <algorithm>
#include <cstdlib>

#include "lib/common/string_util.h"
#include "lib/fs/file_system.h"

namespace weir {

namespace {

std::string_view AsText(const Bytes& b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

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
  Bytes meta_file = FrameFile(kMetaMagic, kMetadataVersion, EncodeMetadata(snapshot, dir));
  WEIR_RETURN_IF_ERROR(fs->PublishAtomically(JoinPath(dir, kMetadataFileName), AsText(meta_file)));
  snapshot.external_path = dir;
  snapshot.version = kMetadataVersion;
  return Status::OK();
}

Result<StreamHandle> WriteStateStream(SnapshotOutput& out, StateScope scope, const Bytes& bytes) {
  WEIR_ASSIGN_OR_RETURN(std::unique_ptr<StateOutputStream> stream, out.Create(scope));
  WEIR_RETURN_IF_ERROR(stream->Append(AsText(bytes)));
  return stream->Close();
}

Result<StreamHandle> WriteOperatorState(SnapshotOutput& out, const OperatorStateSnapshot& state) {
  return WriteStateStream(out, StateScope::kExclusive, EncodeOperatorState(state));
}

Result<Bytes> ReadStateStream(const StreamHandle& handle) {
  if (handle.is_inline()) return handle.data;
  WEIR_ASSIGN_OR_RETURN(std::shared_ptr<FileSystem> fs, GetFileSystem(handle.path));
  auto bytes = fs->ReadAll(handle.path);
  if (!bytes.ok()) {
    if (bytes.status().IsNotFound()) return Status::NotFound("state file '" + handle.path + "' is missing");
    return bytes.status();
  }
  if (bytes->size() != handle.size) {
    return Status::Corruption("state file '" + handle.path + "' has " + std::to_string(bytes->size()) +
                              " bytes; its metadata says " + std::to_string(handle.size));
  }
  if (Crc32cOf(*bytes) != handle.crc) {
    return Status::Corruption("state file '" + handle.path + "' does not match the checksum in its metadata");
  }
  return bytes;
}

Status VerifySnapshotFiles(const CompletedSnapshot& snapshot, bool read_contents) {
  for (const StreamHandle* h : snapshot.Files()) {
    if (read_contents) {
      WEIR_RETURN_IF_ERROR(ReadStateStream(*h).status());
      continue;
    }
    WEIR_ASSIGN_OR_RETURN(std::shared_ptr<FileSystem> fs, GetFileSystem(h->path));
    auto info = fs->Stat(h->path);
    if (!info.ok()) {
      if (info.status().IsNotFound()) return Status::NotFound("state file '" + h->path + "' is missing");
      return info.status();
    }
    if (info->size != h->size) {
      return Status::Corruption("state file '" + h->path + "' has " + std::to_string(info->size) +
                                " bytes; its metadata says " + std::to_string(h->size));
    }
  }
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

// Versions 1 and 2: one framed state file per subtask (its name in operator_state):
// read, checked and converted to inline handles.
Status ConvertLegacyStateFiles(CompletedSnapshot& snap) {
  for (auto& [uid, op] : snap.operators) {
    for (auto& s : op.subtasks) {
      if (!s.operator_state) continue;
      const StreamHandle file_handle = *s.operator_state;
      WEIR_ASSIGN_OR_RETURN(std::shared_ptr<FileSystem> fs, GetFileSystem(file_handle.path));
      auto file = fs->ReadAll(file_handle.path);
      if (!file.ok()) {
        if (!file.status().IsNotFound()) return file.status();
        return Status::NotFound("state file '" + file_handle.path + "' of operator '" + uid + "' is missing");
      }
      if (file->size() != file_handle.size) {
        return Status::Corruption("state file '" + file_handle.path + "' of operator '" + uid + "' has " +
                                  std::to_string(file->size()) + " bytes; its metadata says " +
                                  std::to_string(file_handle.size));
      }
      WEIR_ASSIGN_OR_RETURN(Bytes payload,
                            UnframeFile(*file, kStateMagic, kLegacyStateFileVersion, file_handle.path));
      if (Crc32cOf(payload) != file_handle.crc) {
        return Status::Corruption("state file '" + file_handle.path + "' does not match the checksum in its metadata");
      }
      WEIR_ASSIGN_OR_RETURN(OperatorSubtaskState converted, DecodeLegacySubtaskState(payload, file_handle.path));
      converted.finished = s.finished;
      s = std::move(converted);
    }
  }
  return Status::OK();
}

Result<CompletedSnapshot> LoadSnapshotDirectory(const std::string& dir, bool verify_contents) {
  WEIR_ASSIGN_OR_RETURN(std::shared_ptr<FileSystem> fs, GetFileSystem(dir));
  std::string meta_path = JoinPath(dir, kMetadataFileName);
  WEIR_ASSIGN_OR_RETURN(Bytes meta_file, fs->ReadAll(meta_path));
  uint32_t version = 0;
  WEIR_ASSIGN_OR_RETURN(Bytes meta_payload, UnframeFile(meta_file, kMetaMagic, kMetadataVersion, meta_path, &version));
  WEIR_ASSIGN_OR_RETURN(CompletedSnapshot snap, DecodeMetadata(meta_payload, meta_path, version, dir));
  snap.external_path = dir;
  if (version < 3) {
    WEIR_RETURN_IF_ERROR(ConvertLegacyStateFiles(snap));
  } else {
    WEIR_RETURN_IF_ERROR(VerifySnapshotFiles(snap, verify_contents));
  }
  return snap;
}

}  // namespace

Result<CompletedSnapshot> LoadSnapshot(const std::string& path, bool verify_contents) {
  // The newest checkpoint of a running job may be subsumed and deleted while it is
  // read: then the newest one is taken again.
  for (int attempt = 1;; ++attempt) {
    std::string note;
    WEIR_ASSIGN_OR_RETURN(std::string dir, ResolveSnapshotPath(path, &note));
    auto loaded = LoadSnapshotDirectory(dir, verify_contents);
    if (loaded.ok() || note.empty() || !loaded.status().IsNotFound() || attempt == kNewestCheckpointAttempts) {
      return loaded;
    }
  }
}

Status DiscardSnapshotDirectory(const std::string& dir) {
  WEIR_ASSIGN_OR_RETURN(std::shared_ptr<FileSystem> fs, GetFileSystem(dir));
  WEIR_RETURN_IF_ERROR(fs->DeleteFiles({JoinPath(dir, kMetadataFileName)}));
  return fs->DeleteRecursively(dir);
}

}  // namespace weir
