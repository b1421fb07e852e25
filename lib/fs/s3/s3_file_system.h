#pragma once
// S3FileSystem: s3://bucket/prefix on AWS S3 or an S3-compatible store (MinIO,
// versitygw, ...), through libcurl with AWS Signature V4 (libcurl's own signing).
//
// Requests per operation, kept few because S3 rate-limits and bills per request:
// a file below the part size is one PUT (larger ones: one multipart upload, one PUT per
// part, one complete); a read is one GET (a ranged one for ReadRange); Stat is a HEAD
// (plus one list for a "directory"); List is one GET per 1000 entries; DeleteFiles is
// one multi-object delete per 1000 keys. There is no rename: `_metadata` is published
// by being the last object written, and a snapshot without it is never used.
//
// Settings (ConfigureFileSystems' configuration, then the environment):
//   s3.endpoint (fs.s3a.endpoint; AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL): URL or host;
//     https://s3.<region>.amazonaws.com when unset, https:// when no scheme is given
//   s3.path.style.access (fs.s3a.path.style.access): endpoint/bucket/key instead of
//     bucket.endpoint/key
//   s3.access-key, s3.secret-key (fs.s3a.access.key, fs.s3a.secret.key;
//     AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN)
//   s3.region (fs.s3a.endpoint.region; AWS_REGION, AWS_DEFAULT_REGION): us-east-1

#include <memory>
#include <string>

#include "lib/config/config.h"
#include "lib/fs/file_system.h"
#include "lib/fs/http_transport.h"

namespace weir {

struct S3Options {
  std::string bucket;
  std::string endpoint;  // "http://127.0.0.1:9000" (scheme, host and port; no path)
  std::string region = "us-east-1";
  bool path_style = false;
  std::string access_key;
  std::string secret_key;     // never printed
  std::string session_token;  // optional (temporary credentials)
  // Files larger than this go up as a multipart upload in parts of this size (S3
  // needs at least 5 MiB for every part but the last).
  size_t part_size = 8 << 20;
  RetryPolicy retry;

  // From the configuration and the environment (see above). InvalidArgument naming
  // the keys when no credentials are set.
  static Result<S3Options> FromConfig(const std::string& bucket, const Configuration& config);
};

// The S3 file system of one bucket. Also counts its requests (for tests and benchmarks).
class S3FileSystem : public FileSystem {
 public:
  static std::shared_ptr<S3FileSystem> Make(S3Options options);
  // HTTP requests sent so far (every attempt counts).
  virtual uint64_t requests() const = 0;
};

// Registers S3FileSystem for "s3" (and "s3a", Flink's Hadoop spelling).
void RegisterS3FileSystem();

}  // namespace weir
