// Side outputs: the records an operator with side outputs emits, across a channel and
// chained, the nodes GetSideOutput adds after a two-input process function, and the
// context of functions that have none.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "lib/api/connected_streams.h"
#include "lib/api/connectors/sequence_source.h"
#include "lib/api/side_outputs.h"
#include "lib/api/stream.h"

namespace {

using Record = weir::SideOutputRecord<std::string>;

Record RoundTrip(const Record& r) {
  std::vector<uint8_t> buf;
  weir::DataOutput out(&buf);
  weir::Serializer<Record>::Write(out, r);
  weir::DataInput in(buf);
  Record back;
  weir::Serializer<Record>::Read(in, back);
  CHECK(in.AtEnd());
  return back;
}

// Records what reaches one output.
template <class T>
class Lines final : public weir::Output<T> {
 public:
  void Collect(const T& v) override { values.push_back(v); }
  std::vector<T> values;
};

class Split final : public weir::CoProcessFunction<int64_t, std::string, std::string> {
 public:
  void ProcessElement1(const int64_t& n, const Context& ctx, weir::Collector<std::string>& out) override {
    ctx.Output(weir::OutputTag<int64_t>("numbers"), n);
  }
  void ProcessElement2(const std::string& s, const Context&, weir::Collector<std::string>& out) override {
    out.Collect(s);
  }
};

}  // namespace

TEST_CASE("side outputs: main and side records keep their contents across a channel", "[api][side-outputs]") {
  const std::string main = "a main record";
  Record r;
  r.main = &main;
  Record back = RoundTrip(r);
  REQUIRE(back.MainRecord());
  CHECK(*back.MainRecord() == main);
  CHECK(back.tag_key.empty());

  // A side record, read into the same object: nothing of the main record stays.
  Lines<Record> sink;
  weir::internal::SideOutputEmitter<std::string> emitter;
  emitter.SetOutput(&sink);
  weir::SideOutputContext ctx;
  ctx.SetSideOutputs(&emitter);
  const weir::OutputTag<int64_t> numbers("numbers");
  ctx.Output(numbers, int64_t{42});
  const std::string chained = "chained";  // a chained main record passes by pointer
  emitter.Collect(chained);
  REQUIRE(sink.values.size() == 2);
  std::vector<uint8_t> buf;
  weir::DataOutput out(&buf);
  weir::Serializer<Record>::Write(out, sink.values[0]);
  weir::DataInput in(buf);
  weir::Serializer<Record>::Read(in, back);
  CHECK(back.MainRecord() == nullptr);
  CHECK(back.tag_key == numbers.key());

  // The selectors keep their own records; a tag of the same id and another type is
  // another side output.
  Lines<int64_t> side;
  weir::internal::SideOutputSelector<std::string, int64_t, false> keep_numbers(numbers.key());
  keep_numbers.SetOutput(&side);
  Lines<std::string> other_type;
  weir::internal::SideOutputSelector<std::string, std::string, false> keep_strings(
      weir::OutputTag<std::string>("numbers").key());
  keep_strings.SetOutput(&other_type);
  Lines<std::string> mains;
  weir::internal::SideOutputSelector<std::string, std::string, true> keep_main;
  keep_main.SetOutput(&mains);
  for (const Record& rec : {back, sink.values[1]}) {
    keep_numbers.Collect(rec);
    keep_strings.Collect(rec);
    keep_main.Collect(rec);
  }
  CHECK(side.values == std::vector<int64_t>{42});
  CHECK(other_type.values.empty());
  CHECK(mains.values == std::vector<std::string>{"chained"});
}

TEST_CASE("side outputs: a context without them says where they exist", "[api][side-outputs]") {
  weir::SideOutputContext ctx;
  CHECK_THROWS_WITH(ctx.Output(weir::OutputTag<int64_t>("x"), int64_t{1}),
                    Catch::Contains("process functions of connected streams"));
}

TEST_CASE("side outputs: GetSideOutput on a two-input process function adds one node per tag", "[api][side-outputs]") {
  weir::StreamExecutionEnvironment env(2);
  auto numbers = env.AddSource<int64_t>(weir::SequenceSource(1, 10), "numbers");
  auto words = env.AddSource<int64_t>(weir::SequenceSource(1, 10), "words").Map([](const int64_t& n) {
    return std::to_string(n);
  });
  auto split = numbers.Connect(words).Process(Split());
  const weir::OutputTag<int64_t> tag("numbers");
  auto side = split.GetSideOutput(tag);
  split.Name("Split").Uid("split").SetParallelism(3);
  const weir::StreamNode& op = env.node(split.node_id() - 1);
  CHECK(op.name == "Split");
  CHECK(op.uid == "split");
  CHECK(op.inputs.size() == 2);
  CHECK(env.node(split.node_id()).uid == "split (results)");
  CHECK(env.node(side.node_id()).uid == "split (side output numbers)");
  CHECK(env.node(side.node_id()).name == "Split (side output numbers)");
  CHECK(env.node(side.node_id()).parallelism == 3);
  CHECK(split.GetSideOutput(tag).node_id() == side.node_id());
  auto as_strings = split.GetSideOutput(weir::OutputTag<std::string>("numbers"));
  CHECK(as_strings.node_id() != side.node_id());  // another tag: same id, other type
  auto key = [](const int64_t& n) { return n % 2; };
  auto keyed = numbers.KeyBy(key).Connect(numbers.KeyBy(key));
  class Keyed final : public weir::KeyedCoProcessFunction<int64_t, int64_t, int64_t, std::string> {
   public:
    void ProcessElement1(const int64_t&, const int64_t&, weir::Collector<std::string>&) override {}
    void ProcessElement2(const int64_t&, const int64_t&, weir::Collector<std::string>&) override {}
  };
  auto keyed_split = keyed.Process(Keyed());
  CHECK(env.node(keyed_split.GetSideOutput(tag).node_id()).name == "KeyedCoProcess (side output numbers)");
}
