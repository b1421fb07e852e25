// S3FileSystem against a real S3-compatible server that verifies SigV4 (versitygw, started
// by scripts/peers/s3.sh for this test process): signing, single and multipart uploads,
// ranged reads, listing, batched deletes, snapshots, and the errors a user can cause.
#include "lib/fs/s3/s3_file_system.h"

#include <catch2/catch.hpp>

#include <memory>

#include "lib/common/hash.h"
#include "lib/format/snapshot_io.h"
#include "lib/format/snapshot_output.h"
#include "lib/fs/standard_file_systems.h"
#include "tests/testutil/peer_server.h"

namespace weir {
namespace {

using testing::PeerServer;

std::string Text(const Bytes& b) { return std::string(b.begin(), b.end()); }

// One server per test process (each TEST_CASE runs in a process of its own under ctest).
PeerServer& Server() {
  static std::unique_ptr<PeerServer> server = [] {
    // Virtual-host style too: http://<bucket>.localhost:<port>/<key>.
    ::setenv("S3_VIRTUAL_DOMAIN", "localhost", 1);
    auto s = std::make_unique<PeerServer>("s3", "S3_WORK_DIR");
    bool started = s->Start();
    INFO(s->output());
    REQUIRE(started);
    return s;
  }();
  return *server;
}

S3Options Options() {
  PeerServer& s = Server();
  S3Options o;
  o.bucket = s.value("bucket");
  o.endpoint = s.value("s3.endpoint");
  o.path_style = true;
  o.access_key = s.value("s3.access-key");
  o.secret_key = s.value("s3.secret-key");
  o.retry.max_attempts = 2;
  o.retry.initial_backoff = std::chrono::milliseconds(10);
  return o;
}

Configuration ConfigFor(const PeerServer& s) {
  Configuration c;
  c.Set("s3.endpoint", s.value("s3.endpoint"));
  c.Set("s3.path.style.access", "true");
  c.Set("s3.access-key", s.value("s3.access-key"));
  c.Set("s3.secret-key", s.value("s3.secret-key"));
  return c;
}

std::string Root(const std::string& test) { return "s3://" + Server().value("bucket") + "/" + test; }

TEST_CASE("s3: a small file is one signed PUT, and reads, stat and listing see it", "[fs][s3]") {
  auto s3 = S3FileSystem::Make(Options());
  const std::string dir = Root("small");
  auto file = s3->Create(JoinPath(dir, "a/state"));
  REQUIRE(file.ok());
  REQUIRE((*file)->Append("hello, ").ok());
  REQUIRE((*file)->Append("world").ok());
  uint64_t before = s3->requests();
  auto written = (*file)->Close();
  REQUIRE(written.ok());
  CHECK(s3->requests() - before == 1);
  CHECK(written->size == 12);
  CHECK(written->crc32c == Crc32c("hello, world", 12));

  CHECK(Text(*s3->ReadAll(JoinPath(dir, "a/state"))) == "hello, world");
  CHECK(Text(*s3->ReadRange(JoinPath(dir, "a/state"), 7, 3)) == "wor");
  CHECK(Text(*s3->ReadRange(JoinPath(dir, "a/state"), 7, FileSystem::kToEnd)) == "world");
  CHECK(s3->ReadRange(JoinPath(dir, "a/state"), 12, 5)->empty());

  auto st = s3->Stat(JoinPath(dir, "a/state"));
  REQUIRE(st.ok());
  CHECK_FALSE(st->is_directory);
  CHECK(st->size == 12);
  CHECK(s3->Stat(JoinPath(dir, "a"))->is_directory);
  CHECK(s3->Stat(JoinPath(dir, "nope")).status().IsNotFound());
  auto missing = s3->ReadAll(JoinPath(dir, "nope"));
  CHECK(missing.status().IsNotFound());
  CHECK(missing.status().message().find(JoinPath(dir, "nope")) != std::string::npos);

  REQUIRE(s3->PublishAtomically(JoinPath(dir, "_metadata"), "meta").ok());
  auto children = s3->List(dir);
  REQUIRE(children.ok());
  REQUIRE(children->size() == 2);
  for (const auto& c : *children) {
    CHECK(c.is_directory == (c.path == JoinPath(dir, "a")));
    if (!c.is_directory) CHECK(c.size == 4);
  }
  CHECK(s3->List(JoinPath(dir, "nope"))->empty());
}

TEST_CASE("s3: virtual-host style addressing puts the bucket in the host name", "[fs][s3]") {
  S3Options o = Options();
  o.path_style = false;
  o.endpoint = "http://localhost:" + o.endpoint.substr(o.endpoint.rfind(':') + 1);
  auto s3 = S3FileSystem::Make(o);
  const std::string dir = Root("vhost");
  REQUIRE(s3->PublishAtomically(JoinPath(dir, "a b+c"), "v").ok());  // a key that needs encoding
  CHECK(Text(*s3->ReadAll(JoinPath(dir, "a b+c"))) == "v");
  auto children = s3->List(dir);
  REQUIRE(children.ok());
  REQUIRE(children->size() == 1);
  CHECK(children->front().path == JoinPath(dir, "a b+c"));
  // The same object through path-style requests.
  CHECK(Text(*S3FileSystem::Make(Options())->ReadAll(JoinPath(dir, "a b+c"))) == "v");
  REQUIRE(s3->DeleteRecursively(dir).ok());
  CHECK(s3->List(dir)->empty());
}

TEST_CASE("s3: a large file goes up in parts and reads back byte for byte", "[fs][s3]") {
  S3Options o = Options();
  o.part_size = 5 << 20;  // S3's smallest part
  auto s3 = S3FileSystem::Make(o);
  const std::string path = Root("large") + "/state";
  std::string data(12 << 20, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>((i * 131) ^ (i >> 11));
  auto file = s3->Create(path);
  REQUIRE(file.ok());
  uint64_t before = s3->requests();
  for (size_t pos = 0; pos < data.size(); pos += 1 << 20) REQUIRE((*file)->Append(std::string_view(data).substr(pos, 1 << 20)).ok());
  auto written = (*file)->Close();
  REQUIRE(written.ok());
  // Start, three parts (5 + 5 + 2 MiB), complete.
  CHECK(s3->requests() - before == 5);
  CHECK(written->size == data.size());
  CHECK(written->crc32c == Crc32c(data.data(), data.size()));
  auto back = s3->ReadAll(path);
  REQUIRE(back.ok());
  CHECK(Text(*back) == data);
  // A restoring subtask reads only its byte range.
  auto range = s3->ReadRange(path, (5 << 20) - 10, 20);
  REQUIRE(range.ok());
  CHECK(Text(*range) == data.substr((5 << 20) - 10, 20));
}

TEST_CASE("s3: an aborted multipart upload leaves no object", "[fs][s3]") {
  S3Options o = Options();
  o.part_size = 5 << 20;
  auto s3 = S3FileSystem::Make(o);
  const std::string path = Root("aborted") + "/state";
  {
    auto file = s3->Create(path);
    REQUIRE(file.ok());
    REQUIRE((*file)->Append(std::string(6 << 20, 'x')).ok());  // one part uploaded
  }  // destroyed without Close()
  CHECK_FALSE(*s3->Exists(path));
}

TEST_CASE("s3: deletes are batched, 1000 keys a request, and missing keys are fine", "[fs][s3]") {
  auto s3 = S3FileSystem::Make(Options());
  const std::string dir = Root("many");
  std::vector<std::string> paths;
  for (int i = 0; i < 1005; ++i) {
    paths.push_back(JoinPath(dir, "f" + std::to_string(i)));
    REQUIRE(s3->PublishAtomically(paths.back(), "x").ok());
  }
  REQUIRE(s3->List(dir)->size() == 1005);  // two pages of a listing
  paths.push_back(JoinPath(dir, "never-was"));
  uint64_t before = s3->requests();
  REQUIRE(s3->DeleteFiles(paths).ok());
  CHECK(s3->requests() - before == 2);
  CHECK(s3->List(dir)->empty());

  REQUIRE(s3->PublishAtomically(JoinPath(dir, "x/y/z"), "1").ok());
  REQUIRE(s3->PublishAtomically(JoinPath(dir, "x/w"), "2").ok());
  REQUIRE(s3->DeleteRecursively(JoinPath(dir, "x")).ok());
  CHECK_FALSE(*s3->Exists(JoinPath(dir, "x")));
}

TEST_CASE("s3: bad credentials, a missing bucket and an unreachable endpoint say so without the secret", "[fs][s3]") {
  S3Options o = Options();

  S3Options wrong_secret = o;
  wrong_secret.secret_key = "not-the-secret-42";
  auto st = S3FileSystem::Make(wrong_secret)->PublishAtomically(Root("err") + "/x", "x");
  REQUIRE_FALSE(st.ok());
  INFO(st.message() << " / " << st.hint());
  CHECK(st.message().find("SignatureDoesNotMatch") != std::string::npos);
  CHECK(st.message().find(o.endpoint) != std::string::npos);
  CHECK(st.message().find("bucket '" + o.bucket + "'") != std::string::npos);
  CHECK(st.message().find("access key '" + o.access_key + "'") != std::string::npos);
  CHECK(st.hint().find("s3.secret-key") != std::string::npos);
  CHECK(st.message().find("not-the-secret-42") == std::string::npos);
  CHECK(st.hint().find("not-the-secret-42") == std::string::npos);

  S3Options wrong_key = o;
  wrong_key.access_key = "nobody";
  auto read = S3FileSystem::Make(wrong_key)->Stat(Root("err") + "/x");
  REQUIRE_FALSE(read.ok());
  CHECK(read.status().message().find("access key 'nobody'") != std::string::npos);
  CHECK(read.status().hint().find("s3.access-key") != std::string::npos);

  S3Options no_bucket = o;
  no_bucket.bucket = "no-such-bucket";
  auto listed = S3FileSystem::Make(no_bucket)->Stat("s3://no-such-bucket/chk");
  REQUIRE_FALSE(listed.ok());
  CHECK(listed.status().code() == StatusCode::kFailedPrecondition);  // not "no such file"
  CHECK(listed.status().message().find("NoSuchBucket") != std::string::npos);
  CHECK(listed.status().hint().find("create bucket 'no-such-bucket'") != std::string::npos);

  S3Options unreachable = o;
  unreachable.endpoint = "http://127.0.0.1:1";
  auto down = S3FileSystem::Make(unreachable)->ReadAll(Root("err") + "/x");
  REQUIRE_FALSE(down.ok());
  CHECK(down.status().IsUnavailable());
  CHECK(down.status().message().find("http://127.0.0.1:1") != std::string::npos);
  CHECK(down.status().hint().find("s3.endpoint") != std::string::npos);
}

TEST_CASE("s3: credentials come from the s3.* keys, Flink's fs.s3a.* spellings or AWS_* variables", "[fs][s3]") {
  Configuration c;
  c.Set("fs.s3a.endpoint", "http://127.0.0.1:9");
  c.Set("fs.s3a.access.key", "AK");
  c.Set("fs.s3a.secret.key", "SK");
  auto o = S3Options::FromConfig("b", c);
  REQUIRE(o.ok());
  CHECK(o->endpoint == "http://127.0.0.1:9");
  CHECK(o->access_key == "AK");
  CHECK(o->secret_key == "SK");
  CHECK(o->region == "us-east-1");

  ::setenv("AWS_ACCESS_KEY_ID", "ENVAK", 1);
  ::setenv("AWS_SECRET_ACCESS_KEY", "ENVSK", 1);
  ::setenv("AWS_REGION", "eu-west-1", 1);
  auto env = S3Options::FromConfig("b", Configuration());
  ::unsetenv("AWS_ACCESS_KEY_ID");
  ::unsetenv("AWS_SECRET_ACCESS_KEY");
  ::unsetenv("AWS_REGION");
  REQUIRE(env.ok());
  CHECK(env->access_key == "ENVAK");
  CHECK(env->endpoint == "https://s3.eu-west-1.amazonaws.com");

  auto none = S3Options::FromConfig("b", Configuration());
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().IsInvalidArgument());
  CHECK(none.status().hint().find("s3.access-key") != std::string::npos);
  CHECK(none.status().hint().find("AWS_ACCESS_KEY_ID") != std::string::npos);
}

TEST_CASE("s3: a snapshot is written, resolved, verified, refused when corrupted, and disposed", "[fs][s3]") {
  RegisterStandardFileSystems();
  ConfigureFileSystems(ConfigFor(Server()));
  const std::string job = Root("snapshots") + "/0123456789abcdef0123456789abcdef";

  CompletedSnapshot snap;
  snap.id = 7;
  CompletedSnapshot::Operator op;
  op.uid = "sum";
  op.parallelism = 2;
  op.subtasks.resize(2);
  for (const std::string& dir : {job + "/chk-7", job + "/chk-9"}) {
    // The task writes its state into the checkpoint's directory, then _metadata is written.
    OperatorStateSnapshot lists;
    lists.lists.push_back({"offsets", OperatorStateMode::kSplit, {Bytes{1, 2, 3}}});
    auto stream = WriteOperatorState(*MakeDirectoryOutput(dir, "", 0), lists);
    REQUIRE(stream.ok());
    op.subtasks[1].operator_state = *stream;
    snap.operators["sum"] = op;
    REQUIRE(WriteSnapshot(dir, snap).ok());
  }
  // An incomplete newer checkpoint (no _metadata) is never taken.
  auto s3 = *GetFileSystem(job);
  REQUIRE(s3->PublishAtomically(job + "/chk-12/deadbeef", "partial").ok());

  std::string note;
  auto chosen = ResolveSnapshotPath(job, &note);
  REQUIRE(chosen.ok());
  CHECK(*chosen == job + "/chk-9");
  CHECK(note.find(job + "/chk-9") != std::string::npos);
  CHECK(*ResolveSnapshotPath(job + "/chk-7/_metadata", nullptr) == job + "/chk-7");
  auto missing = ResolveSnapshotPath(job + "/chk-8", nullptr);
  CHECK(missing.status().IsNotFound());

  auto loaded = LoadSnapshot(job + "/chk-9");
  REQUIRE(loaded.ok());
  REQUIRE(loaded->operators.at("sum").subtasks[1].operator_state.has_value());
  auto lists = DecodeOperatorState(*ReadStateStream(*loaded->operators.at("sum").subtasks[1].operator_state), "state");
  REQUIRE(lists.ok());
  CHECK(lists->lists.at(0).elements.at(0) == Bytes{1, 2, 3});

  // Flip a byte of one state object: the restore names it.
  std::string victim;
  auto files = s3->List(job + "/chk-9");
  REQUIRE(files.ok());
  for (const auto& f : *files) {
    if (BaseName(f.path) != "_metadata" && victim.empty()) victim = f.path;
  }
  Bytes bytes = *s3->ReadAll(victim);
  bytes[bytes.size() / 2] ^= 0x5a;
  REQUIRE(s3->PublishAtomically(victim, std::string(bytes.begin(), bytes.end())).ok());
  auto corrupt = LoadSnapshot(job + "/chk-9", /*verify_contents=*/true);
  REQUIRE_FALSE(corrupt.ok());
  CHECK(corrupt.status().code() == StatusCode::kCorruption);
  CHECK(corrupt.status().message().find(victim) != std::string::npos);

  REQUIRE(DiscardSnapshotDirectory(job + "/chk-9").ok());
  CHECK_FALSE(*s3->Exists(job + "/chk-9"));
  CHECK(*ResolveSnapshotPath(job, nullptr) == job + "/chk-7");
}

}  // namespace
}  // namespace weir
