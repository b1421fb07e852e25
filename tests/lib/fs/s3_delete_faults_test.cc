// S3FileSystem's batched deletes against a server that fails part of them: an in-memory
// S3 on loopback (cpp-httplib) answering multi-object deletes with per-key errors, or the
// whole request with 500. A real S3 server cannot be made to refuse one key of a batch.
// What is shown: the keys that failed are tried once more in a request of their own, the
// rest are deleted by the first one, and what is still left is reported by path; a
// snapshot's disposal deletes `_metadata` first, so a partial failure never leaves a
// snapshot that could be restored.
#include <catch2/catch.hpp>

#include <map>
#include <mutex>
#include <set>

#include "lib/format/snapshot_io.h"
#include "lib/fs/s3/s3_file_system.h"
#include "lib/fs/standard_file_systems.h"
#include "tests/lib/cli/test_support.h"

namespace weir {
namespace {

using testing::TestHttpServer;

constexpr char kBucket[] = "faulty";

// Every <Key>...</Key> of a request body (the tests use keys that need no XML escaping).
std::vector<std::string> Keys(const std::string& xml) {
  std::vector<std::string> out;
  size_t pos = 0;
  while ((pos = xml.find("<Key>", pos)) != std::string::npos) {
    size_t end = xml.find("</Key>", pos);
    out.push_back(xml.substr(pos + 5, end - pos - 5));
    pos = end;
  }
  return out;
}

// The objects of one bucket, and the faults to inject into its multi-object deletes.
class FaultyS3 {
 public:
  FaultyS3() {
    const std::string bucket = std::string("/") + kBucket;
    server_.server().Post(bucket, [this](const httplib::Request& req, httplib::Response& res) {
      REQUIRE(req.has_param("delete"));
      CHECK(req.has_header("x-amz-checksum-crc32c"));
      std::lock_guard lock(mu_);
      std::vector<std::string> keys = Keys(req.body);
      deletes_.push_back(keys);
      if (refuse_requests_ > 0) {
        --refuse_requests_;
        res.status = 500;
        res.set_content("<Error><Code>InternalError</Code><Message>We encountered an internal error.</Message></Error>",
                        "application/xml");
        return;
      }
      std::string body = "<DeleteResult>";
      for (const auto& k : keys) {
        auto f = failures_.find(k);
        if (f != failures_.end() && f->second > 0) {
          --f->second;
          body += "<Error><Key>" + k + "</Key><Code>InternalError</Code><Message>We encountered an internal "
                  "error. Please try again.</Message></Error>";
          continue;
        }
        objects_.erase(k);  // quiet mode: deleted keys are not listed
      }
      res.set_content(body + "</DeleteResult>", "application/xml");
    });
    server_.server().Get(bucket, [this](const httplib::Request& req, httplib::Response& res) {
      REQUIRE(req.get_param_value("list-type") == "2");
      std::lock_guard lock(mu_);
      const std::string prefix = req.get_param_value("prefix");
      const bool delimited = req.get_param_value("delimiter") == "/";
      std::string body = "<ListBucketResult><IsTruncated>false</IsTruncated>";
      std::set<std::string> sub;
      for (const auto& [k, v] : objects_) {
        if (k.rfind(prefix, 0) != 0) continue;
        size_t slash = k.find('/', prefix.size());
        if (delimited && slash != std::string::npos) {
          sub.insert(k.substr(0, slash + 1));
        } else {
          body += "<Contents><Key>" + k + "</Key><Size>" + std::to_string(v.size()) + "</Size></Contents>";
        }
      }
      for (const auto& p : sub) body += "<CommonPrefixes><Prefix>" + p + "</Prefix></CommonPrefixes>";
      res.set_content(body + "</ListBucketResult>", "application/xml");
    });
    server_.Start();
  }

  std::string endpoint() const { return "http://" + server_.host_port(); }
  S3Options Options() const {
    S3Options o;
    o.bucket = kBucket;
    o.endpoint = endpoint();
    o.path_style = true;
    o.access_key = "AK";
    o.secret_key = "SK";
    o.retry.max_attempts = 2;
    o.retry.initial_backoff = std::chrono::milliseconds(1);
    o.retry.max_backoff = std::chrono::milliseconds(2);
    return o;
  }

  void Put(const std::string& key) {
    std::lock_guard lock(mu_);
    objects_[key] = "x";
  }
  // The next `times` deletes of `key` answer an error for it.
  void FailKey(const std::string& key, int times) {
    std::lock_guard lock(mu_);
    failures_[key] = times;
  }
  // The next `n` delete requests answer 500 as a whole.
  void RefuseRequests(int n) {
    std::lock_guard lock(mu_);
    refuse_requests_ = n;
  }
  std::set<std::string> Objects() {
    std::lock_guard lock(mu_);
    std::set<std::string> out;
    for (const auto& [k, v] : objects_) out.insert(k);
    return out;
  }
  // The keys of every delete request so far, in order.
  std::vector<std::vector<std::string>> Deletes() {
    std::lock_guard lock(mu_);
    return deletes_;
  }

 private:
  TestHttpServer server_;
  std::mutex mu_;
  std::map<std::string, std::string> objects_;
  std::map<std::string, int> failures_;
  int refuse_requests_ = 0;
  std::vector<std::vector<std::string>> deletes_;
};

std::vector<std::string> Paths(const std::vector<std::string>& keys) {
  std::vector<std::string> out;
  for (const auto& k : keys) out.push_back(std::string("s3://") + kBucket + "/" + k);
  return out;
}

TEST_CASE("s3 faults: keys a multi-object delete failed are tried again on their own, the rest are gone", "[fs][s3]") {
  FaultyS3 s3;
  const std::vector<std::string> keys = {"shared/a", "shared/b", "shared/c", "shared/d", "shared/e"};
  for (const auto& k : keys) s3.Put(k);
  s3.FailKey("shared/b", 1);
  s3.FailKey("shared/d", 1);
  auto fs = S3FileSystem::Make(s3.Options());
  Status st = fs->DeleteFiles(Paths(keys));
  INFO(st.message());
  CHECK(st.ok());
  CHECK(s3.Objects().empty());
  auto deletes = s3.Deletes();
  REQUIRE(deletes.size() == 2);
  CHECK(deletes[0] == keys);
  CHECK(deletes[1] == std::vector<std::string>{"shared/b", "shared/d"});
  CHECK(fs->requests() == 2);
}

TEST_CASE("s3 faults: a key that fails twice is reported by path with the server's error, the others deleted",
          "[fs][s3]") {
  FaultyS3 s3;
  const std::vector<std::string> keys = {"chk-3/a", "chk-3/b", "chk-3/c", "chk-3/d"};
  for (const auto& k : keys) s3.Put(k);
  s3.FailKey("chk-3/c", 2);
  s3.FailKey("chk-3/a", 1);
  auto fs = S3FileSystem::Make(s3.Options());
  Status st = fs->DeleteFiles(Paths(keys));
  REQUIRE_FALSE(st.ok());
  INFO(st.message() << " / " << st.hint());
  CHECK(st.code() == StatusCode::kIOError);
  CHECK(st.message().find(s3.endpoint()) != std::string::npos);
  CHECK(st.message().find("did not delete 1 objects") != std::string::npos);
  CHECK(st.message().find("'s3://faulty/chk-3/c'") != std::string::npos);
  CHECK(st.message().find("InternalError") != std::string::npos);
  CHECK(st.message().find("chk-3/a") == std::string::npos);  // deleted on the second try
  CHECK(st.hint().find("delete them later") != std::string::npos);
  CHECK(s3.Objects() == std::set<std::string>{"chk-3/c"});
  auto deletes = s3.Deletes();
  REQUIRE(deletes.size() == 2);  // one try more, not a retry loop
  CHECK(deletes[1] == std::vector<std::string>{"chk-3/a", "chk-3/c"});
}

TEST_CASE("s3 faults: a batch the server fails as a whole is sent once more, and reported when that fails too",
          "[fs][s3]") {
  FaultyS3 s3;
  const std::vector<std::string> keys = {"k1", "k2", "k3"};
  for (const auto& k : keys) s3.Put(k);
  // 500 on both attempts of the transport's retry policy: the batch goes out once more.
  s3.RefuseRequests(2);
  auto fs = S3FileSystem::Make(s3.Options());
  Status st = fs->DeleteFiles(Paths(keys));
  INFO(st.message());
  CHECK(st.ok());
  CHECK(s3.Objects().empty());
  CHECK(s3.Deletes().size() == 3);

  for (const auto& k : keys) s3.Put(k);
  s3.RefuseRequests(4);
  st = fs->DeleteFiles(Paths(keys));
  REQUIRE_FALSE(st.ok());
  INFO(st.message());
  CHECK(st.message().find("did not delete 3 objects (HTTP 500 InternalError)") != std::string::npos);
  for (const auto& k : keys) CHECK(st.message().find("'s3://faulty/" + k + "'") != std::string::npos);
  CHECK(s3.Objects().size() == 3);
  CHECK(s3.Deletes().size() == 7);
}

TEST_CASE("s3 faults: disposing of a snapshot survives a partial failure and never leaves a restorable one",
          "[fs][s3]") {
  FaultyS3 s3;
  RegisterStandardFileSystems();
  Configuration c;
  c.Set("s3.endpoint", s3.endpoint());
  c.Set("s3.path.style.access", "true");
  c.Set("s3.access-key", "AK");
  c.Set("s3.secret-key", "SK");
  ConfigureFileSystems(c);
  const std::string job = std::string("s3://") + kBucket + "/chk/0123456789abcdef0123456789abcdef";
  for (const char* k : {"_metadata", "op-0", "op-1", "op-2"}) s3.Put("chk/0123456789abcdef0123456789abcdef/chk-4/" + std::string(k));

  // One state object refused once: the second try deletes it.
  s3.FailKey("chk/0123456789abcdef0123456789abcdef/chk-4/op-1", 1);
  Status st = DiscardSnapshotDirectory(job + "/chk-4");
  INFO(st.message());
  CHECK(st.ok());
  CHECK(s3.Objects().empty());
  auto deletes = s3.Deletes();
  REQUIRE(deletes.size() == 3);
  CHECK(deletes[0] == std::vector<std::string>{"chk/0123456789abcdef0123456789abcdef/chk-4/_metadata"});
  CHECK(deletes[2] == std::vector<std::string>{"chk/0123456789abcdef0123456789abcdef/chk-4/op-1"});

  // Refused for good: the error names it, the rest is gone, _metadata first of all, so the
  // leftover is never taken for a checkpoint.
  for (const char* k : {"_metadata", "op-0", "op-1", "op-2"}) s3.Put("chk/0123456789abcdef0123456789abcdef/chk-5/" + std::string(k));
  s3.FailKey("chk/0123456789abcdef0123456789abcdef/chk-5/op-2", 2);
  st = DiscardSnapshotDirectory(job + "/chk-5");
  REQUIRE_FALSE(st.ok());
  CHECK(st.message().find("'" + job + "/chk-5/op-2'") != std::string::npos);
  CHECK(s3.Objects() == std::set<std::string>{"chk/0123456789abcdef0123456789abcdef/chk-5/op-2"});
  auto resolved = ResolveSnapshotPath(job, nullptr);
  CHECK_FALSE(resolved.ok());
}

}  // namespace
}  // namespace weir
