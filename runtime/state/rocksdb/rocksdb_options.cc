#include "runtime/state/rocksdb/rocksdb_options.h"

#include <filesystem>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include <rocksdb/filter_policy.h>
#include <rocksdb/merge_operator.h>
#include <rocksdb/table.h>

#include "lib/config/options.h"

namespace weir::runtime::rocksdb_backend {

namespace {

// An instance's value cache when memory is not managed and value-cache.size is unset.
constexpr size_t kUnmanagedValueCacheBytes = size_t{16} << 20;

// List state appends an encoded element ([varint length][bytes]) without reading the
// list: the operands are concatenated, which is the list's canonical row value.
class ListAppendOperator final : public rocksdb::AssociativeMergeOperator {
 public:
  bool Merge(const rocksdb::Slice& key, const rocksdb::Slice* existing, const rocksdb::Slice& value,
             std::string* new_value, rocksdb::Logger* logger) const override {
    new_value->clear();
    if (existing) {
      new_value->reserve(existing->size() + value.size());
      new_value->assign(existing->data(), existing->size());
    }
    new_value->append(value.data(), value.size());
    return true;
  }
  const char* Name() const override { return "weir.ListAppend"; }
};

// The managed memory of one slot: a block cache charged with the write buffers and the
// value caches of every instance in the slot. Made when the first instance of the slot
// opens and released with the last one.
struct SlotMemory {
  std::shared_ptr<rocksdb::Cache> cache;
  std::shared_ptr<rocksdb::WriteBufferManager> write_buffers;
  std::shared_ptr<ValueCacheMemory> value_caches;
};

SlotMemory SharedSlotMemory(const std::string& job_id, int slot, size_t bytes, size_t value_cache_bytes) {
  static std::mutex mu;
  static std::map<std::tuple<std::string, int, size_t, size_t>,
                  std::tuple<std::weak_ptr<rocksdb::Cache>, std::weak_ptr<rocksdb::WriteBufferManager>,
                             std::weak_ptr<ValueCacheMemory>>>
      slots;
  std::lock_guard lock(mu);
  for (auto it = slots.begin(); it != slots.end();) {
    it = std::get<0>(it->second).expired() ? slots.erase(it) : std::next(it);
  }
  auto& entry = slots[{job_id, slot, bytes, value_cache_bytes}];
  SlotMemory m{std::get<0>(entry).lock(), std::get<1>(entry).lock(), std::get<2>(entry).lock()};
  if (!m.cache || !m.write_buffers || !m.value_caches) {
    // As Flink: write buffers may take half of the bound, index and filter blocks are
    // cached (and so bounded) too, with a high-priority share for them.
    rocksdb::LRUCacheOptions co;
    co.capacity = bytes;
    co.num_shard_bits = -1;
    co.high_pri_pool_ratio = 0.1;
    m.cache = rocksdb::NewLRUCache(co);
    m.write_buffers = std::make_shared<rocksdb::WriteBufferManager>(bytes / 2, m.cache);
    m.value_caches = std::make_shared<ValueCacheMemory>(value_cache_bytes, m.cache);
    entry = {m.cache, m.write_buffers, m.value_caches};
  }
  return m;
}

// Flink's PredefinedOptions.
void ApplyProfile(const std::string& profile, rocksdb::DBOptions* db, rocksdb::ColumnFamilyOptions* cf,
                  rocksdb::BlockBasedTableOptions* table) {
  if (profile == "DEFAULT") return;
  db->IncreaseParallelism(4);
  db->use_fsync = false;
  db->max_open_files = -1;
  if (profile == "FLASH_SSD_OPTIMIZED") return;
  cf->compaction_style = rocksdb::kCompactionStyleLevel;
  cf->level_compaction_dynamic_level_bytes = true;
  if (profile == "SPINNING_DISK_OPTIMIZED_HIGH_MEM") {
    cf->target_file_size_base = 256ull << 20;
    cf->max_bytes_for_level_base = 1ull << 30;
    cf->write_buffer_size = 64ull << 20;
    cf->min_write_buffer_number_to_merge = 3;
    cf->max_write_buffer_number = 4;
    table->block_size = 128 << 10;
  }
}

}  // namespace

ValueCacheMemory::ValueCacheMemory(size_t capacity, std::shared_ptr<rocksdb::Cache> charged)
    : capacity_(capacity), charged_(std::move(charged)) {}

ValueCacheMemory::~ValueCacheMemory() { GiveBack(chunks_); }

bool ValueCacheMemory::TakeChunk() {
  std::lock_guard lock(mu_);
  if ((chunks_ + 1) * kChunk > capacity_) return false;
  if (charged_) {
    // An entry without a value, of the chunk's size, held (and so never evicted) until
    // the chunk is given back; the cache evicts blocks to make room for it.
    const std::string key = "weir.value-cache." + std::to_string(reinterpret_cast<uintptr_t>(this)) + "." +
                            std::to_string(next_charge_++);
    rocksdb::Cache::Handle* handle = nullptr;
    const rocksdb::Status s = charged_->Insert(key, nullptr, kChunk, [](const rocksdb::Slice&, void*) {}, &handle);
    if (!s.ok() || handle == nullptr) return false;
    charges_.push_back(handle);
  }
  ++chunks_;
  return true;
}

void ValueCacheMemory::GiveBack(size_t n) {
  std::lock_guard lock(mu_);
  n = std::min(n, chunks_);
  chunks_ -= n;
  for (; n > 0 && !charges_.empty(); --n) {
    charged_->Release(charges_.back(), /*erase_if_last_ref=*/true);
    charges_.pop_back();
  }
}

size_t ValueCacheMemory::taken_bytes() const {
  std::lock_guard lock(mu_);
  return chunks_ * kChunk;
}

Result<InstanceOptions> MakeInstanceOptions(const Configuration* config, const std::string& job_id, int subtask,
                                           int parallelism) {
  Configuration defaults;
  const Configuration& c = config ? *config : defaults;
  WEIR_ASSIGN_OR_RETURN(auto profile, c.GetEnum(options::kRocksDbPredefinedOptions));
  WEIR_ASSIGN_OR_RETURN(auto cache_size, c.GetMemorySize(options::kRocksDbBlockCacheSize));
  WEIR_ASSIGN_OR_RETURN(auto write_buffer, c.GetMemorySize(options::kRocksDbWriteBufferSize));
  WEIR_ASSIGN_OR_RETURN(auto managed, c.GetBool(options::kRocksDbMemoryManaged));
  WEIR_ASSIGN_OR_RETURN(auto managed_size, c.GetMemorySize(options::kManagedMemorySize));
  WEIR_ASSIGN_OR_RETURN(auto local_dirs, c.GetString(options::kRocksDbLocalDir));
  WEIR_ASSIGN_OR_RETURN(auto value_cache, c.GetMemorySize(options::kRocksDbValueCacheSize));
  WEIR_ASSIGN_OR_RETURN(auto value_cache_ratio, c.GetDouble(options::kRocksDbValueCacheRatio));
  const size_t slot_share = *managed ? static_cast<size_t>(*managed_size / std::max(parallelism, 1)) : 0;
  // The slot's value-cache share (with managed memory), whole chunks of it.
  const size_t slot_value_caches =
      static_cast<size_t>(static_cast<double>(slot_share) * *value_cache_ratio) / ValueCacheMemory::kChunk *
      ValueCacheMemory::kChunk;

  InstanceOptions o;
  if (value_cache) {
    o.value_cache_bytes = static_cast<size_t>(*value_cache);
  } else {
    o.value_cache_bytes = *managed ? slot_value_caches : kUnmanagedValueCacheBytes;
  }
  if (*managed && slot_value_caches == 0) o.value_cache_bytes = 0;
  o.db.create_if_missing = true;
  o.db.create_missing_column_families = true;
  o.db.info_log_level = rocksdb::InfoLogLevel::HEADER_LEVEL;
  o.db.keep_log_file_num = 1;
  o.db.stats_dump_period_sec = 0;
  o.db.stats_persist_period_sec = 0;
  rocksdb::BlockBasedTableOptions table;
  // Every state is read before it is written (value, reducing, aggregating state): a
  // bloom filter spares a point lookup the files that do not hold the key.
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  o.column_family.write_buffer_size = static_cast<size_t>(*write_buffer);
  ApplyProfile(*profile, &o.db, &o.column_family, &table);
  o.column_family.write_buffer_size = static_cast<size_t>(*write_buffer);
  o.column_family.merge_operator = std::make_shared<ListAppendOperator>();
  // Without the backend's value cache the per-record cost is the memtable's skiplist: a
  // value update is a point lookup and an insert, each a walk of cache misses through
  // every version in the memtable. Then an update overwrites the key's value in the
  // memtable when it fits (a key holds one entry there, not one per update: a hot key
  // costs well under a microsecond). With the cache a key reaches the memtable once per
  // snapshot or eviction, in key order: an overwrite in place would cost each of them a
  // search from the skiplist's head, where an insert starts next to the one before.
  // A whole-key bloom filter lets a lookup of a key that is not in the memtable skip it.
  // Overwriting in place breaks the point-in-time view of reads that run while the
  // task writes, so a snapshot first switches to a new memtable (see Snapshot()).
  // One writer per instance (the task's thread): no concurrent memtable writes.
  o.column_family.inplace_update_support = o.value_cache_bytes == 0;
  o.column_family.memtable_whole_key_filtering = true;
  o.column_family.memtable_prefix_bloom_size_ratio = 0.02;
  o.db.allow_concurrent_memtable_write = false;

  if (*managed) {
    SlotMemory m = SharedSlotMemory(job_id, subtask, slot_share, slot_value_caches);
    o.block_cache = m.cache;
    o.write_buffers = m.write_buffers;
    o.db.write_buffer_manager = m.write_buffers;
    if (o.value_cache_bytes > 0) o.value_cache_memory = m.value_caches;
    o.memory_bound = slot_share;
    table.cache_index_and_filter_blocks = true;
    table.cache_index_and_filter_blocks_with_high_priority = true;
    table.pin_l0_filter_and_index_blocks_in_cache = true;
    // Partitioned index and filters (Flink's memory.partitioned-index-filters): a
    // lookup loads the few KB of index and filter it needs, not a whole file's. With
    // whole blocks, state larger than the cache re-read multi-MB filter blocks on
    // every miss (10 M keys: a few thousand updates per second, half the time in read).
    table.index_type = rocksdb::BlockBasedTableOptions::kTwoLevelIndexSearch;
    table.partition_filters = true;
    table.metadata_block_size = 4096;
    table.pin_top_level_index_and_filter = true;
    // A memtable never larger than the slot's write-buffer share.
    o.column_family.write_buffer_size = std::min(o.column_family.write_buffer_size, std::max<size_t>(slot_share / 4, 1 << 20));
  } else {
    o.block_cache = rocksdb::NewLRUCache(static_cast<size_t>(*cache_size));
    // The instance's own, in whole chunks: at least its bound (the cache holds at most that).
    if (o.value_cache_bytes > 0) {
      const size_t chunks = (o.value_cache_bytes + ValueCacheMemory::kChunk - 1) / ValueCacheMemory::kChunk;
      o.value_cache_memory = std::make_shared<ValueCacheMemory>(chunks * ValueCacheMemory::kChunk, nullptr);
    }
  }
  table.block_cache = o.block_cache;
  o.column_family.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));

  std::vector<std::string> dirs;
  if (local_dirs && !local_dirs->empty()) {
    size_t start = 0;
    while (start <= local_dirs->size()) {
      size_t comma = local_dirs->find(',', start);
      if (comma == std::string::npos) comma = local_dirs->size();
      std::string d = local_dirs->substr(start, comma - start);
      while (!d.empty() && d.front() == ' ') d.erase(d.begin());
      while (!d.empty() && d.back() == ' ') d.pop_back();
      if (!d.empty()) dirs.push_back(d);
      start = comma + 1;
    }
  }
  if (dirs.empty()) {
    std::error_code ec;
    auto tmp = std::filesystem::temp_directory_path(ec);
    dirs.push_back(ec ? "/tmp" : tmp.string());
  }
  o.local_dir = dirs[static_cast<size_t>(subtask) % dirs.size()];
  return o;
}

}  // namespace weir::runtime::rocksdb_backend
