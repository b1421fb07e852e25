// Windows keep their contents and timers in keyed state on both backends:
// - session windows opened before a checkpoint, merged after a restore at parallelism 3
//   and fired after another restore at parallelism 2 fire once each, where their key
//   lives, with every record; the timers of the windows merged away are gone;
// - sliding windows' accumulators, folded in place on the heap, reach a snapshot as they
//   were at its barrier when records keep coming before the snapshot is written.

#include <catch2/catch.hpp>

#include <algorithm>
#include <initializer_list>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "lib/api/windows.h"
#include "tests/runtime/state/backend_harness.h"

namespace {

using weir::KeyedStateHandle;
using weir::KeyGroupRange;
using weir::TimeWindow;
using namespace weir::testing;

constexpr int64_t kKeys = 60;
constexpr int64_t kGap = 20;
constexpr int64_t kLateness = 10;

// Records are key * 1000 + n.
int64_t KeyOf(const int64_t& record) { return record / 1000; }
using KeyF = int64_t (*)(const int64_t&);
using Contents = weir::internal::ElementContents<int64_t, int64_t, std::string>;
using SumContents = weir::internal::AccumulatorContents<int64_t, int64_t, int64_t, std::string>;

class Lines final : public weir::Output<std::string> {
 public:
  void Collect(const std::string& line) override { lines.push_back(line); }
  std::vector<std::string> lines;
};

// "<key>:<start>-<end>=<n> <n>...", the records' n in the order they came.
Contents ListRecords() {
  return Contents([](const int64_t& key, const weir::WindowContext& ctx, const std::vector<int64_t>& records,
                     weir::Collector<std::string>& out) {
    std::string line = std::to_string(key) + ":" + std::to_string(ctx.window().start) + "-" +
                       std::to_string(ctx.window().end) + "=";
    for (int64_t r : records) line += std::to_string(r % 1000) + " ";
    out.Collect(line);
  });
}

// "<key>:<start>-<end>=<sum of n>". With `panes`, sliding windows keep their sums by pane
// (as for an AggregateFunction with a merge function), else by window.
SumContents SumRecords(bool panes = false) {
  weir::internal::WindowFunctions<int64_t, int64_t, int64_t, std::string> fns{
      [](const int64_t& r) { return r % 1000; }, [](int64_t sum, const int64_t& r) { return sum + r % 1000; },
      [](int64_t a, const int64_t& b) { return a + b; },
      [](const int64_t& key, const weir::WindowContext& ctx, const int64_t& sum, weir::Collector<std::string>& out) {
        out.Collect(std::to_string(key) + ":" + std::to_string(ctx.window().start) + "-" +
                    std::to_string(ctx.window().end) + "=" + std::to_string(sum));
      }};
  fns.panes_merge = panes;
  return SumContents(std::move(fns));
}

// Subtask `index` of `parallelism` of a window operator, its state in `type`, restored
// from `handles`.
template <class Assigner, class WindowContents>
class Subtask {
 public:
  using Operator = weir::internal::WindowOperator<int64_t, int64_t, std::string, KeyF, Assigner, WindowContents>;
  Subtask(const std::string& type, int parallelism, int index, const std::vector<KeyedStateHandle>& handles,
          Assigner assigner, int64_t lateness, WindowContents contents)
      : range_(weir::KeyGroupRangeForOperator(kMaxParallelism, parallelism, index)),
        op_(KeyOf, std::move(assigner), lateness, std::move(contents)) {
    weir::OperatorContext ctx;
    ctx.operator_name = "sessions";
    ctx.task.parallelism = parallelism;
    ctx.task.subtask_index = index;
    ctx.task.max_parallelism = kMaxParallelism;
    if (type == "rocksdb") {
      bytes_ = Backend::MustOpen(type, range_, handles);
      ctx.keyed_backend = bytes_->bytes();
    } else if (!handles.empty()) {
      auto rows = weir::ReadKeyGroups(Overlapping(handles, range_), range_);
      REQUIRE(rows.ok());
      restored_.restored = true;
      restored_.keyed = std::move(*rows);
      ctx.restored = &restored_;
    }
    op_.Setup(ctx);
    op_.SetOutput(&out_);
    op_.Open();
  }
  bool Owns(int64_t key) const { return range_.Contains(weir::KeyGroupOf(key, kMaxParallelism)); }
  void Record(int64_t key, int64_t n, int64_t ts) {
    weir::SetCurrentRecordTimestamp(ts);
    op_.Collect(key * 1000 + n);
  }
  KeyedStateHandle Snapshot(const std::string& dir, weir::SnapshotOptions options) {
    return Write(op_.SnapshotState(options), dir, options);
  }
  // Writes a snapshot taken before (the asynchronous part of a checkpoint).
  static KeyedStateHandle Write(const weir::OperatorSnapshot& snapshot, const std::string& dir,
                                weir::SnapshotOptions options) {
    auto handles = snapshot.keyed->Write(*Backend::OutputOf(dir, options));
    INFO(handles.status().ToString());
    REQUIRE(handles.ok());
    REQUIRE(handles->size() == 1);
    return (*handles)[0];
  }
  Operator& op() { return op_; }
  std::vector<std::string>& lines() { return out_.lines; }

 private:
  KeyGroupRange range_;
  std::unique_ptr<Backend> bytes_;
  weir::RestoredState restored_;
  Operator op_;
  Lines out_;
};

class SessionSubtask : public Subtask<weir::EventTimeSessionWindows, Contents> {
 public:
  SessionSubtask(const std::string& type, int parallelism, int index, const std::vector<KeyedStateHandle>& handles)
      : Subtask(type, parallelism, index, handles, weir::EventTimeSessionWindows::WithGap(kGap), kLateness,
                ListRecords()) {}
};

// Sliding windows of 20 ms every 10 ms: a record is in two windows.
class SlidingSumSubtask : public Subtask<weir::SlidingEventTimeWindows, SumContents> {
 public:
  SlidingSumSubtask(const std::string& type, int parallelism, int index,
                    const std::vector<KeyedStateHandle>& handles)
      : Subtask(type, parallelism, index, handles, weir::SlidingEventTimeWindows::Of(20, 10), 0, SumRecords()) {}
};

// Sliding windows of 40 ms every 10 ms (a record is in four), 10 ms of allowed lateness,
// sums kept by window or by pane.
class PaneSumSubtask : public Subtask<weir::SlidingEventTimeWindows, SumContents> {
 public:
  PaneSumSubtask(const std::string& type, bool panes, int parallelism, int index,
                 const std::vector<KeyedStateHandle>& handles)
      : Subtask(type, parallelism, index, handles, weir::SlidingEventTimeWindows::Of(40, 10), 10, SumRecords(panes)) {}
};

// A record of `key` with `n` at `ts`, or a watermark (key < 0: ts is the watermark).
struct Step {
  int64_t key, n, ts;
};
// Records of every key coming out of order, up to 25 ms behind the newest (some later
// than the watermark, some beyond the allowed lateness), with a watermark every 5 ms of
// time 8 ms behind it.
std::vector<Step> OutOfOrderSteps(int ms) {
  std::mt19937 random(20261204);
  std::vector<Step> steps;
  for (int t = 0; t < ms; ++t) {
    for (int i = 0; i < 6; ++i) {
      const auto key = static_cast<int64_t>(random() % kKeys);
      const auto behind = static_cast<int64_t>(random() % 4 == 0 ? random() % 26 : random() % 3);
      steps.push_back({key, static_cast<int64_t>(random() % 1000), t - behind});
    }
    if (t % 5 == 4) steps.push_back({-1, 0, t - 8});
  }
  return steps;
}
// Runs steps [from, to) on the subtasks (a record on the one that owns its key); the lines
// they fire, counted.
// Restored subtasks first get the watermark of the steps before `from` again, as their
// upstream sends it again after a restore.
template <class S>
void Run(const std::vector<Step>& steps, size_t from, size_t to, std::vector<std::unique_ptr<S>>& subtasks,
         std::map<std::string, int>* fired) {
  for (size_t i = from; i-- > 0;) {
    if (steps[i].key >= 0) continue;
    for (auto& s : subtasks) s->op().ProcessWatermark(steps[i].ts);
    break;
  }
  for (size_t i = from; i < to; ++i) {
    const Step& step = steps[i];
    for (auto& s : subtasks) {
      if (step.key < 0) {
        s->op().ProcessWatermark(step.ts);
      } else if (s->Owns(step.key)) {
        s->Record(step.key, step.n, step.ts);
      }
    }
  }
  for (auto& s : subtasks) {
    for (const auto& line : s->lines()) ++(*fired)[line];
    s->lines().clear();
  }
}

// The lines fired a different number of times in `got` and in `want` (the first ten).
std::string Differences(const std::map<std::string, int>& got, const std::map<std::string, int>& want) {
  std::string out;
  int shown = 0;
  auto count = [](const std::map<std::string, int>& m, const std::string& line) {
    auto it = m.find(line);
    return it == m.end() ? 0 : it->second;
  };
  std::set<std::string> lines;
  for (const auto& [line, n] : got) lines.insert(line);
  for (const auto& [line, n] : want) lines.insert(line);
  for (const auto& line : lines) {
    if (count(got, line) == count(want, line) || shown++ == 10) continue;
    out += line + ": " + std::to_string(count(got, line)) + " times, not " + std::to_string(count(want, line)) + "; ";
  }
  return out;
}

// Whether the subtask's keys hold no window contents (every window fired and dropped).
template <class S>
bool NoContentsLeft(S& s) {
  auto& states = s.op().keyed_states();
  for (int64_t k = 0; k < kKeys; ++k) {
    if (!s.Owns(k)) continue;
    states.SetCurrentKey(k);
    if (!states.template GetMapState<TimeWindow, int64_t>("_window-contents").IsEmpty()) return false;
  }
  return true;
}

// Each "<key>:<line>" once, for every key.
std::map<std::string, int> OncePerKey(std::initializer_list<std::string> lines) {
  std::map<std::string, int> out;
  for (int64_t k = 0; k < kKeys; ++k) {
    for (const auto& line : lines) out[std::to_string(k) + ":" + line] = 1;
  }
  return out;
}

}  // namespace

TEST_CASE("session windows: merged across a restore at p=3, fired after one at p=2, on both backends",
          "[state][windows]") {
  const std::string type = GENERATE("hashmap", "rocksdb");
  std::vector<weir::SnapshotOptions> modes{Full(1)};
  if (type == "rocksdb") modes.push_back(Incremental(1));
  for (weir::SnapshotOptions first : modes) {
    INFO(type << (first.incremental ? ", incremental" : ", full"));
    ScratchDir dir;
    std::vector<KeyedStateHandle> at_one;
    {
      SessionSubtask one(type, 1, 0, {});
      for (int64_t k = 0; k < kKeys; ++k) {
        one.Record(k, 1, 0);    // [0, 20)
        one.Record(k, 2, 30);   // [30, 50)
        one.Record(k, 3, 500);  // [500, 520)
      }
      one.op().ProcessWatermark(5);
      CHECK(one.lines().empty());
      at_one.push_back(one.Snapshot(dir / "p1", first));
    }
    std::vector<KeyedStateHandle> at_three;
    for (int i = 0; i < 3; ++i) {
      SessionSubtask s(type, 3, i, at_one);
      for (int64_t k = 0; k < kKeys; ++k) {
        if (s.Owns(k)) s.Record(k, 4, 20);  // [20, 40) touches both: [0, 50)
      }
      CHECK(s.lines().empty());
      weir::SnapshotOptions next = first;
      next.checkpoint_id = 2;
      at_three.push_back(s.Snapshot(dir / ("p3-" + std::to_string(i)), next));
    }

    // What the state holds for every key: the merged session and the untouched one, and
    // the timers of those two only (end - 1 and cleanup time).
    {
      auto all = Backend::MustOpen(type, {0, kMaxParallelism - 1}, at_three);
      for (int64_t k = 0; k < kKeys; ++k) {
        INFO("key " << k);
        all->states().SetCurrentKey(k);
        auto counts = all->states().GetMapState<TimeWindow, int64_t>("_window-counts").Entries();
        std::sort(counts.begin(), counts.end());
        CHECK(counts == std::vector<std::pair<TimeWindow, int64_t>>{{{0, 50}, 3}, {{500, 520}, 1}});
        std::set<int64_t> timers;
        for (auto& [ts, unused] : all->states().GetMapState<int64_t, bool>("_window-timers-event-time").Entries()) {
          timers.insert(ts);
        }
        CHECK(timers == std::set<int64_t>{49, 59, 519, 529});
      }
    }

    std::map<std::string, int> fired;
    for (int i = 0; i < 2; ++i) {
      SessionSubtask s(type, 2, i, at_three);
      s.op().ProcessWatermark(48);
      CHECK(s.lines().empty());
      s.op().ProcessWatermark(49);
      for (const auto& line : s.lines()) {
        CHECK(s.Owns(std::stoll(line.substr(0, line.find(':')))));
        ++fired[line];
      }
      s.lines().clear();
      s.op().ProcessWatermark(weir::kMaxWatermark);
      for (const auto& line : s.lines()) ++fired[line];
    }
    CHECK(fired == OncePerKey({"0-50=1 2 4 ", "500-520=3 "}));
  }
}

TEST_CASE("sliding window sums: a snapshot written after more records holds the sums at its barrier "
          "on both backends",
          "[state][windows]") {
  const std::string type = GENERATE("hashmap", "rocksdb");
  INFO(type);
  ScratchDir dir;
  std::map<std::string, int> fired_live;
  KeyedStateHandle at_barrier;
  {
    SlidingSumSubtask one(type, 1, 0, {});
    for (int64_t k = 0; k < kKeys; ++k) {
      one.Record(k, 1, 5);   // [-10, 10) and [0, 20)
      one.Record(k, 2, 15);  // [0, 20) and [10, 30)
    }
    weir::OperatorSnapshot snapshot = one.op().SnapshotState(Full(1));
    // After the barrier, before the snapshot is written: the same windows change, and a
    // new one opens. On the heap the accumulators are changed in place.
    for (int64_t k = 0; k < kKeys; ++k) {
      one.Record(k, 40, 6);    // [-10, 10) and [0, 20)
      one.Record(k, 300, 25);  // [10, 30) and [20, 40)
    }
    at_barrier = SlidingSumSubtask::Write(snapshot, dir / "p1", Full(1));
    one.op().ProcessWatermark(weir::kMaxWatermark);
    for (const auto& line : one.lines()) ++fired_live[line];
  }
  CHECK(fired_live == OncePerKey({"-10-10=41", "0-20=43", "10-30=302", "20-40=300"}));

  // Restored at p=2: the windows hold what they held at the barrier.
  std::map<std::string, int> fired;
  for (int i = 0; i < 2; ++i) {
    SlidingSumSubtask s(type, 2, i, {at_barrier});
    s.op().ProcessWatermark(weir::kMaxWatermark);
    for (const auto& line : s.lines()) {
      CHECK(s.Owns(std::stoll(line.substr(0, line.find(':')))));
      ++fired[line];
    }
  }
  CHECK(fired == OncePerKey({"-10-10=1", "0-20=3", "10-30=2"}));
}

TEST_CASE("sliding windows: panes fire what whole windows fire also restored from whole windows at p=2 and p=3",
          "[state][windows]") {
  const std::string type = GENERATE("hashmap", "rocksdb");
  INFO(type);
  ScratchDir dir;
  const std::vector<Step> steps = OutOfOrderSteps(400);
  const size_t half = steps.size() / 2;
  auto end = [&](auto& subtasks, std::map<std::string, int>* fired) {
    const std::vector<Step> last{{-1, 0, weir::kMaxWatermark}};
    Run(last, 0, 1, subtasks, fired);
  };

  // Whole windows, uninterrupted: what every run must fire (late refires included).
  std::map<std::string, int> by_window;
  {
    std::vector<std::unique_ptr<PaneSumSubtask>> one;
    one.push_back(std::make_unique<PaneSumSubtask>(type, false, 1, 0, std::vector<KeyedStateHandle>{}));
    Run(steps, 0, steps.size(), one, &by_window);
    end(one, &by_window);
  }
  // Late records within the lateness fired windows again: some key's window has lines
  // with two sums.
  std::map<std::string, int> firings;
  for (const auto& [line, n] : by_window) firings[line.substr(0, line.find('='))] += n;
  CHECK(std::any_of(firings.begin(), firings.end(), [](const auto& f) { return f.second > 1; }));

  SECTION("by pane, uninterrupted") {
    std::map<std::string, int> by_pane;
    std::vector<std::unique_ptr<PaneSumSubtask>> one;
    one.push_back(std::make_unique<PaneSumSubtask>(type, true, 1, 0, std::vector<KeyedStateHandle>{}));
    Run(steps, 0, steps.size(), one, &by_pane);
    end(one, &by_pane);
    INFO(Differences(by_pane, by_window));
    CHECK(by_pane == by_window);
    CHECK(NoContentsLeft(*one[0]));
  }
  SECTION("whole windows at p=1, snapshot, restored by pane at p=2, snapshot, restored by pane at p=3") {
    std::map<std::string, int> fired;
    KeyedStateHandle first, second;
    {
      std::vector<std::unique_ptr<PaneSumSubtask>> one;
      one.push_back(std::make_unique<PaneSumSubtask>(type, false, 1, 0, std::vector<KeyedStateHandle>{}));
      Run(steps, 0, half, one, &fired);
      first = one[0]->Snapshot(dir / "whole", Full(1));
    }
    std::vector<KeyedStateHandle> seconds;
    {
      std::vector<std::unique_ptr<PaneSumSubtask>> two;
      for (int i = 0; i < 2; ++i) two.push_back(std::make_unique<PaneSumSubtask>(type, true, 2, i, std::vector{first}));
      Run(steps, half, half + half / 2, two, &fired);
      for (int i = 0; i < 2; ++i) seconds.push_back(two[i]->Snapshot(dir / ("panes-" + std::to_string(i)), Full(2)));
    }
    std::vector<std::unique_ptr<PaneSumSubtask>> three;
    for (int i = 0; i < 3; ++i) three.push_back(std::make_unique<PaneSumSubtask>(type, true, 3, i, seconds));
    Run(steps, half + half / 2, steps.size(), three, &fired);
    end(three, &fired);
    INFO(Differences(fired, by_window));
    CHECK(fired == by_window);
    for (auto& s : three) CHECK(NoContentsLeft(*s));
  }
}

TEST_CASE("sliding windows: panes restored where the aggregate has no merge are refused with the way out",
          "[state][windows]") {
  const std::string type = GENERATE("hashmap", "rocksdb");
  INFO(type);
  ScratchDir dir;
  KeyedStateHandle by_pane;
  {
    PaneSumSubtask s(type, true, 1, 0, {});
    s.Record(1, 5, 12);
    by_pane = s.Snapshot(dir / "panes", Full(1));
  }
  PaneSumSubtask whole(type, false, 1, 0, {by_pane});
  CHECK_THROWS_WITH(whole.op().ProcessWatermark(weir::kMaxWatermark),
                    Catch::Contains("give the AggregateFunction its merge function again"));
}
