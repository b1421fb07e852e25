#include "lib/format/snapshot_io.h"

#include <filesystem>

#include "lib/common/file_util.h"
#include "lib/common/string_util.h"

namespace fs = std::filesystem;

namespace weir {

Status WriteSnapshot(const std::string& dir, CompletedSnapshot& snapshot) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::IOError("cannot create checkpoint directory '" + dir + "': " + ec.message());
  // The new directory's name must survive a crash with the files in it.
  std::string parent = fs::path(dir).parent_path().string();
  WEIR_RETURN_IF_ERROR(FsyncDirectory(parent.empty() ? "." : parent));
  CheckpointMetadata meta;
  meta.job_id = snapshot.job_id;
  meta.checkpoint_id = snapshot.id;
  meta.timestamp = snapshot.timestamp;
  meta.kind = snapshot.kind;
  meta.format = snapshot.format;
  int64_t total = 0;
  for (const auto& [uid, op] : snapshot.operators) {
    OperatorStateMeta om;
    om.uid = uid;
    om.name = op.name;
    om.parallelism = op.parallelism;
    om.max_parallelism = op.max_parallelism;
    for (size_t s = 0; s < op.subtasks.size(); ++s) {
      if (op.subtasks[s].finished) {
        SubtaskStateHandle h;
        h.subtask = static_cast<int>(s);
        h.finished = true;
        om.subtasks.push_back(h);
        continue;
      }
      Bytes payload = EncodeSubtaskSnapshot(op.subtasks[s]);
      SubtaskStateHandle h;
      h.subtask = static_cast<int>(s);
      h.file = Id16::Generate().ToHex();
      Bytes file = FrameFile(kStateMagic, kStateFileVersion, payload);
      h.size = file.size();
      h.crc = Crc32cOf(payload);
      WEIR_RETURN_IF_ERROR(WriteFileDurably((fs::path(dir) / h.file).string(), file));
      total += static_cast<int64_t>(file.size());
      om.subtasks.push_back(h);
    }
    meta.operators.push_back(std::move(om));
  }
  Bytes meta_file = FrameFile(kMetaMagic, kMetadataVersion, EncodeMetadata(meta));
  WEIR_RETURN_IF_ERROR(WriteFileDurably((fs::path(dir) / kMetadataFileName).string(), meta_file));
  snapshot.external_path = dir;
  snapshot.state_size = total + static_cast<int64_t>(meta_file.size());
  return Status::OK();
}

Result<std::string> ResolveSnapshotPath(const std::string& path_or_uri, std::string* chosen_note) {
  const std::string path = StripFileScheme(path_or_uri);
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    return Status::NotFound("cannot find checkpoint or savepoint '" + path + "'")
        .WithHint("pass a savepoint directory, a chk-<n> directory or its _metadata file");
  }
  if (!fs::is_directory(path, ec)) {
    if (fs::path(path).filename() != kMetadataFileName) {
      return Status::InvalidArgument("'" + path + "' is neither a snapshot directory nor a _metadata file");
    }
    return fs::path(path).parent_path().string();
  }
  if (fs::exists(fs::path(path) / kMetadataFileName, ec)) return path;
  // A job's checkpoint directory: take the newest chk-<n> that has a _metadata.
  int64_t best = -1;
  std::string best_dir;
  for (const auto& e : fs::directory_iterator(path, ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind("chk-", 0) != 0 || !e.is_directory()) continue;
    char* end = nullptr;
    long long n = std::strtoll(name.c_str() + 4, &end, 10);
    if (*end != '\0') continue;
    if (n > best && fs::exists(e.path() / kMetadataFileName, ec)) {
      best = n;
      best_dir = e.path().string();
    }
  }
  if (best < 0) {
    return Status::NotFound("'" + path + "' holds no _metadata and no complete chk-<n> checkpoint")
        .WithHint("a checkpoint without _metadata is incomplete and is never used");
  }
  if (chosen_note) *chosen_note = "restoring from the newest complete checkpoint '" + best_dir + "'";
  return best_dir;
}

Result<CompletedSnapshot> LoadSnapshot(const std::string& path) {
  std::string note;
  WEIR_ASSIGN_OR_RETURN(std::string dir, ResolveSnapshotPath(path, &note));
  std::string meta_path = (fs::path(dir) / kMetadataFileName).string();
  WEIR_ASSIGN_OR_RETURN(Bytes meta_file, ReadFile(meta_path));
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
      std::string file_path = (fs::path(dir) / h.file).string();
      auto file = ReadFile(file_path);
      if (!file.ok()) {
        return Status::NotFound("state file '" + file_path + "' of operator '" + om.uid + "' is missing");
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

Status DiscardSnapshotDirectory(const std::string& dir) {
  std::error_code ec;
  fs::remove(fs::path(dir) / kMetadataFileName, ec);
  fs::remove_all(dir, ec);
  if (ec) return Status::IOError("cannot delete '" + dir + "': " + ec.message());
  return Status::OK();
}

}  // namespace weir
