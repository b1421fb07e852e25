// Keyed timers kept in keyed state: fired in order by watermark and wall clock, and
// restored from a snapshot into rescaled key-group ranges (every timer fires once, in
// the subtask that owns its key). Window assigners against Flink's formulas.

#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <utility>
#include <vector>

#include "lib/api/key_groups.h"
#include "lib/api/keyed_states.h"
#include "lib/api/timers.h"
#include "lib/api/windows.h"
#include "lib/format/key_groups_reader.h"
#include "lib/format/snapshot_output.h"

using weir::KeyedStates;
using weir::KeyGroupRange;
using weir::TimerService;

namespace {

using Fired = std::vector<std::pair<int64_t, int64_t>>;  // (timestamp, key)

std::map<std::string, weir::RestoredKeyedState> SnapshotRows(KeyedStates<int64_t>& states, KeyGroupRange range) {
  auto out = weir::MakeDirectoryOutput("", "", 0);
  auto handles = states.backend().Snapshot({})->Write(*out);
  REQUIRE(handles.ok());
  auto rows = weir::ReadKeyGroups(*handles, range);
  REQUIRE(rows.ok());
  return *rows;
}

}  // namespace

TEST_CASE("timers: event-time timers fire in timestamp order once the watermark reaches them", "[api][timers]") {
  KeyedStates<int64_t> states(128, {0, 127}, {});
  TimerService<int64_t> timers(&states);
  states.SetCurrentKey(1);
  timers.RegisterEventTimeTimer(30);
  timers.RegisterEventTimeTimer(10);
  timers.RegisterEventTimeTimer(10);  // once per key and timestamp
  states.SetCurrentKey(2);
  timers.RegisterEventTimeTimer(20);
  timers.RegisterEventTimeTimer(25);
  timers.DeleteEventTimeTimer(25);
  CHECK(timers.size(weir::TimeDomain::kEventTime) == 3);

  Fired fired;
  auto record = [&](int64_t ts, const int64_t& key) { fired.emplace_back(ts, key); };
  timers.AdvanceWatermark(9, record);
  CHECK(fired.empty());
  timers.AdvanceWatermark(20, record);
  CHECK(fired == Fired{{10, 1}, {20, 2}});
  CHECK(timers.CurrentWatermark() == 20);
  timers.AdvanceWatermark(weir::kMaxWatermark, record);
  CHECK(fired == Fired{{10, 1}, {20, 2}, {30, 1}});
  CHECK(timers.size(weir::TimeDomain::kEventTime) == 0);
}

TEST_CASE("timers: processing-time timers fire by the wall clock", "[api][timers]") {
  KeyedStates<int64_t> states(128, {0, 127}, {});
  TimerService<int64_t> timers(&states);
  states.SetCurrentKey(7);
  CHECK(timers.NextProcessingTime() == std::numeric_limits<int64_t>::max());
  timers.RegisterProcessingTimeTimer(1000);
  timers.RegisterProcessingTimeTimer(500);
  CHECK(timers.NextProcessingTime() == 500);
  Fired fired;
  timers.AdvanceProcessingTime(999, [&](int64_t ts, const int64_t& key) { fired.emplace_back(ts, key); });
  CHECK(fired == Fired{{500, 7}});
  CHECK(timers.NextProcessingTime() == 1000);
}

TEST_CASE("timers: restored from a snapshot at another parallelism, each fires once where its key lives",
          "[api][timers]") {
  constexpr int kMaxParallelism = 128;
  KeyedStates<int64_t> before(kMaxParallelism, {0, 127}, {});
  TimerService<int64_t> timers(&before);
  std::set<std::pair<int64_t, int64_t>> expected;
  for (int64_t key = 0; key < 200; ++key) {
    before.SetCurrentKey(key);
    timers.RegisterEventTimeTimer(1000 + key);
    timers.RegisterProcessingTimeTimer(5000 + key);
    expected.emplace(1000 + key, key);
  }
  // One timer fired and one deleted before the snapshot: neither comes back.
  timers.AdvanceWatermark(1000, [](int64_t, const int64_t&) {});
  expected.erase({1000, 0});
  before.SetCurrentKey(1);
  timers.DeleteEventTimeTimer(1001);
  expected.erase({1001, 1});

  for (int parallelism : {1, 3}) {
    std::set<std::pair<int64_t, int64_t>> fired;
    size_t processing = 0;
    for (int subtask = 0; subtask < parallelism; ++subtask) {
      KeyGroupRange range = weir::KeyGroupRangeForOperator(kMaxParallelism, parallelism, subtask);
      KeyedStates<int64_t> after(kMaxParallelism, range, SnapshotRows(before, range));
      TimerService<int64_t> restored(&after);
      restored.Restore();
      processing += restored.size(weir::TimeDomain::kProcessingTime);
      restored.AdvanceWatermark(weir::kMaxWatermark, [&](int64_t ts, const int64_t& key) {
        CHECK(range.Contains(weir::KeyGroupOf(key, kMaxParallelism)));
        CHECK(fired.emplace(ts, key).second);
      });
    }
    CHECK(fired == expected);
    CHECK(processing == 200);
  }
}

TEST_CASE("windows: tumbling and sliding assigners follow Flink's window starts", "[api][windows]") {
  std::vector<weir::TimeWindow> w;
  weir::TumblingEventTimeWindows::Of(100).AssignWindows(250, &w);
  CHECK(w == std::vector<weir::TimeWindow>{{200, 300}});
  w.clear();
  weir::TumblingEventTimeWindows::Of(100).AssignWindows(-1, &w);
  CHECK(w == std::vector<weir::TimeWindow>{{-100, 0}});
  w.clear();
  weir::TumblingEventTimeWindows::Of(100, 10).AssignWindows(5, &w);
  CHECK(w == std::vector<weir::TimeWindow>{{-90, 10}});
  w.clear();
  weir::SlidingEventTimeWindows::Of(100, 25).AssignWindows(130, &w);
  CHECK(w == std::vector<weir::TimeWindow>{{125, 225}, {100, 200}, {75, 175}, {50, 150}});
  CHECK(w.front().MaxTimestamp() == 224);
  CHECK_THROWS_WITH(weir::TumblingEventTimeWindows::Of(0), Catch::Contains("must be positive"));
  CHECK_THROWS_WITH(weir::SlidingEventTimeWindows::Of(100, 10, 10), Catch::Contains("offset"));
}

namespace {

class CollectingOutput final : public weir::Output<std::string> {
 public:
  void Collect(const std::string& line) override { lines.push_back(line + "@" + std::to_string(weir::CurrentRecordTimestamp())); }
  std::vector<std::string> lines;
};

// A window operator as the runtime sets it up (one subtask, state on the heap).
template <class Assigner>
struct WindowHarness {
  using KeyF = int64_t (*)(const int64_t&);
  using Contents = weir::internal::AccumulatorContents<int64_t, int64_t, int64_t, std::string>;
  using Operator = weir::internal::WindowOperator<int64_t, int64_t, std::string, KeyF, Assigner, Contents>;

  WindowHarness(Assigner assigner, int64_t lateness)
      : op([](const int64_t& n) { return n % 2; }, assigner, lateness,
           Contents({[](const int64_t& v) { return v; }, [](int64_t acc, const int64_t& v) { return acc + v; },
                     [](int64_t a, const int64_t& b) { return a + b; },
                     [](const int64_t& key, const weir::WindowContext& ctx, const int64_t& sum,
                        weir::Collector<std::string>& out) {
                       const weir::TimeWindow& w = ctx.window();
                       out.Collect(std::to_string(w.start) + "-" + std::to_string(w.end) + ":" +
                                   std::to_string(key) + "=" + std::to_string(sum));
                     }})) {
    weir::OperatorContext ctx;
    ctx.operator_name = "windows";
    op.Setup(ctx);
    op.SetOutput(&out);
    op.Open();
  }
  void Record(int64_t value, int64_t ts) {
    weir::SetCurrentRecordTimestamp(ts);
    op.Collect(value);
  }
  Operator op;
  CollectingOutput out;
};

}  // namespace

TEST_CASE("windows: tumbling windows fire once when the watermark passes their end", "[api][windows]") {
  WindowHarness h(weir::TumblingEventTimeWindows::Of(10), 0);
  h.Record(2, 1);
  h.Record(4, 9);
  h.Record(3, 5);
  h.Record(6, 12);
  h.op.ProcessWatermark(8);
  CHECK(h.out.lines.empty());
  h.op.ProcessWatermark(9);  // 9 is the window's max timestamp; same-time timers fire by key
  CHECK(h.out.lines == std::vector<std::string>{"0-10:0=6@9", "0-10:1=3@9"});
  h.Record(8, 7);  // late, no allowed lateness: dropped
  h.op.ProcessWatermark(weir::kMaxWatermark);
  CHECK(h.out.lines == std::vector<std::string>{"0-10:0=6@9", "0-10:1=3@9", "10-20:0=6@19"});
}

TEST_CASE("windows: allowed lateness fires a window again for a late record, then drops later ones",
          "[api][windows]") {
  WindowHarness h(weir::TumblingEventTimeWindows::Of(10), 5);
  h.Record(1, 3);
  h.op.ProcessWatermark(10);
  CHECK(h.out.lines == std::vector<std::string>{"0-10:1=1@9"});
  h.Record(3, 4);  // within the lateness (9 + 5 > 10): fires again with the new contents
  CHECK(h.out.lines == std::vector<std::string>{"0-10:1=1@9", "0-10:1=4@9"});
  h.op.ProcessWatermark(14);  // the lateness ran out: contents dropped
  h.Record(5, 2);             // too late: dropped
  h.op.ProcessWatermark(weir::kMaxWatermark);
  CHECK(h.out.lines.size() == 2);
}

TEST_CASE("windows: sliding windows put a record into size/slide windows", "[api][windows]") {
  WindowHarness h(weir::SlidingEventTimeWindows::Of(20, 10), 0);
  h.Record(1, 15);
  h.Record(3, 25);
  h.op.ProcessWatermark(weir::kMaxWatermark);
  CHECK(h.out.lines == std::vector<std::string>{"0-20:1=1@19", "10-30:1=4@29", "20-40:1=3@39"});
}
