#pragma once
// The stream graph: what a job's entry point builds and the runtime executes.
// Nodes are type-erased; the typed parts (operator factories, record writers and
// readers) are created by TypeInfo objects instantiated in the job's code.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lib/api/channel_io.h"
#include "lib/api/operator.h"

namespace weir {

// Type-erased operations on a record type T.
class TypeInfoBase {
 public:
  virtual ~TypeInfoBase() = default;
  // An output that writes into `writer` with `strategy`; `key_selector` is a
  // std::shared_ptr<const KeySelectorBase<T>> for hash edges (else null).
  virtual std::unique_ptr<OutputBase> CreateWriterOutput(
      ChannelWriter* writer, ShipStrategy strategy, const std::shared_ptr<const void>& key_selector,
      int max_parallelism, int subtask_index, bool with_timestamps = false) const = 0;
  // A reader that pushes records into `input` (an Output<T>*). `with_timestamps`: the
  // edge carries each record's timestamp (see event_time.h), on both ends;
  // `key_selector`: a hash edge's (a KeySelectorBase<T>), whose records carry their
  // KeyHash (see RecordWriterOutput), else null.
  virtual std::unique_ptr<RecordReaderBase> CreateReader(OutputBase* input, bool with_timestamps = false,
                                                         const std::shared_ptr<const void>& key_selector = nullptr) const = 0;
  // An output that copies each record to each of `outputs` (Output<T>*s).
  virtual std::unique_ptr<OutputBase> CreateFanOut(const std::vector<OutputBase*>& outputs) const = 0;
  // The records of a data buffer of the hash edge of `key_selector` (a KeySelectorBase<T>)
  // whose key group (the one each carries) is in `range`: in-flight data of an unaligned
  // checkpoint restored at another parallelism. Throws DeserializationError.
  virtual std::vector<uint8_t> FilterByKeyGroups(const std::vector<uint8_t>& buffer, bool with_timestamps,
                                                 const std::shared_ptr<const void>& key_selector,
                                                 KeyGroupRange range) const = 0;
  // The records of a data buffer of a hash edge written before records carried their
  // KeyHash, each given the one `key_selector` (a KeySelectorBase<T>) computes. Throws
  // DeserializationError.
  virtual std::vector<uint8_t> AddKeyHashes(const std::vector<uint8_t>& buffer, bool with_timestamps,
                                            const std::shared_ptr<const void>& key_selector,
                                            int max_parallelism) const = 0;
};

template <class T>
class TypeInfo final : public TypeInfoBase {
 public:
  std::unique_ptr<OutputBase> CreateWriterOutput(ChannelWriter* writer, ShipStrategy strategy,
                                                 const std::shared_ptr<const void>& key_selector,
                                                 int max_parallelism, int subtask_index,
                                                 bool with_timestamps = false) const override {
    return std::make_unique<RecordWriterOutput<T>>(
        writer, strategy, std::static_pointer_cast<const KeySelectorBase<T>>(key_selector),
        max_parallelism, subtask_index, with_timestamps);
  }
  std::unique_ptr<RecordReaderBase> CreateReader(OutputBase* input, bool with_timestamps = false,
                                                 const std::shared_ptr<const void>& key_selector = nullptr) const override {
    return std::make_unique<RecordReader<T>>(static_cast<Output<T>*>(input), with_timestamps,
                                             KeyHashBytesOf<T>(key_selector));
  }
  std::unique_ptr<OutputBase> CreateFanOut(const std::vector<OutputBase*>& outputs) const override {
    auto fan = std::make_unique<FanOutOutput<T>>();
    for (auto* o : outputs) fan->Add(static_cast<Output<T>*>(o));
    return fan;
  }
  std::vector<uint8_t> FilterByKeyGroups(const std::vector<uint8_t>& buffer, bool with_timestamps,
                                         const std::shared_ptr<const void>& key_selector,
                                         KeyGroupRange range) const override {
    const size_t key_hash_bytes = KeyHashBytesOf<T>(key_selector);
    std::vector<uint8_t> kept;
    DataInput in(buffer);
    T record{};
    while (!in.AtEnd()) {
      const uint8_t* begin = in.position();
      if (with_timestamps) in.ReadFixed<int64_t>();
      const int key_group = ReadKeyHash(in, key_hash_bytes).key_group;
      Serializer<T>::Read(in, record);
      if (range.Contains(key_group)) kept.insert(kept.end(), begin, in.position());
    }
    return kept;
  }
  std::vector<uint8_t> AddKeyHashes(const std::vector<uint8_t>& buffer, bool with_timestamps,
                                    const std::shared_ptr<const void>& key_selector,
                                    int max_parallelism) const override {
    const auto& selector = *std::static_pointer_cast<const KeySelectorBase<T>>(key_selector);
    std::vector<uint8_t> hashed;
    hashed.reserve(buffer.size() + buffer.size() / 2);
    DataOutput out(&hashed);
    DataInput in(buffer);
    T record{};
    while (!in.AtEnd()) {
      if (with_timestamps) out.WriteFixed<int64_t>(in.ReadFixed<int64_t>());
      const uint8_t* begin = in.position();
      Serializer<T>::Read(in, record);
      WriteKeyHash(out, selector.Hash(record, max_parallelism), selector.key_hash_bytes());
      out.WriteBytes(begin, static_cast<size_t>(in.position() - begin));
    }
    return hashed;
  }
};

template <class T>
std::shared_ptr<const TypeInfoBase> TypeInfoOf() {
  static const auto info = std::make_shared<const TypeInfo<T>>();
  return info;
}

struct StreamEdge {
  int source_node = -1;
  ShipStrategy strategy = ShipStrategy::kForward;
  std::shared_ptr<const void> key_selector;  // KeySelectorBase<T> for kHash
};

struct StreamNode {
  int id = -1;
  std::string name;
  std::string uid;                 // empty: derived from the graph at submission
  int parallelism = 0;             // 0: the job's default parallelism
  bool parallelism_fixed = false;  // set explicitly (e.g. a non-parallel source)
  int max_parallelism = 0;         // 0: the job's
  bool is_source = false;
  bool is_sink = false;
  bool is_keyed = false;           // consumes a keyed stream (its input is a hash edge)
  bool timestamped = false;        // its records carry timestamps (event_time.h)
  std::vector<StreamEdge> inputs;
  std::function<std::unique_ptr<StreamOperatorBase>()> factory;
  std::shared_ptr<const TypeInfoBase> in_type;   // null for sources
  // Two-input operators (connected streams): the record type of inputs[1].
  std::shared_ptr<const TypeInfoBase> in_type2;
  std::shared_ptr<const TypeInfoBase> out_type;  // null for sinks
  // The node after an operator with side outputs that keeps one of them: its tag's key
  // (side_outputs.h); empty for every other node.
  std::string side_output;
};

// The record type of input `index` (0 or 1) of `node`.
inline const TypeInfoBase& InputType(const StreamNode& node, int index) {
  return index == 0 ? *node.in_type : *node.in_type2;
}

struct StreamGraph {
  std::string job_name;
  int default_parallelism = 1;
  int max_parallelism = 0;  // 0: Flink's default for the parallelism (128 for p <= 85)
  std::vector<StreamNode> nodes;
  // Configuration the job set for itself (env.Configure("key", "value")).
  std::map<std::string, std::string> config;
};

}  // namespace weir
