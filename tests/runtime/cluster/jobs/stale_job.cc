// A job shared object as a weir of job API version 1 built it: the loader must refuse
// it with a clear error, since its code was compiled against other layouts of the types
// it shares with the runtime. Declares the table itself, as lib/api/job.h did then.

#include <vector>

namespace {

struct JobTableV1 {
  int api_version;
  std::vector<void*>* entries;
};

}  // namespace

extern "C" [[gnu::visibility("default")]] const JobTableV1* weir_job_table_v1() {
  static std::vector<void*> entries;
  static const JobTableV1 table{1, &entries};
  return &table;
}
