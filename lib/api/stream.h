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

#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include "lib/api/graph.h"
#include "lib/api/operators.h"
#include "lib/api/windows.h"

namespace weir {

template <class T>
class DataStream;
template <class T, class K, class KeyF>
class KeyedStream;
template <class T, class K, class KeyF, class Assigner>
class WindowedStream;

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

  // f(const T&, const T&) -> T: the window's records reduced; emits the result.
  template <class F>
  DataStream<T> Reduce(F f) {
    return Reduce<T>(f, [](const K&, const TimeWindow&, const T& v, Collector<T>& out) { out.Collect(v); });
  }
  // The same, the result handed to wf(const K&, const TimeWindow&, const T&, Collector<Out>&).
  template <class Out, class F, class WF>
  DataStream<Out> Reduce(F f, WF wf) {
    internal::WindowFunctions<K, T, T, Out> fns;
    fns.init = [](const T& v) { return v; };
    fns.add = [f](T acc, const T& v) { return f(acc, v); };
    fns.emit = wf;
    return Build<T, Out>("Window Reduce", std::move(fns));
  }
  // Flink's aggregate: an accumulator per window; emits get_result(accumulator).
  template <class Acc, class R>
  DataStream<R> Aggregate(AggregateFunction<T, Acc, R> agg) {
    return Aggregate<R>(std::move(agg), [](const K&, const TimeWindow&, const R& r, Collector<R>& out) {
      out.Collect(r);
    });
  }
  // The same, the result handed to wf(const K&, const TimeWindow&, const R&, Collector<Out>&).
  template <class Out, class Acc, class R, class WF>
  DataStream<Out> Aggregate(AggregateFunction<T, Acc, R> agg, WF wf) {
    internal::WindowFunctions<K, T, Acc, Out> fns;
    fns.init = [agg](const T& v) { return agg.add(v, agg.create_accumulator()); };
    fns.add = [agg](Acc acc, const T& v) { return agg.add(v, std::move(acc)); };
    fns.emit = [agg, wf](const K& key, const TimeWindow& w, const Acc& acc, Collector<Out>& out) {
      wf(key, w, agg.get_result(acc), out);
    };
    return Build<Acc, Out>("Window Aggregate", std::move(fns));
  }

 private:
  template <class Acc, class Out>
  DataStream<Out> Build(const char* name, internal::WindowFunctions<K, T, Acc, Out> fns) {
    auto key_fn = key_fn_;
    auto assigner = assigner_;
    int64_t lateness = lateness_;
    auto selector = std::make_shared<const KeySelector<T, K, KeyF>>(key_fn_);
    DataStream<Out> out = DataStream<T>(env_, node_).template Then<Out>(
        name, ShipStrategy::kHash, selector, true, [key_fn, assigner, lateness, fns] {
          return std::make_unique<internal::WindowOperator<K, T, Acc, Out, KeyF, Assigner>>(key_fn, assigner,
                                                                                            lateness, fns);
        });
    env_->node(out.node_id()).timestamped = true;  // results carry the window's max timestamp
    return out;
  }
  StreamExecutionEnvironment* env_;
  int node_;
  KeyF key_fn_;
  Assigner assigner_;
  int64_t lateness_ = 0;
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
