#pragma once
// The DataStream API a job is written against (Flink's, in C++):
//
//   void NumberSum(weir::StreamExecutionEnvironment& env, const weir::JobArgs& args) {
//     env.FromSequence(1, 1000)
//         .KeyBy([](int64_t n) { return n % 2; })
//         .Reduce([](int64_t a, int64_t b) { return a + b; })
//         .Print();
//   }
//   WEIR_JOB("NumberSum", NumberSum);
//
// Each call adds a node to the StreamGraph; Name/Uid/SetParallelism apply to the
// node just added. Nothing runs until the runtime executes the graph.

#include <concepts>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "lib/api/graph.h"
#include "lib/api/operators.h"
#include "lib/api/side_outputs.h"
#include "lib/api/windows.h"

namespace weir {

template <class T>
class DataStream;
template <class T, class K, class KeyF>
class KeyedStream;
template <class T, class K, class KeyF, class Assigner>
class WindowedStream;
template <class Out>
class SingleOutputStreamOperator;
// Connected streams (connected_streams.h).
template <class A, class B>
class ConnectedStreams;
template <class A, class B, class K, class KeyFA, class KeyFB>
class KeyedConnectedStreams;
template <class T>
class BroadcastStream;
template <class A, class B>
class BroadcastConnectedStream;
template <class A, class B, class K, class KeyF>
class KeyedBroadcastConnectedStream;
template <class K, class V>
class MapStateDescriptor;

class StreamExecutionEnvironment {
 public:
  explicit StreamExecutionEnvironment(int default_parallelism) {
    graph_.default_parallelism = default_parallelism;
  }
  int GetParallelism() const { return graph_.default_parallelism; }
  void SetParallelism(int p) { graph_.default_parallelism = p; }
  void SetMaxParallelism(int p) { graph_.max_parallelism = p; }
  void SetJobName(std::string name) { graph_.job_name = std::move(name); }
  // Sets a configuration key for this job (as -D would), e.g. checkpoint interval.
  void Configure(const std::string& key, const std::string& value) { graph_.config[key] = value; }

  // Adds a source; S derives from Source<T> and is copied once per subtask.
  template <class T, class S>
  DataStream<T> AddSource(S source, std::string name);

  StreamGraph& graph() { return graph_; }

  // Adds a node and returns its id. For the API's own use.
  int AddNode(StreamNode node) {
    node.id = static_cast<int>(graph_.nodes.size());
    graph_.nodes.push_back(std::move(node));
    return graph_.nodes.back().id;
  }
  StreamNode& node(int id) { return graph_.nodes[id]; }

 private:
  StreamGraph graph_;
};

// Base of DataStream and KeyedStream: the node settings.
template <class Self>
class NodeHandle {
 public:
  NodeHandle(StreamExecutionEnvironment* env, int node) : env_(env), node_(node) {}
  Self& Name(std::string name) {
    env_->node(node_).name = std::move(name);
    return self();
  }
  // The stable id that matches this operator's state in savepoints.
  Self& Uid(std::string uid) {
    env_->node(node_).uid = std::move(uid);
    return self();
  }
  Self& SetParallelism(int p) {
    env_->node(node_).parallelism = p;
    env_->node(node_).parallelism_fixed = true;
    return self();
  }
  Self& SetMaxParallelism(int p) {
    env_->node(node_).max_parallelism = p;
    return self();
  }
  int node_id() const { return node_; }
  StreamExecutionEnvironment* env() const { return env_; }

 protected:
  Self& self() { return static_cast<Self&>(*this); }
  StreamExecutionEnvironment* env_;
  int node_;
};

// The sink end of a stream.
class DataStreamSink : public NodeHandle<DataStreamSink> {
 public:
  using NodeHandle::NodeHandle;
};

template <class T>
class DataStream : public NodeHandle<DataStream<T>> {
 public:
  using NodeHandle<DataStream<T>>::NodeHandle;
  using ValueType = T;

  template <class F, class Out = std::decay_t<std::invoke_result_t<F, const T&>>>
  DataStream<Out> Map(F f) {
    return Then<Out>("Map", ShipStrategy::kForward, nullptr, false, [f] {
      return std::make_unique<internal::MapOperator<T, Out, F>>(f);
    });
  }
  template <class F>
  DataStream<T> Filter(F f) {
    return Then<T>("Filter", ShipStrategy::kForward, nullptr, false, [f] {
      return std::make_unique<internal::FilterOperator<T, F>>(f);
    });
  }
  // f(const T&, Collector<Out>&) emits zero or more records.
  template <class Out, class F>
  DataStream<Out> FlatMap(F f) {
    return Then<Out>("Flat Map", ShipStrategy::kForward, nullptr, false, [f] {
      return std::make_unique<internal::FlatMapOperator<T, Out, F>>(f);
    });
  }
  // Partitions by key: records with the same key go to the same subtask, in order.
  template <class KeyF, class K = std::decay_t<std::invoke_result_t<KeyF, const T&>>>
  KeyedStream<T, K, KeyF> KeyBy(KeyF key_fn) {
    return KeyedStream<T, K, KeyF>(this->env_, this->node_, key_fn);
  }
  // Takes each record's timestamp and makes watermarks (event_time.h): what event-time
  // windows and timers downstream go by.
  DataStream<T> AssignTimestampsAndWatermarks(WatermarkStrategy<T> strategy) {
    auto out = Then<T>("Timestamps/Watermarks", ShipStrategy::kForward, nullptr, false, [strategy] {
      return std::make_unique<internal::TimestampsAndWatermarksOperator<T>>(strategy);
    });
    this->env_->node(out.node_id()).timestamped = true;
    return out;
  }
  // Round-robin redistribution to the next operator's subtasks.
  DataStream<T> Rebalance() { return Exchange(ShipStrategy::kRebalance, "Rebalance"); }
  // Every record to every subtask of the next operator.
  DataStream<T> Broadcast() { return Exchange(ShipStrategy::kBroadcast, "Broadcast"); }
  // The broadcast state pattern: this stream, broadcast, holding the broadcast states
  // the descriptors name; connect another stream to it (connected_streams.h).
  template <class K, class V, class... More>
  BroadcastStream<T> Broadcast(const MapStateDescriptor<K, V>& descriptor, const More&... more);
  // Two streams into one two-input operator (connected_streams.h).
  template <class B>
  ConnectedStreams<T, B> Connect(const DataStream<B>& other);
  template <class B>
  BroadcastConnectedStream<T, B> Connect(const BroadcastStream<B>& broadcast);

  // S derives from Sink<T>; copied once per subtask.
  template <class S>
  DataStreamSink AddSink(S sink, std::string name = "Sink") {
    StreamNode n;
    n.name = std::move(name);
    n.is_sink = true;
    n.in_type = TypeInfoOf<T>();
    n.inputs.push_back({this->node_, ShipStrategy::kForward, nullptr});
    n.factory = [sink] { return std::make_unique<internal::SinkOperator<T, S>>(sink); };
    return DataStreamSink(this->env_, this->env_->AddNode(std::move(n)));
  }
  // Prints each record on stdout (PrintSink.h).
  DataStreamSink Print();

  // For the API's own use: appends a node fed by this stream.
  template <class Out, class Factory>
  DataStream<Out> Then(std::string name, ShipStrategy strategy, std::shared_ptr<const void> selector,
                       bool keyed, Factory factory) {
    StreamNode n;
    n.name = std::move(name);
    n.is_keyed = keyed;
    n.timestamped = this->env_->node(this->node_).timestamped;
    n.in_type = TypeInfoOf<T>();
    n.out_type = TypeInfoOf<Out>();
    n.inputs.push_back({this->node_, strategy, std::move(selector)});
    n.factory = std::move(factory);
    return DataStream<Out>(this->env_, this->env_->AddNode(std::move(n)));
  }

 private:
  DataStream<T> Exchange(ShipStrategy strategy, const char* name) {
    // An identity node after a redistributing edge.
    auto id = [](const T& r) -> const T& { return r; };
    return Then<T>(name, strategy, nullptr, false, [id] {
      return std::make_unique<internal::MapOperator<T, T, decltype(id)>>(id);
    });
  }
};

template <class T, class K, class KeyF>
class KeyedStream {
 public:
  KeyedStream(StreamExecutionEnvironment* env, int node, KeyF key_fn)
      : env_(env), node_(node), key_fn_(std::move(key_fn)) {}

  // Fn derives from KeyedProcessFunction<K, T, Out>; copied once per subtask.
  template <class Fn, class Out = typename Fn::OutputType>
  DataStream<Out> Process(Fn fn) {
    static_assert(std::is_same_v<typename Fn::Key, K>, "the function's key type must match KeyBy's");
    static_assert(std::is_same_v<typename Fn::InputType, T>, "the function's input type must match the stream's");
    auto key_fn = key_fn_;
    return Upstream().template Then<Out>("KeyedProcess", ShipStrategy::kHash, Selector(), true, [key_fn, fn] {
      return std::make_unique<internal::KeyedProcessOperator<K, T, Out, KeyF, Fn>>(key_fn, fn);
    });
  }
  // Two keyed streams with keys of the same type into one keyed two-input operator,
  // and a keyed stream with a broadcast stream (connected_streams.h).
  template <class B, class KeyFB>
  KeyedConnectedStreams<T, B, K, KeyF, KeyFB> Connect(const KeyedStream<B, K, KeyFB>& other);
  template <class B>
  KeyedBroadcastConnectedStream<T, B, K, KeyF> Connect(const BroadcastStream<B>& broadcast);
  int node_id() const { return node_; }
  StreamExecutionEnvironment* env() const { return env_; }
  const KeyF& key_fn() const { return key_fn_; }

  // Rolling reduce: emits f(previous, record) for every record of a key. f may also be
  // f(T& accumulator, const T& record) -> void, folding the record in place (no copy of
  // the accumulator per record).
  template <class F>
  DataStream<T> Reduce(F f) {
    auto key_fn = key_fn_;
    return Upstream().template Then<T>("Keyed Reduce", ShipStrategy::kHash, Selector(), true, [key_fn, f] {
      return std::make_unique<internal::ReduceOperator<K, T, KeyF, F>>(key_fn, f);
    });
  }
  // Windows of this keyed stream: Window(TumblingEventTimeWindows::Of(1000)).Reduce(f).
  template <class Assigner>
  WindowedStream<T, K, KeyF, Assigner> Window(Assigner assigner) {
    return WindowedStream<T, K, KeyF, Assigner>(env_, node_, key_fn_, std::move(assigner));
  }
  // Rolling sum of arithmetic records, or of `.second` of pair records (which keep the
  // `.first` of their key's first record, as Flink's sum(1) keeps the other fields).
  DataStream<T> Sum() {
    if constexpr (std::is_arithmetic_v<T>) {
      return Reduce([](T& sum, const T& v) { sum += v; });
    } else {
      return Reduce([](T& sum, const T& v) { sum.second += v.second; });
    }
  }

 private:
  DataStream<T> Upstream() { return DataStream<T>(env_, node_); }
  std::shared_ptr<const void> Selector() const {
    return std::make_shared<const KeySelector<T, K, KeyF>>(key_fn_);
  }
  StreamExecutionEnvironment* env_;
  int node_;
  KeyF key_fn_;
};

namespace internal {
// The node after an operator with side outputs that keeps its main records (kMain,
// Selected = Main) or the records of the side output `tag_key` (of type Selected).
template <class Main, class Selected, bool kMain>
class SideOutputSelector final : public WithOutput<Selected>, public Output<SideOutputRecord<Main>> {
 public:
  explicit SideOutputSelector(std::string tag_key = "") : tag_key_(std::move(tag_key)) {}
  OutputBase* Input() override { return static_cast<Output<SideOutputRecord<Main>>*>(this); }
  void Collect(const SideOutputRecord<Main>& r) override {
    const Main* main = r.MainRecord();
    if constexpr (kMain) {
      if (main) this->out_->Collect(*main);
    } else {
      if (main || r.tag_key != tag_key_) return;
      DataInput in(r.bytes);
      Serializer<Selected>::Read(in, value_);
      this->out_->Collect(value_);
    }
  }

 private:
  std::string tag_key_;
  Selected value_{};
};

}  // namespace internal

// Which side outputs GetSideOutput may read on a SingleOutputStreamOperator.
struct SideOutputs {
  enum class Kind { kNone, kLateData, kAny };
  Kind kind = Kind::kNone;
  std::string late_tag;                         // kLateData: the tag given to SideOutputLateData...
  const std::type_info* late_type = nullptr;    // ...and the windowed stream's record type
};

// The result of a window or process function (Flink's SingleOutputStreamOperator): a
// DataStream whose Name, Uid and parallelism are the operator's, and whose side outputs
// GetSideOutput(tag) reads: the windows' late data when they were given
// SideOutputLateData(tag), what a two-input process function emits with ctx.Output(tag,
// value). An operator with side outputs is followed by a node that keeps its main
// records and one per side output read (side_outputs.h).
template <class Out>
class SingleOutputStreamOperator : public DataStream<Out> {
 public:
  // `node` is where the main records come from; `operator_node` the operator (another
  // node when it has side outputs).
  SingleOutputStreamOperator(StreamExecutionEnvironment* env, int node, int operator_node,
                             SideOutputs side_outputs = {})
      : DataStream<Out>(env, node), operator_node_(operator_node), side_outputs_(std::move(side_outputs)) {}

  SingleOutputStreamOperator& Name(const std::string& name) {
    ForEachNode([&](StreamNode& n, const std::string& suffix) { n.name = name + suffix; });
    return *this;
  }
  SingleOutputStreamOperator& Uid(const std::string& uid) {
    ForEachNode([&](StreamNode& n, const std::string& suffix) { n.uid = uid + suffix; });
    return *this;
  }
  SingleOutputStreamOperator& SetParallelism(int p) {
    ForEachNode([&](StreamNode& n, const std::string&) {
      n.parallelism = p;
      n.parallelism_fixed = true;
    });
    return *this;
  }
  SingleOutputStreamOperator& SetMaxParallelism(int p) {
    ForEachNode([&](StreamNode& n, const std::string&) { n.max_parallelism = p; });
    return *this;
  }

  // The records of the side output `tag` (Flink's getSideOutput): for windows, `tag` must
  // be the one given to SideOutputLateData; for process functions any tag the function
  // emits to (ctx.Output), of the same id and record type.
  template <class L>
  DataStream<L> GetSideOutput(const OutputTag<L>& tag) {
    using Kind = SideOutputs::Kind;
    if (side_outputs_.kind == Kind::kNone ||
        (side_outputs_.kind == Kind::kLateData && tag.id() != side_outputs_.late_tag)) {
      throw std::invalid_argument("no side output named '" + tag.id() + "' on '" +
                                  this->env_->node(operator_node_).name +
                                  "': give the windowed stream SideOutputLateData(tag) with that tag");
    }
    if (side_outputs_.kind == Kind::kLateData && *side_outputs_.late_type != typeid(L)) {
      throw std::invalid_argument("the side output '" + tag.id() + "' holds the windowed stream's record type");
    }
    for (StreamNode& n : this->env_->graph().nodes) {
      if (IsSideNode(n) && n.side_output == tag.key()) return DataStream<L>(this->env_, n.id);
    }
    const StreamNode op = this->env_->node(operator_node_);  // a copy: adding a node moves the nodes
    const std::string suffix = SideSuffix(tag.key());
    auto side = DataStream<SideOutputRecord<Out>>(this->env_, operator_node_)
                    .template Then<L>(op.name + suffix, ShipStrategy::kForward, nullptr, false, [key = tag.key()] {
                      return std::make_unique<internal::SideOutputSelector<Out, L, false>>(key);
                    });
    StreamNode& n = this->env_->node(side.node_id());
    n.side_output = tag.key();
    if (!op.uid.empty()) n.uid = op.uid + suffix;
    n.parallelism = op.parallelism;
    n.parallelism_fixed = op.parallelism_fixed;
    n.max_parallelism = op.max_parallelism;
    return side;
  }

  // For the API's own use: `producer` (an operator emitting SideOutputRecord<Out>s)
  // followed by the node that keeps its main records.
  static SingleOutputStreamOperator WithSideOutputs(DataStream<SideOutputRecord<Out>> producer,
                                                    const std::string& name, SideOutputs side_outputs) {
    DataStream<Out> main = producer.template Then<Out>(name + kMainSuffix, ShipStrategy::kForward, nullptr, false,
                                                       [] {
      return std::make_unique<internal::SideOutputSelector<Out, Out, true>>();
    });
    return SingleOutputStreamOperator(producer.env(), main.node_id(), producer.node_id(), std::move(side_outputs));
  }

 private:
  static constexpr const char* kMainSuffix = " (results)";
  // The suffix of a side output's node name and uid after the operator's.
  std::string SideSuffix(const std::string& tag_key) const {
    if (side_outputs_.kind == SideOutputs::Kind::kLateData) return " (late data)";
    return " (side output " + tag_key.substr(0, tag_key.find('\0')) + ")";
  }
  bool IsSideNode(const StreamNode& n) const {
    return operator_node_ != this->node_ && n.id != this->node_ && n.inputs.size() == 1 &&
           n.inputs[0].source_node == operator_node_ && !n.side_output.empty();
  }
  // f(node, suffix of its name and uid) for the operator and the nodes that split its
  // output.
  template <class F>
  void ForEachNode(F f) {
    f(this->env_->node(operator_node_), "");
    if (operator_node_ == this->node_) return;
    f(this->env_->node(this->node_), kMainSuffix);
    for (StreamNode& n : this->env_->graph().nodes) {
      if (IsSideNode(n)) f(n, SideSuffix(n.side_output));
    }
  }

  int operator_node_;
  SideOutputs side_outputs_;
};

namespace internal {
template <class Fn, class K, class In>
concept ProcessWindowFunctionOf =
    std::derived_from<Fn, ProcessWindowFunction<typename Fn::Key, typename Fn::InputType, typename Fn::OutputType>> &&
    std::same_as<typename Fn::Key, K> && std::same_as<typename Fn::InputType, In>;
}  // namespace internal

// A keyed stream cut into windows; a window function ends it.
template <class T, class K, class KeyF, class Assigner>
class WindowedStream {
 public:
  WindowedStream(StreamExecutionEnvironment* env, int node, KeyF key_fn, Assigner assigner)
      : env_(env), node_(node), key_fn_(std::move(key_fn)), assigner_(std::move(assigner)) {}

  // Keeps each window's contents until the watermark passes its end + `lateness_ms`.
  WindowedStream& AllowedLateness(int64_t lateness_ms) {
    if (lateness_ms < 0) throw std::invalid_argument("the allowed lateness must be 0 or more milliseconds");
    lateness_ = lateness_ms;
    return *this;
  }
  // Records later than the allowed lateness go to the side output `tag` (read it with
  // GetSideOutput(tag) on the window function's result) instead of being dropped.
  WindowedStream& SideOutputLateData(const OutputTag<T>& tag) {
    if (!Assigner::kEventTime) {
      throw std::invalid_argument("late data exists in event time only: processing-time windows have no side output for it");
    }
    late_tag_ = tag.id();
    return *this;
  }

  // f(const T&, const T&) -> T: the window's records reduced; emits the result.
  template <class F>
  SingleOutputStreamOperator<T> Reduce(F f) {
    return Reduce<T>(f, [](const K&, const TimeWindow&, const T& v, Collector<T>& out) { out.Collect(v); });
  }
  // The same, the result handed to wf(const K&, const TimeWindow&, const T&, Collector<Out>&).
  template <class Out, class F, class WF>
  SingleOutputStreamOperator<Out> Reduce(F f, WF wf) {
    return ReduceThen<Out>(f, [wf](const K& key, const WindowContext& ctx, const T& v, Collector<Out>& out) {
      wf(key, ctx.window(), v, out);
    });
  }
  // The same, the result handed to a ProcessWindowFunction<K, T, Out> as the window's one
  // element (Flink's reduce(f, processWindowFunction)).
  template <class F, internal::ProcessWindowFunctionOf<K, T> Fn>
  SingleOutputStreamOperator<typename Fn::OutputType> Reduce(F f, Fn fn) {
    using Out = typename Fn::OutputType;
    return ReduceThen<Out>(f, [fn](const K& key, const WindowContext& ctx, const T& v, Collector<Out>& out) mutable {
      fn.Process(key, ctx, std::vector<T>{v}, out);
    });
  }
  // Flink's aggregate: an accumulator per window; emits get_result(accumulator).
  template <class Acc, class R>
  SingleOutputStreamOperator<R> Aggregate(AggregateFunction<T, Acc, R> agg) {
    return Aggregate<R>(std::move(agg), [](const K&, const TimeWindow&, const R& r, Collector<R>& out) {
      out.Collect(r);
    });
  }
  // The same, the result handed to wf(const K&, const TimeWindow&, const R&, Collector<Out>&).
  template <class Out, class Acc, class R, class WF>
  SingleOutputStreamOperator<Out> Aggregate(AggregateFunction<T, Acc, R> agg, WF wf) {
    return AggregateThen<Out>(std::move(agg), [wf](const K& key, const WindowContext& ctx, const R& r,
                                                   Collector<Out>& out) { wf(key, ctx.window(), r, out); });
  }
  // The same, the result handed to a ProcessWindowFunction<K, R, Out> as the window's one
  // element (Flink's aggregate(agg, processWindowFunction)).
  template <class Acc, class R, internal::ProcessWindowFunctionOf<K, R> Fn>
  SingleOutputStreamOperator<typename Fn::OutputType> Aggregate(AggregateFunction<T, Acc, R> agg, Fn fn) {
    using Out = typename Fn::OutputType;
    return AggregateThen<Out>(std::move(agg), [fn](const K& key, const WindowContext& ctx, const R& r,
                                                   Collector<Out>& out) mutable {
      fn.Process(key, ctx, std::vector<R>{r}, out);
    });
  }
  // Flink's process: the window keeps all its records and hands them to `fn`, a
  // ProcessWindowFunction<K, T, Out>, when it fires.
  template <internal::ProcessWindowFunctionOf<K, T> Fn>
  SingleOutputStreamOperator<typename Fn::OutputType> Process(Fn fn) {
    using Out = typename Fn::OutputType;
    internal::ElementContents<K, T, Out> contents(
        [fn](const K& key, const WindowContext& ctx, const std::vector<T>& elements, Collector<Out>& out) mutable {
          fn.Process(key, ctx, elements, out);
        });
    return Build<Out>("Window Process", std::move(contents));
  }

 private:
  template <class Out, class F, class Emit>
  SingleOutputStreamOperator<Out> ReduceThen(F f, Emit emit) {
    internal::WindowFunctions<K, T, T, Out> fns;
    fns.init = [](const T& v) { return v; };
    fns.add = [f](T acc, const T& v) { return f(acc, v); };
    fns.merge = [f](T a, const T& b) { return f(a, b); };
    fns.emit = std::move(emit);
    return Build<Out>("Window Reduce", internal::AccumulatorContents<K, T, T, Out>(std::move(fns)));
  }
  template <class Out, class Acc, class R, class Emit>
  SingleOutputStreamOperator<Out> AggregateThen(AggregateFunction<T, Acc, R> agg, Emit emit) {
    if (Assigner::kMerging && !agg.merge) {
      throw std::invalid_argument("session windows merge accumulators: give the AggregateFunction a merge function");
    }
    internal::WindowFunctions<K, T, Acc, Out> fns;
    fns.init = [agg](const T& v) { return agg.add(v, agg.create_accumulator()); };
    fns.add = [agg](Acc acc, const T& v) { return agg.add(v, std::move(acc)); };
    fns.merge = agg.merge;
    fns.panes_merge = static_cast<bool>(agg.merge);
    fns.emit = [agg, emit](const K& key, const WindowContext& ctx, const Acc& acc, Collector<Out>& out) mutable {
      emit(key, ctx, agg.get_result(acc), out);
    };
    return Build<Out>("Window Aggregate", internal::AccumulatorContents<K, T, Acc, Out>(std::move(fns)));
  }
  template <class Out, class Contents>
  SingleOutputStreamOperator<Out> Build(const char* name, Contents contents) {
    auto key_fn = key_fn_;
    auto assigner = assigner_;
    int64_t lateness = lateness_;
    auto selector = std::make_shared<const KeySelector<T, K, KeyF>>(key_fn_);
    if (late_tag_.empty()) {
      DataStream<Out> out = DataStream<T>(env_, node_).template Then<Out>(
          name, ShipStrategy::kHash, selector, true, [key_fn, assigner, lateness, contents] {
            return std::make_unique<internal::WindowOperator<K, T, Out, KeyF, Assigner, Contents>>(
                key_fn, assigner, lateness, contents);
          });
      env_->node(out.node_id()).timestamped = true;  // results carry the window's max timestamp
      return SingleOutputStreamOperator<Out>(env_, out.node_id(), out.node_id());
    }
    OutputTag<T> late_tag(late_tag_);
    DataStream<SideOutputRecord<Out>> window = DataStream<T>(env_, node_).template Then<SideOutputRecord<Out>>(
        name, ShipStrategy::kHash, selector, true, [key_fn, assigner, lateness, contents, late_tag] {
          return std::make_unique<internal::WindowOperator<K, T, Out, KeyF, Assigner, Contents, true>>(
              key_fn, assigner, lateness, contents, late_tag);
        });
    env_->node(window.node_id()).timestamped = true;
    return SingleOutputStreamOperator<Out>::WithSideOutputs(
        window, name, {SideOutputs::Kind::kLateData, late_tag_, &typeid(T)});
  }
  StreamExecutionEnvironment* env_;
  int node_;
  KeyF key_fn_;
  Assigner assigner_;
  int64_t lateness_ = 0;
  std::string late_tag_;
};

template <class T, class S>
DataStream<T> StreamExecutionEnvironment::AddSource(S source, std::string name) {
  StreamNode n;
  n.name = std::move(name);
  n.is_source = true;
  n.out_type = TypeInfoOf<T>();
  n.factory = [source] { return std::make_unique<internal::SourceOperator<T, S>>(source); };
  return DataStream<T>(this, AddNode(std::move(n)));
}

}  // namespace weir
