#include "lib/fs/standard_file_systems.h"

#include <mutex>

#include "lib/fs/hdfs/hdfs_file_system.h"
#include "lib/fs/s3/s3_file_system.h"

namespace weir {

void RegisterStandardFileSystems() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterS3FileSystem();
    RegisterHdfsFileSystem();
  });
}

}  // namespace weir
