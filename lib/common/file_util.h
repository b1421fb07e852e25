#pragma once
// Small helpers for durable local files.

#include <string>

#include "lib/common/status.h"

namespace weir {

// Makes the directory's entries (files created or renamed in it) durable: fsync of
// the directory. IOError naming it when it cannot be opened or fsync fails, so the
// caller never reports as durable what a crash could still lose.
Status FsyncDirectory(const std::string& dir);

}  // namespace weir
