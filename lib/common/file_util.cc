#include "lib/common/file_util.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace weir {

Status FsyncDirectory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::IOError("cannot open directory '" + dir + "' to fsync it: " + std::strerror(errno));
  if (::fsync(fd) != 0) {
    Status s = Status::IOError("cannot fsync directory '" + dir + "': " + std::strerror(errno));
    ::close(fd);
    return s;
  }
  ::close(fd);
  return Status::OK();
}

}  // namespace weir
