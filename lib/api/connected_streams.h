#pragma once
// Connected streams (Flink's ConnectedStreams, BroadcastStream and their keyed forms):
// two streams into one two-input operator. The functions are in two_input.h.
//
//   numbers.Connect(words).Map(MyCoMap{})                          CoMapFunction
//   numbers.Connect(words).Process(MyCoProcess{})                  CoProcessFunction
//   numbers.KeyBy(k1).Connect(events.KeyBy(k2)).Process(MyCoProcess{})
//   weir::MapStateDescriptor<int64_t, Rule> rules_state("rules");
//   numbers.KeyBy(k).Connect(rules.Broadcast(rules_state)).Process(MyBroadcastFn{})
//
// The operator's input 0 is the first stream, input 1 the second; each keeps its own
// edge (forward or rebalance, hash for keyed streams, broadcast for a broadcast
// stream), barriers align over both, and its watermark is the minimum of both.

#include <memory>
#include <set>
#include <string>
#include <type_traits>

#include "lib/api/stream.h"
#include "lib/api/two_input_operators.h"

namespace weir {

namespace internal {
// Adds a two-input node fed by `a` (input 0) and `b` (input 1).
template <class A, class B, class Out, class Factory>
DataStream<Out> AddTwoInputNode(StreamExecutionEnvironment* env, std::string name, bool keyed, StreamEdge a,
                                StreamEdge b, Factory factory) {
  StreamNode n;
  n.name = std::move(name);
  n.is_keyed = keyed;
  // Records of a timestamped input keep their timestamps; the others have none.
  n.timestamped = env->node(a.source_node).timestamped || env->node(b.source_node).timestamped;
  n.in_type = TypeInfoOf<A>();
  n.in_type2 = TypeInfoOf<B>();
  n.out_type = TypeInfoOf<Out>();
  n.inputs.push_back(std::move(a));
  n.inputs.push_back(std::move(b));
  n.factory = std::move(factory);
  return DataStream<Out>(env, env->AddNode(std::move(n)));
}
template <class T, class K, class KeyF>
std::shared_ptr<const void> SelectorOf(const KeyF& key_fn) {
  return std::make_shared<const KeySelector<T, K, KeyF>>(key_fn);
}
// A two-input process node (emitting SideOutputRecord<Out>s) and the node that keeps its
// main records: the result GetSideOutput(tag) reads the function's side outputs on.
template <class A, class B, class Out, class Factory>
SingleOutputStreamOperator<Out> AddTwoInputProcessNode(StreamExecutionEnvironment* env, const std::string& name,
                                                       bool keyed, StreamEdge a, StreamEdge b, Factory factory) {
  auto op = AddTwoInputNode<A, B, SideOutputRecord<Out>>(env, name, keyed, std::move(a), std::move(b),
                                                         std::move(factory));
  return SingleOutputStreamOperator<Out>::WithSideOutputs(op, name, {SideOutputs::Kind::kAny, "", nullptr});
}
template <class Fn, class A, class B>
constexpr void CheckInputTypes() {
  static_assert(std::is_same_v<typename Fn::FirstInputType, A>, "the function's first input type must match the first stream's");
  static_assert(std::is_same_v<typename Fn::SecondInputType, B>, "the function's second input type must match the second stream's");
}
}  // namespace internal

template <class A, class B>
class ConnectedStreams {
 public:
  ConnectedStreams(StreamExecutionEnvironment* env, int first, int second) : env_(env), first_(first), second_(second) {}

  // Fn derives from CoMapFunction<A, B, Out>; copied once per subtask.
  template <class Fn, class Out = typename Fn::OutputType>
  DataStream<Out> Map(Fn fn) {
    internal::CheckInputTypes<Fn, A, B>();
    return internal::AddTwoInputNode<A, B, Out>(env_, "Co-Map", false, Edge(first_), Edge(second_), [fn] {
      return std::make_unique<internal::CoFunctionOperator<A, B, Out, Fn, false>>(fn);
    });
  }
  // Fn derives from CoFlatMapFunction<A, B, Out>.
  template <class Fn, class Out = typename Fn::OutputType>
  DataStream<Out> FlatMap(Fn fn) {
    internal::CheckInputTypes<Fn, A, B>();
    return internal::AddTwoInputNode<A, B, Out>(env_, "Co-Flat Map", false, Edge(first_), Edge(second_), [fn] {
      return std::make_unique<internal::CoFunctionOperator<A, B, Out, Fn, true>>(fn);
    });
  }
  // Fn derives from CoProcessFunction<A, B, Out>.
  template <class Fn, class Out = typename Fn::OutputType>
  SingleOutputStreamOperator<Out> Process(Fn fn) {
    internal::CheckInputTypes<Fn, A, B>();
    return internal::AddTwoInputProcessNode<A, B, Out>(env_, "Co-Process", false, Edge(first_), Edge(second_), [fn] {
      return std::make_unique<internal::CoProcessOperator<A, B, Out, Fn>>(fn);
    });
  }
  // Both streams keyed, by keys of the same type.
  template <class KeyFA, class KeyFB, class K = std::decay_t<std::invoke_result_t<KeyFA, const A&>>>
  KeyedConnectedStreams<A, B, K, KeyFA, KeyFB> KeyBy(KeyFA key_a, KeyFB key_b) {
    static_assert(std::is_same_v<K, std::decay_t<std::invoke_result_t<KeyFB, const B&>>>,
                  "both key selectors must return the same key type");
    return KeyedConnectedStreams<A, B, K, KeyFA, KeyFB>(KeyedStream<A, K, KeyFA>(env_, first_, key_a),
                                                        KeyedStream<B, K, KeyFB>(env_, second_, key_b));
  }

 private:
  static StreamEdge Edge(int node) { return {node, ShipStrategy::kForward, nullptr}; }
  StreamExecutionEnvironment* env_;
  int first_, second_;
};

template <class A, class B, class K, class KeyFA, class KeyFB>
class KeyedConnectedStreams {
 public:
  KeyedConnectedStreams(KeyedStream<A, K, KeyFA> first, KeyedStream<B, K, KeyFB> second)
      : first_(std::move(first)), second_(std::move(second)) {}

  // Fn derives from KeyedCoProcessFunction<K, A, B, Out>.
  template <class Fn, class Out = typename Fn::OutputType>
  SingleOutputStreamOperator<Out> Process(Fn fn) {
    internal::CheckInputTypes<Fn, A, B>();
    static_assert(std::is_same_v<typename Fn::Key, K>, "the function's key type must match KeyBy's");
    KeyFA ka = first_.key_fn();
    KeyFB kb = second_.key_fn();
    return internal::AddTwoInputProcessNode<A, B, Out>(
        first_.env(), "KeyedCoProcess", true,
        {first_.node_id(), ShipStrategy::kHash, internal::SelectorOf<A, K>(ka)},
        {second_.node_id(), ShipStrategy::kHash, internal::SelectorOf<B, K>(kb)}, [ka, kb, fn] {
          return std::make_unique<internal::KeyedCoProcessOperator<K, A, B, Out, KeyFA, KeyFB, Fn>>(ka, kb, fn);
        });
  }

 private:
  KeyedStream<A, K, KeyFA> first_;
  KeyedStream<B, K, KeyFB> second_;
};

// A stream every record of which goes to every subtask of the operator it is
// connected to, with the names of the broadcast states that operator keeps.
template <class T>
class BroadcastStream {
 public:
  BroadcastStream(StreamExecutionEnvironment* env, int node, std::set<std::string> states)
      : env_(env), node_(node), states_(std::move(states)) {}
  StreamExecutionEnvironment* env() const { return env_; }
  int node_id() const { return node_; }
  const std::set<std::string>& states() const { return states_; }
  StreamEdge Edge() const { return {node_, ShipStrategy::kBroadcast, nullptr}; }

 private:
  StreamExecutionEnvironment* env_;
  int node_;
  std::set<std::string> states_;
};

template <class A, class B>
class BroadcastConnectedStream {
 public:
  BroadcastConnectedStream(StreamExecutionEnvironment* env, int first, BroadcastStream<B> broadcast)
      : env_(env), first_(first), broadcast_(std::move(broadcast)) {}

  // Fn derives from BroadcastProcessFunction<A, B, Out>.
  template <class Fn, class Out = typename Fn::OutputType>
  SingleOutputStreamOperator<Out> Process(Fn fn) {
    internal::CheckInputTypes<Fn, A, B>();
    auto states = broadcast_.states();
    return internal::AddTwoInputProcessNode<A, B, Out>(env_, "Broadcast Process", false,
                                                {first_, ShipStrategy::kForward, nullptr}, broadcast_.Edge(),
                                                [fn, states] {
      return std::make_unique<internal::BroadcastProcessOperator<A, B, Out, Fn>>(fn, states);
    });
  }

 private:
  StreamExecutionEnvironment* env_;
  int first_;
  BroadcastStream<B> broadcast_;
};

template <class A, class B, class K, class KeyF>
class KeyedBroadcastConnectedStream {
 public:
  KeyedBroadcastConnectedStream(KeyedStream<A, K, KeyF> first, BroadcastStream<B> broadcast)
      : first_(std::move(first)), broadcast_(std::move(broadcast)) {}

  // Fn derives from KeyedBroadcastProcessFunction<K, A, B, Out>.
  template <class Fn, class Out = typename Fn::OutputType>
  SingleOutputStreamOperator<Out> Process(Fn fn) {
    internal::CheckInputTypes<Fn, A, B>();
    static_assert(std::is_same_v<typename Fn::Key, K>, "the function's key type must match KeyBy's");
    KeyF key_fn = first_.key_fn();
    auto states = broadcast_.states();
    return internal::AddTwoInputProcessNode<A, B, Out>(
        first_.env(), "Keyed Broadcast Process", true,
        {first_.node_id(), ShipStrategy::kHash, internal::SelectorOf<A, K>(key_fn)}, broadcast_.Edge(),
        [key_fn, fn, states] {
          return std::make_unique<internal::KeyedBroadcastProcessOperator<K, A, B, Out, KeyF, Fn>>(key_fn, fn,
                                                                                                   states);
        });
  }

 private:
  KeyedStream<A, K, KeyF> first_;
  BroadcastStream<B> broadcast_;
};

template <class T>
template <class K, class V, class... More>
BroadcastStream<T> DataStream<T>::Broadcast(const MapStateDescriptor<K, V>& descriptor, const More&... more) {
  return BroadcastStream<T>(this->env_, this->node_, {descriptor.name(), more.name()...});
}

template <class T>
template <class B>
ConnectedStreams<T, B> DataStream<T>::Connect(const DataStream<B>& other) {
  if (other.env() != this->env_) throw std::invalid_argument("connected streams must belong to the same job");
  return ConnectedStreams<T, B>(this->env_, this->node_, other.node_id());
}

template <class T>
template <class B>
BroadcastConnectedStream<T, B> DataStream<T>::Connect(const BroadcastStream<B>& broadcast) {
  if (broadcast.env() != this->env_) throw std::invalid_argument("connected streams must belong to the same job");
  return BroadcastConnectedStream<T, B>(this->env_, this->node_, broadcast);
}

template <class T, class K, class KeyF>
template <class B, class KeyFB>
KeyedConnectedStreams<T, B, K, KeyF, KeyFB> KeyedStream<T, K, KeyF>::Connect(const KeyedStream<B, K, KeyFB>& other) {
  if (other.env() != env_) throw std::invalid_argument("connected streams must belong to the same job");
  return KeyedConnectedStreams<T, B, K, KeyF, KeyFB>(*this, other);
}

template <class T, class K, class KeyF>
template <class B>
KeyedBroadcastConnectedStream<T, B, K, KeyF> KeyedStream<T, K, KeyF>::Connect(const BroadcastStream<B>& broadcast) {
  if (broadcast.env() != env_) throw std::invalid_argument("connected streams must belong to the same job");
  return KeyedBroadcastConnectedStream<T, B, K, KeyF>(*this, broadcast);
}

}  // namespace weir
