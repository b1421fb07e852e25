#include "lib/cli/commands/inspect_command.h"

#include <map>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "lib/api/serialization.h"
#include "lib/cli/cli11_internal.h"
#include "lib/cli/run_tool.h"
#include "lib/common/time_util.h"
#include "lib/format/checkpoint_format.h"
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

// The number of keys in a key group's blob. Every keyed state of the canonical format writes a
// key group as a varint count followed by the entries (lib/api/heap_state.h); nullopt when
// the blob does not start with a plausible count.
std::optional<uint64_t> KeysInKeyGroup(const Bytes& blob) {
  if (blob.empty()) return 0;
  try {
    DataInput in(blob);
    uint64_t n = in.ReadVarint();
    if (n > in.remaining()) return std::nullopt;  // each entry takes at least one byte
    return n;
  } catch (const DeserializationError&) {
    return std::nullopt;
  }
}

std::vector<StateSummary> SummarizeStates(const CompletedSnapshot::Operator& op, bool canonical) {
  std::vector<StateSummary> states;
  std::map<std::pair<bool, std::string>, size_t> index;  // (keyed, name) → position
  auto slot = [&](bool keyed, const std::string& name, const std::string& type) -> StateSummary& {
    auto [it, inserted] = index.try_emplace({keyed, name}, states.size());
    if (inserted) {
      states.push_back({name, keyed, type, 0, uint64_t{0}});
    }
    return states[it->second];
  };
  for (const auto& subtask : op.subtasks) {
    if (subtask.has_keyed) {
      for (const auto& table : subtask.keyed.tables) {
        StateSummary& s = slot(true, table.name, table.kind);
        for (const auto& blob : table.key_groups) {
          s.bytes += blob.size();
          std::optional<uint64_t> keys = canonical ? KeysInKeyGroup(blob) : std::nullopt;
          if (s.entries && keys) {
            *s.entries += *keys;
          } else {
            s.entries.reset();
          }
        }
      }
    }
    for (const auto& list : subtask.operator_state.lists) {
      StateSummary& s = slot(false, list.name, ModeName(list.mode));
      for (const auto& element : list.elements) s.bytes += element.size();
      if (s.entries) *s.entries += list.elements.size();
    }
  }
  return states;
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

Result<CheckpointMetadata> ReadMetadata(const std::string& dir) {
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
  auto metadata = DecodeMetadata(*payload, meta_path, version);
  if (!metadata.ok()) {
    return metadata.status().WithHint(
        "a snapshot whose _metadata is damaged cannot be restored; use an older checkpoint or "
        "savepoint");
  }
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
  constexpr int kAttempts = 3;
  std::string dir;
  CheckpointMetadata meta;
  std::optional<CompletedSnapshot> loaded;
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
    const bool again = !note.empty() && attempt < kAttempts;
    auto read = ReadMetadata(dir);
    if (!read.ok() && read.status().IsNotFound() && again) continue;
    if (!read.ok()) return read.status();
    meta = std::move(read).value();
    if (args.verify) {
      auto snapshot = LoadSnapshot(dir);
      if (!snapshot.ok() && snapshot.status().IsNotFound() && again) continue;
      if (!snapshot.ok()) {
        return Status(snapshot.status())
            .WithContext("verification of '" + dir + "' failed")
            .WithHint("this snapshot cannot be restored; use an older checkpoint or savepoint");
      }
      loaded = std::move(snapshot).value();
    }
    if (!note.empty()) {
      printer.Error("weir-inspect: inspecting the newest complete checkpoint '" + dir + "'");
    }
    break;
  }
  int files = 1;  // _metadata
  if (loaded) {
    for (const auto& op : meta.operators) {
      for (const auto& h : op.subtasks) files += h.file.empty() ? 0 : 1;
    }
  }
  const bool canonical = meta.format == SnapshotFormat::kCanonical;

  uint64_t total = 0;
  int state_files = 0;
  for (const auto& op : meta.operators) {
    for (const auto& h : op.subtasks) {
      total += h.size;
      state_files += h.file.empty() ? 0 : 1;
    }
  }

  json doc = {{"path", dir},
              {"jobid", meta.job_id.ToHex()},
              {"checkpointId", meta.checkpoint_id},
              {"kind", KindName(meta.kind)},
              {"format", FormatName(meta.format)},
              {"timestamp", meta.timestamp},
              {"stateSize", total},
              {"operators", json::array()}};

  printer.Line("Snapshot:       " + dir);
  printer.Line("Job ID:         " + meta.job_id.ToHex());
  printer.Line("Checkpoint ID:  " + std::to_string(meta.checkpoint_id));
  printer.Line("Kind:           " + KindName(meta.kind));
  printer.Line("Format:         " + FormatName(meta.format));
  printer.Line("Timestamp:      " + FormatListTimestamp(meta.timestamp) + " (" +
               std::to_string(meta.timestamp) + ")");
  printer.Line("State size:     " + Plural(total, "byte", "bytes") + " in " +
               Plural(static_cast<uint64_t>(state_files), "state file", "state files"));
  printer.Line("Operators:      " + std::to_string(meta.operators.size()));

  for (const auto& op : meta.operators) {
    uint64_t op_total = 0;
    json subtasks = json::array();
    for (const auto& h : op.subtasks) {
      op_total += h.size;
      subtasks.push_back({{"subtask", h.subtask}, {"file", h.file}, {"size", h.size}, {"finished", h.finished}});
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
    for (const auto& h : op.subtasks) {
      printer.Line("  subtask " + std::to_string(h.subtask) + ": " +
                   (h.finished       ? std::string("finished (no state)")
                    : h.file.empty() ? std::string("no state")
                                     : Plural(h.size, "byte", "bytes") + " in " + h.file));
    }
    if (loaded) {
      auto it = loaded->operators.find(op.uid);
      json states = json::array();
      if (it != loaded->operators.end()) {
        for (const auto& s : SummarizeStates(it->second, canonical)) {
          printer.Line("  state: " + DescribeState(s));
          json state = {{"name", s.name},
                        {"kind", s.keyed ? "keyed" : "operator"},
                        {"type", s.type},
                        {"bytes", s.bytes}};
          if (s.entries) state[s.keyed ? "keys" : "elements"] = *s.entries;
          states.push_back(state);
        }
      }
      if (states.empty()) printer.Line("  state: none");
      op_doc["states"] = states;
    }
    doc["operators"].push_back(op_doc);
  }

  printer.Line("");
  if (loaded) {
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
