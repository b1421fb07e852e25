#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "lib/api/key_groups.h"

// Output<T>: where an operator puts its records. Chained operators are Outputs of
// one another (a direct call, no serialization); the last operator of a task writes
// into a RecordWriterOutput that serializes into channel buffers.

namespace weir {

class OutputBase {
 public:
  virtual ~OutputBase() = default;
};

template <class T>
class Output : public OutputBase {
 public:
  virtual void Collect(const T& record) = 0;
  // Collects records[0, count) in order, as Collect does each, with the same current
  // record timestamp: for sources that make records a batch at a time. An output that
  // routes records by key hashes the whole batch first (RecordWriterOutput), so the
  // hashes of its records are computed side by side rather than one after the other.
  virtual void CollectBatch(const T* records, int count) {
    for (int i = 0; i < count; ++i) Collect(records[i]);
  }
};

// An operator input that takes the key of a record before it processes the record (a
// keyed operator). RecordReader deserializes records a batch ahead of the ones it hands
// over: it reads a batch of up to kBatch records into one half of kSlots slots and calls
// Prepare for them, then CollectPrepared for each record of the batch before, in the
// other half, in order. Prepare computes each key, its hash code and key group once
// (away from the processing of the records before it) and starts loading the keys'
// state entries, so that a record's cache misses overlap the processing of the records
// before it. CollectPrepared(record, slot) does
// what Collect(record) does. StartBuffer comes before the first Prepare of each buffer,
// forgets what earlier buffers prepared, and says whether reading ahead pays: when the
// state is small enough to stay cached there is nothing to load early, and the reader
// hands the buffer's records to Collect (CollectHashed) one by one instead.
//
// On a hash edge each record comes with its key's hash code and key group (KeyHash), as
// the sender computed them to route it: CollectHashed and a Prepare given `hashes` take
// them instead of hashing the key again. (The key itself is still taken from the
// record, and a number key's hash code computed from it.)
template <class T>
class KeyedInput {
 public:
  static constexpr int kBatch = 8;
  static constexpr int kSlots = 2 * kBatch;
  virtual ~KeyedInput() = default;
  // Collect, for a record whose key hashes to `hash`.
  virtual void CollectHashed(const T& record, KeyHash hash) = 0;
  virtual bool StartBuffer() = 0;
  // Prepares records[0, count) in slots [first_slot, first_slot + count); `hashes` are
  // their keys' (KeyHash), or null when the edge does not carry them. Each record
  // stays where it is, unchanged, until CollectPrepared of its slot, and after it until
  // ReuseSlots.
  virtual void Prepare(const T* records, const KeyHash* hashes, int first_slot, int count) = 0;
  virtual void CollectPrepared(const T& record, int slot) = 0;
  // The reader is about to read records into slots (and their places) that it handed to
  // CollectPrepared before.
  virtual void ReuseSlots() = 0;
};

// The name user functions see (Flink's Collector).
template <class T>
using Collector = Output<T>;

// Sends every record to several outputs (a stream consumed by several operators).
template <class T>
class FanOutOutput final : public Output<T> {
 public:
  void Add(Output<T>* out) { outs_.push_back(out); }
  void Collect(const T& record) override {
    for (auto* o : outs_) o->Collect(record);
  }
  void CollectBatch(const T* records, int count) override {
    for (auto* o : outs_) o->CollectBatch(records, count);
  }

 private:
  std::vector<Output<T>*> outs_;
};

// Names a side output of records of type T (Flink's OutputTag):
//   weir::OutputTag<Event> late("late-events");
class OutputTagBase {
 public:
  explicit OutputTagBase(std::string id) : id_(std::move(id)) {
    if (id_.empty()) throw std::invalid_argument("an output tag needs a non-empty id");
  }
  const std::string& id() const { return id_; }

 private:
  std::string id_;
};
template <class T>
class OutputTag : public OutputTagBase {
 public:
  explicit OutputTag(std::string id) : OutputTagBase(std::move(id)), key_(this->id() + '\0' + typeid(T).name()) {}
  // The id and the record type: tags of the same id and another type are other tags.
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

}  // namespace weir
