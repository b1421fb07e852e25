#pragma once
// Registers every file system weir ships: s3:// (and s3a://) and hdfs:// beside the
// built-in local one. Programs that read or write snapshots call it once at start, then
// ConfigureFileSystems() with their configuration. Idempotent.

namespace weir {

void RegisterStandardFileSystems();

}  // namespace weir
