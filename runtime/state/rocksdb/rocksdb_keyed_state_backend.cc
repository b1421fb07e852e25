#include "runtime/state/rocksdb/rocksdb_keyed_state_backend.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <stdexcept>

#include <rocksdb/db.h>
#include <rocksdb/perf_level.h>
#include <rocksdb/sst_file_writer.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/write_batch.h>

#include "lib/api/flat_hash_map.h"
#include "lib/api/heap_state.h"
#include "lib/api/key_groups_writer.h"
#include "lib/api/keyed_state_rows.h"
#include "lib/common/hash.h"
#include "lib/common/ids.h"
#include "lib/common/string_util.h"
#include "lib/format/key_groups_reader.h"
#include "lib/fs/file_system.h"
#include "runtime/state/rocksdb/rocksdb_options.h"

namespace weir::runtime {

namespace {

namespace stdfs = std::filesystem;
using rocksdb_backend::InstanceOptions;
using rocksdb_backend::ValueCacheMemory;

constexpr char kBackendName[] = "rocksdb";
constexpr char kColumnFamilyPrefix[] = "state/";
constexpr size_t kBatchBytes = 4 << 20;
constexpr uint64_t kDownloadChunk = 8 << 20;

Status FromRocks(const rocksdb::Status& s, const std::string& what) {
  if (s.ok()) return Status::OK();
  if (s.IsCorruption()) return Status::Corruption(what + ": " + s.ToString());
  if (s.IsNotFound() || s.IsPathNotFound()) return Status::NotFound(what + ": " + s.ToString());
  return Status::IOError(what + ": " + s.ToString());
}

void ThrowIfFailed(const rocksdb::Status& s, const char* what) {
  if (!s.ok()) throw std::runtime_error(std::string("rocksdb state backend: ") + what + " failed: " + s.ToString());
}

// [key group, 2 bytes big-endian]: the first bytes of every key of the key group.
std::string KeyGroupPrefix(int key_group) {
  return {static_cast<char>((key_group >> 8) & 0xff), static_cast<char>(key_group & 0xff)};
}

// The RocksDB key of `key`'s value (and the first bytes of its map entries) in a state:
// [key group][the key's row key] (keyed_state_rows.h).
void SetStateKey(std::string* out, std::string_view key, int key_group) {
  *out = KeyGroupPrefix(key_group);
  AppendRowKey(out, key);
}

bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// An open RocksDB instance and its column families (one per state, in registration
// order); shared by the backend and the snapshots being written, and removed from
// disk with the last of them.
struct Instance {
  std::string dir;      // the instance's own directory: db/, snapshot-*/, restore-*/
  std::string db_path;  // dir/db
  InstanceOptions options;
  rocksdb::DB* db = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;  // by state id; the default family is not used
  rocksdb::ColumnFamilyHandle* default_family = nullptr;
  std::vector<StateMeta> states;
  std::atomic<int64_t> files_written{0};  // by WriteDirtyValues(kFiles), naming them

  ~Instance() {
    if (db) {
      for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
      if (default_family) db->DestroyColumnFamilyHandle(default_family);
      db->Close();
      delete db;
    }
    std::error_code ec;
    stdfs::remove_all(dir, ec);
  }
};

// Opens the instance's database with a column family for each of `states`.
Status OpenDatabase(Instance& inst, const std::vector<StateMeta>& states) {
  std::vector<rocksdb::ColumnFamilyDescriptor> families;
  families.emplace_back(rocksdb::kDefaultColumnFamilyName, inst.options.column_family);
  for (const auto& s : states) families.emplace_back(kColumnFamilyPrefix + s.name, inst.options.column_family);
  rocksdb::Options options(inst.options.db, inst.options.column_family);
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  WEIR_RETURN_IF_ERROR(FromRocks(rocksdb::DB::Open(options, inst.db_path, families, &handles, &inst.db),
                                 "cannot open the rocksdb instance in '" + inst.db_path + "'"));
  inst.default_family = handles[0];
  inst.handles.assign(handles.begin() + 1, handles.end());
  inst.states = states;
  return Status::OK();
}

// Copies one file of a native handle into `dir` under its local name (a hard link
// when both are local and it is an SST file, which RocksDB never changes), and checks
// it against the handle's size and checksum. NotFound / Corruption naming the file.
Status Download(const std::string& name, const StreamHandle& h, const std::string& dir, bool shared) {
  const std::string what = std::string(shared ? "shared" : "private") + " rocksdb state file '" +
                           (h.is_inline() ? "(inline)" : h.path) + "' (" + name + ")";
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
    return Status::Corruption("the snapshot names a rocksdb state file '" + name + "' that is not a plain file name");
  }
  const std::string target = (stdfs::path(dir) / name).string();
  uint32_t crc = 0;
  uint64_t size = 0;
  if (h.is_inline()) {
    std::ofstream out(target, std::ios::binary);
    out.write(reinterpret_cast<const char*>(h.data.data()), static_cast<std::streamsize>(h.data.size()));
    if (!out.flush()) return Status::IOError("cannot write '" + target + "': " + std::strerror(errno));
    crc = Crc32c(h.data.data(), h.data.size());
    size = h.data.size();
  } else {
    WEIR_ASSIGN_OR_RETURN(std::shared_ptr<FileSystem> fs, GetFileSystem(h.path));
    bool linked = false;
    if (fs->scheme() == "file" && EndsWith(name, ".sst")) {
      const std::string local = StripFileScheme(h.path);
      if (::link(local.c_str(), target.c_str()) == 0) {
        linked = true;
      } else if (errno == ENOENT) {
        return Status::NotFound("the " + what + " is missing").WithHint(
            "the checkpoint is incomplete (were files under its shared/ directory deleted?): restore from an "
            "older checkpoint or a savepoint");
      }
    }
    if (linked) {
      std::ifstream in(target, std::ios::binary);
      std::string chunk(kDownloadChunk, '\0');
      while (in) {
        in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
        const auto n = static_cast<size_t>(in.gcount());
        if (n == 0) break;
        crc = Crc32c(chunk.data(), n, crc);
        size += n;
      }
    } else {
      std::ofstream out(target, std::ios::binary);
      for (;;) {
        auto bytes = fs->ReadRange(h.path, size, kDownloadChunk);
        if (!bytes.ok()) {
          if (bytes.status().IsNotFound()) {
            return Status::NotFound("the " + what + " is missing").WithHint(
                "the checkpoint is incomplete (were files under its shared/ directory deleted?): restore from an "
                "older checkpoint or a savepoint");
          }
          return bytes.status();
        }
        if (bytes->empty()) break;
        out.write(reinterpret_cast<const char*>(bytes->data()), static_cast<std::streamsize>(bytes->size()));
        crc = Crc32c(bytes->data(), bytes->size(), crc);
        size += bytes->size();
        if (bytes->size() < kDownloadChunk) break;
      }
      if (!out.flush()) return Status::IOError("cannot write '" + target + "': " + std::strerror(errno));
    }
  }
  if (size != h.size || crc != h.crc) {
    return Status::Corruption("the " + what + " is corrupt: " + std::to_string(size) + " bytes with checksum " +
                              std::to_string(crc) + ", the snapshot recorded " + std::to_string(h.size) +
                              " bytes with checksum " + std::to_string(h.crc))
        .WithHint("restore from an older checkpoint or a savepoint");
  }
  return Status::OK();
}

Status DownloadAll(const NativeKeyedHandle& h, const std::string& dir) {
  std::error_code ec;
  stdfs::create_directories(dir, ec);
  if (ec) return Status::IOError("cannot create '" + dir + "': " + ec.message());
  for (const auto& [name, file] : h.shared_files) WEIR_RETURN_IF_ERROR(Download(name, file, dir, true));
  for (const auto& [name, file] : h.private_files) WEIR_RETURN_IF_ERROR(Download(name, file, dir, false));
  return Status::OK();
}

// The shared SST files an incremental checkpoint may reference instead of uploading
// them again: those of the last completed checkpoint (Flink's
// RocksIncrementalSnapshotStrategy), and those of the checkpoints being completed.
struct UploadedFiles {
  std::mutex mu;
  std::map<std::string, StreamHandle> confirmed;                      // by local file name
  std::map<int64_t, std::map<std::string, StreamHandle>> pending;     // by checkpoint id
};

// What a full snapshot reads: an iterator per state as of the barrier, made by the
// snapshot's thread once the values the snapshot took are in RocksDB (see
// RocksDbKeyedStateBackend::Snapshot), after the live memtables were switched: each
// reads as of that moment and keeps the files and memtables it reads alive. (RocksDB
// snapshots are not available with in-place updates.)
struct FullView {
  explicit FullView(std::shared_ptr<Instance> i) : inst(std::move(i)) {}
  std::shared_ptr<Instance> inst;  // declared first: outlives the iterators
  std::vector<std::unique_ptr<rocksdb::Iterator>> its;

  Status Open() {
    // Updates overwrite values in the live memtable (inplace_update_support), which
    // no read view isolates: switch to a new memtable first (the old one becomes
    // immutable and is flushed in the background), so that everything the snapshot
    // reads stays as it is while the task goes on writing.
    // While the memtables waiting for their flush stop writes (snapshots taken faster
    // than the background flushes them), RocksDB refuses a switch that does not wait
    // (TryAgain): then the switch waits for the flush, as the task's next write would.
    if (!inst->handles.empty()) {
      rocksdb::FlushOptions flush;
      flush.wait = false;
      flush.allow_write_stall = true;
      rocksdb::Status switched = inst->db->Flush(flush, inst->handles);
      if (switched.IsTryAgain()) {
        flush.wait = true;
        switched = inst->db->Flush(flush, inst->handles);
      }
      WEIR_RETURN_IF_ERROR(FromRocks(switched, "switching memtables before a snapshot"));
    }
    rocksdb::ReadOptions ro;
    ro.fill_cache = false;
    for (auto* h : inst->handles) its.emplace_back(inst->db->NewIterator(ro, h));
    return Status::OK();
  }
};

// The asynchronous part of a full snapshot or canonical savepoint: a scan in key order
// of the state as it was at the barrier (not the live state), written in the canonical
// form, once `taken` has opened `view`.
class FullSnapshot final : public AsyncKeyedSnapshot {
 public:
  FullSnapshot(std::shared_ptr<FullView> view, KeyGroupRange range, std::shared_future<Status> taken)
      : view_(std::move(view)), range_(range), states_(view_->inst->states), taken_(std::move(taken)) {}
  ~FullSnapshot() override { taken_.wait(); }  // its thread may still be opening the view

  Result<std::vector<KeyedStateHandle>> Write(SnapshotOutput& out) override {
    WEIR_RETURN_IF_ERROR(taken_.get());
    std::vector<std::unique_ptr<rocksdb::Iterator>>& its_ = view_->its;
    WEIR_ASSIGN_OR_RETURN(std::unique_ptr<StateOutputStream> stream, out.Create(StateScope::kExclusive));
    KeyGroupsWriter writer(range_, states_, std::move(stream));
    const std::string first = KeyGroupPrefix(range_.start);
    for (auto& it : its_) it->Seek(first);
    std::vector<std::string> rows(its_.size());
    for (int kg = range_.start; kg <= range_.end; ++kg) {
      if (out.cancelled()) return Status::Aborted("the checkpoint was aborted");
      const std::string prefix = KeyGroupPrefix(kg);
      for (size_t s = 0; s < its_.size(); ++s) {
        rows[s].clear();
        rocksdb::Iterator* it = its_[s].get();
        for (; it->Valid() && it->key().starts_with(prefix); it->Next()) {
          rocksdb::Slice k = it->key();
          rocksdb::Slice v = it->value();
          AppendRow(&rows[s], std::string_view(k.data() + 2, k.size() - 2), std::string_view(v.data(), v.size()));
        }
        WEIR_RETURN_IF_ERROR(FromRocks(it->status(), "reading the rocksdb state '" + states_[s].name + "'"));
      }
      WEIR_RETURN_IF_ERROR(writer.AddKeyGroup({rows.begin(), rows.end()}));
    }
    its_.clear();
    std::vector<KeyedStateHandle> handles;
    WEIR_ASSIGN_OR_RETURN(KeyedStateHandle handle, writer.Finish());
    handles.push_back(std::move(handle));
    return handles;
  }

 private:
  std::shared_ptr<FullView> view_;
  KeyGroupRange range_;
  std::vector<StateMeta> states_;
  std::shared_future<Status> taken_;
};

// The asynchronous part of a native snapshot: uploads the files of a RocksDB
// checkpoint of the state as of the barrier, once `taken` has made it in `local_dir`
// (see RocksDbKeyedStateBackend::Snapshot). The local checkpoint directory is always
// removed.
class NativeSnapshot final : public AsyncKeyedSnapshot {
 public:
  NativeSnapshot(std::shared_ptr<Instance> inst, std::string local_dir, NativeKeyedHandle base, int64_t checkpoint_id,
                 bool savepoint, std::map<std::string, StreamHandle> reusable, std::shared_ptr<UploadedFiles> uploads,
                 std::shared_future<Status> taken)
      : inst_(std::move(inst)), local_dir_(std::move(local_dir)), base_(std::move(base)), checkpoint_id_(checkpoint_id),
        savepoint_(savepoint), reusable_(std::move(reusable)), uploads_(std::move(uploads)), taken_(std::move(taken)) {}
  ~NativeSnapshot() override {
    taken_.wait();  // its thread may still be making the directory
    RemoveLocal();
  }

  Result<std::vector<KeyedStateHandle>> Write(SnapshotOutput& out) override {
    WEIR_RETURN_IF_ERROR(taken_.get());
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& e : stdfs::directory_iterator(local_dir_, ec)) names.push_back(e.path().filename().string());
    if (ec) return Status::IOError("cannot list the rocksdb checkpoint '" + local_dir_ + "': " + ec.message());
    std::sort(names.begin(), names.end());
    KeyedStateHandle handle;
    handle.type = KeyedStateHandle::Type::kNative;
    NativeKeyedHandle& h = handle.native;
    h = base_;
    std::map<std::string, StreamHandle> shared_now;
    for (const auto& name : names) {
      if (out.cancelled()) return Status::Aborted("the checkpoint was aborted");
      const std::string path = (stdfs::path(local_dir_) / name).string();
      if (!savepoint_ && EndsWith(name, ".sst")) {
        auto it = reusable_.find(name);
        if (it != reusable_.end()) {
          h.shared_files.emplace_back(name, it->second);
          shared_now.emplace(name, it->second);
          continue;
        }
        WEIR_ASSIGN_OR_RETURN(StreamHandle file, out.Upload(path, StateScope::kShared));
        h.checkpointed_size += file.size;
        h.shared_files.emplace_back(name, file);
        shared_now.emplace(name, std::move(file));
      } else {
        WEIR_ASSIGN_OR_RETURN(StreamHandle file, out.Upload(path, StateScope::kExclusive));
        h.checkpointed_size += file.size;
        h.private_files.emplace_back(name, std::move(file));
      }
    }
    RemoveLocal();
    if (!savepoint_) {
      std::lock_guard lock(uploads_->mu);
      uploads_->pending[checkpoint_id_] = std::move(shared_now);
    }
    std::vector<KeyedStateHandle> handles;
    handles.push_back(std::move(handle));
    return handles;
  }

 private:
  void RemoveLocal() {
    std::error_code ec;
    stdfs::remove_all(local_dir_, ec);
  }
  std::shared_ptr<Instance> inst_;
  std::string local_dir_;
  NativeKeyedHandle base_;
  int64_t checkpoint_id_;
  bool savepoint_;
  std::map<std::string, StreamHandle> reusable_;
  std::shared_ptr<UploadedFiles> uploads_;
  std::shared_future<Status> taken_;
};

// Dirty cached values copied out of the value caches, to be written into RocksDB in key
// order (WriteDirtyValues). Copied rather than pointed to, so that a snapshot can have
// them written off the task's thread while the caches change. A key of up to 16 bytes
// (number keys are 11 with their prefix) and a value of up to 8 are held in the entry
// itself, so that sorting the entries and writing them in order reads no other memory:
// with 100 k number keys read in key order from a buffer in the caches' order, each
// read of a key or value was a miss of the caches near the core, a fifth of the
// snapshot thread's time.
struct DirtyValues {
  static constexpr size_t kInlineKey = 16;
  static constexpr size_t kInlineValue = 8;
  struct Entry {
    // The key's first 16 bytes as two big-endian numbers: sorting on them gives the
    // order of the keys' bytes; only keys that agree on all 16 compare further.
    uint64_t high = 0, low = 0;
    char value[kInlineValue] = {};  // a value of up to kInlineValue bytes
    size_t at = 0;  // in `bytes`: the key's bytes if not held inline, then the value's if not
    uint32_t key_size = 0, value_size = 0;
    bool present = false;  // else a deletion
  };
  struct State {
    int state = 0;
    std::vector<Entry> entries;
  };
  std::vector<State> states;  // those with dirty entries
  std::string bytes;          // of keys and values too long to be held inline

  bool empty() const { return states.empty(); }
  void Add(std::vector<Entry>& to, std::string_view key, std::string_view value, bool present) {
    Entry& e = to.emplace_back();
    uint8_t first[kInlineKey] = {};
    std::memcpy(first, key.data(), std::min(key.size(), kInlineKey));
    std::memcpy(&e.high, first, 8);
    std::memcpy(&e.low, first + 8, 8);
    if constexpr (std::endian::native == std::endian::little) {  // read as big-endian: in the bytes' order
      e.high = __builtin_bswap64(e.high);
      e.low = __builtin_bswap64(e.low);
    }
    e.key_size = static_cast<uint32_t>(key.size());
    e.value_size = static_cast<uint32_t>(value.size());
    e.present = present;
    e.at = bytes.size();
    if (key.size() > kInlineKey) bytes.append(key);
    if (value.size() <= kInlineValue) {
      if (!value.empty()) std::memcpy(e.value, value.data(), value.size());  // a deletion's may be null
    } else {
      bytes.append(value);
    }
  }
  // The key of `e`, in `scratch` when held inline.
  std::string_view Key(const Entry& e, char (&scratch)[kInlineKey]) const {
    if (e.key_size > kInlineKey) return {bytes.data() + e.at, e.key_size};
    uint64_t high = e.high, low = e.low;
    if constexpr (std::endian::native == std::endian::little) {
      high = __builtin_bswap64(high);
      low = __builtin_bswap64(low);
    }
    std::memcpy(scratch, &high, 8);
    std::memcpy(scratch + 8, &low, 8);
    return {scratch, e.key_size};
  }
  std::string_view Value(const Entry& e) const {
    if (e.value_size <= kInlineValue) return {e.value, e.value_size};
    return {bytes.data() + e.at + (e.key_size > kInlineKey ? e.key_size : 0), e.value_size};
  }
  // Puts each state's entries in key order: by their first two bytes (the key group)
  // in one pass that moves each entry into its group's range in place, then each
  // group by comparison. A group's entries fit the caches near the core, and each
  // takes log2(group) comparisons rather than log2(all).
  void Sort() {
    for (State& s : states) {
      std::vector<Entry>& v = s.entries;
      if (v.size() < 2) continue;
      auto group = [](const Entry& e) { return static_cast<uint32_t>(e.high >> 48); };
      uint32_t lowest = group(v[0]), highest = lowest;
      for (const Entry& e : v) {
        lowest = std::min(lowest, group(e));
        highest = std::max(highest, group(e));
      }
      std::vector<size_t> next(highest - lowest + 2, 0);  // next[g - lowest]: where group g's next entry goes
      for (const Entry& e : v) ++next[group(e) - lowest + 1];
      for (size_t g = 1; g < next.size(); ++g) next[g] += next[g - 1];
      std::vector<size_t> end(next.begin() + 1, next.end());  // end[g - lowest]: where group g ends
      for (size_t g = 0; g + 1 < next.size(); ++g) {
        while (next[g] < end[g]) {
          const size_t to = group(v[next[g]]) - lowest;
          if (to == g) {
            ++next[g];
          } else {
            std::swap(v[next[g]], v[next[to]++]);
          }
        }
      }
      size_t begin = 0;
      for (const size_t group_end : end) {
        std::sort(v.begin() + static_cast<std::ptrdiff_t>(begin), v.begin() + static_cast<std::ptrdiff_t>(group_end),
                  [this](const Entry& a, const Entry& b) {
                    if (a.high != b.high) return a.high < b.high;
                    if (a.low != b.low) return a.low < b.low;
                    char sa[kInlineKey], sb[kInlineKey];
                    return Key(a, sa) < Key(b, sb);
                  });
        begin = group_end;
      }
    }
  }
};

// How dirty values reach RocksDB.
// kFiles, for snapshots of many: each state's entries in a sorted file that its column
// family takes in whole (ingestion). A snapshot makes a file of them anyway: through
// the memtable they would be inserted into its skip list, then read out of it into the
// same file by the flush the snapshot waits for (100 k keys changed every 100 ms: the
// job took 1.75 times as long).
// kMemtable, for evictions, key iteration and snapshots of a few: in one write batch,
// each state's entries in key order (the skip list finds where each goes next to the
// one before). Small files pile up at level 0, where every read of a key not cached
// searches them: a file per eviction made 1 M keys taken in turn 1.39 times as slow,
// one of a few hundred entries per snapshot, beside the flush of the evictions, 100 k
// keys through a cache of 64 KB 1.12 times; with 1 MB (up to 12 k entries) the two
// ways tied.
enum class WriteBack { kMemtable, kFiles };

rocksdb::Slice ToSlice(std::string_view v) { return {v.data(), v.size()}; }

// Writes `dirty`, sorted, into the instance's column families (by state id). Safe on
// any thread, as long as no other thread writes to those column families meanwhile:
// files taken in get sequence numbers newer than everything in RocksDB.
Status WriteDirtyValues(Instance& inst, const DirtyValues& dirty, WriteBack how, const rocksdb::WriteOptions& write) {
  if (how == WriteBack::kMemtable) {
    rocksdb::WriteBatch batch;
    for (const DirtyValues::State& s : dirty.states) {
      rocksdb::ColumnFamilyHandle* family = inst.handles[static_cast<size_t>(s.state)];
      for (const DirtyValues::Entry& e : s.entries) {
        char scratch[DirtyValues::kInlineKey];
        const rocksdb::Slice key = ToSlice(dirty.Key(e, scratch));
        if (e.present) {
          batch.Put(family, key, ToSlice(dirty.Value(e)));
        } else {
          batch.Delete(family, key);
        }
      }
    }
    return FromRocks(inst.db->Write(write, &batch), "writing cached state");
  }
  std::vector<rocksdb::IngestExternalFileArg> files;
  // Whatever happens, no file is left behind (a file taken in was moved away).
  struct RemoveFiles {
    const std::vector<rocksdb::IngestExternalFileArg>& files;
    ~RemoveFiles() {
      std::error_code ec;
      for (const auto& arg : files) {
        for (const auto& path : arg.external_files) stdfs::remove(path, ec);
      }
    }
  } remove_files{files};
  const rocksdb::Options options(inst.options.db, inst.options.column_family);
  for (const DirtyValues::State& s : dirty.states) {
    rocksdb::IngestExternalFileArg& arg = files.emplace_back();
    arg.column_family = inst.handles[static_cast<size_t>(s.state)];
    arg.options.move_files = true;
    arg.options.write_global_seqno = false;  // the sequence number goes into the manifest; the file stays as written
    const std::string& path = arg.external_files.emplace_back(
        (stdfs::path(inst.dir) / ("ingest-" + std::to_string(++inst.files_written) + ".sst")).string());
    rocksdb::SstFileWriter writer(rocksdb::EnvOptions(), options, arg.column_family, /*invalidate_page_cache=*/false);
    rocksdb::Status written = writer.Open(path);
    for (size_t i = 0; written.ok() && i < s.entries.size(); ++i) {
      const DirtyValues::Entry& e = s.entries[i];
      char scratch[DirtyValues::kInlineKey];
      const rocksdb::Slice key = ToSlice(dirty.Key(e, scratch));
      written = e.present ? writer.Put(key, ToSlice(dirty.Value(e))) : writer.Delete(key);
    }
    if (written.ok()) written = writer.Finish();
    WEIR_RETURN_IF_ERROR(FromRocks(written, "writing cached state to '" + path + "'"));
  }
  return FromRocks(inst.db->IngestExternalFiles(files), "taking cached state in from files");
}

// The synchronous part of a native snapshot, on whichever thread takes it: flushes the
// memtables and hard-links the live files into `dir` (a RocksDB checkpoint).
Status TakeNativeCheckpoint(Instance& inst, const std::string& dir) {
  rocksdb::FlushOptions flush;
  flush.wait = true;
  if (!inst.handles.empty()) WEIR_RETURN_IF_ERROR(FromRocks(inst.db->Flush(flush, inst.handles), "flushing before a snapshot"));
  rocksdb::Checkpoint* raw = nullptr;
  WEIR_RETURN_IF_ERROR(FromRocks(rocksdb::Checkpoint::Create(inst.db, &raw), "starting a rocksdb checkpoint"));
  std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
  return FromRocks(checkpoint->CreateCheckpoint(dir, 0), "taking a rocksdb checkpoint in '" + dir + "'");
}

// The bytes of a cached key or value in 16 bytes: up to 15 of them held in place (a
// number key with its key-group prefix is 11), longer ones in a block on the heap. A
// std::string takes 32 bytes for the same 15 in place. The value cache's arrays hold a
// key and a value in every slot, free or not, and their bytes are charged to managed
// memory: slots of 44 bytes rather than 76 hold 1.7 times the entries in the same
// memory, and a lookup reads less.
class alignas(8) CompactBytes {
 public:
  static constexpr size_t kInline = 15;

  CompactBytes() { raw_[kTag] = 0; }
  explicit CompactBytes(std::string_view bytes) {
    raw_[kTag] = 0;
    assign(bytes);
  }
  CompactBytes(const CompactBytes& other) : CompactBytes(other.view()) {}
  CompactBytes(CompactBytes&& other) noexcept {
    std::memcpy(raw_, other.raw_, sizeof(raw_));
    other.raw_[kTag] = 0;
  }
  CompactBytes& operator=(const CompactBytes& other) {
    if (this != &other) assign(other.view());
    return *this;
  }
  CompactBytes& operator=(CompactBytes&& other) noexcept {
    if (this != &other) {
      Free();
      std::memcpy(raw_, other.raw_, sizeof(raw_));
      other.raw_[kTag] = 0;
    }
    return *this;
  }
  ~CompactBytes() { Free(); }

  void assign(std::string_view bytes) {
    if (bytes.size() <= kInline) {
      Free();
      std::memcpy(raw_, bytes.data(), bytes.size());
      raw_[kTag] = static_cast<unsigned char>(bytes.size());
      return;
    }
    if (!OnHeap() || Capacity() < bytes.size()) {
      Free();
      const uint32_t capacity = static_cast<uint32_t>(BlockBytesFor(bytes.size()) - sizeof(uint32_t));
      auto* block = static_cast<char*>(::operator new(BlockBytesFor(bytes.size())));
      std::memcpy(block, &capacity, sizeof(capacity));
      std::memcpy(raw_, &block, sizeof(block));
      raw_[kTag] = kOnHeap;
    }
    std::memcpy(Block() + sizeof(uint32_t), bytes.data(), bytes.size());
    const auto size = static_cast<uint32_t>(bytes.size());
    std::memcpy(raw_ + sizeof(char*), &size, sizeof(size));
  }
  std::string_view view() const {
    if (!OnHeap()) return {reinterpret_cast<const char*>(raw_), raw_[kTag]};
    uint32_t size;
    std::memcpy(&size, raw_ + sizeof(char*), sizeof(size));
    return {Block() + sizeof(uint32_t), size};
  }
  // The bytes this holds on the heap.
  size_t heap_bytes() const { return OnHeap() ? Capacity() + sizeof(uint32_t) : 0; }
  // The bytes holding `n` takes on the heap (what heap_bytes() is after assign).
  static size_t HeapBytesFor(size_t n) { return n <= kInline ? 0 : BlockBytesFor(n); }

 private:
  static constexpr size_t kTag = 15;                // raw_[kTag]: the size in place, or kOnHeap
  static constexpr unsigned char kOnHeap = 0xff;
  // A block: its capacity (4 bytes), then the bytes; whole 16-byte units.
  static size_t BlockBytesFor(size_t n) { return (n + sizeof(uint32_t) + 15) & ~size_t{15}; }
  bool OnHeap() const { return raw_[kTag] == kOnHeap; }
  char* Block() const {
    char* block;
    std::memcpy(&block, raw_, sizeof(block));
    return block;
  }
  uint32_t Capacity() const {
    uint32_t capacity;
    std::memcpy(&capacity, Block(), sizeof(capacity));
    return capacity;
  }
  void Free() {
    if (OnHeap()) ::operator delete(Block());
    raw_[kTag] = 0;
  }

  // In place: the bytes, then their count at kTag. On the heap: the block's address,
  // the size (4 bytes), and kOnHeap at kTag.
  unsigned char raw_[16];
};
static_assert(sizeof(CompactBytes) == 16);

// What the value caches of one backend may hold: chunks of ValueCacheMemory taken as
// they grow, up to the instance's bound, and given back when they shrink (so that the
// other instances of a slot may grow) and when the backend goes. The task's thread only.
class ValueCacheBudget {
 public:
  ValueCacheBudget(std::shared_ptr<ValueCacheMemory> memory, size_t most) : memory_(std::move(memory)), most_(most) {}
  ~ValueCacheBudget() {
    if (memory_) memory_->GiveBack(chunks_);
  }
  ValueCacheBudget(const ValueCacheBudget&) = delete;
  ValueCacheBudget& operator=(const ValueCacheBudget&) = delete;

  // Whether the caches may hold `bytes`, taking chunks for them when there are any.
  bool Fits(size_t bytes) {
    if (bytes <= limit_) [[likely]] return true;
    return Grow(bytes);
  }
  // Gives back the chunks that holding `bytes` does not need.
  void ShrinkTo(size_t bytes) {
    const size_t needed = (bytes + kChunk - 1) / kChunk;
    if (needed >= chunks_) return;
    memory_->GiveBack(chunks_ - needed);
    chunks_ = needed;
    limit_ = std::min(chunks_ * kChunk, most_);
  }
 private:
  static constexpr size_t kChunk = ValueCacheMemory::kChunk;
  [[gnu::noinline]] bool Grow(size_t bytes) {
    while (limit_ < bytes && chunks_ * kChunk < most_ && memory_ && memory_->TakeChunk()) {
      ++chunks_;
      limit_ = std::min(chunks_ * kChunk, most_);
    }
    return bytes <= limit_;
  }

  std::shared_ptr<ValueCacheMemory> memory_;  // null: no cache
  size_t most_;                               // the instance's bound
  size_t chunks_ = 0;
  size_t limit_ = 0;  // what the chunks taken hold, at most most_
};

class RocksDbKeyedStateBackend final : public BytesKeyedStateBackend {
 public:
  RocksDbKeyedStateBackend(std::shared_ptr<Instance> inst, int max_parallelism, KeyGroupRange range)
      : inst_(std::move(inst)), max_parallelism_(max_parallelism), range_(range),
        backend_id_(Id16::Generate().ToHex()), uploads_(std::make_shared<UploadedFiles>()),
        cache_budget_(inst_->options.value_cache_memory, inst_->options.value_cache_bytes) {
    write_.disableWAL = true;  // state is recovered from checkpoints, as in Flink
    // RocksDB counts every key comparison in a thread-local perf context by default
    // (PerfLevel kEnableCount): three thread-local lookups per comparison, a sixth of
    // an update's instructions with 100 000 keys in the memtable. Nothing reads those
    // counters; the level is per thread, and the task's thread opens its backend.
    rocksdb::SetPerfLevel(rocksdb::PerfLevel::kDisable);
    for (size_t i = 0; i < inst_->states.size(); ++i) {
      by_name_.emplace(inst_->states[i].name, static_cast<int>(i));
      AddCache(static_cast<int>(i));
    }
  }
  ~RocksDbKeyedStateBackend() override {
    if (write_back_.valid()) write_back_.wait();  // a snapshot's thread may still be writing
  }

  const char* type() const override { return kBackendName; }
  int max_parallelism() const override { return max_parallelism_; }
  KeyGroupRange range() const override { return range_; }

  // The synchronous part copies the dirty values out of the caches (TakeDirtyValues);
  // a thread of the snapshot's own sorts them and writes them into RocksDB, then makes
  // the snapshot's view of it: for a native snapshot, a RocksDB checkpoint (hard links)
  // in a local directory (TakeNativeCheckpoint); for a full one, iterators over fresh
  // memtables (FullView). The task goes on meanwhile; until the thread is done, it
  // writes nothing into RocksDB and drops no cached entry (WaitForWriteBack): RocksDB
  // holds the state as of the barrier, less the values on their way, which the caches
  // still hold. With 100 k keys changed every 100 ms, number_sum at p=1 ran 1.3 times as
  // fast as when the task sorted and wrote the values itself (full and incremental
  // checkpoints alike), 1.6 times with 500 k keys.
  std::unique_ptr<AsyncKeyedSnapshot> Snapshot(const SnapshotOptions& options) override {
    WaitForWriteBack();
    const WriteBack how = DirtyEntries() >= kFilesFromEntries ? WriteBack::kFiles : WriteBack::kMemtable;
    in_flight_ = std::make_shared<DirtyValues>(TakeDirtyValues());
    const bool native = !options.canonical && (options.savepoint || options.incremental);
    if (!native) {
      auto view = std::make_shared<FullView>(inst_);
      StartWriteBack(how, [view](Instance&) { return view->Open(); });
      return std::make_unique<FullSnapshot>(std::move(view), range_, write_back_);
    }
    const std::string dir = (stdfs::path(inst_->dir) / ("snapshot-" + std::to_string(options.checkpoint_id) + "-" +
                                                        std::to_string(++snapshots_taken_))).string();
    StartWriteBack(how, [dir](Instance& inst) { return TakeNativeCheckpoint(inst, dir); });
    NativeKeyedHandle base;
    base.backend = kBackendName;
    base.backend_id = backend_id_;
    base.range = range_;
    base.states = inst_->states;
    std::map<std::string, StreamHandle> reusable;
    if (!options.savepoint && !options.full) {
      std::lock_guard lock(uploads_->mu);
      reusable = uploads_->confirmed;
    }
    return std::make_unique<NativeSnapshot>(inst_, dir, std::move(base), options.checkpoint_id, options.savepoint,
                                            std::move(reusable), uploads_, write_back_);
  }

  void NotifyCheckpointComplete(int64_t checkpoint_id) override {
    std::lock_guard lock(uploads_->mu);
    auto it = uploads_->pending.find(checkpoint_id);
    if (it == uploads_->pending.end()) return;
    uploads_->confirmed = std::move(it->second);
    uploads_->pending.erase(uploads_->pending.begin(), std::next(it));
  }

  void NotifyCheckpointAborted(int64_t checkpoint_id) override {
    std::lock_guard lock(uploads_->mu);
    uploads_->pending.erase(checkpoint_id);
  }

  // The files of a restored checkpoint that the next incremental one may reference.
  void ReuseRestoredFiles(const NativeKeyedHandle& h) {
    std::lock_guard lock(uploads_->mu);
    for (const auto& [name, file] : h.shared_files) uploads_->confirmed[name] = file;
  }

  int RegisterState(const std::string& name, StateKind kind) override {
    auto it = by_name_.find(name);
    if (it != by_name_.end()) {
      const StateKind registered = inst_->states[static_cast<size_t>(it->second)].kind;
      if (registered != kind) ThrowStateKindMismatch(name, registered, kind);
      return it->second;
    }
    WaitForWriteBack();  // its thread reads the families
    rocksdb::ColumnFamilyHandle* h = nullptr;
    ThrowIfFailed(inst_->db->CreateColumnFamily(inst_->options.column_family, kColumnFamilyPrefix + name, &h),
                  "creating a column family");
    inst_->handles.push_back(h);
    inst_->states.push_back({name, kind});
    const int id = static_cast<int>(inst_->handles.size()) - 1;
    by_name_.emplace(name, id);
    AddCache(id);
    return id;
  }

  void SetCurrentKey(std::string_view key, int key_group) override {
    SetStateKey(&key_, key, key_group);
    last_cached_ = nullptr;
  }

  // Loads ahead the slot where the lookup of the key's cached values starts, in each
  // cache: with more cached than the core's caches hold, each lookup is a miss otherwise.
  bool PrefetchPays() override { return cached_bytes_ >= prefetch_bytes_; }
  void PrefetchKey(std::string_view key, int key_group) override {
    SetStateKey(&prefetch_key_, key, key_group);
    const size_t hash = BytesHash()(prefetch_key_);
    for (const auto& cache : caches_) {
      if (cache) cache->entries.PrefetchSlots(hash);
    }
  }

  bool Get(int state, std::string* value) override {
    ValueCache* cache = CacheOf(state);
    if (cache == nullptr) return GetFromDatabase(state, value);
    if (auto it = cache->entries.find(std::string_view(key_)); it != cache->entries.end()) {
      ++hits_since_room_;
      last_cached_ = &*it;
      last_cached_state_ = state;
      if (!it->second.present) return false;
      value->assign(it->second.value.view());
      return true;
    }
    const bool found = GetFromDatabase(state, value);
    Remember(state, *cache, found ? std::string_view(*value) : std::string_view(), found, /*dirty=*/false);
    return found;
  }
  void Put(int state, std::string_view value) override {
    if (ValueCache* cache = CacheOf(state)) {
      Remember(state, *cache, value, /*present=*/true, /*dirty=*/true);
      return;
    }
    WaitForWriteBack();
    ThrowIfFailed(inst_->db->Put(write_, Family(state), key_, ToSlice(value)), "writing state");
  }
  void Delete(int state) override {
    if (ValueCache* cache = CacheOf(state)) {
      Remember(state, *cache, {}, /*present=*/false, /*dirty=*/true);
      return;
    }
    WaitForWriteBack();
    ThrowIfFailed(inst_->db->Delete(write_, Family(state), key_), "deleting state");
  }
  void Append(int state, std::string_view element) override {
    scratch_.clear();
    AppendVarint(&scratch_, element.size());
    scratch_.append(element);
    WaitForWriteBack();
    ThrowIfFailed(inst_->db->Merge(write_, Family(state), key_, scratch_), "appending to list state");
  }

  bool MapGet(int state, std::string_view user_key, std::string* value) override {
    MapKey(user_key);
    rocksdb::Status s = inst_->db->Get(read_, Family(state), map_key_, value);
    if (s.IsNotFound()) return false;
    ThrowIfFailed(s, "reading map state");
    return true;
  }
  void MapPut(int state, std::string_view user_key, std::string_view value) override {
    MapKey(user_key);
    WaitForWriteBack();
    ThrowIfFailed(inst_->db->Put(write_, Family(state), map_key_, ToSlice(value)), "writing map state");
  }
  void MapRemove(int state, std::string_view user_key) override {
    MapKey(user_key);
    WaitForWriteBack();
    ThrowIfFailed(inst_->db->Delete(write_, Family(state), map_key_), "deleting map state");
  }
  bool MapContains(int state, std::string_view user_key) override {
    std::string ignored;
    return MapGet(state, user_key, &ignored);
  }
  bool MapIsEmpty(int state) override {
    std::unique_ptr<rocksdb::Iterator> it(inst_->db->NewIterator(read_, Family(state)));
    it->Seek(key_);
    const bool empty = !(it->Valid() && it->key().starts_with(key_));
    ThrowIfFailed(it->status(), "reading map state");
    return empty;
  }
  void MapForEach(int state, const std::function<void(std::string_view, std::string_view)>& fn) override {
    std::unique_ptr<rocksdb::Iterator> it(inst_->db->NewIterator(read_, Family(state)));
    for (it->Seek(key_); it->Valid() && it->key().starts_with(key_); it->Next()) {
      rocksdb::Slice k = it->key();
      rocksdb::Slice v = it->value();
      fn(std::string_view(k.data() + key_.size(), k.size() - key_.size()), std::string_view(v.data(), v.size()));
    }
    ThrowIfFailed(it->status(), "reading map state");
  }
  void MapClear(int state) override {
    rocksdb::WriteBatch batch;
    std::unique_ptr<rocksdb::Iterator> it(inst_->db->NewIterator(read_, Family(state)));
    for (it->Seek(key_); it->Valid() && it->key().starts_with(key_); it->Next()) batch.Delete(Family(state), it->key());
    ThrowIfFailed(it->status(), "reading map state");
    WaitForWriteBack();
    ThrowIfFailed(inst_->db->Write(write_, &batch), "clearing map state");
  }

  void ForEachKey(int state, const std::function<void(std::string_view key)>& fn) override {
    // Rows are [key group, 2 bytes][varint length][key](+ user key): a key's rows are
    // adjacent, so each key is reported once by comparing with the one before.
    WriteBackCachedValues();
    std::unique_ptr<rocksdb::Iterator> it(inst_->db->NewIterator(read_, Family(state)));
    std::string previous;
    bool first = true;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      rocksdb::Slice k = it->key();
      if (k.size() < 2) continue;
      std::string_view row_key(k.data() + 2, k.size() - 2);
      std::string_view key, user_key;
      if (inst_->states[static_cast<size_t>(state)].kind == StateKind::kMap) {
        SplitMapRowKey(row_key, &key, &user_key);
      } else {
        DataInput in(reinterpret_cast<const uint8_t*>(row_key.data()),
                     reinterpret_cast<const uint8_t*>(row_key.data()) + row_key.size());
        const uint64_t n = in.ReadVarint();
        if (n > in.remaining()) throw DeserializationError("state key beyond its row");
        key = std::string_view(reinterpret_cast<const char*>(in.position()), n);
      }
      if (!first && key == previous) continue;
      first = false;
      previous.assign(key);
      fn(key);
    }
    ThrowIfFailed(it->status(), "reading state keys");
  }

  // Restore: the canonical rows of the subtask's key groups, read from `handles` a piece
  // at a time and written in batches, so that a restore holds neither the rows nor the
  // batches of the whole state in memory.
  Status WriteRows(const std::vector<KeyedStateHandle>& handles) {
    std::map<std::string, int, std::less<>> ids;  // by state name
    rocksdb::WriteBatch batch;
    std::string key;
    WEIR_RETURN_IF_ERROR(ForEachRestoredRows(handles, range_, [&](const RestoredRows& r) -> Status {
      if (r.legacy) {
        return Status::FailedPrecondition("the keyed state '" + r.state +
                                          "' is in the hashmap backend's old layout, which the rocksdb backend "
                                          "cannot read")
            .WithHint("restore it with -D state.backend.type=hashmap, take a canonical savepoint, and restore that");
      }
      auto id = ids.find(r.state);
      if (id == ids.end()) {
        try {
          id = ids.emplace(r.state, RegisterState(r.state, r.kind)).first;
        } catch (const std::exception& e) {
          return Status::FailedPrecondition(e.what());
        }
      }
      try {
        const auto* rows = reinterpret_cast<const uint8_t*>(r.rows.data());
        ForEachRow(rows, rows + r.rows.size(), [&](std::string_view k, std::string_view v) {
          key = KeyGroupPrefix(r.key_group);
          key.append(k);
          batch.Put(Family(id->second), key, ToSlice(v));
        });
      } catch (const std::exception& e) {
        return Status::Corruption("restored keyed state '" + r.state + "', key group " + std::to_string(r.key_group) +
                                  ": " + e.what());
      }
      if (batch.GetDataSize() >= kBatchBytes) {
        WEIR_RETURN_IF_ERROR(FromRocks(inst_->db->Write(write_, &batch), "restoring state '" + r.state + "'"));
        batch.Clear();
      }
      return Status::OK();
    }));
    return FromRocks(inst_->db->Write(write_, &batch), "restoring keyed state");
  }

  // Restore (rescaling): copies the key groups of our range out of another instance's
  // files, opened read-only from `dir`.
  Status CopyKeyGroups(const NativeKeyedHandle& h, const std::string& dir) {
    const int first = std::max(range_.start, h.range.start);
    const int last = std::min(range_.end, h.range.end);
    if (first > last) {
      try {
        for (const auto& s : h.states) RegisterState(s.name, s.kind);
      } catch (const std::exception& e) {
        return Status::FailedPrecondition(e.what());
      }
      return Status::OK();
    }
    std::vector<rocksdb::ColumnFamilyDescriptor> families;
    families.emplace_back(rocksdb::kDefaultColumnFamilyName, inst_->options.column_family);
    for (const auto& s : h.states) families.emplace_back(kColumnFamilyPrefix + s.name, inst_->options.column_family);
    rocksdb::Options options(inst_->options.db, inst_->options.column_family);
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* raw = nullptr;
    WEIR_RETURN_IF_ERROR(FromRocks(rocksdb::DB::OpenForReadOnly(options, dir, families, &handles, &raw),
                                   "cannot open the restored rocksdb files of instance " + h.backend_id));
    std::unique_ptr<rocksdb::DB> source(raw);
    Status st = Status::OK();
    const std::string begin = KeyGroupPrefix(first);
    const std::string end = KeyGroupPrefix(last + 1);
    for (size_t s = 0; s < h.states.size() && st.ok(); ++s) {
      int id = 0;
      try {
        id = RegisterState(h.states[s].name, h.states[s].kind);
      } catch (const std::exception& e) {
        st = Status::FailedPrecondition(e.what());
        break;
      }
      rocksdb::ReadOptions ro;
      ro.fill_cache = false;
      std::unique_ptr<rocksdb::Iterator> it(source->NewIterator(ro, handles[s + 1]));
      rocksdb::WriteBatch batch;
      for (it->Seek(begin); it->Valid() && it->key().compare(end) < 0; it->Next()) {
        batch.Put(Family(id), it->key(), it->value());
        if (batch.GetDataSize() >= kBatchBytes) {
          st = FromRocks(inst_->db->Write(write_, &batch), "restoring state '" + h.states[s].name + "'");
          if (!st.ok()) break;
          batch.Clear();
        }
      }
      if (st.ok()) st = FromRocks(it->status(), "reading the restored rocksdb files of instance " + h.backend_id);
      if (st.ok()) st = FromRocks(inst_->db->Write(write_, &batch), "restoring state '" + h.states[s].name + "'");
    }
    for (auto* handle : handles) source->DestroyColumnFamilyHandle(handle);
    source->Close();
    return st;
  }

  // Restore: drops the key groups outside our range (an instance restored as a whole).
  Status ClipToRange() {
    for (auto* h : inst_->handles) {
      if (range_.start > 0) {
        WEIR_RETURN_IF_ERROR(FromRocks(inst_->db->DeleteRange(write_, h, KeyGroupPrefix(0), KeyGroupPrefix(range_.start)),
                                       "clipping restored state"));
      }
      WEIR_RETURN_IF_ERROR(FromRocks(
          inst_->db->DeleteRange(write_, h, KeyGroupPrefix(range_.end + 1), KeyGroupPrefix(max_parallelism_ + 1)),
          "clipping restored state"));
    }
    return Status::OK();
  }

 private:
  // The value cache: the values of value, reducing and aggregating state (read and
  // written whole, never merged or iterated by the task) as the task read or wrote them
  // last, by their RocksDB key, with absent keys remembered as such. A dirty entry is
  // newer than RocksDB's value. Invariant: RocksDB, plus the values a snapshot took at
  // its barrier while they are on their way into it (their entries stay cached until
  // they land: WaitForWriteBack), plus the dirty entries, is the state;
  // every read of RocksDB that is not a point read of one such value (snapshots, key
  // iteration) first writes the dirty entries back. Over its capacity the cache writes
  // back and drops half of its entries (MakeRoom). Only the task's thread touches it.
  struct CachedValue {
    CompactBytes value;
    bool present = false;
    bool dirty = false;
  };
  struct BytesHash {
    using is_transparent = void;
    size_t operator()(std::string_view bytes) const { return std::hash<std::string_view>()(bytes); }
    size_t operator()(const CompactBytes& bytes) const { return (*this)(bytes.view()); }
  };
  struct BytesEqual {
    using is_transparent = void;
    bool operator()(const CompactBytes& a, std::string_view b) const { return a.view() == b; }
    bool operator()(const CompactBytes& a, const CompactBytes& b) const { return a.view() == b.view(); }
  };
  // Open addressing in one array: a lookup reads a tag and an entry, where a node-based
  // map read a bucket and one or two nodes, each a cache miss once the keys outgrow the
  // caches near the core. Keys of up to 15 bytes (number keys are 11 with their prefix)
  // and values as short are held in the entry itself.
  using CacheMap = FlatHashMap<CompactBytes, CachedValue, BytesHash, BytesEqual>;
  using CachedEntry = CacheMap::value_type;  // valid until the next insertion into its map
  struct ValueCache {
    CacheMap entries;
    size_t dirty = 0;  // entries marked dirty
  };
  // The caches' bytes (cached_bytes_) are their arrays' (every slot, free or not: an
  // entry and a tag) and the heap blocks of keys and values longer than a CompactBytes
  // holds in place. So a cache whose entries were dropped keeps the bytes of its array,
  // which the next entries fill without growing it; only dropping them all frees it.
  static constexpr size_t kSlotBytes = CacheMap::kBytesPerEntry;
  // What adding the current key with a value of `value_size` bytes to `cache` adds.
  size_t AddingBytes(const ValueCache& cache, size_t value_size) const {
    const size_t growth = cache.entries.bucket_count_after_adding() - cache.entries.bucket_count();
    return growth * kSlotBytes + CompactBytes::HeapBytesFor(key_.size()) + CompactBytes::HeapBytesFor(value_size);
  }

  static bool Cacheable(StateKind kind) {
    return kind == StateKind::kValue || kind == StateKind::kReducing || kind == StateKind::kAggregating;
  }
  void AddCache(int state) {
    const auto s = static_cast<size_t>(state);
    if (caches_.size() <= s) caches_.resize(s + 1);
    if (inst_->options.value_cache_memory && Cacheable(inst_->states[s].kind)) {
      caches_[s] = std::make_unique<ValueCache>();
    }
  }
  ValueCache* CacheOf(int state) const { return caches_[static_cast<size_t>(state)].get(); }

  bool GetFromDatabase(int state, std::string* value) {
    rocksdb::Status s = inst_->db->Get(read_, Family(state), key_, value);
    if (s.IsNotFound()) return false;
    ThrowIfFailed(s, "reading state");
    return true;
  }

  // Sets the current key's entry of `state`; a write marks it dirty. The entry the last
  // Get of the same key and state found is set without a second lookup (a read-modify-
  // write, as every value update is).
  void Remember(int state, ValueCache& cache, std::string_view value, bool present, bool dirty) {
    CachedEntry* entry = last_cached_state_ == state ? last_cached_ : nullptr;
    if (entry == nullptr) {
      if (!cache_budget_.Fits(cached_bytes_ + AddingBytes(cache, value.size()))) MakeRoom(cache, value.size());
      const size_t slots = cache.entries.bucket_count();
      auto [it, inserted] = cache.entries.try_emplace(std::string_view(key_));
      entry = &*it;
      if (inserted) {
        cached_bytes_ += (cache.entries.bucket_count() - slots) * kSlotBytes + it->first.heap_bytes();
        ++added_since_room_;
      }
      last_cached_ = entry;
      last_cached_state_ = state;
    }
    CachedValue& e = entry->second;
    cached_bytes_ -= e.value.heap_bytes();
    e.value.assign(value);
    cached_bytes_ += e.value.heap_bytes();
    e.present = present;
    if (dirty && !e.dirty) {
      e.dirty = true;
      ++cache.dirty;
    }
  }

  // Makes room for the current key in `cache` with a value of `value_size` bytes: writes
  // the dirty entries back, then drops the entries whose key hash has this round's bit
  // set, about half of them (another bit each round, so that no entry stays for good).
  // Keys taken in a cycle a little longer than the cache still find about half of
  // theirs, where dropping everything (or the least recently used) would find none. When
  // the half kept last time found few reads (the keys far outnumber the cache), or half
  // is not room enough, it drops all; it tries half again after 1, 2, 4 ... 64 rounds of
  // dropping all, as long as half keeps failing, so that state far larger than the cache
  // pays for few scans. Then it gives back the memory it no longer needs.
  void MakeRoom(const ValueCache& cache, size_t value_size) {
    WriteBackCachedValues();
    bool keep_half;
    if (kept_half_) {
      keep_half = hits_since_room_ * 8 >= added_since_room_;
      if (keep_half) {
        drop_all_backoff_ = 1;
      } else {
        drop_all_rounds_left_ = drop_all_backoff_;
        drop_all_backoff_ = std::min(drop_all_backoff_ * 2, 64);
      }
    } else {
      keep_half = drop_all_rounds_left_ == 0;
      if (!keep_half) --drop_all_rounds_left_;
    }
    kept_half_ = keep_half;
    hits_since_room_ = 0;
    added_since_room_ = 0;
    const size_t bit = size_t{1} << (evictions_++ % 64);
    for (auto& c : caches_) {
      if (c == nullptr || !keep_half) continue;
      for (auto it = c->entries.begin(); it != c->entries.end();) {
        if ((BytesHash()(it->first) & bit) == 0) {
          ++it;
          continue;
        }
        cached_bytes_ -= it->first.heap_bytes() + it->second.value.heap_bytes();
        it = c->entries.erase(it);
      }
    }
    if (!keep_half || !cache_budget_.Fits(cached_bytes_ + AddingBytes(cache, value_size))) {
      for (auto& c : caches_) {
        if (c) c->entries.clear();  // frees the arrays
      }
      cached_bytes_ = 0;
    }
    // What was dropped goes back to the slot, for whichever of its instances grows next.
    cache_budget_.ShrinkTo(cached_bytes_ + AddingBytes(cache, value_size));
  }

  // Snapshots of this many dirty entries or more write them as files (see WriteBack).
  static constexpr size_t kFilesFromEntries = 8192;
  size_t DirtyEntries() const {
    size_t n = 0;
    for (const auto& cache : caches_) n += cache ? cache->dirty : 0;
    return n;
  }

  // Copies the dirty entries out of the caches and marks them clean.
  DirtyValues TakeDirtyValues() {
    DirtyValues dirty;
    for (size_t s = 0; s < caches_.size(); ++s) {
      ValueCache* cache = caches_[s].get();
      if (cache == nullptr || cache->dirty == 0) continue;
      DirtyValues::State& state = dirty.states.emplace_back();
      state.state = static_cast<int>(s);
      state.entries.reserve(cache->dirty);
      for (CachedEntry& entry : cache->entries) {
        if (!entry.second.dirty) continue;
        dirty.Add(state.entries, entry.first.view(), entry.second.value.view(), entry.second.present);
        entry.second.dirty = false;
      }
      cache->dirty = 0;
    }
    return dirty;
  }

  // Writes the dirty entries into RocksDB; they stay cached, clean.
  void WriteBackCachedValues(WriteBack how = WriteBack::kMemtable) {
    WaitForWriteBack();
    DirtyValues dirty = TakeDirtyValues();
    if (dirty.empty()) return;
    dirty.Sort();
    ThrowIfError(WriteDirtyValues(*inst_, dirty, how, write_));
  }

  // Waits until the values the last snapshot took at its barrier are in RocksDB (see
  // Snapshot). Called before anything the task writes into RocksDB and before the
  // caches drop an entry. When the snapshot's thread could not write them, writes them
  // from here, so that none is lost (its snapshot fails).
  void WaitForWriteBack() {
    if (write_back_.valid()) [[unlikely]] LandWriteBack();
  }
  // Starts the thread of a snapshot: writes in_flight_ into RocksDB, then `then`.
  void StartWriteBack(WriteBack how, std::function<Status(Instance&)> then) {
    write_back_ = std::async(std::launch::async,
                             [inst = inst_, dirty = in_flight_, how, write = write_, then = std::move(then)]() -> Status {
                               try {
                                 if (!dirty->empty()) {
                                   dirty->Sort();
                                   WEIR_RETURN_IF_ERROR(WriteDirtyValues(*inst, *dirty, how, write));
                                 }
                                 return then(*inst);
                               } catch (const std::exception& e) {
                                 return Status::Internal(std::string("writing a rocksdb snapshot: ") + e.what());
                               }
                             })
                      .share();
  }
  [[gnu::noinline]] void LandWriteBack() {
    const Status landed = write_back_.get();
    const std::shared_ptr<DirtyValues> values = std::move(in_flight_);
    write_back_ = {};
    if (!landed.ok() && !values->empty()) ThrowIfError(WriteDirtyValues(*inst_, *values, WriteBack::kMemtable, write_));
  }
  static void ThrowIfError(const Status& s) {
    if (!s.ok()) throw std::runtime_error("rocksdb state backend: " + s.ToString());
  }

  rocksdb::ColumnFamilyHandle* Family(int state) const { return inst_->handles[static_cast<size_t>(state)]; }
  void MapKey(std::string_view user_key) {
    map_key_.assign(key_);
    map_key_.append(user_key);
  }

  std::shared_ptr<Instance> inst_;
  int max_parallelism_;
  KeyGroupRange range_;
  std::string backend_id_;
  std::shared_ptr<UploadedFiles> uploads_;
  std::map<std::string, int> by_name_;
  rocksdb::WriteOptions write_;
  rocksdb::ReadOptions read_;
  std::string key_;
  std::string prefetch_key_;  // PrefetchKey's, as key_
  const size_t prefetch_bytes_ = PrefetchStateBytes();
  std::string map_key_;
  std::string scratch_;
  int64_t snapshots_taken_ = 0;
  ValueCacheBudget cache_budget_;                    // what caches_ may hold
  std::vector<std::unique_ptr<ValueCache>> caches_;  // by state id; null: not cached
  size_t cached_bytes_ = 0;                          // of every cache: its array and heap bytes (see kSlotBytes)
  uint64_t evictions_ = 0;                           // MakeRoom's rounds
  uint64_t hits_since_room_ = 0;                     // reads that found their entry, since MakeRoom
  uint64_t added_since_room_ = 0;                    // entries added since MakeRoom
  bool kept_half_ = false;                           // whether MakeRoom's last round kept half
  int drop_all_rounds_left_ = 0;                     // before MakeRoom tries half again
  int drop_all_backoff_ = 1;
  CachedEntry* last_cached_ = nullptr;               // the current key's entry the last Get found
  int last_cached_state_ = -1;
  // The write-back of the last snapshot while it may still be on its way into
  // RocksDB, and its values (see Snapshot, WaitForWriteBack).
  std::shared_future<Status> write_back_;
  std::shared_ptr<DirtyValues> in_flight_;
};

std::string SafeName(std::string_view s) {
  std::string out;
  for (char c : s) out.push_back(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '_');
  return out.substr(0, 64);
}

Result<std::unique_ptr<BytesKeyedStateBackend>> Open(const BytesBackendSpec& spec) {
  WEIR_ASSIGN_OR_RETURN(InstanceOptions options, rocksdb_backend::MakeInstanceOptions(spec.config, spec.job_id, spec.subtask, spec.parallelism));
  auto inst = std::make_shared<Instance>();
  inst->dir = (stdfs::path(options.local_dir) /
               ("weir-rocksdb-job_" + SafeName(spec.job_id) + "_op_" + SafeName(spec.operator_uid) + "_" +
                std::to_string(spec.subtask) + "_" + Id16::Generate().ToHex().substr(0, 12)))
                  .string();
  inst->db_path = (stdfs::path(inst->dir) / "db").string();
  inst->options = std::move(options);
  std::error_code ec;
  stdfs::create_directories(inst->dir, ec);
  if (ec) {
    return Status::IOError("cannot create the rocksdb working directory '" + inst->dir + "': " + ec.message())
        .WithHint("set state.backend.rocksdb.localdir to a writable directory");
  }

  std::vector<const NativeKeyedHandle*> native;
  for (const auto& h : spec.restored_native) {
    if (h.type != KeyedStateHandle::Type::kNative) continue;
    if (h.native.backend != kBackendName) {
      return Status::FailedPrecondition("the keyed state of " + spec.task_name + " is in the native format of the '" +
                                        h.native.backend + "' state backend, which the rocksdb backend cannot read");
    }
    native.push_back(&h.native);
  }
  // One instance covering our key groups is opened as it is (clipped to our range);
  // otherwise (rescaling) the key groups of our range are copied out of each.
  const bool whole = native.size() == 1 && native[0]->range.start <= spec.range.start &&
                     spec.range.end <= native[0]->range.end;
  if (whole) {
    WEIR_RETURN_IF_ERROR(DownloadAll(*native[0], inst->db_path));
    WEIR_RETURN_IF_ERROR(OpenDatabase(*inst, native[0]->states));
  } else {
    WEIR_RETURN_IF_ERROR(OpenDatabase(*inst, {}));
  }
  auto backend = std::make_unique<RocksDbKeyedStateBackend>(inst, spec.max_parallelism, spec.range);
  if (whole) {
    if (native[0]->range.start != spec.range.start || native[0]->range.end != spec.range.end) {
      WEIR_RETURN_IF_ERROR(backend->ClipToRange());
    } else if (spec.reuse_restored_files) {
      backend->ReuseRestoredFiles(*native[0]);
    }
  } else {
    for (size_t i = 0; i < native.size(); ++i) {
      const std::string dir = (stdfs::path(inst->dir) / ("restore-" + std::to_string(i))).string();
      Status st = DownloadAll(*native[i], dir);
      if (st.ok()) st = backend->CopyKeyGroups(*native[i], dir);
      stdfs::remove_all(dir, ec);
      WEIR_RETURN_IF_ERROR(st);
    }
  }
  WEIR_RETURN_IF_ERROR(backend->WriteRows(spec.restored_key_groups));
  return std::unique_ptr<BytesKeyedStateBackend>(std::move(backend));
}

// Registers the backend when libweir_rocksdb.so is loaded.
const bool kRegistered = [] {
  RegisterBytesBackend(kBackendName, Open);
  return true;
}();

}  // namespace

Result<std::unique_ptr<BytesKeyedStateBackend>> OpenRocksDbBackend(const BytesBackendSpec& spec) { return Open(spec); }

}  // namespace weir::runtime
