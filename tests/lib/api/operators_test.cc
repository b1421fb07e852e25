#include <catch2/catch.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "lib/api/channel_io.h"
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
template <class K, class T, class KeyF, class F>
struct KeyedReduceHarness {
  using Operator = weir::internal::ReduceOperator<K, T, KeyF, F>;
  KeyedReduceHarness(KeyF key_fn, F f, const weir::RestoredState* restored = nullptr)
      : op(std::move(key_fn), std::move(f)) {
    weir::OperatorContext ctx;
    ctx.operator_name = "reduce";
    ctx.restored = restored;
    op.Setup(ctx);
    op.SetOutput(&out);
    op.Open();
  }
  Operator op;
  CollectingOutput<T> out;
};

// The same, counting words.
template <class F>
struct ReduceHarness : KeyedReduceHarness<std::string, WordCount, const std::string& (*)(const WordCount&), F> {
  explicit ReduceHarness(F f, const weir::RestoredState* restored = nullptr)
      : KeyedReduceHarness<std::string, WordCount, const std::string& (*)(const WordCount&), F>(&WordOf, std::move(f),
                                                                                               restored) {}
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

TEST_CASE("reduce: records read from a buffer, keys prepared ahead, give the sums of records taken one by one",
          "[api][operators]") {
  // Enough distinct words for the state to outgrow the caches (each takes more than
  // sizeof(WordCount) bytes of state), so the reader prefetches for the later buffers too.
  const int many = static_cast<int>(weir::PrefetchStateBytes() / sizeof(WordCount));
  const int words = GENERATE_COPY(20, many);
  std::vector<WordCount> input;
  for (int i = 0; i < 3 * words; ++i) {
    // In 64 bits: with a core's L2 of 2 MB, `many` is 131 072 and i * 7919 passes 2^31.
    input.emplace_back("w" + std::to_string(int64_t{i} * 7919 % words), i % 5);
  }
  auto in_place = [](WordCount& acc, const WordCount& b) { acc.second += b.second; };
  ReduceHarness<decltype(in_place)> one_by_one(in_place);
  for (const auto& wc : input) one_by_one.op.Collect(wc);

  // Records of a hash edge carry their key's hash code and key group, as the sender
  // computed them (KeySelector); the reader takes them instead of hashing again.
  const bool with_key_hashes = GENERATE(false, true);
  auto word = [](const WordCount& wc) -> const std::string& { return wc.first; };
  const weir::KeySelector<WordCount, std::string, decltype(word)> selector(word);
  ReduceHarness<decltype(in_place)> read(in_place);
  weir::RecordReader<WordCount> reader(static_cast<weir::Output<WordCount>*>(read.op.Input()), false,
                                       with_key_hashes ? selector.key_hash_bytes() : 0);
  for (size_t begin = 0; begin < input.size(); begin += 1000) {  // buffers of 1000 records
    const size_t end = std::min(input.size(), begin + 1000);
    std::vector<uint8_t> bytes;
    weir::DataOutput out(&bytes);
    for (size_t i = begin; i < end; ++i) {
      if (with_key_hashes) weir::WriteKeyHash(out, selector.Hash(input[i], 128), selector.key_hash_bytes());
      weir::Serializer<WordCount>::Write(out, input[i]);
    }
    REQUIRE(reader.Process(bytes.data(), bytes.data() + bytes.size()) == static_cast<int64_t>(end - begin));
  }
  CHECK(read.out.records == one_by_one.out.records);
}

TEST_CASE("reduce: number keys read with their key groups alone are found again after a restore",
          "[api][operators]") {
  // A number key's hash code is not carried: the operator computes it, and the state it
  // keeps by it is found again by a restored operator, which hashes the restored keys.
  using Sum = std::pair<int64_t, int64_t>;
  auto key_of = [](const Sum& s) { return s.first; };
  using KeyF = decltype(key_of);
  auto add = [](Sum& acc, const Sum& s) { acc.second += s.second; };
  using Harness = KeyedReduceHarness<int64_t, Sum, KeyF, decltype(add)>;
  const weir::KeySelector<Sum, int64_t, KeyF> selector(key_of);
  REQUIRE(selector.key_hash_bytes() == 2);
  auto read = [&](Harness::Operator& op, const std::vector<Sum>& sums) {
    weir::RecordReader<Sum> reader(static_cast<weir::Output<Sum>*>(op.Input()), false, selector.key_hash_bytes());
    std::vector<uint8_t> bytes;
    weir::DataOutput out(&bytes);
    for (const Sum& s : sums) {
      weir::WriteKeyHash(out, selector.Hash(s, 128), selector.key_hash_bytes());
      weir::Serializer<Sum>::Write(out, s);
    }
    REQUIRE(reader.Process(bytes.data(), bytes.data() + bytes.size()) == static_cast<int64_t>(sums.size()));
  };
  Harness before(key_of, add);
  read(before.op, {{1, 10}, {2, 20}, {1, 1}, {-7, 5}});
  auto handles = before.op.SnapshotState({}).keyed->Write(*weir::MakeDirectoryOutput("", "", 0));
  REQUIRE(handles.ok());
  auto rows = weir::ReadKeyGroups(*handles, {0, 127});
  REQUIRE(rows.ok());
  weir::RestoredState restored;
  restored.restored = true;
  restored.keyed = std::move(*rows);

  Harness after(key_of, add, &restored);
  read(after.op, {{2, 2}, {-7, 1}, {1, 100}, {3, 3}});
  CHECK(after.out.records == std::vector<Sum>{{2, 22}, {-7, 6}, {1, 111}, {3, 3}});
}

namespace {

struct Event {
  int64_t id = 0;
  std::string user;
};

// A key of a record, and a key selector whose reference points outside the record (into
// a buffer the next call overwrites): the prepared key must be a copy then.
const std::string& UserInBuffer(const Event& e) {
  static std::string buffer;
  buffer = e.user;
  return buffer;
}

template <class K, class KeyF>
std::vector<K> CurrentKeysPrepared(const std::vector<Event>& events, KeyF key_fn) {
  weir::KeyedStates<K> states(128, {0, 127}, {});
  weir::PreparedKeys<K, Event, KeyF> keys;
  keys.Start(states);
  const int n = static_cast<int>(events.size());
  REQUIRE(n <= weir::KeyedInput<Event>::kSlots);
  keys.Prepare(key_fn, events.data(), nullptr, 0, n, states);
  std::vector<K> current;
  for (int slot = 0; slot < n; ++slot) {
    keys.SetCurrent(slot, states);
    current.push_back(states.current_key());
  }
  return current;
}

}  // namespace

TEST_CASE("prepared keys: each record's key is its own, however the key selector returns it", "[api][operators]") {
  const std::vector<Event> events = {{1, "ann"}, {2, "bob"}, {3, "a user with a name longer than fifteen"},
                                     {4, "ann"}, {5, ""},    {6, "cy"}};
  const std::vector<std::string> users = {"ann", "bob", "a user with a name longer than fifteen", "ann", "", "cy"};
  // By reference into the record.
  CHECK(CurrentKeysPrepared<std::string>(events, [](const Event& e) -> const std::string& { return e.user; }) == users);
  // By reference to a buffer outside the record, overwritten by every call.
  CHECK(CurrentKeysPrepared<std::string>(events, &UserInBuffer) == users);
  // By value.
  CHECK(CurrentKeysPrepared<std::string>(events, [](const Event& e) { return e.user; }) == users);
  CHECK(CurrentKeysPrepared<int64_t>(events, [](const Event& e) { return e.id % 4; }) ==
        std::vector<int64_t>{1, 2, 3, 0, 1, 2});
}

TEST_CASE("prepared keys: a key of another subtask's key group is refused when it becomes current",
          "[api][operators]") {
  weir::KeyedStates<int64_t> states(128, {0, 63}, {});
  weir::PreparedKeys<int64_t, int64_t, int64_t (*)(const int64_t&)> keys;
  int64_t (*identity)(const int64_t&) = [](const int64_t& n) { return n; };
  int64_t outside = 0;
  while (weir::KeyGroupOf(outside, 128) <= 63) ++outside;
  keys.Start(states);
  keys.Prepare(identity, &outside, nullptr, 0, 1, states);  // preparing (and prefetching) is only a hint
  CHECK_THROWS_AS(keys.SetCurrent(0, states), std::logic_error);
}

TEST_CASE("prepared keys: a record's carried key group is taken as it is", "[api][operators]") {
  weir::KeyedStates<int64_t> states(128, {0, 63}, {});
  weir::PreparedKeys<int64_t, int64_t, int64_t (*)(const int64_t&)> keys;
  int64_t (*identity)(const int64_t&) = [](const int64_t& n) { return n; };
  int64_t mine = 0;
  while (weir::KeyGroupOf(mine, 128) > 63) ++mine;
  keys.Start(states);
  // The key's own key group, then one of another subtask: the key group carried is the
  // one checked (the key is not hashed into one again). A number's hash code is not
  // carried (kKeyHashCodeCarried): the one given is ignored.
  static_assert(!weir::kKeyHashCodeCarried<int64_t>);
  const weir::KeyHash hashes[2] = {{0, weir::KeyGroupOf(mine, 128)}, {0, 64}};
  const int64_t records[2] = {mine, mine};
  keys.Prepare(identity, records, hashes, 0, 2, states);
  keys.SetCurrent(0, states);
  CHECK(states.current_key() == mine);
  const auto& heap = dynamic_cast<weir::HeapKeyedStateBackend<int64_t>&>(states.backend());
  CHECK(heap.current_hashed_key().hash_code == weir::KeyHashCode<int64_t>::Of(mine));
  CHECK(heap.current_kg_index() == weir::KeyGroupOf(mine, 128));
  CHECK_THROWS_AS(keys.SetCurrent(1, states), std::logic_error);
}
