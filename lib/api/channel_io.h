#pragma once
// The seam between typed records (in the job's code) and the runtime's byte
// buffers. The runtime implements ChannelWriter; the typed RecordWriterOutput and
// RecordReader below are instantiated in the job's code for its record types.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "lib/api/event_time.h"
#include "lib/api/key_groups.h"
#include "lib/api/output.h"
#include "lib/api/serialization.h"

namespace weir {

// The open buffer of one downstream channel. Its records are serialized straight into
// `bytes`, which is kept at full size: [0, used) holds the records, the rest is room
// (see DataOutput's in-place mode).
struct OpenBuffer {
  std::vector<uint8_t> bytes;
  size_t used = 0;
  int64_t records = 0;  // records in [0, used), for metrics
  // The buffer is handed over once `used` reaches this: the writer's flush threshold, or
  // less when the consumer asks for smaller buffers (buffer debloating). 0: after every
  // record. Changed only between buffers, while `used` is 0.
  size_t limit = 0;
};

// The open buffers of one output edge of a subtask, one per downstream channel.
// Implemented by the runtime. Used only from the producing task's thread.
class ChannelWriter {
 public:
  virtual ~ChannelWriter() = default;
  int num_channels() const { return static_cast<int>(open_.size()); }
  // The open buffer of `channel`; the reference stays valid for the writer's life.
  OpenBuffer& open(int channel) { return open_[channel]; }
  // Hands the open buffer's records to the channel (blocking while the channel is
  // full: backpressure) and leaves an empty buffer in its place.
  virtual void Flush(int channel) = 0;
  // A buffer is handed over once it holds at least this many bytes (its OpenBuffer's
  // limit, at most this).
  size_t flush_threshold() const { return flush_threshold_; }

 protected:
  // Sets the flush threshold and every open buffer's limit to it (open_ sized first).
  void SetFlushThreshold(size_t bytes) {
    flush_threshold_ = bytes;
    for (OpenBuffer& open : open_) open.limit = bytes;
  }

  std::vector<OpenBuffer> open_;

 private:
  size_t flush_threshold_ = 0;
};

enum class ShipStrategy { kForward, kHash, kRebalance, kBroadcast };
const char* ShipStrategyName(ShipStrategy s);

// On a hash edge, each record (after its timestamp, on an edge of timestamped records)
// is preceded by its KeyHash, as the sender computed it to route the record: the key group
// in 2 bytes (a maximum parallelism is at most 2^15), then the hash code in 4, unless the
// key is a number, whose hash code the receiver computes for less than carrying it costs.
template <class K>
inline constexpr bool kKeyHashCodeCarried = !std::is_arithmetic_v<K>;
template <class K>
inline constexpr size_t kKeyHashBytes = kKeyHashCodeCarried<K> ? 6 : 2;

// The hash code of `key`, whose KeyHash came with its record: as carried, or computed.
template <class K>
int32_t HashCodeOf(const K& key, KeyHash carried) {
  if constexpr (kKeyHashCodeCarried<K>) return carried.hash_code;
  return KeyHashCode<K>::Of(key);
}

// `bytes` is 2 (the key group) or 6 (and the hash code).
inline void WriteKeyHash(uint8_t* at, KeyHash hash, size_t bytes) {
  const auto key_group = static_cast<uint16_t>(hash.key_group);
  std::memcpy(at, &key_group, 2);
  if (bytes == 6) std::memcpy(at + 2, &hash.hash_code, 4);
}
inline void WriteKeyHash(DataOutput& out, KeyHash hash, size_t bytes) {
  out.WriteFixed<uint16_t>(static_cast<uint16_t>(hash.key_group));
  if (bytes == 6) out.WriteFixed<int32_t>(hash.hash_code);
}
// The hash code is 0 when not carried (2 bytes).
inline KeyHash ReadKeyHash(DataInput& in, size_t bytes) {
  KeyHash hash;
  hash.key_group = in.ReadFixed<uint16_t>();
  if (bytes == 6) hash.hash_code = in.ReadFixed<int32_t>();
  return hash;
}

// The key of a record on a hash edge: its KeyHash, by which the record is routed and,
// carried in front of it, processed downstream.
template <class T>
class KeySelectorBase {
 public:
  virtual ~KeySelectorBase() = default;
  virtual KeyHash Hash(const T& record, int max_parallelism) const = 0;
  // Hash of records[i] into hashes[i], for i in [0, count).
  virtual void HashBatch(const T* records, int count, int max_parallelism, KeyHash* hashes) const = 0;
  int KeyGroup(const T& record, int max_parallelism) const { return Hash(record, max_parallelism).key_group; }
  // How many bytes of KeyHash precede each record (kKeyHashBytes of the key type).
  size_t key_hash_bytes() const { return key_hash_bytes_; }

 protected:
  explicit KeySelectorBase(size_t key_hash_bytes) : key_hash_bytes_(key_hash_bytes) {}

 private:
  size_t key_hash_bytes_;
};

template <class T, class K, class F>
class KeySelector final : public KeySelectorBase<T> {
 public:
  explicit KeySelector(F f) : KeySelectorBase<T>(kKeyHashBytes<K>), f_(std::move(f)) {}
  KeyHash Hash(const T& record, int max_parallelism) const override {
    const int32_t hash_code = KeyHashCode<K>::Of(f_(record));
    return {hash_code, AssignToKeyGroup(hash_code, max_parallelism)};
  }
  void HashBatch(const T* records, int count, int max_parallelism, KeyHash* hashes) const override {
    if (KeyGroupsByVector(max_parallelism)) {
      // The hash codes first, then their key groups eight at a time: one record's chain of
      // multiplications no longer shares the core's scalar units with the key selector
      // (keyed sum's source with `n % keys`: 2.5 ns a number, against 3.4 one by one).
      for (int i = 0; i < count; ++i) hashes[i].hash_code = KeyHashCode<K>::Of(f_(records[i]));
      AssignToKeyGroups(hashes, count, max_parallelism);
      return;
    }
    for (int i = 0; i < count; ++i) hashes[i] = KeySelector::Hash(records[i], max_parallelism);
  }

 private:
  F f_;
};

// The KeyHash bytes of the records of an edge: 0 unless it is a hash edge (key_selector,
// a KeySelectorBase<T>, not null).
template <class T>
size_t KeyHashBytesOf(const std::shared_ptr<const void>& key_selector) {
  return key_selector ? static_cast<const KeySelectorBase<T>*>(key_selector.get())->key_hash_bytes() : 0;
}

// Serializes records into the channels of one output edge.
template <class T>
class RecordWriterOutput final : public Output<T> {
 public:
  RecordWriterOutput(ChannelWriter* writer, ShipStrategy strategy,
                     std::shared_ptr<const KeySelectorBase<T>> key_selector, int max_parallelism,
                     int subtask_index, bool with_timestamps = false)
      : writer_(writer),
        with_timestamps_(with_timestamps),
        strategy_(strategy),
        key_selector_(std::move(key_selector)),
        max_parallelism_(max_parallelism),
        num_channels_(writer->num_channels()),
        key_hash_bytes_(strategy == ShipStrategy::kHash ? key_selector_->key_hash_bytes() : 0),
        channel_of_(max_parallelism, num_channels_),
        next_channel_(subtask_index % writer->num_channels()) {}

  void Collect(const T& record) override {
    switch (strategy_) {
      case ShipStrategy::kHash: {
        const KeyHash hash = key_selector_->Hash(record, max_parallelism_);
        Append<true>(ChannelOf(hash), record, hash);
        return;
      }
      case ShipStrategy::kForward:
        Append<false>(0, record);
        return;
      case ShipStrategy::kRebalance:
        Append<false>(next_channel_, record);
        if (++next_channel_ == num_channels_) next_channel_ = 0;
        return;
      case ShipStrategy::kBroadcast:
        for (int c = 0; c < num_channels_; ++c) Append<false>(c, record);
        return;
    }
  }
  void CollectBatch(const T* records, int count) override {
    if (strategy_ != ShipStrategy::kHash) {
      for (int i = 0; i < count; ++i) Collect(records[i]);
      return;
    }
    // The hashes of a chunk first: each is a chain of dependent multiplications, and
    // those of different records overlap only when no record's append waits on them.
    for (int first = 0; first < count; first += kHashChunk) {
      const int n = std::min(kHashChunk, count - first);
      key_selector_->HashBatch(records + first, n, max_parallelism_, chunk_hashes_);
      if constexpr (std::is_arithmetic_v<T>) {
        if (!with_timestamps_) {
          AppendHashedNumbers(records + first, chunk_hashes_, n);
          continue;
        }
      }
      for (int i = 0; i < n; ++i) {
        const KeyHash& hash = chunk_hashes_[i];
        Append<true>(ChannelOf(hash), records[first + i], hash);
      }
    }
  }

 private:
  // The channel of a record whose key hashes to `hash`.
  int ChannelOf(const KeyHash& hash) const { return num_channels_ == 1 ? 0 : channel_of_(hash.key_group); }
  // Where records copied inline into `open` must end: within its bytes, and below its
  // limit (a buffer that reaches it is handed over, out of line).
  static size_t AppendEnd(const OpenBuffer& open) {
    return open.limit == 0 ? 0 : std::min(open.bytes.size(), open.limit - 1);
  }
  // kHashed: the record is preceded by `hash` (a hash edge).
  template <bool kHashed>
  void Append(int channel, const T& record, KeyHash hash = {}) {
    if constexpr (DirectWriter<T>::kDefined) {
      // Numbers, short strings and pairs of those: written inline where the buffer has
      // room (the rest, out of line), after the timestamp and the KeyHash as Serialize
      // writes them.
      const size_t record_size = DirectWriter<T>::Size(record);
      const size_t timestamp_size = with_timestamps_ ? sizeof(int64_t) : 0;
      const size_t size = timestamp_size + (kHashed ? key_hash_bytes_ : 0) + record_size;
      OpenBuffer& open = writer_->open(channel);
      if (record_size != 0 && open.used + size <= AppendEnd(open)) [[likely]] {
        uint8_t* at = open.bytes.data() + open.used;
        if (with_timestamps_) DirectWriter<int64_t>::Write(at, CurrentRecordTimestamp());
        if constexpr (kHashed) WriteKeyHash(at + timestamp_size, hash, key_hash_bytes_);
        DirectWriter<T>::Write(at + (size - record_size), record);
        open.used += size;
        ++open.records;
        return;
      }
    }
    Serialize(channel, record, kHashed ? &hash : nullptr);
  }
  // Append<true> for each of records[0, count) (numbers, no timestamps), each with its
  // hashes[i]. When they all go to one channel (an edge of one channel, or a few hot keys),
  // those that fit in its open buffer are copied with the buffer's fill level in a
  // register, and counted once; otherwise, on an edge of two channels, written to both
  // (AppendToTwoChannels), else with the fill levels of a few channels in locals
  // (AppendToChannels), or record by record.
  void AppendHashedNumbers(const T* records, const KeyHash* hashes, int count) {
    if (num_channels_ == 1) {
      AppendToOneChannel(0, records, hashes, count);
      return;
    }
    const int channel = channel_of_(hashes[0].key_group);
    int same = 1;
    while (same < count && channel_of_(hashes[same].key_group) == channel) ++same;
    if (same == count) {
      AppendToOneChannel(channel, records, hashes, count);
      return;
    }
    if (num_channels_ == 2 && AppendToTwoChannels(records, hashes, count)) return;
    if (num_channels_ <= kLocalChannels) {
      AppendToChannels(records, hashes, count);
      return;
    }
    for (int i = 0; i < count; ++i) Append<true>(channel_of_(hashes[i].key_group), records[i], hashes[i]);
  }
  // The same over two channels when each open buffer has room for all `count` records
  // (else false, and nothing written): every record is written at the end of both
  // channels' buffers, and only its own channel's fill level moves past it. No branch on
  // the channel, which is as random as the keys, and the fill levels stay in registers
  // (AppendToChannels keeps them in an array, through which a record waits on the store
  // of the one before it to the same channel). With three or four channels the writes of
  // every record to every channel cost more than that saves (perf samples of the source
  // at p=3 and p=4: a third more than AppendToChannels).
  bool AppendToTwoChannels(const T* records, const KeyHash* hashes, int count) {
    constexpr int kChannels = 2;
    const size_t hash_bytes = key_hash_bytes_;
    const size_t size = hash_bytes + sizeof(T);
    const KeyGroupToOperator channel_of = channel_of_;  // a local: the buffers' bytes may alias *this
    uint8_t* start[kChannels];
    uint8_t* at[kChannels];
    for (int c = 0; c < kChannels; ++c) {
      OpenBuffer& open = writer_->open(c);
      if (open.used + static_cast<size_t>(count) * size > AppendEnd(open)) return false;
      start[c] = at[c] = open.bytes.data() + open.used;
    }
    for (int i = 0; i < count; ++i) {
      const KeyHash hash = hashes[i];
      const T record = records[i];
      const int mine = channel_of(hash.key_group);
      for (int c = 0; c < kChannels; ++c) {
        WriteKeyHash(at[c], hash, hash_bytes);
        std::memcpy(at[c] + hash_bytes, &record, sizeof(T));
        at[c] += size & (0 - static_cast<size_t>(c == mine));  // a mask: no branch
      }
    }
    for (int c = 0; c < kChannels; ++c) {
      OpenBuffer& open = writer_->open(c);
      const auto written = static_cast<size_t>(at[c] - start[c]);
      open.used += written;
      open.records += static_cast<int64_t>(written / size);
    }
    return true;
  }
  // The same over several channels: each record goes to its channel's open buffer, whose
  // fill level and record count stay in locals for the whole call instead of being read
  // from and written back to the OpenBuffer per record (a store the next record to that
  // channel waits on). A record that does not fit goes out of line, with the open buffers
  // brought up to date around it (a flush may block and serve mail that writes into them).
  void AppendToChannels(const T* records, const KeyHash* hashes, int count) {
    const size_t hash_bytes = key_hash_bytes_;
    const size_t size = hash_bytes + sizeof(T);
    const int n = num_channels_;
    uint8_t* bytes[kLocalChannels];
    size_t used[kLocalChannels];
    size_t end[kLocalChannels];
    int64_t added[kLocalChannels];
    auto load = [&] {
      for (int c = 0; c < n; ++c) {
        OpenBuffer& open = writer_->open(c);
        bytes[c] = open.bytes.data();
        used[c] = open.used;
        end[c] = AppendEnd(open);
        added[c] = 0;
      }
    };
    auto store = [&] {
      for (int c = 0; c < n; ++c) {
        OpenBuffer& open = writer_->open(c);
        open.used = used[c];
        open.records += added[c];
      }
    };
    load();
    for (int i = 0; i < count; ++i) {
      const int c = channel_of_(hashes[i].key_group);
      if (used[c] + size <= end[c]) [[likely]] {
        WriteKeyHash(bytes[c] + used[c], hashes[i], hash_bytes);
        std::memcpy(bytes[c] + used[c] + hash_bytes, &records[i], sizeof(T));
        used[c] += size;
        ++added[c];
      } else {
        store();
        Serialize(c, records[i], &hashes[i]);
        load();
      }
    }
    store();
  }
  void AppendToOneChannel(int channel, const T* records, const KeyHash* hashes, int count) {
    const size_t hash_bytes = key_hash_bytes_;
    const size_t size = hash_bytes + sizeof(T);
    OpenBuffer& open = writer_->open(channel);
    int i = 0;
    while (i < count) {
      const size_t end = AppendEnd(open);
      uint8_t* const bytes = open.bytes.data();
      size_t used = open.used;
      const int first = i;
      for (; i < count && used + size <= end; ++i) {
        WriteKeyHash(bytes + used, hashes[i], hash_bytes);
        std::memcpy(bytes + used + hash_bytes, &records[i], sizeof(T));
        used += size;
      }
      open.used = used;
      open.records += i - first;
      if (i < count) {  // no room: written (the buffer grown or flushed) out of line
        Serialize(channel, records[i], &hashes[i]);
        ++i;
      }
    }
  }
  [[gnu::noinline]] void Serialize(int channel, const T& record, const KeyHash* hash) {
    OpenBuffer& open = writer_->open(channel);
    {
      DataOutput out(&open.bytes, &open.used);
      // On an edge of timestamped records, each record is preceded by its timestamp.
      if (with_timestamps_) Serializer<int64_t>::Write(out, CurrentRecordTimestamp());
      if (hash != nullptr) WriteKeyHash(out, *hash, key_hash_bytes_);
      Serializer<T>::Write(out, record);
    }
    ++open.records;
    if (open.used >= open.limit) writer_->Flush(channel);
  }

  ChannelWriter* writer_;
  bool with_timestamps_;
  ShipStrategy strategy_;
  std::shared_ptr<const KeySelectorBase<T>> key_selector_;
  int max_parallelism_;
  int num_channels_;
  size_t key_hash_bytes_;  // of the records of a hash edge, else 0
  KeyGroupToOperator channel_of_;  // the channel of a key group
  int next_channel_;
  // CollectBatch's hashes of a chunk of records.
  static constexpr int kHashChunk = 64;
  // The most channels AppendToChannels keeps in locals.
  static constexpr int kLocalChannels = 16;
  KeyHash chunk_hashes_[kHashChunk];
};

// Deserializes the records of a data buffer into an operator's input.
class RecordReaderBase {
 public:
  virtual ~RecordReaderBase() = default;
  // Pushes the records of [begin, end) into the input; returns how many. With
  // `interrupt`, stops after a whole record once `*interrupt` is non-zero (the task has
  // mail to serve between records) and sets `*stopped_at` to the next record (else to
  // `end`). Throws DeserializationError on malformed data.
  virtual int64_t Process(const uint8_t* begin, const uint8_t* end, const std::atomic<int>* interrupt = nullptr,
                          const uint8_t** stopped_at = nullptr) = 0;
};

template <class T>
class RecordReader final : public RecordReaderBase {
 public:
  // `key_hash_bytes`: of the KeyHash before each record (a hash edge), else 0.
  explicit RecordReader(Output<T>* input, bool with_timestamps = false, size_t key_hash_bytes = 0)
      : input_(input),
        keyed_(dynamic_cast<KeyedInput<T>*>(input)),
        with_timestamps_(with_timestamps),
        key_hash_bytes_(key_hash_bytes) {}
  int64_t Process(const uint8_t* begin, const uint8_t* end, const std::atomic<int>* interrupt = nullptr,
                  const uint8_t** stopped_at = nullptr) override {
    if (keyed_ != nullptr && keyed_->StartBuffer()) return ProcessAhead(begin, end, interrupt, stopped_at);
    DataInput in(begin, end);
    int64_t n = 0;
    while (!in.AtEnd() && !(interrupt && n > 0 && interrupt->load(std::memory_order_relaxed) != 0)) {
      if (with_timestamps_) {
        int64_t ts = 0;
        Serializer<int64_t>::Read(in, ts);
        SetCurrentRecordTimestamp(ts);
      }
      if (key_hash_bytes_ != 0) {
        const KeyHash hash = ReadKeyHash(in, key_hash_bytes_);
        ReadRecord(in, record_);
        if (keyed_ != nullptr) {
          keyed_->CollectHashed(record_, hash);
        } else {
          input_->Collect(record_);
        }
      } else {
        ReadRecord(in, record_);
        input_->Collect(record_);
      }
      ++n;
    }
    if (stopped_at) *stopped_at = in.position();
    return n;
  }

 private:
  static constexpr int kBatch = KeyedInput<T>::kBatch;

  // Process for a keyed input whose state is worth prefetching (see KeyedInput): reads
  // and prepares the next batch of records before it processes the current one.
  // Records read but not yet processed when it stops for mail are read again by the
  // next call (from `*stopped_at`).
  int64_t ProcessAhead(const uint8_t* begin, const uint8_t* end, const std::atomic<int>* interrupt,
                       const uint8_t** stopped_at) {
    DataInput in(begin, end);
    const uint8_t* processed_to = begin;
    int64_t n = 0;
    int base = 0;  // the first slot of the batch to process
    int ready = ReadBatch(in, base);
    while (ready > 0) {
      const int next_base = kBatch - base;
      const int next = in.AtEnd() ? 0 : ReadBatch(in, next_base);
      for (int i = base; i < base + ready; ++i) {
        if (interrupt && n > 0 && interrupt->load(std::memory_order_relaxed) != 0) {
          if (stopped_at) *stopped_at = processed_to;
          return n;
        }
        if (with_timestamps_) SetCurrentRecordTimestamp(timestamps_[i]);
        keyed_->CollectPrepared(ahead_[i], i);
        processed_to = next_[i];
        ++n;
      }
      base = next_base;
      ready = next;
    }
    if (stopped_at) *stopped_at = processed_to;
    return n;
  }
  // Reads up to kBatch records into the slots from `base` on and prepares them.
  int ReadBatch(DataInput& in, int base) {
    keyed_->ReuseSlots();
    int count = 0;
    for (; count < kBatch && !in.AtEnd(); ++count) {
      const int slot = base + count;
      if (with_timestamps_) Serializer<int64_t>::Read(in, timestamps_[slot]);
      if (key_hash_bytes_ != 0) hashes_[slot] = ReadKeyHash(in, key_hash_bytes_);
      ReadRecord(in, ahead_[slot]);
      next_[slot] = in.position();
    }
    if (count > 0) keyed_->Prepare(&ahead_[base], key_hash_bytes_ != 0 ? &hashes_[base] : nullptr, base, count);
    return count;
  }

  Output<T>* input_;
  KeyedInput<T>* keyed_;  // input_ when it is keyed, else nullptr
  bool with_timestamps_;
  size_t key_hash_bytes_;
  T record_{};
  // The records of ProcessAhead, by slot: two batches.
  T ahead_[KeyedInput<T>::kSlots]{};
  int64_t timestamps_[KeyedInput<T>::kSlots]{};
  KeyHash hashes_[KeyedInput<T>::kSlots]{};
  const uint8_t* next_[KeyedInput<T>::kSlots]{};  // where the record after each starts
};

}  // namespace weir
