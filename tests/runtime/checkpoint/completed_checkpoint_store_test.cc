// CompletedCheckpointStore: retention, the shared-state registry, and who owns the
// checkpoint a job was restored from (restore mode CLAIM or NO_CLAIM).
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "runtime/checkpoint/completed_checkpoint_store.h"

using weir::CompletedSnapshot;
using weir::KeyedStateHandle;
using weir::runtime::CompletedCheckpointStore;
using weir::runtime::JobStatus;

namespace {

// A checkpoint `id` in directory "chk-<id>" whose one subtask references `shared` files.
std::shared_ptr<const CompletedSnapshot> Checkpoint(int64_t id, std::vector<std::string> shared) {
  auto c = std::make_shared<CompletedSnapshot>();
  c->id = id;
  c->backend = "rocksdb";
  c->external_path = "chk-" + std::to_string(id);
  KeyedStateHandle h;
  h.type = KeyedStateHandle::Type::kNative;
  for (const auto& name : shared) {
    weir::StreamHandle file;
    file.path = "shared/" + name;
    file.size = 1;
    h.native.shared_files.emplace_back(name, file);
  }
  auto& op = c->operators["sum"];
  op.subtasks.emplace_back();
  op.subtasks.back().keyed.push_back(std::move(h));
  return c;
}

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

TEST_CASE("checkpoint store: a shared file goes when the last retained checkpoint referencing it goes",
          "[checkpoint]") {
  CompletedCheckpointStore store(2);
  CHECK(store.Add(Checkpoint(1, {"a", "b"}), nullptr).empty());
  CHECK(store.Add(Checkpoint(2, {"a", "c"}), nullptr).empty());
  std::vector<int64_t> dropped;
  auto discard = store.Add(Checkpoint(3, {"c", "d"}), &dropped);
  CHECK(dropped == std::vector<int64_t>{1});
  CHECK(discard.directories == std::vector<std::string>{"chk-1"});
  CHECK(discard.shared_files == std::vector<std::string>{"shared/b"});  // "a" is still in chk-2
  discard = store.Add(Checkpoint(4, {"d"}), &dropped);
  CHECK(Sorted(discard.shared_files) == std::vector<std::string>{"shared/a"});
  CHECK(store.Latest()->id == 4);
}

TEST_CASE("checkpoint store: restored with CLAIM, the job owns the checkpoint and deletes it once subsumed",
          "[checkpoint]") {
  CompletedCheckpointStore store(1);
  store.SetRestored(Checkpoint(10, {"x", "y"}), /*claimed=*/true);
  CHECK(store.Latest()->id == 10);
  // The first checkpoint after the restore references "x" (files reused under CLAIM).
  std::vector<int64_t> dropped;
  auto discard = store.Add(Checkpoint(11, {"x", "z"}), &dropped);
  CHECK(dropped == std::vector<int64_t>{10});
  CHECK(discard.directories == std::vector<std::string>{"chk-10"});
  CHECK(discard.shared_files == std::vector<std::string>{"shared/y"});
  // At the end of the job the owned files go as the job's own do.
  discard = store.DiscardAtEnd(JobStatus::kFinished, "NO_EXTERNALIZED_CHECKPOINTS");
  CHECK(discard.directories == std::vector<std::string>{"chk-11"});
  CHECK(Sorted(discard.shared_files) == std::vector<std::string>{"shared/x", "shared/z"});
}

TEST_CASE("checkpoint store: restored with NO_CLAIM, the checkpoint and its shared files are never deleted",
          "[checkpoint]") {
  CompletedCheckpointStore store(1);
  store.SetRestored(Checkpoint(10, {"x", "y"}), /*claimed=*/false);
  CHECK(store.Latest()->id == 10);
  auto discard = store.Add(Checkpoint(11, {"p"}), nullptr);
  CHECK(discard.empty());
  discard = store.Add(Checkpoint(12, {"q"}), nullptr);
  CHECK(discard.directories == std::vector<std::string>{"chk-11"});
  CHECK(discard.shared_files == std::vector<std::string>{"shared/p"});
  // A failed checkpoint that referenced a restored file does not delete it either.
  CHECK(store.UnreferencedSharedFiles(*Checkpoint(13, {"x", "r"})) == std::vector<std::string>{"shared/r"});
  discard = store.DiscardAtEnd(JobStatus::kCanceled, "NO_EXTERNALIZED_CHECKPOINTS");
  CHECK(discard.directories == std::vector<std::string>{"chk-12"});
  CHECK(discard.shared_files == std::vector<std::string>{"shared/q"});
}

TEST_CASE("checkpoint store: retained on cancellation or failure as execution.checkpointing.externalized-"
          "checkpoint-retention says",
          "[checkpoint]") {
  CompletedCheckpointStore store(1);
  store.Add(Checkpoint(1, {"a"}), nullptr);
  CHECK(store.DiscardAtEnd(JobStatus::kCanceled, "RETAIN_ON_CANCELLATION").empty());
  CHECK(store.DiscardAtEnd(JobStatus::kFailed, "RETAIN_ON_CANCELLATION").empty());
  auto discard = store.DiscardAtEnd(JobStatus::kFailed, "NO_EXTERNALIZED_CHECKPOINTS");
  CHECK(discard.directories == std::vector<std::string>{"chk-1"});
}
