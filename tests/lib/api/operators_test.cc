#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "lib/api/operators.h"
#include "lib/format/key_groups_reader.h"
#include "lib/format/snapshot_output.h"

namespace {

using WordCount = std::pair<std::string, int64_t>;

template <class T>
class CollectingOutput final : public weir::Output<T> {
 public:
  void Collect(const T& record) override { records.push_back(record); }
  std::vector<T> records;
};

const std::string& WordOf(const WordCount& wc) { return wc.first; }

// A keyed reduce operator as the runtime sets it up (one subtask, state on the heap).
template <class F>
struct ReduceHarness {
  using Operator = weir::internal::ReduceOperator<std::string, WordCount, const std::string& (*)(const WordCount&), F>;
  explicit ReduceHarness(F f, const weir::RestoredState* restored = nullptr) : op(&WordOf, std::move(f)) {
    weir::OperatorContext ctx;
    ctx.operator_name = "reduce";
    ctx.restored = restored;
    op.Setup(ctx);
    op.SetOutput(&out);
    op.Open();
  }
  Operator op;
  CollectingOutput<WordCount> out;
};

}  // namespace

TEST_CASE("reduce: a function returning the new value and one folding in place give the same sums",
          "[api][operators]") {
  auto returning = [](const WordCount& a, const WordCount& b) { return WordCount{a.first, a.second + b.second}; };
  auto in_place = [](WordCount& acc, const WordCount& b) { acc.second += b.second; };
  ReduceHarness<decltype(returning)> r(returning);
  ReduceHarness<decltype(in_place)> p(in_place);
  const std::vector<WordCount> input = {{"a", 1}, {"b", 5}, {"a", 2}, {"a", 3}, {"b", -5}, {"c", 7}};
  for (const auto& wc : input) {
    r.op.Collect(wc);
    p.op.Collect(wc);
  }
  const std::vector<WordCount> expected = {{"a", 1}, {"b", 5}, {"a", 3}, {"a", 6}, {"b", 0}, {"c", 7}};
  CHECK(r.out.records == expected);
  CHECK(p.out.records == expected);
}

TEST_CASE("reduce: folding in place leaves a snapshot taken before it unchanged", "[api][operators]") {
  auto in_place = [](WordCount& acc, const WordCount& b) { acc.second += b.second; };
  ReduceHarness<decltype(in_place)> h(in_place);
  h.op.Collect({"w", 1});
  h.op.Collect({"w", 1});
  auto snapshot = h.op.SnapshotState({});  // the barrier: the state is pinned
  h.op.Collect({"w", 1});
  CHECK(h.out.records.back() == WordCount{"w", 3});

  auto out = weir::MakeDirectoryOutput("", "", 0);
  auto handles = snapshot.keyed->Write(*out);
  REQUIRE(handles.ok());
  auto rows = weir::ReadKeyGroups(*handles, {0, 127});
  REQUIRE(rows.ok());
  weir::HeapKeyedStateBackend<std::string> restored(128, {0, 127});
  restored.SetRestored(*rows);
  restored.SetCurrentKey("w");
  CHECK(restored.GetValueState<WordCount>("_reduce").Value() == WordCount{"w", 2});
}

TEST_CASE("restore on the heap: the operator takes the restored rows over, no second copy stays with the task",
          "[api][operators]") {
  auto in_place = [](WordCount& acc, const WordCount& b) { acc.second += b.second; };
  ReduceHarness<decltype(in_place)> before(in_place);
  before.op.Collect({"w", 1});
  before.op.Collect({"w", 1});
  auto out = weir::MakeDirectoryOutput("", "", 0);
  auto handles = before.op.SnapshotState({}).keyed->Write(*out);
  REQUIRE(handles.ok());
  auto rows = weir::ReadKeyGroups(*handles, {0, 127});
  REQUIRE(rows.ok());
  weir::RestoredState restored;  // what the task keeps for the subtask's whole life
  restored.restored = true;
  restored.keyed = std::move(*rows);

  ReduceHarness<decltype(in_place)> after(in_place, &restored);
  // A copy left here would double the memory of a restored job (1 GB of state: 2 GB more).
  CHECK(restored.keyed.empty());
  after.op.Collect({"w", 1});
  CHECK(after.out.records.back() == WordCount{"w", 3});
}
