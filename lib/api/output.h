#pragma once
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>
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
};

// An operator input that takes the key of a record before it processes the record (a
// keyed operator). RecordReader deserializes up to kSlots records ahead of the one it
// hands over: it calls Prepare for each as it reads it, in one of kSlots slots, and
// CollectPrepared with the same slot, in the same order. Prepare computes the key,
// its hash code and key group once (off the dependency chain of the records before it)
// and, when the state has outgrown the caches, starts loading the key's state entries,
// so that a record's cache misses overlap the processing of the records before it.
// CollectPrepared(record, slot) does what Collect(record) does. StartBuffer comes before
// the first Prepare of each buffer, and forgets what earlier buffers prepared.
template <class T>
class KeyedInput {
 public:
  static constexpr int kSlots = 8;
  virtual ~KeyedInput() = default;
  virtual void StartBuffer() = 0;
  // `record` stays where it is, unchanged, until CollectPrepared of the same slot.
  virtual void Prepare(const T& record, int slot) = 0;
  virtual void CollectPrepared(const T& record, int slot) = 0;
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
