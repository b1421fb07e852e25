#include "lib/api/channel_io.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lib/api/heap_state.h"

namespace weir {
namespace {

using Record = std::pair<std::string, int64_t>;

// Serializes `records` (each preceded by its timestamp when `timestamps`) as a channel
// buffer holds them.
std::vector<uint8_t> Buffer(const std::vector<Record>& records, bool timestamps) {
  std::vector<uint8_t> bytes;
  DataOutput out(&bytes);
  for (const Record& r : records) {
    if (timestamps) Serializer<int64_t>::Write(out, r.second * 10);
    Serializer<Record>::Write(out, r);
  }
  return bytes;
}

std::vector<Record> Records(int n) {
  std::vector<Record> records;
  for (int i = 0; i < n; ++i) records.emplace_back("word-" + std::to_string(i), i);
  return records;
}

// A keyed operator input that logs what it is asked, and raises `interrupt` after
// `interrupt_after` records.
class LoggingInput final : public Output<Record>, public KeyedInput<Record> {
 public:
  bool StartBuffer() override {
    ++buffers;
    for (auto& s : slots) s.reset();
    return reads_ahead;
  }
  void CollectHashed(const Record& r, KeyHash hash) override {
    hashes.push_back(hash);
    Collect(r);
  }
  void Prepare(const Record* records, const KeyHash* carried, int first_slot, int count) override {
    // Records are read only after the reader said it reuses the slots.
    REQUIRE(borrowed == nullptr);
    REQUIRE(count > 0);
    REQUIRE(first_slot >= 0);
    REQUIRE(first_slot + count <= kSlots);
    for (int i = 0; i < count; ++i) {
      const int slot = first_slot + i;
      REQUIRE_FALSE(slots[slot].has_value());  // a slot is taken again only once processed
      slots[slot] = records[i];
      slot_hashes[slot] = carried ? std::optional<KeyHash>(carried[i]) : std::nullopt;
      prepared.push_back(records[i]);
    }
  }
  void CollectPrepared(const Record& r, int slot) override {
    // Each record is prepared before it is processed, in order, at most kSlots ahead,
    // and comes back with its slot.
    REQUIRE(prepared.size() > collected_in_call);
    REQUIRE(prepared[collected_in_call] == r);
    REQUIRE(prepared.size() - collected_in_call <= static_cast<size_t>(kSlots));
    REQUIRE(slots[slot] == r);
    slots[slot].reset();
    if (slot_hashes[slot]) hashes.push_back(*slot_hashes[slot]);
    borrowed = &r;  // as the keyed state borrows its key
    borrowed_copy = r;
    Collect(r);
  }
  void ReuseSlots() override {
    // The record processed last is unchanged until the reader reuses its place.
    if (borrowed != nullptr) REQUIRE(*borrowed == borrowed_copy);
    borrowed = nullptr;
  }
  void Collect(const Record& r) override {
    collected.push_back(r);
    timestamps.push_back(CurrentRecordTimestamp());
    ++collected_in_call;
    if (collected.size() == interrupt_after) interrupt.store(1);
  }
  void StartCall() {
    prepared.clear();
    collected_in_call = 0;
    interrupt.store(0);
  }

  const Record* borrowed = nullptr;  // handed to CollectPrepared, not yet reused
  Record borrowed_copy;
  bool reads_ahead = true;  // what StartBuffer answers
  size_t interrupt_after = 0;
  std::atomic<int> interrupt{0};
  int buffers = 0;
  std::optional<Record> slots[kSlots];
  std::optional<KeyHash> slot_hashes[kSlots];
  std::vector<KeyHash> hashes;  // what came with each record collected (hash edges)
  std::vector<Record> prepared;
  std::vector<Record> collected;
  std::vector<int64_t> timestamps;
  size_t collected_in_call = 0;
};

// An input that is not keyed: takes records one by one.
class PlainInput final : public Output<Record> {
 public:
  void Collect(const Record& r) override { collected.push_back(r); }
  std::vector<Record> collected;
};

TEST_CASE("RecordReader: a keyed input gets every record in order, each prepared first", "[channel_io]") {
  const bool timestamps = GENERATE(false, true);
  const std::vector<Record> records = Records(100);
  const std::vector<uint8_t> bytes = Buffer(records, timestamps);
  LoggingInput input;
  RecordReader<Record> reader(&input, timestamps);
  input.StartCall();
  const uint8_t* stopped_at = nullptr;
  REQUIRE(reader.Process(bytes.data(), bytes.data() + bytes.size(), &input.interrupt, &stopped_at) == 100);
  CHECK(stopped_at == bytes.data() + bytes.size());
  CHECK(input.buffers == 1);
  CHECK(input.collected == records);
  CHECK(input.prepared == records);
  if (timestamps) {
    for (size_t i = 0; i < records.size(); ++i) CHECK(input.timestamps[i] == records[i].second * 10);
  }
}

TEST_CASE("RecordReader: an input that is not keyed gets every record in order", "[channel_io]") {
  const std::vector<Record> records = Records(30);
  const std::vector<uint8_t> bytes = Buffer(records, false);
  PlainInput input;
  RecordReader<Record> reader(&input);
  CHECK(reader.Process(bytes.data(), bytes.data() + bytes.size()) == 30);
  CHECK(input.collected == records);
}

// A channel writer that keeps what each channel was handed, its open buffers at full
// size (with room for `room` bytes) as the runtime keeps them.
class KeepingWriter final : public ChannelWriter {
 public:
  KeepingWriter(int channels, size_t room, size_t threshold) : flushed(channels), room_(room) {
    open_.resize(channels);
    for (auto& o : open_) o.bytes.resize(room_);
    SetFlushThreshold(threshold);
  }
  void Flush(int channel) override {
    OpenBuffer& o = open_[channel];
    flushed[channel].insert(flushed[channel].end(), o.bytes.begin(), o.bytes.begin() + static_cast<long>(o.used));
    o.used = 0;
    o.records = 0;
    o.bytes.resize(room_);
  }
  std::vector<std::vector<uint8_t>> flushed;

 private:
  size_t room_;
};

template <class T>
class Keeping final : public Output<T> {
 public:
  void Collect(const T& r) override {
    records.push_back(r);
    timestamps.push_back(CurrentRecordTimestamp());
  }
  std::vector<T> records;
  std::vector<int64_t> timestamps;
};

TEST_CASE("RecordWriterOutput: numbers are read back as written, with timestamps or not, at every room left",
          "[channel_io]") {
  const bool timestamps = GENERATE(false, true);
  // Buffers with no room, room for less than a record, and room for a few: the writes
  // that do not fit grow the buffer.
  const size_t room = GENERATE(0, 5, 64);
  KeepingWriter writer(2, room, 40);
  RecordWriterOutput<int64_t> out(&writer, ShipStrategy::kRebalance, nullptr, 128, 0, timestamps);
  std::vector<int64_t> sent;
  for (int64_t i = 0; i < 1000; ++i) {
    const int64_t n = i * 7919 - 3'000'000'000'000LL;
    if (timestamps) SetCurrentRecordTimestamp(i * 10);
    out.Collect(n);
    sent.push_back(n);
  }
  for (int c = 0; c < 2; ++c) writer.Flush(c);
  for (int c = 0; c < 2; ++c) {
    Keeping<int64_t> input;
    RecordReader<int64_t> reader(&input, timestamps);
    const auto& bytes = writer.flushed[c];
    CHECK(reader.Process(bytes.data(), bytes.data() + bytes.size()) == 500);
    // Rebalanced from channel 0: every other record, in order.
    for (size_t i = 0; i < input.records.size(); ++i) {
      REQUIRE(input.records[i] == sent[2 * i + c]);
      if (timestamps) REQUIRE(input.timestamps[i] == static_cast<int64_t>(2 * i + c) * 10);
    }
  }
}

TEST_CASE("RecordWriterOutput: words of every length are written as Serializer writes them, at every room left",
          "[channel_io]") {
  // Words below 128 bytes are written inline, longer ones out of line: every length
  // around that edge, into buffers with no room, less than a record, and a few records.
  const bool timestamps = GENERATE(false, true);
  const size_t room = GENERATE(0, 5, 10, 64, 300);
  KeepingWriter writer(1, room, 100);
  RecordWriterOutput<Record> out(&writer, ShipStrategy::kForward, nullptr, 128, 0, timestamps);
  std::vector<Record> records;
  for (int n = 0; n <= 140; ++n) records.emplace_back(std::string(static_cast<size_t>(n), static_cast<char>('a' + n % 26)), n);
  for (const Record& r : records) {
    SetCurrentRecordTimestamp(timestamps ? r.second * 10 : kNoTimestamp);
    out.Collect(r);
  }
  writer.Flush(0);
  CHECK(writer.flushed[0] == Buffer(records, timestamps));
}

// The key of a Record, as a job's KeyBy gives it.
const std::string& WordOf(const Record& r) { return r.first; }
using WordSelector = KeySelector<Record, std::string, const std::string& (*)(const Record&)>;

TEST_CASE("RecordWriterOutput: on a hash edge each record goes to its key group's channel with its key's hash",
          "[channel_io]") {
  const bool timestamps = GENERATE(false, true);
  const bool reads_ahead = GENERATE(false, true);  // the keyed input's two paths
  const int channels = GENERATE(1, 3);
  const auto selector = std::make_shared<const WordSelector>(&WordOf);
  KeepingWriter writer(channels, 64, 200);
  RecordWriterOutput<Record> out(&writer, ShipStrategy::kHash, selector, 128, 0, timestamps);
  const std::vector<Record> records = Records(300);
  for (const Record& r : records) {
    if (timestamps) SetCurrentRecordTimestamp(r.second * 10);
    out.Collect(r);
  }
  const KeyGroupToOperator channel_of(128, channels);
  size_t read = 0;
  for (int c = 0; c < channels; ++c) {
    writer.Flush(c);
    LoggingInput input;
    input.reads_ahead = reads_ahead;
    RecordReader<Record> reader(&input, timestamps, kKeyHashBytes<std::string>);
    const auto& bytes = writer.flushed[c];
    input.StartCall();
    reader.Process(bytes.data(), bytes.data() + bytes.size());
    REQUIRE(input.hashes.size() == input.collected.size());
    std::vector<Record> expected;
    for (const Record& r : records) {
      if (channel_of(selector->KeyGroup(r, 128)) == c) expected.push_back(r);
    }
    CHECK(input.collected == expected);
    for (size_t i = 0; i < input.collected.size(); ++i) {
      const Record& r = input.collected[i];
      INFO(r.first);
      CHECK(input.hashes[i].hash_code == KeyHashCode<std::string>::Of(r.first));
      CHECK(input.hashes[i].key_group == KeyGroupOf(r.first, 128));
      if (timestamps) CHECK(input.timestamps[i] == r.second * 10);
    }
    read += input.collected.size();
  }
  CHECK(read == records.size());
}

TEST_CASE("RecordWriterOutput: numbers on a hash edge carry their key groups, at every room left", "[channel_io]") {
  const bool timestamps = GENERATE(false, true);
  const size_t room = GENERATE(0, 5, 10, 64);
  auto parity = [](const int64_t& n) { return n % 2; };
  const auto selector = std::make_shared<const KeySelector<int64_t, int64_t, decltype(parity)>>(parity);
  REQUIRE(selector->key_hash_bytes() == 2);
  KeepingWriter writer(1, room, 100);
  RecordWriterOutput<int64_t> out(&writer, ShipStrategy::kHash, selector, 128, 0, timestamps);
  for (int64_t n = 0; n < 500; ++n) {
    if (timestamps) SetCurrentRecordTimestamp(n * 10);
    out.Collect(n);
  }
  writer.Flush(0);
  const auto& bytes = writer.flushed[0];
  DataInput in(bytes.data(), bytes.data() + bytes.size());
  for (int64_t n = 0; n < 500; ++n) {
    if (timestamps) REQUIRE(in.ReadFixed<int64_t>() == n * 10);
    const KeyHash hash = ReadKeyHash(in, 2);  // a number's key group, not its hash code
    REQUIRE(hash.key_group == KeyGroupOf<int64_t>(n % 2, 128));
    REQUIRE(in.ReadFixed<int64_t>() == n);
  }
  CHECK(in.AtEnd());
}

// Writes `records` through two RecordWriterOutputs of the same edge, one record by one
// and in batches of `batch` (the last one shorter), into buffers of `room` bytes (grown
// when a record does not fit); returns each one's bytes per channel.
template <class T>
std::pair<std::vector<std::vector<uint8_t>>, std::vector<std::vector<uint8_t>>> OneByOneAndBatched(
    const std::vector<T>& records, ShipStrategy strategy, std::shared_ptr<const KeySelectorBase<T>> selector,
    int channels, int batch, bool timestamps, size_t room) {
  // A threshold of 100 bytes, or of the room when larger (room for whole batches).
  const size_t threshold = std::max<size_t>(room, 100);
  KeepingWriter one_by_one(channels, room, threshold);
  KeepingWriter batched(channels, room, threshold);
  RecordWriterOutput<T> a(&one_by_one, strategy, selector, 128, 0, timestamps);
  RecordWriterOutput<T> b(&batched, strategy, selector, 128, 0, timestamps);
  SetCurrentRecordTimestamp(timestamps ? 42 : kNoTimestamp);
  for (const T& r : records) a.Collect(r);
  for (size_t first = 0; first < records.size(); first += static_cast<size_t>(batch)) {
    b.CollectBatch(records.data() + first, static_cast<int>(std::min<size_t>(batch, records.size() - first)));
  }
  for (int c = 0; c < channels; ++c) {
    CHECK(batched.open(c).records == one_by_one.open(c).records);  // counted too
    one_by_one.Flush(c);
    batched.Flush(c);
  }
  return {one_by_one.flushed, batched.flushed};
}

TEST_CASE("RecordWriterOutput: a batch is written as its records would be one by one", "[channel_io]") {
  const bool timestamps = GENERATE(false, true);
  // One, two (written to both), a few (their fill levels kept in locals: up to 16) and
  // more than RecordWriterOutput keeps so.
  const int channels = GENERATE(1, 2, 3, 20);
  // Shorter than, as long as, and longer than the chunk whose hashes are taken at once.
  const int batch = GENERATE(1, 7, 64, 65, 500);
  // No room, room for less than a record, for a few (the threshold is 100 bytes), and for
  // whole chunks of records (the threshold is the room).
  const size_t room = GENERATE(0, 5, 64, 4096);
  INFO("channels " << channels << ", batch " << batch << ", room " << room);
  std::vector<int64_t> numbers;
  for (int64_t n = -300; n < 700; ++n) numbers.push_back(n * 7919);
  auto by_five = [](const int64_t& n) { return n % 5; };
  const auto number_keys = std::make_shared<const KeySelector<int64_t, int64_t, decltype(by_five)>>(by_five);
  const auto [numbers_one_by_one, numbers_batched] =
      OneByOneAndBatched<int64_t>(numbers, ShipStrategy::kHash, number_keys, channels, batch, timestamps, room);
  CHECK(numbers_batched == numbers_one_by_one);
  size_t bytes = 0;
  for (const auto& channel : numbers_batched) bytes += channel.size();
  CHECK(bytes == numbers.size() * ((timestamps ? 8 : 0) + 2 + 8));  // nothing lost
  // One hot key: every record of a batch goes to one channel of several.
  auto seven = [](const int64_t&) { return int64_t{7}; };
  const auto one_key = std::make_shared<const KeySelector<int64_t, int64_t, decltype(seven)>>(seven);
  const auto [hot_one_by_one, hot_batched] =
      OneByOneAndBatched<int64_t>(numbers, ShipStrategy::kHash, one_key, channels, batch, timestamps, room);
  CHECK(hot_batched == hot_one_by_one);
  const auto [words_one_by_one, words_batched] = OneByOneAndBatched<Record>(
      Records(300), ShipStrategy::kHash, std::make_shared<const WordSelector>(&WordOf), channels, batch, timestamps, room);
  CHECK(words_batched == words_one_by_one);
  const auto [rebalanced_one_by_one, rebalanced_batched] =
      OneByOneAndBatched<int64_t>(numbers, ShipStrategy::kRebalance, nullptr, channels, batch, timestamps, room);
  CHECK(rebalanced_batched == rebalanced_one_by_one);
}

TEST_CASE("RecordReader: stopped for mail, a keyed input's reader resumes after the last record it processed",
          "[channel_io]") {
  const bool timestamps = GENERATE(false, true);
  const std::vector<Record> records = Records(50);
  const std::vector<uint8_t> bytes = Buffer(records, timestamps);
  LoggingInput input;
  RecordReader<Record> reader(&input, timestamps);
  const uint8_t* end = bytes.data() + bytes.size();

  // Records after the 10th were read ahead and prepared when the mail came; they are
  // read again, not lost and not processed twice.
  // After 8, the mail comes when the next batch was read into the slots of the first.
  const int first = GENERATE(8, 10);
  input.interrupt_after = first;
  input.StartCall();
  const uint8_t* stopped_at = nullptr;
  REQUIRE(reader.Process(bytes.data(), end, &input.interrupt, &stopped_at) == first);
  CHECK(input.prepared.size() > static_cast<size_t>(first));
  CHECK(input.prepared.size() <= first + static_cast<size_t>(KeyedInput<Record>::kSlots));
  CHECK(stopped_at == bytes.data() + Buffer(Records(first), timestamps).size());
  // The record processed last is where it was, unchanged, while the reader waits.
  if (first == 10) REQUIRE(input.borrowed != nullptr);  // after 8 it was reused (and kept)
  if (input.borrowed != nullptr) CHECK(*input.borrowed == records[first - 1]);

  input.interrupt_after = 0;
  input.StartCall();
  const uint8_t* resumed = stopped_at;
  REQUIRE(reader.Process(resumed, end, &input.interrupt, &stopped_at) == 50 - first);
  CHECK(stopped_at == end);
  CHECK(input.buffers == 2);
  CHECK(input.collected == records);
}

TEST_CASE("RecordReader: a keyed input whose state stays cached gets its records one by one, none prepared",
          "[channel_io]") {
  const bool timestamps = GENERATE(false, true);
  const std::vector<Record> records = Records(50);
  const std::vector<uint8_t> bytes = Buffer(records, timestamps);
  const uint8_t* end = bytes.data() + bytes.size();
  LoggingInput input;
  input.reads_ahead = false;
  RecordReader<Record> reader(&input, timestamps);
  // Stopped for mail after the 10th record, then resumed where it stopped.
  input.interrupt_after = 10;
  input.StartCall();
  const uint8_t* stopped_at = nullptr;
  REQUIRE(reader.Process(bytes.data(), end, &input.interrupt, &stopped_at) == 10);
  CHECK(stopped_at == bytes.data() + Buffer(Records(10), timestamps).size());
  input.interrupt_after = 0;
  input.StartCall();
  REQUIRE(reader.Process(stopped_at, end, &input.interrupt, &stopped_at) == 40);
  CHECK(stopped_at == end);
  CHECK(input.buffers == 2);
  CHECK(input.prepared.empty());
  CHECK(input.collected == records);
  if (timestamps) {
    for (size_t i = 0; i < records.size(); ++i) CHECK(input.timestamps[i] == records[i].second * 10);
  }
}

TEST_CASE("RecordReader: an empty buffer processes nothing", "[channel_io]") {
  LoggingInput input;
  RecordReader<Record> reader(&input);
  std::vector<uint8_t> bytes;
  const uint8_t* stopped_at = nullptr;
  CHECK(reader.Process(bytes.data(), bytes.data(), &input.interrupt, &stopped_at) == 0);
  CHECK(stopped_at == bytes.data());
  CHECK(input.collected.empty());
}

// Both steps of the backend's prefetch for one key.
void PrefetchKey(const HeapKeyedStateBackend<int64_t>& backend, int64_t key) {
  const KeyHash hash{KeyHashCode<int64_t>::Of(key), KeyGroupOf(key, backend.max_parallelism())};
  backend.Prefetch(&hash, 1, &hash, 1);
}

TEST_CASE("HeapKeyedStateBackend: prefetching pays only once the state outgrows the caches", "[channel_io]") {
  HeapKeyedStateBackend<int64_t> backend(128, {0, 63});
  ValueState<int64_t>& small = backend.GetValueState<int64_t>("small");
  ValueState<int64_t>& large = backend.GetValueState<int64_t>("large");
  CHECK_FALSE(backend.PrefetchPays());
  // The entries of both states count: the prefetching starts with the one that makes
  // them PrefetchStateBytes().
  const size_t entry_bytes = FlatHashMap<int64_t, int64_t, StableKeyHash<int64_t>, KeyEqual<int64_t>>::kBytesPerEntry;
  const size_t enough = (PrefetchStateBytes() + entry_bytes - 1) / entry_bytes;
  size_t entries = 0;  // of both states
  int small_entries = 0;
  std::vector<int64_t> written;  // the large state's keys
  for (int64_t key = 0; entries < enough; ++key) {
    if (!backend.range().Contains(KeyGroupOf(key, 128))) {
      PrefetchKey(backend, key);  // another subtask's key: ignored
      continue;
    }
    CHECK_FALSE(backend.PrefetchPays());
    backend.SetCurrentKey(key);
    large.Update(key);
    written.push_back(key);
    ++entries;
    if (small_entries < 10) {
      small.Update(key);
      ++small_entries;
      ++entries;
    }
  }
  CHECK(backend.PrefetchPays());
  // A prefetch is a hint: the values read afterwards are the ones written.
  for (int64_t key = 0; key < 1000; ++key) {
    if (!backend.range().Contains(KeyGroupOf(key, 128))) continue;
    PrefetchKey(backend, key);
    backend.SetCurrentKey(key);
    CHECK(large.ValueOr(-1) == key);
  }
  CHECK(small.ValueOr(-1) == -1);  // the last key has no value in the small state
  // Entries erased count as well: without the large state's, prefetching stops paying.
  for (int64_t key : written) {
    backend.SetCurrentKey(key);
    large.Clear();
  }
  CHECK_FALSE(backend.PrefetchPays());
}

TEST_CASE("KeySelector: a batch's hashes are those of its records one by one", "[channel_io]") {
  const int max_parallelism = GENERATE(128, 100);  // a mask or a division for the key group
  auto by_seven = [](const int64_t& n) { return n % 7; };
  auto itself = [](const int64_t& n) { return n; };
  const KeySelector<int64_t, int64_t, decltype(by_seven)> sevens(by_seven);
  const KeySelector<int64_t, int64_t, decltype(itself)> numbers(itself);
  const WordSelector words(&WordOf);
  std::vector<int64_t> values;
  for (int64_t i = -50; i < 150; ++i) values.push_back(i * 1000003);
  values.push_back(INT64_MIN);
  values.push_back(INT64_MAX);
  const std::vector<Record> records = Records(static_cast<int>(values.size()));
  for (int count : {0, 1, 7, 8, 9, 64, static_cast<int>(values.size())}) {
    INFO(count << " records, max parallelism " << max_parallelism);
    std::vector<KeyHash> batch(static_cast<size_t>(count));
    sevens.HashBatch(values.data(), count, max_parallelism, batch.data());
    for (int i = 0; i < count; ++i) {
      const KeyHash one = sevens.Hash(values[static_cast<size_t>(i)], max_parallelism);
      REQUIRE(batch[static_cast<size_t>(i)].hash_code == one.hash_code);
      REQUIRE(batch[static_cast<size_t>(i)].key_group == one.key_group);
    }
    numbers.HashBatch(values.data(), count, max_parallelism, batch.data());
    for (int i = 0; i < count; ++i) {
      REQUIRE(batch[static_cast<size_t>(i)].key_group ==
              numbers.Hash(values[static_cast<size_t>(i)], max_parallelism).key_group);
    }
    words.HashBatch(records.data(), count, max_parallelism, batch.data());
    for (int i = 0; i < count; ++i) {
      const KeyHash one = words.Hash(records[static_cast<size_t>(i)], max_parallelism);
      REQUIRE(batch[static_cast<size_t>(i)].hash_code == one.hash_code);
      REQUIRE(batch[static_cast<size_t>(i)].key_group == one.key_group);
    }
  }
}

}  // namespace
}  // namespace weir
