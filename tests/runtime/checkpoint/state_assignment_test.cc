// State assignment on restore, with the built-in split-based sources: their splits
// are split list state, so a restore at another parallelism hands every split to
// exactly one new subtask and every record is emitted exactly once.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "lib/api/connectors/file_source.h"
#include "lib/api/connectors/sequence_source.h"
#include "runtime/checkpoint/state_assignment.h"
#include "tests/runtime/checkpoint/test_coordinator.h"
#include "tests/testutil/subtask_harness.h"
#include "tests/testutil/temp_dir.h"

using weir::CompletedSnapshot;
using weir::OperatorSubtaskState;
using weir::RestoredState;
using weir::runtime::AssignState;

namespace {

template <class T>
class Capture final : public weir::Output<T> {
 public:
  void Collect(const T& r) override { records.push_back(r); }
  std::vector<T> records;
};

// One subtask of a source, run by hand: context, operator state and the source.
template <class S, class T>
struct SourceSubtask {
  weir::testing::SubtaskHarness subtask;
  S source;
  Capture<T> out;

  SourceSubtask(S s, int index, int parallelism, const RestoredState* from)
      : subtask(index, parallelism, from), source(std::move(s)) {
    source.InitializeState(subtask.runtime());
  }
  // Emits up to `n` records; true when the source has ended.
  bool Emit(int n) {
    int64_t wake = -1;
    return source.EmitNext(out, n, &wake) == weir::SourceStatus::kEndOfInput;
  }
  OperatorSubtaskState Snapshot() {
    source.SnapshotState(1);
    return weir::testing::WithLists(subtask.Snapshot().lists);
  }
};

// The state subtask `subtask` of `parallelism` gets from `op`.
RestoredState Assign(const CompletedSnapshot::Operator& op, int parallelism, int max_parallelism, int subtask) {
  auto lists = weir::runtime::ReadOperatorStates(op);
  REQUIRE(lists.ok());
  return AssignState(op, *lists, parallelism, max_parallelism, subtask);
}

CompletedSnapshot::Operator OperatorOf(std::vector<OperatorSubtaskState> subtasks) {
  CompletedSnapshot::Operator op;
  op.uid = "source";
  op.parallelism = static_cast<int>(subtasks.size());
  op.max_parallelism = 128;
  op.subtasks = std::move(subtasks);
  return op;
}

// Runs a source at p=2 (subtask i emitting first[i] records), restores it at p=3 (each
// subtask emitting a few), then at p=1 to the end. Returns every record emitted, and
// the records of the last, single subtask in `last_run`.
template <class S, class T, class Make>
std::vector<T> RunRescaled(Make make, std::vector<int> first, std::vector<T>* last_run) {
  using Sub = SourceSubtask<S, T>;
  std::vector<T> all;
  std::vector<std::unique_ptr<Sub>> run;
  for (int i = 0; i < 2; ++i) {
    run.push_back(std::make_unique<Sub>(make(), i, 2, nullptr));
    run.back()->Emit(first[i]);
  }
  auto snapshot_of = [&] {
    std::vector<OperatorSubtaskState> snaps;
    for (auto& s : run) {
      snaps.push_back(s->Snapshot());
      all.insert(all.end(), s->out.records.begin(), s->out.records.end());
    }
    return OperatorOf(std::move(snaps));
  };
  auto op = snapshot_of();
  std::vector<std::unique_ptr<Sub>> next;
  for (int i = 0; i < 3; ++i) {
    RestoredState r = Assign(op, 3, 128, i);
    next.push_back(std::make_unique<Sub>(make(), i, 3, &r));
    next.back()->Emit(123 * (i + 1));
  }
  run = std::move(next);
  op = snapshot_of();
  RestoredState r = Assign(op, 1, 128, 0);
  Sub single(make(), 0, 1, &r);
  while (!single.Emit(100)) {
  }
  all.insert(all.end(), single.out.records.begin(), single.out.records.end());
  *last_run = single.out.records;
  std::sort(all.begin(), all.end());
  return all;
}

}  // namespace

TEST_CASE("sequence source: restored 2 -> 3 -> 1, every number is emitted exactly once", "[checkpoint][sources]") {
  const int64_t last = 10000;
  std::vector<int64_t> single;
  // The subtasks progress unevenly before the first restore.
  auto all = RunRescaled<weir::SequenceSource, int64_t>([&] { return weir::SequenceSource(1, last); }, {1000, 300},
                                                         &single);
  std::vector<int64_t> expected(last);
  for (int64_t n = 1; n <= last; ++n) expected[n - 1] = n;
  CHECK(all == expected);
  // One subtask holding every split emits in ascending order, as a parallelism-1 source.
  CHECK(std::is_sorted(single.begin(), single.end()));
}

TEST_CASE("sequence source: positions of snapshots before split-based sources are taken over", "[checkpoint][sources]") {
  // Old state: union list "sequence-positions" with (subtask, next) of 2 subtasks.
  RestoredState old;
  old.restored = true;
  auto& positions = old.operator_lists["sequence-positions"];
  positions.mode = weir::OperatorStateMode::kUnion;
  positions.elements = {weir::SerializeToBytes(std::pair<int64_t, int64_t>{0, 101}),
                        weir::SerializeToBytes(std::pair<int64_t, int64_t>{1, 52})};
  std::vector<int64_t> all;
  for (int i = 0; i < 3; ++i) {
    SourceSubtask<weir::SequenceSource, int64_t> s(weir::SequenceSource(1, 200), i, 3, &old);
    while (!s.Emit(64)) {
    }
    all.insert(all.end(), s.out.records.begin(), s.out.records.end());
  }
  std::sort(all.begin(), all.end());
  std::vector<int64_t> expected;
  for (int64_t n = 101; n <= 200; n += 2) expected.push_back(n);
  for (int64_t n = 52; n <= 200; n += 2) expected.push_back(n);
  std::sort(expected.begin(), expected.end());
  CHECK(all == expected);
}

TEST_CASE("file source: restored 2 -> 3 -> 1 mid-file, every line is read exactly once", "[checkpoint][sources]") {
  weir::testing::TempDir tmp;
  std::vector<std::string> expected;
  for (int f = 0; f < 5; ++f) {
    std::ofstream out(tmp / ("f" + std::to_string(f) + ".txt"));
    for (int l = 0; l < 400 + 37 * f; ++l) {
      std::string line = "file " + std::to_string(f) + " line " + std::to_string(l);
      out << line << "\n";
      expected.push_back(line);
    }
  }
  const std::string input = tmp.path().string();
  std::vector<std::string> single;
  // Subtask 0 stops in its second file.
  auto all = RunRescaled<weir::FileSource, std::string>([&] { return weir::FileSource(input); }, {450, 100}, &single);
  std::sort(expected.begin(), expected.end());
  CHECK(all == expected);
}

TEST_CASE("state assignment: finished subtasks hand on nothing; a fully finished operator restores finished",
          "[checkpoint]") {
  OperatorSubtaskState running = weir::testing::WithLists({{"splits", weir::OperatorStateMode::kSplit, {{1}, {2}, {3}}}});
  OperatorSubtaskState finished;
  finished.finished = true;
  auto partly = OperatorOf({finished, running});
  CHECK_FALSE(weir::runtime::IsFullyFinished(partly));
  // Same parallelism, but subtask 0 finished: its share is redistributed (a downscale).
  std::vector<weir::Bytes> seen;
  for (int i = 0; i < 2; ++i) {
    RestoredState r = Assign(partly, 2, 128, i);
    CHECK_FALSE(r.finished);
    const auto& l = r.operator_lists["splits"].elements;
    seen.insert(seen.end(), l.begin(), l.end());
  }
  CHECK(seen.size() == 3);
  auto fully = OperatorOf({finished, finished});
  CHECK(weir::runtime::IsFullyFinished(fully));
  RestoredState r = Assign(fully, 3, 128, 2);
  CHECK(r.finished);
  CHECK(r.operator_lists.empty());
}

TEST_CASE("file source: lines longer than a read block, CRLF, empty lines and a last line without newline, "
          "restored mid-file", "[checkpoint][sources]") {
  weir::testing::TempDir tmp;
  std::vector<std::string> expected;
  {
    std::ofstream out(tmp / "long.txt", std::ios::binary);
    for (int l = 0; l < 300; ++l) {
      // Lengths around and beyond the 64 KiB read block, short ones, and empty lines.
      const size_t length = l % 7 == 0 ? 70000 + 997 * l : l % 5 == 0 ? 0 : 3 * l + 1;
      std::string line(length, static_cast<char>('a' + l % 26));
      if (!line.empty()) line[0] = static_cast<char>('A' + l % 26);
      out << line << (l % 3 == 0 ? "\r\n" : "\n");
      expected.push_back(line);
    }
    out << "the last line";  // no newline
    expected.push_back("the last line");
  }
  std::vector<std::string> single;
  // One file: subtask 0 reads 37 lines and snapshots mid-file; the restored subtasks
  // go on from its offset.
  auto all = RunRescaled<weir::FileSource, std::string>([&] { return weir::FileSource(tmp.path().string()); },
                                                         {37, 0}, &single);
  std::sort(expected.begin(), expected.end());
  CHECK(all.size() == expected.size());
  CHECK(all == expected);
}
