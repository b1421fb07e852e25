#include "lib/cli/commands/inspect_command.h"

#include <functional>
#include <map>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/api/serialization.h"
#include "lib/cli/cli11_internal.h"
#include "lib/cli/run_tool.h"
#include "lib/common/time_util.h"
#include "lib/api/keyed_state_rows.h"
#include "lib/format/checkpoint_format.h"
#include "lib/format/key_groups_reader.h"
#include "lib/format/snapshot_io.h"
#include "lib/fs/file_system.h"


namespace weir::cli {

namespace {

using nlohmann::json;

// What --verify adds: one state of an operator, summed over its subtasks.
struct StateSummary {
  std::string name;
  bool keyed = false;
  std::string type;                // keyed: value, list, ...; operator: split, union, broadcast
  uint64_t bytes = 0;              // serialized size of the state's data
  std::optional<uint64_t> entries; // keys (keyed) or elements (operator lists), when known
};

const char* ModeName(OperatorStateMode mode) {
  switch (mode) {
    case OperatorStateMode::kSplit: return "split";
    case OperatorStateMode::kUnion: return "union";
    case OperatorStateMode::kBroadcast: return "broadcast";
  }
  return "unknown";
}

// Adds the states of one subtask's keyed state handles: sizes and key counts read from
// the key-group streams (canonical form); native files give their sizes only.
Status SummarizeKeyed(const OperatorSubtaskState& subtask, std::vector<StateSummary>& states,
                      const std::function<StateSummary&(bool, const std::string&, const std::string&)>& slot) {
  for (const auto& handle : subtask.keyed) {
    if (handle.type == KeyedStateHandle::Type::kNative) {
      for (const auto& meta : handle.states()) slot(true, meta.name, StateKindName(meta.kind)).entries.reset();
      continue;
    }
    WEIR_ASSIGN_OR_RETURN(auto rows, ReadKeyGroups({handle}, handle.range()));
    for (const auto& meta : handle.states()) {
      StateSummary& s = slot(true, meta.name, StateKindName(meta.kind));
      auto it = rows.find(meta.name);
      if (it == rows.end()) continue;
      for (const auto& [group, blob] : it->second.key_groups) {
        s.bytes += blob.size();
        if (!s.entries) continue;
        if (it->second.legacy) {
          s.entries.reset();  // the old layout is typed: keys cannot be counted here
          continue;
        }
        try {
          std::string previous;
          ForEachRow(blob.data(), blob.data() + blob.size(), [&](std::string_view key, std::string_view) {
            if (meta.kind == StateKind::kMap) {
              std::string_view k, user_key;
              SplitMapRowKey(key, &k, &user_key);
              if (k == previous) return;  // rows of one key's map are adjacent
              previous.assign(k);
            }
            ++*s.entries;
          });
        } catch (const DeserializationError& e) {
          return Status::Corruption("keyed state '" + meta.name + "' is corrupt in key group " +
                                    std::to_string(group) + ": " + e.what());
        }
      }
    }
  }
  return Status::OK();
}

Result<std::vector<StateSummary>> SummarizeStates(const CompletedSnapshot::Operator& op) {
  std::vector<StateSummary> states;
  std::map<std::pair<bool, std::string>, size_t> index;  // (keyed, name) → position
  std::function<StateSummary&(bool, const std::string&, const std::string&)> slot =
      [&](bool keyed, const std::string& name, const std::string& type) -> StateSummary& {
    auto [it, inserted] = index.try_emplace({keyed, name}, states.size());
    if (inserted) {
      states.push_back({name, keyed, type, 0, uint64_t{0}});
    }
    return states[it->second];
  };
  for (const auto& subtask : op.subtasks) {
    WEIR_RETURN_IF_ERROR(SummarizeKeyed(subtask, states, slot));
    if (!subtask.operator_state) continue;
    WEIR_ASSIGN_OR_RETURN(Bytes payload, ReadStateStream(*subtask.operator_state));
    WEIR_ASSIGN_OR_RETURN(OperatorStateSnapshot lists,
                          DecodeOperatorState(payload, subtask.operator_state->is_inline()
                                                           ? std::string("inline operator state")
                                                           : "state file '" + subtask.operator_state->path + "'"));
    for (const auto& list : lists.lists) {
      StateSummary& s = slot(false, list.name, ModeName(list.mode));
      for (const auto& element : list.elements) s.bytes += element.size();
      if (s.entries) *s.entries += list.elements.size();
    }
  }
  return states;
}

// The files of a subtask's state, and whether any of it is inline.
int SubtaskFiles(const OperatorSubtaskState& s, bool* has_inline) {
  int files = 0;
  auto count = [&](const StreamHandle& h) {
    if (h.is_inline()) {
      *has_inline = *has_inline || h.size > 0;
    } else {
      ++files;
    }
  };
  if (s.operator_state) count(*s.operator_state);
  if (s.channel_state) count(*s.channel_state);
  for (const auto& k : s.keyed) {
    if (k.type == KeyedStateHandle::Type::kKeyGroups) count(k.key_groups.stream);
    if (k.type == KeyedStateHandle::Type::kLegacy) *has_inline = true;
    for (const auto& [name, h] : k.native.shared_files) count(h);
    for (const auto& [name, h] : k.native.private_files) count(h);
  }
  return files;
}

std::string KindName(SnapshotKind kind) {
  return kind == SnapshotKind::kSavepoint ? "savepoint" : "checkpoint";
}

std::string FormatName(SnapshotFormat format) {
  return format == SnapshotFormat::kNative ? "native" : "canonical";
}

// Flink's _metadata starts with the int 0x4960672d (big-endian).
bool IsFlinkMetadata(const Bytes& file) {
  return file.size() >= 4 && file[0] == 0x49 && file[1] == 0x60 && file[2] == 0x67 &&
         file[3] == 0x2d;
}

Result<CompletedSnapshot> ReadMetadata(const std::string& dir) {
  const std::string meta_path = JoinPath(dir, kMetadataFileName);
  auto file = ReadSnapshotFile(meta_path);
  if (!file.ok()) {
    if (!file.status().IsNotFound()) return file.status();
    return Status::NotFound("cannot read '" + meta_path + "'")
        .WithHint("check that the snapshot directory is complete and readable");
  }
  uint32_t version = 0;
  auto payload = UnframeFile(*file, kMetaMagic, kMetadataVersion, meta_path, &version);
  if (!payload.ok()) {
    Status st = Status::Corruption("'" + dir + "' is not a readable weir snapshot: " +
                                   payload.status().message());
    if (IsFlinkMetadata(*file)) {
      return st.WithHint("this is an Apache Flink checkpoint or savepoint; weir inspect reads "
                         "weir snapshots only");
    }
    return st.WithHint("a snapshot whose _metadata is damaged cannot be restored; use an older "
                       "checkpoint or savepoint");
  }
  auto metadata = DecodeMetadata(*payload, meta_path, version, dir);
  if (!metadata.ok()) {
    return metadata.status().WithHint(
        "a snapshot whose _metadata is damaged cannot be restored; use an older checkpoint or "
        "savepoint");
  }
  metadata->external_path = dir;
  return metadata;
}

std::string Plural(uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string DescribeState(const StateSummary& s) {
  std::string text = s.keyed ? "keyed " + s.type : "operator list (" + s.type + ")";
  text += " '" + s.name + "': " + Plural(s.bytes, "byte", "bytes");
  if (s.entries) {
    text += ", " + (s.keyed ? Plural(*s.entries, "key", "keys")
                            : Plural(*s.entries, "element", "elements"));
  }
  return text;
}

}  // namespace

void AddInspectOptions(CLI::App& app, InspectArgs& args) {
  app.add_flag("--verify", args.verify,
               "Read every state file and check its checksum, and list the states of each "
               "operator (slower: reads the whole snapshot)");
  app.add_option("path", args.path,
                 "A savepoint or chk-<n> directory (a path, s3:// or hdfs:// URI), its _metadata file, or a job's checkpoint "
                 "directory (the newest complete chk-<n> is taken)")
      ->option_text("<path>");
  AddLocalToolOptions(app, args.common);
  app.add_option("-D", args.common.dynamic_properties,
                 "Configuration property for s3:// and hdfs:// paths, e.g. -D s3.endpoint=... "
                 "(repeatable)")
      ->option_text("key=value")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  SetUsage(app, kInspectUsage);
  CLI::Option* path_option = app.get_option("path");
  internal::AddFinalCheck(app, [&args, path_option] {
    if (path_option->count() == 0 || args.path.empty()) {
      throw internal::UsageError(
          "missing path; specify a savepoint or checkpoint directory, or its _metadata file",
          "weir inspect <path>; 'weir savepoint' prints the path of a savepoint");
    }
  });
}

Status RunInspect(const InspectArgs& args, Printer& printer) {
  auto uri = Uri::Parse(args.path);
  if (uri.ok() && uri->scheme != "file") {
    // Only a remote store needs settings: a local path is read even with a broken conf/.
    std::vector<std::string> warnings;
    WEIR_ASSIGN_OR_RETURN(Configuration config, LoadToolConfiguration(args.common, &warnings));
    for (const auto& w : warnings) printer.Error("weir-inspect: warning: " + w);
    ConfigureFileSystems(config);
  }
  // A job's checkpoint directory of a running job changes under us: the checkpoint taken
  // may be subsumed and deleted while it is read. Then the newest one is taken again.
  std::string dir;
  CompletedSnapshot meta;
  for (int attempt = 1;; ++attempt) {
    std::string note;
    auto resolved = ResolveSnapshotPath(args.path, &note);
    if (!resolved.ok()) {
      if (resolved.status().IsInvalidArgument() && resolved.status().hint().empty()) {
        return resolved.status().WithHint(
            "pass a savepoint directory, a chk-<n> directory or its _metadata file");
      }
      return resolved.status();
    }
    dir = *resolved;
    const bool again = !note.empty() && attempt < kNewestCheckpointAttempts;
    auto read = ReadMetadata(dir);
    if (!read.ok() && read.status().IsNotFound() && again) continue;
    if (!read.ok()) return read.status();
    meta = std::move(read).value();
    // Snapshots of metadata versions 1 and 2 name whole state files, converted when
    // loaded; --verify reads and checks every file.
    if (args.verify || meta.version < 3) {
      auto snapshot = LoadSnapshot(dir, args.verify);
      if (!snapshot.ok() && snapshot.status().IsNotFound() && again) continue;
      if (!snapshot.ok()) {
        return Status(snapshot.status())
            .WithContext("verification of '" + dir + "' failed")
            .WithHint("this snapshot cannot be restored; use an older checkpoint or savepoint");
      }
      meta = std::move(snapshot).value();
    }
    if (!note.empty()) {
      printer.Error("weir-inspect: inspecting the newest complete checkpoint '" + dir + "'");
    }
    break;
  }

  // Per operator, the states --verify reads (before anything is printed: a corrupt
  // stream fails the command).
  std::map<std::string, std::vector<StateSummary>> summaries;
  if (args.verify) {
    for (const auto& [uid, op] : meta.operators) {
      auto states = SummarizeStates(op);
      if (!states.ok()) {
        return Status(states.status())
            .WithContext("verification of '" + dir + "' failed")
            .WithHint("this snapshot cannot be restored; use an older checkpoint or savepoint");
      }
      summaries[uid] = std::move(states).value();
    }
  }

  const uint64_t total = meta.StateSize();
  const int state_files = static_cast<int>(meta.Files().size());
  const int files = state_files + 1;  // with _metadata

  json doc = {{"path", dir},
              {"jobid", meta.job_id.ToHex()},
              {"checkpointId", meta.id},
              {"kind", KindName(meta.kind)},
              {"format", FormatName(meta.format)},
              {"stateBackend", meta.backend},
              {"timestamp", meta.timestamp},
              {"stateSize", total},
              {"checkpointedSize", meta.CheckpointedSize()},
              {"operators", json::array()}};

  printer.Line("Snapshot:       " + dir);
  printer.Line("Job ID:         " + meta.job_id.ToHex());
  printer.Line("Checkpoint ID:  " + std::to_string(meta.id));
  printer.Line("Kind:           " + KindName(meta.kind));
  printer.Line("Format:         " + FormatName(meta.format));
  printer.Line("Timestamp:      " + FormatListTimestamp(meta.timestamp) + " (" +
               std::to_string(meta.timestamp) + ")");
  printer.Line("State backend:  " + meta.backend);
  printer.Line("State size:     " + Plural(total, "byte", "bytes") + " in " +
               Plural(static_cast<uint64_t>(state_files), "state file", "state files"));
  if (meta.CheckpointedSize() != total) {
    printer.Line("Checkpointed:   " + Plural(meta.CheckpointedSize(), "byte", "bytes") +
                 " written by this checkpoint (the rest is shared with earlier ones)");
  }
  printer.Line("Operators:      " + std::to_string(meta.operators.size()));

  for (const auto& [uid, op] : meta.operators) {
    uint64_t op_total = 0;
    json subtasks = json::array();
    for (size_t i = 0; i < op.subtasks.size(); ++i) {
      const OperatorSubtaskState& sub = op.subtasks[i];
      bool has_inline = false;
      const int sub_files = SubtaskFiles(sub, &has_inline);
      op_total += sub.StateSize();
      json keyed = json::array();
      for (const auto& k : sub.keyed) {
        json entry = {{"format", k.type == KeyedStateHandle::Type::kNative ? "native" : "canonical"},
                      {"keyGroups", {k.range().start, k.range().end}},
                      {"stateSize", k.StateSize()},
                      {"checkpointedSize", k.CheckpointedSize()}};
        if (k.type == KeyedStateHandle::Type::kNative) {
          // The files of the job's shared/ directory it references (incremental checkpoints).
          json shared = json::array();
          for (const auto& [name, h] : k.native.shared_files) shared.push_back({{"path", h.path}, {"size", h.size}});
          entry["backend"] = k.native.backend;
          entry["sharedFiles"] = shared;
        }
        keyed.push_back(entry);
      }
      subtasks.push_back({{"subtask", i},
                          {"finished", sub.finished},
                          {"stateSize", sub.StateSize()},
                          {"files", sub_files},
                          {"keyed", keyed},
                          {"inFlightData", sub.channel_state ? sub.channel_state->size : 0}});
    }
    json op_doc = {{"uid", op.uid},
                   {"name", op.name},
                   {"parallelism", op.parallelism},
                   {"maxParallelism", op.max_parallelism},
                   {"stateSize", op_total},
                   {"subtasks", subtasks}};
    printer.Line("");
    printer.Line("Operator '" + op.uid + "'" + (op.name.empty() ? "" : " (" + op.name + ")"));
    printer.Line("  parallelism: " + std::to_string(op.parallelism) +
                 ", maxParallelism: " + std::to_string(op.max_parallelism));
    for (size_t i = 0; i < op.subtasks.size(); ++i) {
      const OperatorSubtaskState& sub = op.subtasks[i];
      bool has_inline = false;
      const int sub_files = SubtaskFiles(sub, &has_inline);
      std::string where;
      if (sub_files > 0) where = " in " + Plural(static_cast<uint64_t>(sub_files), "file", "files");
      if (has_inline) where += sub_files > 0 ? " and inline" : " inline";
      std::string text = sub.finished             ? std::string("finished (no state)")
                         : sub.StateSize() == 0 ? std::string("no state")
                                                  : Plural(sub.StateSize(), "byte", "bytes") + where;
      std::vector<std::string> shared;
      for (const auto& k : sub.keyed) {
        if (k.type == KeyedStateHandle::Type::kNative) {
          text += " (" + k.native.backend + " native, " + Plural(k.CheckpointedSize(), "byte", "bytes") +
                  " new, " + Plural(k.native.shared_files.size(), "shared file", "shared files") + ")";
          for (const auto& [name, h] : k.native.shared_files) {
            shared.push_back("    shared file: " + h.path + " (" + Plural(h.size, "byte", "bytes") + ")");
          }
        }
      }
      if (sub.channel_state) {
        // An unaligned checkpoint's in-flight input data, replayed on restore.
        text += " (in-flight data: " + Plural(sub.channel_state->size, "byte", "bytes") + ")";
      }
      printer.Line("  subtask " + std::to_string(i) + ": " + text);
      for (const auto& line : shared) printer.Line(line);
    }
    if (args.verify) {
      json states = json::array();
      for (const auto& st : summaries[uid]) {
        printer.Line("  state: " + DescribeState(st));
        json state = {{"name", st.name},
                      {"kind", st.keyed ? "keyed" : "operator"},
                      {"type", st.type},
                      {"bytes", st.bytes}};
        if (st.entries) state[st.keyed ? "keys" : "elements"] = *st.entries;
        states.push_back(state);
      }
      if (states.empty()) printer.Line("  state: none");
      op_doc["states"] = states;
    }
    doc["operators"].push_back(op_doc);
  }

  printer.Line("");
  if (args.verify) {
    printer.Line("verified: " + Plural(static_cast<uint64_t>(files), "file", "files") +
                 ", all checksums match");
    doc["verified"] = {{"files", files}, {"checksums", "match"}};
  } else {
    printer.Line("(state names and sizes: run with --verify, which reads and checks every "
                 "state file)");
  }
  printer.Json(doc.dump());
  return Status::OK();
}

}  // namespace weir::cli
