// ApplyToKeyedState in the broadcast side of a KeyedBroadcastProcessFunction runs over
// every key of the subtask that has the state, on both backends: keys with state of
// another name are left out, the function may change the state, and after a restore at
// another parallelism each subtask visits its own keys, before any record touched them.

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "lib/api/two_input_operators.h"
#include "tests/runtime/state/backend_harness.h"

namespace {

using weir::KeyedStateHandle;
using weir::KeyGroupRange;
using namespace weir::testing;

constexpr int64_t kKeys = 10;
int64_t KeyOf(const int64_t& n) { return n % kKeys; }
using KeyF = int64_t (*)(const int64_t&);

const weir::ValueStateDescriptor<int64_t> kSum("sum");
const weir::ListStateDescriptor<int64_t> kOdd("odd-records");

// Numbers add into "sum" of their key (odd keys also list them in "odd-records"); a
// broadcast factor f writes "sum,<key>,<sum>" and multiplies each sum by f, and writes
// "odd,<key>,<count>" per key with odd records.
class ScaleSums final : public weir::KeyedBroadcastProcessFunction<int64_t, int64_t, int64_t, std::string> {
 public:
  void Open(weir::KeyedRuntimeContext<int64_t>& ctx) override {
    sum_ = &ctx.GetState<int64_t>(kSum.name());
    odd_ = &ctx.GetListState<int64_t>(kOdd.name());
  }
  void ProcessElement(const int64_t& n, const int64_t& key, const weir::ReadOnlyBroadcastContext&,
                      weir::Collector<std::string>&) override {
    sum_->Update(sum_->Value().value_or(0) + n);
    if (key % 2 == 1) odd_->Add(n);
  }
  void ProcessBroadcastElement(const int64_t& factor, const Context& ctx, weir::Collector<std::string>& out) override {
    ctx.ApplyToKeyedState(kSum, [&](const int64_t& key, weir::ValueState<int64_t>& sum) {
      out.Collect("sum," + std::to_string(key) + "," + std::to_string(*sum.Value()));
      sum.Update(*sum.Value() * factor);
    });
    ctx.ApplyToKeyedState(kOdd, [&](const int64_t& key, weir::ListState<int64_t>& odd) {
      out.Collect("odd," + std::to_string(key) + "," + std::to_string(odd.Get().size()));
    });
  }

 private:
  weir::ValueState<int64_t>* sum_ = nullptr;
  weir::ListState<int64_t>* odd_ = nullptr;
};

using Operator = weir::internal::KeyedBroadcastProcessOperator<int64_t, int64_t, int64_t, std::string, KeyF, ScaleSums>;

class MainLines final : public weir::Output<weir::SideOutputRecord<std::string>> {
 public:
  void Collect(const weir::SideOutputRecord<std::string>& r) override {
    REQUIRE(r.MainRecord());
    lines.push_back(*r.MainRecord());
  }
  std::vector<std::string> lines;
};

// Subtask `index` of `parallelism`, its keyed state in `type`, restored from `handles`.
class Subtask {
 public:
  Subtask(const std::string& type, int parallelism, int index, const std::vector<KeyedStateHandle>& handles)
      : range_(weir::KeyGroupRangeForOperator(kMaxParallelism, parallelism, index)), op_(KeyOf, ScaleSums(), {}) {
    weir::OperatorContext ctx;
    ctx.operator_name = "scale";
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
    op_.InitializeState();
    op_.Open();
  }
  bool Owns(int64_t key) const { return range_.Contains(weir::KeyGroupOf(key, kMaxParallelism)); }
  void Number(int64_t n) { op_.Collect(n); }
  void Broadcast(int64_t factor) { static_cast<weir::Output<int64_t>*>(op_.InputAt(1))->Collect(factor); }
  KeyedStateHandle Snapshot(const std::string& dir, weir::SnapshotOptions options) {
    auto snapshot = op_.SnapshotState(options);
    auto handles = snapshot.keyed->Write(*Backend::OutputOf(dir, options));
    INFO(handles.status().ToString());
    REQUIRE(handles.ok());
    REQUIRE(handles->size() == 1);
    return (*handles)[0];
  }
  std::vector<std::string> TakeLines() {
    std::vector<std::string> lines = std::move(out_.lines);
    out_.lines.clear();
    std::sort(lines.begin(), lines.end());
    return lines;
  }

 private:
  KeyGroupRange range_;
  std::unique_ptr<Backend> bytes_;
  weir::RestoredState restored_;
  Operator op_;
  MainLines out_;
};

// The lines a factor writes when every key k holds sum * scale: "sum,k,..." for all keys
// owned (by `owns`), "odd,k,<count>" for the odd ones.
template <class Owns>
std::vector<std::string> Expected(int64_t count, int64_t scale, Owns owns) {
  std::vector<std::string> lines;
  for (int64_t k = 0; k < kKeys; ++k) {
    if (!owns(k)) continue;
    int64_t sum = 0, n_of_key = 0;
    for (int64_t n = 1; n <= count; ++n) {
      if (KeyOf(n) != k) continue;
      sum += n;
      ++n_of_key;
    }
    lines.push_back("sum," + std::to_string(k) + "," + std::to_string(sum * scale));
    if (k % 2 == 1) lines.push_back("odd," + std::to_string(k) + "," + std::to_string(n_of_key));
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

}  // namespace

TEST_CASE("ApplyToKeyedState visits every key of the subtask with the state, on both backends, and after a "
          "restore at another parallelism",
          "[state][two-input]") {
  const std::string type = GENERATE("hashmap", "rocksdb");
  INFO(type);
  ScratchDir dir;
  const int64_t count = 95;
  std::vector<KeyedStateHandle> at_one;
  {
    Subtask one(type, 1, 0, {});
    one.Broadcast(5);  // no key has state yet
    CHECK(one.TakeLines().empty());
    for (int64_t n = 1; n <= count; ++n) one.Number(n);
    one.Broadcast(2);
    CHECK(one.TakeLines() == Expected(count, 1, [](int64_t) { return true; }));
    one.Broadcast(3);  // the sums were doubled
    CHECK(one.TakeLines() == Expected(count, 2, [](int64_t) { return true; }));
    at_one.push_back(one.Snapshot(dir / "p1", Full(1)));
  }
  std::vector<std::string> all;
  for (int i = 0; i < 2; ++i) {
    Subtask s(type, 2, i, at_one);
    s.Broadcast(1);
    std::vector<std::string> lines = s.TakeLines();
    CHECK(lines == Expected(count, 6, [&](int64_t k) { return s.Owns(k); }));
    all.insert(all.end(), lines.begin(), lines.end());
  }
  std::sort(all.begin(), all.end());
  CHECK(all == Expected(count, 6, [](int64_t) { return true; }));
}
