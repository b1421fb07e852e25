#pragma once
// The web dashboard's files (runtime/rest/web/), compiled into the runtime by
// runtime/rest/embed_files.cmake. Internal to runtime/rest.

#include <cstddef>

namespace weir::runtime {

struct DashboardFile {
  const char* name;            // e.g. "index.html"
  const unsigned char* data;
  size_t size;
};

extern const DashboardFile kDashboardFiles[];
extern const int kDashboardFileCount;

}  // namespace weir::runtime
