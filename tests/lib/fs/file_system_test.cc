// The FileSystem layer on local files: URIs and path arithmetic, the streaming writer
// (size and CRC-32C), ranged reads, listing, deletion, atomic publishing and the
// registry by scheme.
#include "lib/fs/file_system.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "lib/common/hash.h"
#include "tests/testutil/temp_dir.h"

namespace fs = std::filesystem;

namespace weir {
namespace {

using testing::TempDir;

std::string Text(const Bytes& b) { return std::string(b.begin(), b.end()); }

TEST_CASE("file system: URIs are parsed by scheme", "[fs]") {
  struct Case {
    std::string text, scheme, authority, path;
  };
  for (const Case& c : std::vector<Case>{
           {"/tmp/chk", "file", "", "/tmp/chk"},
           {"relative/dir", "file", "", "relative/dir"},
           {"file:///tmp/chk", "file", "", "/tmp/chk"},
           {"file:/tmp/chk", "file", "", "/tmp/chk"},
           {"s3://bucket/a/b/", "s3", "bucket", "a/b"},
           {"s3://bucket", "s3", "bucket", ""},
           {"S3://bucket/x", "s3", "bucket", "x"},
           {"hdfs://node-1:8020/chk", "hdfs", "node-1:8020", "chk"},
       }) {
    INFO(c.text);
    auto uri = Uri::Parse(c.text);
    REQUIRE(uri.ok());
    CHECK(uri->scheme == c.scheme);
    CHECK(uri->authority == c.authority);
    CHECK(uri->path == c.path);
  }
  for (const char* bad : {"", "s3:///key", "s3:/bucket", "hdfs:///x"}) {
    INFO(bad);
    auto uri = Uri::Parse(bad);
    REQUIRE_FALSE(uri.ok());
    CHECK(uri.status().IsInvalidArgument());
  }
}

TEST_CASE("file system: paths join and split the same way for URIs and local paths", "[fs]") {
  CHECK(JoinPath("s3://b/chk", "x") == "s3://b/chk/x");
  CHECK(JoinPath("s3://b/chk/", "x") == "s3://b/chk/x");
  CHECK(JoinPath("/tmp", "x") == "/tmp/x");
  CHECK(ParentPath("s3://b/chk/x") == "s3://b/chk");
  CHECK(ParentPath("s3://b/x") == "s3://b");
  CHECK(ParentPath("/tmp/x/") == "/tmp");
  CHECK(BaseName("hdfs://h:1/a/_metadata") == "_metadata");
  CHECK(BaseName("/a/b/") == "b");
  CHECK(ToLocation("s3://b/sp") == "s3://b/sp");
  CHECK(ToLocation("/tmp/./sp") == "file:/tmp/sp");
  CHECK(ToLocation("file:///tmp/sp") == "file:/tmp/sp");
}

TEST_CASE("file system: a written file has the size and CRC-32C of its bytes and appears only on close", "[fs]") {
  TempDir tmp;
  auto local = LocalFileSystem();
  const std::string path = (tmp.path() / "sub" / "state").string();
  auto file = local->Create(path);
  REQUIRE(file.ok());
  REQUIRE((*file)->Append("hello, ").ok());
  REQUIRE((*file)->Append("world").ok());
  CHECK_FALSE(fs::exists(path));
  auto written = (*file)->Close();
  REQUIRE(written.ok());
  CHECK(written->size == 12);
  CHECK(written->crc32c == Crc32c("hello, world", 12));
  auto all = local->ReadAll("file://" + path);
  REQUIRE(all.ok());
  CHECK(Text(*all) == "hello, world");
  CHECK(fs::directory_iterator(tmp.path() / "sub") != fs::directory_iterator());  // only `state` is left
  int entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(tmp.path() / "sub")) ++entries;
  CHECK(entries == 1);
}

TEST_CASE("file system: an aborted or abandoned file leaves nothing behind", "[fs]") {
  TempDir tmp;
  auto local = LocalFileSystem();
  {
    auto file = local->Create((tmp.path() / "a").string());
    REQUIRE(file.ok());
    REQUIRE((*file)->Append("x").ok());
    (*file)->Abort();
  }
  {
    auto file = local->Create((tmp.path() / "b").string());
    REQUIRE(file.ok());
    REQUIRE((*file)->Append("y").ok());
  }
  CHECK(fs::is_empty(tmp.path()));
}

TEST_CASE("file system: ranged reads return the bytes asked for, fewer at the end", "[fs]") {
  TempDir tmp;
  auto local = LocalFileSystem();
  const std::string path = (tmp.path() / "f").string();
  REQUIRE(local->PublishAtomically(path, "0123456789").ok());
  struct Case {
    uint64_t offset, length;
    std::string expected;
  };
  for (const Case& c : std::vector<Case>{{0, 3, "012"},
                                         {4, 2, "45"},
                                         {8, 10, "89"},
                                         {10, 5, ""},
                                         {3, FileSystem::kToEnd, "3456789"}}) {
    auto r = local->ReadRange(path, c.offset, c.length);
    REQUIRE(r.ok());
    CHECK(Text(*r) == c.expected);
  }
  auto missing = local->ReadAll((tmp.path() / "nope").string());
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().IsNotFound());
  CHECK(missing.status().message().find("nope") != std::string::npos);
}

TEST_CASE("file system: stat, list and delete", "[fs]") {
  TempDir tmp;
  auto local = LocalFileSystem();
  const std::string dir = (tmp.path() / "job").string();
  REQUIRE(local->MakeDirectories(JoinPath(dir, "chk-1")).ok());
  REQUIRE(local->PublishAtomically(JoinPath(dir, "chk-1/_metadata"), "m").ok());
  REQUIRE(local->PublishAtomically(JoinPath(dir, "chk-1/state"), "sss").ok());
  REQUIRE(local->PublishAtomically(JoinPath(dir, "top"), "t").ok());

  auto st = local->Stat(JoinPath(dir, "chk-1/state"));
  REQUIRE(st.ok());
  CHECK_FALSE(st->is_directory);
  CHECK(st->size == 3);
  CHECK(local->Stat(JoinPath(dir, "chk-1"))->is_directory);
  CHECK(local->Stat(JoinPath(dir, "nope")).status().IsNotFound());
  CHECK(*local->Exists(JoinPath(dir, "top")));
  CHECK_FALSE(*local->Exists(JoinPath(dir, "nope")));

  auto children = local->List(dir);
  REQUIRE(children.ok());
  REQUIRE(children->size() == 2);
  for (const auto& c : *children) CHECK(c.is_directory == (BaseName(c.path) == "chk-1"));
  CHECK(local->List(JoinPath(dir, "nope"))->empty());

  REQUIRE(local->DeleteFiles({JoinPath(dir, "top"), JoinPath(dir, "never-was")}).ok());
  CHECK_FALSE(*local->Exists(JoinPath(dir, "top")));
  REQUIRE(local->DeleteDirectoryIfEmpty(JoinPath(dir, "chk-1")).ok());
  CHECK(*local->Exists(JoinPath(dir, "chk-1")));  // not empty: kept
  REQUIRE(local->DeleteRecursively(JoinPath(dir, "chk-1")).ok());
  CHECK_FALSE(*local->Exists(JoinPath(dir, "chk-1")));
  REQUIRE(local->DeleteRecursively(JoinPath(dir, "chk-1")).ok());  // nothing there: fine
}

TEST_CASE("file system: publishing replaces the old file whole", "[fs]") {
  TempDir tmp;
  auto local = LocalFileSystem();
  const std::string path = (tmp.path() / "_metadata").string();
  REQUIRE(local->PublishAtomically(path, "old contents").ok());
  REQUIRE(local->PublishAtomically(path, "new").ok());
  CHECK(Text(*local->ReadAll(path)) == "new");
  CHECK(fs::is_regular_file(path));
}

TEST_CASE("file system: the registry serves local paths and names the schemes it knows", "[fs]") {
  auto local = GetFileSystem("/tmp");
  REQUIRE(local.ok());
  CHECK((*local)->scheme() == "file");
  CHECK((*GetFileSystem("file:///tmp"))->scheme() == "file");
  auto unknown = GetFileSystem("gs://bucket/chk");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.status().IsInvalidArgument());
  CHECK(unknown.status().message().find("'gs'") != std::string::npos);
  CHECK(unknown.status().hint().find("file://") != std::string::npos);

  int made = 0;
  RegisterFileSystem("test", [&made](const Uri& uri, const Configuration&) -> Result<std::shared_ptr<FileSystem>> {
    ++made;
    return LocalFileSystem();
  });
  REQUIRE(GetFileSystem("test://a/x").ok());
  REQUIRE(GetFileSystem("test://a/y").ok());
  CHECK(made == 1);  // kept per scheme and authority
  REQUIRE(GetFileSystem("test://b/x").ok());
  CHECK(made == 2);
  ConfigureFileSystems(Configuration());  // a new configuration: made again
  REQUIRE(GetFileSystem("test://a/x").ok());
  CHECK(made == 3);
}

}  // namespace
}  // namespace weir
