#pragma once
// HdfsFileSystem: hdfs://host:port/path through the namenode's WebHDFS REST API over
// libcurl (no JVM, no libhdfs). The URI's port is the namenode's RPC port, as in
// Hadoop's fs.defaultFS; WebHDFS is on the namenode's HTTP port, fs.hdfs.webhdfs.port
// (Hadoop's default 9870). Requests run as HADOOP_USER_NAME (else the OS user), as
// Hadoop's simple authentication does; Kerberos (SPNEGO) is not supported.
//
// Writing creates the file (two requests: the namenode redirects to a datanode) and
// appends to it in chunks of `chunk_size`; PublishAtomically writes a temporary file and
// renames it over the target, as for local files.

#include <memory>
#include <string>

#include "lib/config/config.h"
#include "lib/fs/file_system.h"
#include "lib/fs/http_transport.h"

namespace weir {

struct HdfsOptions {
  std::string authority;  // host:port of the namenode's RPC, as in the URI
  std::string host;
  int webhdfs_port = 9870;
  std::string user;
  size_t chunk_size = 8 << 20;  // bytes per CREATE/APPEND request
  RetryPolicy retry;

  static Result<HdfsOptions> FromConfig(const std::string& authority, const Configuration& config);
};

std::shared_ptr<FileSystem> MakeHdfsFileSystem(HdfsOptions options);

// Registers the HDFS file system for "hdfs".
void RegisterHdfsFileSystem();

}  // namespace weir
