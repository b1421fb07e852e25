#pragma once
// Side outputs (Flink's): a function emits a record to a side output with
// ctx.Output(tag, value), and GetSideOutput(tag) on its result reads them; the windows'
// late data (SideOutputLateData) is one too.
//
// An operator with side outputs emits SideOutputRecords: each is a record of the main
// output or of one side output. A selector node after the operator per output (the
// main one, and one per GetSideOutput tag) keeps its own. A main record passes by
// pointer while the main selector is chained to the operator; a side record is
// serialized once, so that the operator needs no type of its side outputs. A side
// output is told apart by its tag's id and record type, as Flink's OutputTag.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "lib/api/output.h"
#include "lib/api/serialization.h"

namespace weir {

template <class Main>
struct SideOutputRecord {
  const Main* main = nullptr;  // a main record, passed along chained operators...
  std::optional<Main> owned;   // ...or read from a channel
  std::string tag_key;         // else a side record: its tag's key (OutputTag::key())...
  std::vector<uint8_t> bytes;  // ...and the record, serialized
  const Main* MainRecord() const { return main ? main : owned ? &*owned : nullptr; }
};

template <class Main>
struct Serializer<SideOutputRecord<Main>> {
  static void Write(DataOutput& out, const SideOutputRecord<Main>& r) {
    const Main* main = r.MainRecord();
    out.WriteFixed<uint8_t>(main ? 1 : 0);
    if (main) {
      Serializer<Main>::Write(out, *main);
      return;
    }
    Serializer<std::string>::Write(out, r.tag_key);
    out.WriteVarint(r.bytes.size());
    out.WriteBytes(r.bytes.data(), r.bytes.size());
  }
  static void Read(DataInput& in, SideOutputRecord<Main>& r) {
    r.main = nullptr;
    uint8_t is_main = in.ReadFixed<uint8_t>();
    if (is_main > 1) throw DeserializationError("bad side output record tag");
    if (is_main) {
      if (!r.owned) r.owned.emplace();
      Serializer<Main>::Read(in, *r.owned);
      r.tag_key.clear();
      return;
    }
    r.owned.reset();
    Serializer<std::string>::Read(in, r.tag_key);
    uint64_t n = in.ReadVarint();
    if (n > in.remaining()) throw DeserializationError("side output record longer than its data");
    r.bytes.resize(n);
    in.ReadBytes(r.bytes.data(), n);
  }
};

namespace internal {

// Where side records go: the operator's output, in SideOutputRecords.
class SideOutputSink {
 public:
  virtual ~SideOutputSink() = default;
  template <class L>
  void EmitSide(const OutputTag<L>& tag, const L& value) {
    SideOutputRecordBytes side{tag.key(), {}};
    DataOutput out(&side.bytes);
    Serializer<L>::Write(out, value);
    EmitSerialized(std::move(side));
  }

 protected:
  struct SideOutputRecordBytes {
    std::string tag_key;
    std::vector<uint8_t> bytes;
  };
  virtual void EmitSerialized(SideOutputRecordBytes side) = 0;
};

// The output an operator with side outputs hands its function: main records (Collect)
// and side records (EmitSide) into SideOutputRecords.
template <class Main>
class SideOutputEmitter final : public Output<Main>, public SideOutputSink {
 public:
  void SetOutput(Output<SideOutputRecord<Main>>* out) { out_ = out; }
  void Collect(const Main& record) override {
    SideOutputRecord<Main> r;
    r.main = &record;
    out_->Collect(r);
  }

 private:
  void EmitSerialized(SideOutputRecordBytes side) override {
    SideOutputRecord<Main> r;
    r.tag_key = std::move(side.tag_key);
    r.bytes = std::move(side.bytes);
    out_->Collect(r);
  }
  Output<SideOutputRecord<Main>>* out_ = nullptr;
};

}  // namespace internal

// What a process function's context offers for side outputs (Flink's Context.output).
class SideOutputContext {
 public:
  // Emits `value` to the side output `tag`, read by GetSideOutput(tag) on the function's
  // result (dropped when nothing reads it, as in Flink). The record keeps the timestamp
  // of the record (or timer) being processed.
  template <class L>
  void Output(const OutputTag<L>& tag, const L& value) const {
    if (!side_outputs_) {
      throw std::logic_error("no side outputs here: ctx.Output(tag, value) works in the process functions of "
                             "connected streams (CoProcessFunction, KeyedCoProcessFunction and the broadcast ones)");
    }
    side_outputs_->EmitSide(tag, value);
  }
  void SetSideOutputs(internal::SideOutputSink* side_outputs) { side_outputs_ = side_outputs; }

 private:
  internal::SideOutputSink* side_outputs_ = nullptr;
};

}  // namespace weir
