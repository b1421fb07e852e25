#pragma once
// FileSystem: where checkpoints and savepoints live. One interface for local files
// (plain paths and file:// URIs), S3-compatible object stores (s3://bucket/prefix,
// lib/fs/s3) and HDFS (hdfs://host:port/path, lib/fs/hdfs), chosen by the URI's scheme.
//
// The model is Flink's: a process configures its file systems once from its
// configuration (ConfigureFileSystems: the s3.* keys, fs.hdfs.*, AWS_* and
// HADOOP_USER_NAME) and then asks for the one that serves a URI (GetFileSystem).
// Implementations other than the local one live in libraries of their own and are
// registered by scheme (RegisterFileSystem; lib/fs/standard_file_systems.h registers
// them all), so that only what uses S3 or HDFS links their client code.
//
// Paths are URIs or plain local paths; a "directory" of an object store is a key
// prefix that ends before a '/'. Every error names the file (URI) it is about; errors
// of remote stores also name the endpoint (and for S3 the bucket and the access key
// id, never the secret) and say what to check. Unreachable stores give Unavailable.
//
// Implementations are thread-safe: one instance serves concurrent calls.

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "lib/common/status.h"
#include "lib/config/config.h"

namespace weir {

using Bytes = std::vector<uint8_t>;  // as in lib/api/state_snapshot.h

// The parts of "scheme://authority/path". A plain path (no "scheme:") and "file:" URIs
// have scheme "file", an empty authority and the local path in `path`.
struct Uri {
  std::string scheme;     // lower case: "file", "s3", "hdfs"
  std::string authority;  // s3: the bucket; hdfs: host:port; file: empty
  std::string path;       // file: the local path; others: the path without the leading '/'

  // Parses `text`. InvalidArgument for an empty text or a URI without an authority
  // ("s3:///x", "hdfs:/x").
  static Result<Uri> Parse(std::string_view text);
  std::string ToString() const;
};

// Path arithmetic on URIs and plain paths: JoinPath("s3://b/chk", "x") is
// "s3://b/chk/x"; ParentPath of that is "s3://b/chk"; BaseName is "x".
std::string JoinPath(std::string_view base, std::string_view name);
std::string ParentPath(std::string_view path);
std::string BaseName(std::string_view path);
// The location of a snapshot as the REST API reports it: "file:/abs/path" for a local
// path, the URI itself otherwise.
std::string ToLocation(std::string_view path);

struct FileInfo {
  std::string path;          // the full URI or path of the entry
  uint64_t size = 0;         // bytes (0 for directories)
  bool is_directory = false;
};

// What a closed file holds.
struct WrittenFile {
  uint64_t size = 0;
  uint32_t crc32c = 0;  // CRC-32C of all the bytes written (lib/common/hash.h)
};

// A file being written, in chunks. Nothing is visible at its path before Close()
// succeeds. Not thread-safe (one writer per file). Destroying it without Close()
// discards what was written (as Abort()).
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  WritableFile(const WritableFile&) = delete;
  WritableFile& operator=(const WritableFile&) = delete;

  // Appends bytes. May upload (S3: a multipart part once a part is full).
  virtual Status Append(std::string_view data) = 0;
  // Finishes the file: durable (local: fsync) and visible at its path. Returns its
  // size and CRC-32C. After an error the file does not exist.
  virtual Result<WrittenFile> Close() = 0;
  // Discards the file (S3: aborts the multipart upload). Idempotent.
  virtual void Abort() = 0;

 protected:
  WritableFile() = default;
};

class FileSystem {
 public:
  static constexpr uint64_t kToEnd = std::numeric_limits<uint64_t>::max();

  virtual ~FileSystem() = default;

  // "file", "s3", "hdfs".
  virtual std::string scheme() const = 0;

  // Starts writing `path`, replacing what is there when it is closed. Missing parent
  // directories are created.
  virtual Result<std::unique_ptr<WritableFile>> Create(const std::string& path) = 0;
  // Writes `contents` to `path` so that a reader sees either nothing (or the old file)
  // or all of it: local and HDFS write a temporary file and rename it (local also
  // fsyncs the file and the directory); on S3 a single PUT is atomic. Used for
  // `_metadata`, which is written last.
  virtual Status PublishAtomically(const std::string& path, std::string_view contents) = 0;

  // Reads `length` bytes at `offset` (fewer at the end of the file; kToEnd: the
  // rest). NotFound naming the path when it does not exist.
  virtual Result<Bytes> ReadRange(const std::string& path, uint64_t offset, uint64_t length) = 0;
  Result<Bytes> ReadAll(const std::string& path) { return ReadRange(path, 0, kToEnd); }

  // The file or directory at `path`; NotFound when there is none. On S3 a prefix
  // with objects under it is a directory.
  virtual Result<FileInfo> Stat(const std::string& path) = 0;
  // Stat() without NotFound.
  Result<bool> Exists(const std::string& path);
  // The direct children of a directory (files and sub-directories), in no particular
  // order. An empty vector when `path` has none or does not exist.
  virtual Result<std::vector<FileInfo>> List(const std::string& path) = 0;

  // Creates a directory and its parents (a no-op on S3, which has none).
  virtual Status MakeDirectories(const std::string& path) = 0;
  // Deletes files; a missing one is not an error. Batched where the store can (S3:
  // one request per 1000 keys). On a partial failure the rest is still deleted and
  // the error names what is left.
  virtual Status DeleteFiles(const std::vector<std::string>& paths) = 0;
  // Deletes `path` and everything under it; nothing there is not an error.
  virtual Status DeleteRecursively(const std::string& path) = 0;
  // Removes an empty directory; a no-op when it is not empty or does not exist.
  virtual Status DeleteDirectoryIfEmpty(const std::string& path) = 0;

 protected:
  FileSystem() = default;
};

// Creates the file system for one scheme and authority (an S3 bucket, an HDFS
// namenode) from the configuration. InvalidArgument for missing or bad settings.
using FileSystemFactory =
    std::function<Result<std::shared_ptr<FileSystem>>(const Uri& uri, const Configuration& config)>;

// Registers the factory of `scheme` (replacing an earlier one). "file" is built in.
void RegisterFileSystem(const std::string& scheme, FileSystemFactory factory);

// Sets the configuration that GetFileSystem() uses and forgets the file systems made
// with the previous one.
void ConfigureFileSystems(const Configuration& config);

// The file system that serves `path` (a plain path or a URI), made with the
// configuration of ConfigureFileSystems() and kept for later calls. InvalidArgument for
// a scheme no file system is registered for, naming the ones that are.
Result<std::shared_ptr<FileSystem>> GetFileSystem(const std::string& path);

// Deletes files that may live on several file systems: one batched DeleteFiles per file
// system (S3: one request per 1000 keys). Goes on past a failure; the first error,
// naming what was left, is returned.
Status DeleteFilesAnywhere(const std::vector<std::string>& paths);

// Makes a file system for `path` with `config`, not kept: checks a configuration
// before it is used (e.g. checkpoint storage given to a job).
Result<std::shared_ptr<FileSystem>> OpenFileSystem(const std::string& path, const Configuration& config);

// The local file system (plain paths and file: URIs).
std::shared_ptr<FileSystem> LocalFileSystem();

}  // namespace weir
