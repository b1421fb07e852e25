// Session windows (merging, on event and processing time), process window functions
// (all of a window's records, or the one result of a reduce or aggregate) and the
// late-data side output, on one window operator subtask with its state on the heap; and
// the stream graph the window API builds for them; tumbling processing-time windows; and
// the watermarks AssignTimestampsAndWatermarks makes (out-of-orderness bound, idleness).

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "lib/api/connectors/sequence_source.h"
#include "lib/api/stream.h"
#include "lib/api/windows.h"
#include "lib/common/time_util.h"

namespace {

using weir::TimeWindow;
using weir::WindowContext;
using Lines = std::vector<std::string>;
using KeyF = int64_t (*)(const int64_t&);

int64_t ByParity(const int64_t& n) { return n % 2; }

std::string Describe(const TimeWindow& w) { return std::to_string(w.start) + "-" + std::to_string(w.end); }

// Records what a window operator emits: results as "<line>@<timestamp>", late records as
// "late <n>@<timestamp>".
template <class Result, class T>
class Collecting final : public weir::Output<Result>, public weir::Output<weir::SideOutputRecord<Result>> {
 public:
  void Collect(const Result& r) override { lines.push_back(r + At()); }
  void Collect(const weir::SideOutputRecord<Result>& o) override {
    if (const Result* r = o.MainRecord()) {
      lines.push_back(*r + At());
      return;
    }
    CHECK(o.tag_key == weir::OutputTag<T>("late data").key());
    weir::DataInput in(o.bytes);
    T late{};
    weir::Serializer<T>::Read(in, late);
    lines.push_back("late " + std::to_string(late) + At());
  }
  Lines lines;

 private:
  static std::string At() { return "@" + std::to_string(weir::CurrentRecordTimestamp()); }
};

// A window operator subtask as the runtime sets it up (state on the heap).
template <class Assigner, class Contents, bool kLate = false>
struct Windows {
  using Operator = weir::internal::WindowOperator<int64_t, int64_t, std::string, KeyF, Assigner, Contents, kLate>;
  Windows(Assigner assigner, int64_t lateness, Contents contents) : op(ByParity, assigner, lateness, contents) {
    weir::OperatorContext ctx;
    ctx.operator_name = "windows";
    op.Setup(ctx);
    if constexpr (kLate) {
      op.SetOutput(static_cast<weir::Output<weir::SideOutputRecord<std::string>>*>(&out));
    } else {
      op.SetOutput(static_cast<weir::Output<std::string>*>(&out));
    }
    op.Open();
  }
  void Record(int64_t value, int64_t ts) {
    weir::SetCurrentRecordTimestamp(ts);
    op.Collect(value);
  }
  Operator op;
  Collecting<std::string, int64_t> out;
};

// Sums, "<window>:<key>=<sum>".
using SumContents = weir::internal::AccumulatorContents<int64_t, int64_t, int64_t, std::string>;
SumContents Sums() {
  return SumContents({[](const int64_t& v) { return v; }, [](int64_t acc, const int64_t& v) { return acc + v; },
                      [](int64_t a, const int64_t& b) { return a + b; },
                      [](const int64_t& key, const WindowContext& ctx, const int64_t& sum,
                         weir::Collector<std::string>& out) {
                        out.Collect(Describe(ctx.window()) + ":" + std::to_string(key) + "=" + std::to_string(sum));
                      }});
}

// All records, "<window>:<key>=[a b c] wm=<watermark>".
class ListElements final : public weir::ProcessWindowFunction<int64_t, int64_t, std::string> {
 public:
  void Process(const int64_t& key, const Context& ctx, const std::vector<int64_t>& elements,
               weir::Collector<std::string>& out) override {
    std::string list;
    for (int64_t e : elements) list += (list.empty() ? "" : " ") + std::to_string(e);
    out.Collect(Describe(ctx.window()) + ":" + std::to_string(key) + "=[" + list + "] wm=" +
                std::to_string(ctx.CurrentWatermark()));
  }
};
using ElementContents = weir::internal::ElementContents<int64_t, int64_t, std::string>;
ElementContents AllElements() {
  return ElementContents([fn = ListElements()](const int64_t& key, const WindowContext& ctx,
                                                const std::vector<int64_t>& elements,
                                                weir::Collector<std::string>& out) mutable {
    fn.Process(key, ctx, elements, out);
  });
}

}  // namespace

TEST_CASE("session windows: a record opens a window of gap ms, and windows that overlap or touch merge",
          "[api][windows]") {
  std::vector<TimeWindow> w;
  weir::EventTimeSessionWindows::WithGap(10).AssignWindows(5, &w);
  CHECK(w == std::vector<TimeWindow>{{5, 15}});
  CHECK(TimeWindow{0, 10}.Intersects({10, 20}));
  CHECK(TimeWindow{0, 10}.Intersects({5, 8}));
  CHECK_FALSE(TimeWindow{0, 10}.Intersects({11, 20}));
  CHECK_THROWS_WITH(weir::EventTimeSessionWindows::WithGap(0), Catch::Contains("gap must be positive"));
  CHECK_THROWS_WITH(weir::ProcessingTimeSessionWindows::WithGap(-5), Catch::Contains("gap must be positive"));
}

TEST_CASE("session windows: a record between two sessions merges them and their contents", "[api][windows]") {
  Windows h(weir::EventTimeSessionWindows::WithGap(10), 0, Sums());
  h.Record(1, 1);    // [1, 11)
  h.Record(13, 12);  // [12, 22)
  h.Record(3, 30);   // [30, 40)
  h.Record(5, 40);   // [40, 50) touches [30, 40): [30, 50)
  h.Record(2, 7);    // other key: [7, 17)
  h.op.ProcessWatermark(9);
  CHECK(h.out.lines.empty());
  h.Record(7, 10);             // [10, 20) bridges [1, 11) and [12, 22): [1, 22)
  h.op.ProcessWatermark(16);
  CHECK(h.out.lines == Lines{"7-17:0=2@16"});
  h.op.ProcessWatermark(20);
  CHECK(h.out.lines == Lines{"7-17:0=2@16"});  // the merged windows' timers are gone
  h.op.ProcessWatermark(21);
  CHECK(h.out.lines == Lines{"7-17:0=2@16", "1-22:1=21@21"});
  h.op.ProcessWatermark(weir::kMaxWatermark);
  CHECK(h.out.lines == Lines{"7-17:0=2@16", "1-22:1=21@21", "30-50:1=8@49"});
}

TEST_CASE("session windows: a late record within the allowed lateness merges and fires the session again",
          "[api][windows]") {
  Windows h(weir::EventTimeSessionWindows::WithGap(10), 20, Sums());
  h.Record(1, 100);  // [100, 110)
  h.op.ProcessWatermark(115);
  CHECK(h.out.lines == Lines{"100-110:1=1@109"});
  h.Record(3, 95);  // [95, 105) merges: [95, 110) is past the watermark, fired at once
  CHECK(h.out.lines == Lines{"100-110:1=1@109", "95-110:1=4@109"});
  h.Record(5, 108);  // [108, 118) overlaps: [95, 118), not due yet
  h.op.ProcessWatermark(116);
  CHECK(h.out.lines.size() == 2);
  h.op.ProcessWatermark(117);
  CHECK(h.out.lines == Lines{"100-110:1=1@109", "95-110:1=4@109", "95-118:1=9@117"});
  h.op.ProcessWatermark(141);  // past the cleanup time of [95, 118): 117 + 20
  h.Record(7, 110);            // [110, 120) is too late: 119 + 20 <= 141
  h.op.ProcessWatermark(weir::kMaxWatermark);
  CHECK(h.out.lines.size() == 3);
}

TEST_CASE("session windows on processing time merge by the wall clock", "[api][windows]") {
  Windows h(weir::ProcessingTimeSessionWindows::WithGap(3600 * 1000), 0, AllElements());
  const int64_t before = weir::NowMillis();
  h.Record(1, weir::kNoTimestamp);
  h.Record(3, weir::kNoTimestamp);
  h.Record(2, weir::kNoTimestamp);
  const int64_t next = h.op.NextProcessingTime();
  CHECK(next >= before + 3600 * 1000 - 1);
  h.op.AdvanceProcessingTime(next - 1);
  CHECK(h.out.lines.empty());
  h.op.AdvanceProcessingTime(next + 10);  // both keys' sessions end within the same few ms
  h.op.AdvanceProcessingTime(next + 3600 * 1000);
  REQUIRE(h.out.lines.size() == 2);
  // By key: the windows' bounds differ when the clock ticks between the records.
  auto by_key = [](const std::string& a, const std::string& b) { return a.substr(a.find(':')) < b.substr(b.find(':')); };
  std::sort(h.out.lines.begin(), h.out.lines.end(), by_key);
  CHECK_THAT(h.out.lines[0], Catch::Contains(":0=[2]"));
  CHECK_THAT(h.out.lines[1], Catch::Contains(":1=[1 3]"));
}

TEST_CASE("process window functions get the window, its records in order and the watermark", "[api][windows]") {
  Windows h(weir::TumblingEventTimeWindows::Of(10), 0, AllElements());
  h.Record(5, 3);
  h.Record(1, 1);
  h.Record(3, 9);
  h.Record(4, 2);
  h.Record(7, 12);
  h.op.ProcessWatermark(10);
  CHECK(h.out.lines == Lines{"0-10:0=[4] wm=10@9", "0-10:1=[5 1 3] wm=10@9"});
  h.op.ProcessWatermark(weir::kMaxWatermark);
  CHECK(h.out.lines.back() == "10-20:1=[7] wm=" + std::to_string(weir::kMaxWatermark) + "@19");
}

TEST_CASE("process window functions over session windows see the merged sessions' records", "[api][windows]") {
  Windows h(weir::EventTimeSessionWindows::WithGap(5), 0, AllElements());
  h.Record(1, 0);
  h.Record(3, 10);
  h.Record(5, 20);
  h.Record(7, 5);   // [5, 10) touches [0, 5) and [10, 15): [0, 15)
  h.Record(9, 12);  // [12, 17): [0, 17)
  h.Record(11, 2);  // inside [0, 17)
  h.op.ProcessWatermark(weir::kMaxWatermark);
  const std::string wm = " wm=" + std::to_string(weir::kMaxWatermark);
  CHECK(h.out.lines == Lines{"0-17:1=[1 3 7 9 11]" + wm + "@16", "20-25:1=[5]" + wm + "@24"});
}

TEST_CASE("late data goes to the side output, and within the allowed lateness fires the window again",
          "[api][windows]") {
  Windows<weir::TumblingEventTimeWindows, SumContents, true> h(weir::TumblingEventTimeWindows::Of(10), 5, Sums());
  h.Record(1, 3);
  h.op.ProcessWatermark(10);
  CHECK(h.out.lines == Lines{"0-10:1=1@9"});
  h.Record(3, 4);  // within the lateness: fires again, no side output
  CHECK(h.out.lines == Lines{"0-10:1=1@9", "0-10:1=4@9"});
  h.op.ProcessWatermark(14);
  h.Record(5, 2);  // 2 + 5 <= 14: late, to the side output with its own timestamp
  h.Record(7, 14);  // on time for [10, 20)
  h.op.ProcessWatermark(weir::kMaxWatermark);
  CHECK(h.out.lines == Lines{"0-10:1=1@9", "0-10:1=4@9", "late 5@2", "10-20:1=7@19"});
}

TEST_CASE("window API: reduce and aggregate with a process window function, session merges need merge",
          "[api][windows]") {
  weir::StreamExecutionEnvironment env(2);
  auto keyed = env.AddSource<int64_t>(weir::SequenceSource(1, 10), "numbers").KeyBy(ByParity);
  class Wrap final : public weir::ProcessWindowFunction<int64_t, int64_t, std::string> {
   public:
    void Process(const int64_t& key, const Context& ctx, const std::vector<int64_t>& elements,
                 weir::Collector<std::string>& out) override {
      out.Collect(Describe(ctx.window()) + " " + std::to_string(elements.size()));
    }
  };
  auto reduced = keyed.Window(weir::EventTimeSessionWindows::WithGap(5))
                     .Reduce([](int64_t a, int64_t b) { return a + b; }, Wrap());
  CHECK(env.node(reduced.node_id()).name == "Window Reduce");
  weir::AggregateFunction<int64_t, int64_t, int64_t> count{[] { return int64_t{0}; },
                                                           [](const int64_t&, int64_t acc) { return acc + 1; },
                                                           [](const int64_t& acc) { return acc; }};
  auto aggregated = keyed.Window(weir::TumblingEventTimeWindows::Of(5)).Aggregate(count, Wrap());
  CHECK(env.node(aggregated.node_id()).name == "Window Aggregate");
  CHECK_THROWS_WITH(keyed.Window(weir::EventTimeSessionWindows::WithGap(5)).Aggregate(count),
                    Catch::Contains("give the AggregateFunction a merge function"));
  count.merge = [](int64_t a, const int64_t& b) { return a + b; };
  CHECK_NOTHROW(keyed.Window(weir::EventTimeSessionWindows::WithGap(5)).Aggregate(count));
}

TEST_CASE("window API: the late-data side output is a node of its own, named and uid'ed after the window",
          "[api][windows]") {
  weir::StreamExecutionEnvironment env(2);
  auto keyed = env.AddSource<int64_t>(weir::SequenceSource(1, 10), "numbers").KeyBy(ByParity);
  weir::OutputTag<int64_t> late("late");
  auto sums = keyed.Window(weir::TumblingEventTimeWindows::Of(5))
                  .SideOutputLateData(late)
                  .Reduce([](int64_t a, int64_t b) { return a + b; });
  sums.Name("Sums").Uid("sums").SetParallelism(3);
  auto late_data = sums.GetSideOutput(late);
  const weir::StreamNode& window = env.node(sums.node_id() - 1);
  CHECK(window.name == "Sums");
  CHECK(window.uid == "sums");
  CHECK(window.is_keyed);
  CHECK(env.node(sums.node_id()).uid == "sums (results)");
  CHECK(env.node(sums.node_id()).parallelism == 3);
  CHECK(env.node(late_data.node_id()).uid == "sums (late data)");
  CHECK(env.node(late_data.node_id()).parallelism == 3);
  CHECK(env.node(late_data.node_id()).timestamped);
  CHECK(sums.GetSideOutput(late).node_id() == late_data.node_id());  // one node per tag

  CHECK_THROWS_WITH(sums.GetSideOutput(weir::OutputTag<int64_t>("other")), Catch::Contains("no side output named 'other'"));
  CHECK_THROWS_WITH(sums.GetSideOutput(weir::OutputTag<std::string>("late")), Catch::Contains("record type"));
  auto plain = keyed.Window(weir::TumblingEventTimeWindows::Of(5)).Reduce([](int64_t a, int64_t b) { return a + b; });
  CHECK_THROWS_WITH(plain.GetSideOutput(late), Catch::Contains("SideOutputLateData"));
  CHECK_THROWS_WITH(keyed.Window(weir::TumblingProcessingTimeWindows::Of(5)).SideOutputLateData(late),
                    Catch::Contains("event time only"));
  CHECK_THROWS_WITH(weir::OutputTag<int64_t>(""), Catch::Contains("non-empty id"));
}

TEST_CASE("sliding processing-time windows: size/slide windows of the wall clock, with Flink's offset",
          "[api][windows]") {
  std::vector<TimeWindow> w;
  weir::SlidingProcessingTimeWindows::Of(100, 25).AssignWindows(130, &w);
  CHECK(w == std::vector<TimeWindow>{{125, 225}, {100, 200}, {75, 175}, {50, 150}});
  w.clear();
  weir::SlidingProcessingTimeWindows::Of(100, 50, 10).AssignWindows(5, &w);
  CHECK(w == std::vector<TimeWindow>{{-40, 60}, {-90, 10}});
  CHECK_THROWS_WITH(weir::SlidingProcessingTimeWindows::Of(100, 0), Catch::Contains("must be positive"));
  CHECK_THROWS_WITH(weir::SlidingProcessingTimeWindows::Of(100, 10, 10), Catch::Contains("offset"));
  CHECK_FALSE(weir::SlidingProcessingTimeWindows::kEventTime);
  CHECK_FALSE(weir::SlidingProcessingTimeWindows::kMerging);
}

TEST_CASE("sliding processing-time windows fire by the wall clock, each with the records of its span",
          "[api][windows]") {
  const int64_t hour = 3600 * 1000;
  Windows h(weir::SlidingProcessingTimeWindows::Of(2 * hour, hour), 0, Sums());
  const int64_t before = weir::NowMillis();
  h.Record(1, weir::kNoTimestamp);  // the record's own timestamp does not matter
  h.Record(3, 5);
  const int64_t first = h.op.NextProcessingTime();  // the end of the earlier of its two windows
  CHECK(first >= before);
  CHECK(first < before + hour);
  h.op.AdvanceProcessingTime(first - 1);
  CHECK(h.out.lines.empty());
  h.op.AdvanceProcessingTime(first);
  REQUIRE(h.out.lines.size() == 1);
  CHECK_THAT(h.out.lines[0], Catch::EndsWith(":1=4@" + std::to_string(first)));
  h.op.AdvanceProcessingTime(first + hour);
  REQUIRE(h.out.lines.size() == 2);
  CHECK_THAT(h.out.lines[1], Catch::EndsWith(":1=4@" + std::to_string(first + hour)));
  CHECK(h.op.NextProcessingTime() > first + hour);
}

TEST_CASE("window API: sliding processing-time windows reduce, and have no late data", "[api][windows]") {
  weir::StreamExecutionEnvironment env(2);
  auto keyed = env.AddSource<int64_t>(weir::SequenceSource(1, 10), "numbers").KeyBy(ByParity);
  auto sums = keyed.Window(weir::SlidingProcessingTimeWindows::Of(1000, 100))
                  .Reduce([](int64_t a, int64_t b) { return a + b; });
  CHECK(env.node(sums.node_id()).name == "Window Reduce");
  weir::OutputTag<int64_t> late("late");
  CHECK_THROWS_WITH(keyed.Window(weir::SlidingProcessingTimeWindows::Of(1000, 100)).SideOutputLateData(late),
                    Catch::Contains("event time only"));
}

TEST_CASE("tumbling processing-time windows fire by the wall clock, each with the records of its span",
          "[api][windows]") {
  const int64_t hour = 3600 * 1000;
  Windows h(weir::TumblingProcessingTimeWindows::Of(hour), 0, Sums());
  const int64_t before = weir::NowMillis();
  h.Record(2, weir::kNoTimestamp);  // the record's own timestamp does not matter
  h.Record(4, 5);
  h.Record(5, 7);
  const int64_t end = h.op.NextProcessingTime();  // the end of the window of the wall clock
  CHECK(end >= before);
  CHECK(end <= before + hour);
  CHECK((end + 1) % hour == 0);  // Flink's window starts: multiples of the size
  h.op.AdvanceProcessingTime(end - 1);
  CHECK(h.out.lines.empty());
  h.op.AdvanceProcessingTime(end);
  REQUIRE(h.out.lines.size() == 2);
  CHECK_THAT(h.out.lines[0], Catch::EndsWith(":0=6@" + std::to_string(end)));
  CHECK_THAT(h.out.lines[1], Catch::EndsWith(":1=5@" + std::to_string(end)));
  // Fired once: nothing is left to fire.
  h.op.AdvanceProcessingTime(end + 2 * hour);
  CHECK(h.out.lines.size() == 2);
}

namespace {

// What a timestamp/watermark operator sends on: watermarks and idleness, in order.
struct WatermarkRecorder final : weir::WatermarkOutput {
  void EmitWatermark(int64_t watermark) override { events.push_back("wm " + std::to_string(watermark)); }
  void MarkIdle(bool idle) override { events.push_back(idle ? "idle" : "active"); }
  Lines events;
};

struct NullOutput final : weir::Output<int64_t> {
  void Collect(const int64_t&) override { ++records; }
  int records = 0;
};

// The operator of AssignTimestampsAndWatermarks, the record's value being its timestamp.
struct WatermarkHarness {
  explicit WatermarkHarness(weir::WatermarkStrategy<int64_t> strategy)
      : op(strategy.WithTimestampAssigner([](const int64_t& v) { return v; })) {
    weir::OperatorContext ctx;
    ctx.operator_name = "timestamps";
    ctx.watermark_output = &wm;
    op.Setup(ctx);
    op.SetOutput(&out);
    op.Open();
  }
  void Record(int64_t ts) {
    op.Collect(ts);
    CHECK(weir::CurrentRecordTimestamp() == ts);
  }
  weir::internal::TimestampsAndWatermarksOperator<int64_t> op;
  WatermarkRecorder wm;
  NullOutput out;
};

}  // namespace

TEST_CASE("watermarks: bounded out-of-orderness emits the largest timestamp minus the bound minus 1, "
          "every interval when it advanced",
          "[api][watermarks]") {
  WatermarkHarness h(weir::WatermarkStrategy<int64_t>::ForBoundedOutOfOrderness(100).WithEmitInterval(50));
  const int64_t t0 = h.op.NextProcessingTime();
  h.op.AdvanceProcessingTime(t0);
  CHECK(h.wm.events.empty());  // no record yet: no watermark
  h.Record(1000);
  h.Record(1200);
  h.Record(1150);  // out of order, within the bound: the watermark stays below it
  CHECK(h.out.records == 3);
  CHECK(h.op.NextProcessingTime() == t0 + 50);
  h.op.AdvanceProcessingTime(t0 + 50);
  CHECK(h.wm.events == Lines{"wm 1099"});
  h.Record(1100);  // older still: never moves the watermark back
  h.op.AdvanceProcessingTime(t0 + 100);
  CHECK(h.wm.events == Lines{"wm 1099"});
  h.Record(1500);
  h.op.AdvanceProcessingTime(t0 + 150);
  CHECK(h.wm.events == Lines{"wm 1099", "wm 1399"});
  // The end of input: MAX_WATERMARK passes through.
  h.op.ProcessWatermark(weir::kMaxWatermark);
  CHECK(h.wm.events.back() == "wm " + std::to_string(weir::kMaxWatermark));
  CHECK_THROWS_WITH(weir::WatermarkStrategy<int64_t>::ForBoundedOutOfOrderness(-1), Catch::Contains("0 or more"));
}

TEST_CASE("watermarks: an input without records for the idleness timeout is marked idle, and active again "
          "with its next record",
          "[api][watermarks]") {
  WatermarkHarness h(
      weir::WatermarkStrategy<int64_t>::ForBoundedOutOfOrderness(0).WithIdleness(1000).WithEmitInterval(100));
  const int64_t t0 = h.op.NextProcessingTime() - 100;  // when the operator opened
  h.Record(10);
  h.op.AdvanceProcessingTime(t0 + 100);
  CHECK(h.wm.events == Lines{"wm 9"});
  h.op.AdvanceProcessingTime(t0 + 900);  // quiet since t0 + 100, less than the timeout
  CHECK(h.wm.events == Lines{"wm 9"});
  h.op.AdvanceProcessingTime(t0 + 1100);  // quiet for 1000 ms: idle, once
  CHECK(h.wm.events == Lines{"wm 9", "idle"});
  h.op.AdvanceProcessingTime(t0 + 5000);
  CHECK(h.wm.events == Lines{"wm 9", "idle"});
  h.Record(20);  // active again at once, before its watermark
  CHECK(h.wm.events == Lines{"wm 9", "idle", "active"});
  h.op.AdvanceProcessingTime(t0 + 5100);
  CHECK(h.wm.events == Lines{"wm 9", "idle", "active", "wm 19"});
  CHECK_THROWS_WITH(weir::WatermarkStrategy<int64_t>::ForMonotonousTimestamps().WithIdleness(0),
                    Catch::Contains("positive"));
}

TEST_CASE("windows of one size: many windows open behind the watermark each fire once, and keep their "
          "records until their cleanup time",
          "[api][windows]") {
  // 100 windows of 10 ms per key are open when the first watermark comes; each timer names
  // its window by its end.
  Windows h(weir::TumblingEventTimeWindows::Of(10), 5, AllElements());
  for (int64_t n = 0; n < 1000; ++n) h.Record(n, n);
  h.op.ProcessWatermark(995);
  Lines expected;
  for (int64_t start = 0; start < 990; start += 10) {
    for (int64_t key = 0; key < 2; ++key) {
      std::string list;
      for (int64_t n = start + key; n < start + 10; n += 2) list += (list.empty() ? "" : " ") + std::to_string(n);
      expected.push_back(std::to_string(start) + "-" + std::to_string(start + 10) + ":" + std::to_string(key) + "=[" +
                         list + "] wm=995@" + std::to_string(start + 9));
    }
  }
  CHECK(h.out.lines == expected);

  // [980, 990) ended at 989: its cleanup time is 994, so its records are gone and a record
  // for it is late. [990, 1000) fires at 999 and keeps its records until 1004: a record
  // within the lateness fires it again with all of them.
  h.out.lines.clear();
  h.Record(981, 981);
  CHECK(h.out.lines.empty());
  h.op.ProcessWatermark(1000);
  CHECK(h.out.lines == Lines{"990-1000:0=[990 992 994 996 998] wm=1000@999", "990-1000:1=[991 993 995 997 999] wm=1000@999"});
  h.out.lines.clear();
  h.Record(1001, 993);
  CHECK(h.out.lines == Lines{"990-1000:1=[991 993 995 997 999 1001] wm=1000@999"});
  h.op.ProcessWatermark(1004);
  h.out.lines.clear();
  h.Record(1003, 994);
  CHECK(h.out.lines.empty());  // its lateness ran out at 1004
}

TEST_CASE("sliding windows with many windows open behind the watermark: each fires once with its sum",
          "[api][windows]") {
  Windows h(weir::SlidingEventTimeWindows::Of(10, 5), 0, Sums());
  for (int64_t n = 0; n < 400; ++n) h.Record(1, n);  // key 1, a record per ms
  h.op.ProcessWatermark(weir::kMaxWatermark);
  Lines expected;
  for (int64_t start = -5; start < 400; start += 5) {
    const int64_t from = std::max<int64_t>(start, 0), to = std::min<int64_t>(start + 10, 400);
    expected.push_back(std::to_string(start) + "-" + std::to_string(start + 10) + ":1=" + std::to_string(to - from) +
                       "@" + std::to_string(start + 9));
  }
  CHECK(h.out.lines == expected);
}

TEST_CASE("window API: sliding windows of a reduce fold each window's records in the order they came",
          "[api][windows]") {
  // A reduce that keeps the record that came last: merging per-slide results in time
  // order, as an aggregate with a merge function may, would give the one with the
  // latest timestamp instead.
  weir::StreamExecutionEnvironment env(1);
  auto keyed = env.AddSource<int64_t>(weir::SequenceSource(1, 10), "numbers").KeyBy(ByParity);
  auto last = keyed.Window(weir::SlidingEventTimeWindows::Of(10, 5))
                  .Reduce<std::string>([](int64_t, int64_t b) { return b; },
                                       [](const int64_t& key, const TimeWindow& w, const int64_t& v,
                                          weir::Collector<std::string>& out) {
                                         out.Collect(Describe(w) + ":" + std::to_string(key) + "=" + std::to_string(v));
                                       });
  std::unique_ptr<weir::StreamOperatorBase> op = env.node(last.node_id()).factory();
  weir::OperatorContext ctx;
  ctx.operator_name = "windows";
  op->Setup(ctx);
  Collecting<std::string, int64_t> out;
  op->SetOutput(static_cast<weir::Output<std::string>*>(&out));
  op->Open();
  auto* input = static_cast<weir::Output<int64_t>*>(op->Input());
  weir::SetCurrentRecordTimestamp(7);  // in [0, 10) and [5, 15)
  input->Collect(1);
  weir::SetCurrentRecordTimestamp(2);  // in [-5, 5) and [0, 10), after the record of 7
  input->Collect(3);
  op->ProcessWatermark(weir::kMaxWatermark);
  CHECK(out.lines == Lines{"-5-5:1=3@4", "0-10:1=3@9", "5-15:1=1@14"});
}
