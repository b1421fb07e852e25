// The HDFS file system against a real namenode and datanode (Hadoop's MiniDFSCluster,
// started by scripts/peers/hdfs.sh for this test): WebHDFS writes in chunks, reads,
// listing, rename-based publishing, snapshots, and an unreachable WebHDFS port.
// One TEST_CASE, so that the cluster (about 10 s to start) starts once.
#include "lib/fs/hdfs/hdfs_file_system.h"

#include <catch2/catch.hpp>

#include "lib/common/hash.h"
#include "lib/format/snapshot_io.h"
#include "lib/format/snapshot_output.h"
#include "lib/fs/standard_file_systems.h"
#include "tests/testutil/peer_server.h"

namespace weir {
namespace {

std::string Text(const Bytes& b) { return std::string(b.begin(), b.end()); }

TEST_CASE("hdfs: files, directories, publishing and snapshots through WebHDFS", "[fs][hdfs]") {
  testing::PeerServer hdfs("hdfs", "HDFS_WORK_DIR");
  bool started = hdfs.Start();
  INFO(hdfs.output());
  REQUIRE(started);
  const std::string root = hdfs.value("fs.defaultFS");     // hdfs://127.0.0.1:RPC
  const std::string webhdfs = hdfs.value("webhdfs");       // http://127.0.0.1:HTTP
  const std::string http_port = webhdfs.substr(webhdfs.rfind(':') + 1);
  REQUIRE(!root.empty());

  ::setenv("HADOOP_USER_NAME", "weir", 1);
  Configuration config;
  config.Set("fs.hdfs.webhdfs.port", http_port);
  RegisterStandardFileSystems();
  ConfigureFileSystems(config);
  auto fs = *GetFileSystem(root + "/chk");
  CHECK(fs->scheme() == "hdfs");

  // Chunked writing: CREATE, then APPEND per chunk.
  HdfsOptions o = *HdfsOptions::FromConfig(root.substr(7), config);
  CHECK(o.user == "weir");
  o.chunk_size = 1 << 20;
  auto chunked = MakeHdfsFileSystem(o);
  std::string data(3 * (1 << 20) + 123, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7 + (i >> 9));
  auto file = chunked->Create(root + "/chk/big");
  REQUIRE(file.ok());
  for (size_t pos = 0; pos < data.size(); pos += 300000) REQUIRE((*file)->Append(std::string_view(data).substr(pos, 300000)).ok());
  auto written = (*file)->Close();
  REQUIRE(written.ok());
  CHECK(written->size == data.size());
  CHECK(written->crc32c == Crc32c(data.data(), data.size()));
  CHECK(Text(*fs->ReadAll(root + "/chk/big")) == data);
  CHECK(Text(*fs->ReadRange(root + "/chk/big", 1 << 20, 10)) == data.substr(1 << 20, 10));
  CHECK(fs->Stat(root + "/chk/big")->size == data.size());
  CHECK(fs->Stat(root + "/chk")->is_directory);
  CHECK(fs->Stat(root + "/chk/nope").status().IsNotFound());
  CHECK(fs->ReadAll(root + "/chk/nope").status().IsNotFound());

  // Publishing replaces the old file through a rename.
  REQUIRE(fs->PublishAtomically(root + "/chk/_metadata", "old").ok());
  REQUIRE(fs->PublishAtomically(root + "/chk/_metadata", "new").ok());
  CHECK(Text(*fs->ReadAll(root + "/chk/_metadata")) == "new");
  auto children = fs->List(root + "/chk");
  REQUIRE(children.ok());
  CHECK(children->size() == 2);  // big, _metadata: no temporary file left

  // A snapshot: written, resolved from the job's directory, loaded, corrupted, disposed.
  const std::string job = root + "/checkpoints/0123456789abcdef0123456789abcdef";
  REQUIRE(fs->MakeDirectories(job + "/shared").ok());
  CompletedSnapshot snap;
  snap.id = 3;
  CompletedSnapshot::Operator op;
  op.uid = "src";
  op.subtasks.resize(1);
  {
    OperatorStateSnapshot lists;
    lists.lists.push_back({"offsets", OperatorStateMode::kSplit, {Bytes{9}}});
    auto stream = WriteOperatorState(*MakeDirectoryOutput(job + "/chk-3", "", 0), lists);
    REQUIRE(stream.ok());
    op.subtasks[0].operator_state = *stream;
    snap.operators["src"] = op;
  }
  REQUIRE(WriteSnapshot(job + "/chk-3", snap).ok());
  std::string note;
  CHECK(*ResolveSnapshotPath(job, &note) == job + "/chk-3");
  REQUIRE(LoadSnapshot(job + "/chk-3/_metadata").ok());
  std::string victim;
  auto files = fs->List(job + "/chk-3");
  REQUIRE(files.ok());
  for (const auto& f : *files) {
    if (BaseName(f.path) != "_metadata") victim = f.path;
  }
  REQUIRE(fs->PublishAtomically(victim, "garbage").ok());
  auto corrupt = LoadSnapshot(job + "/chk-3", /*verify_contents=*/true);
  REQUIRE_FALSE(corrupt.ok());
  CHECK(corrupt.status().code() == StatusCode::kCorruption);
  CHECK(corrupt.status().message().find(victim) != std::string::npos);
  REQUIRE(DiscardSnapshotDirectory(job + "/chk-3").ok());
  CHECK_FALSE(*fs->Exists(job + "/chk-3"));
  REQUIRE(fs->DeleteDirectoryIfEmpty(job + "/shared").ok());
  CHECK_FALSE(*fs->Exists(job + "/shared"));

  // WebHDFS on the wrong port: Unavailable, naming the namenode and the port to set.
  Configuration wrong;
  wrong.Set("fs.hdfs.webhdfs.port", "1");
  auto bad = *OpenFileSystem(root + "/chk", wrong);
  auto down = bad->Stat(root + "/chk");
  REQUIRE_FALSE(down.ok());
  CHECK(down.status().IsUnavailable());
  CHECK(down.status().message().find(root.substr(7)) != std::string::npos);
  CHECK(down.status().hint().find("fs.hdfs.webhdfs.port") != std::string::npos);
  ::unsetenv("HADOOP_USER_NAME");
}

}  // namespace
}  // namespace weir
