#pragma once
// Every configuration key weir knows, with Flink's names and defaults.
// Adding a key: declare it here, define it in options.cc and list it in AllOptions().

#include <string_view>
#include <vector>

#include "lib/config/config.h"

namespace weir::options {

// --- execution / client / rest ---
extern const ConfigOption kExecutionTarget;        // execution.target: local | remote
extern const ConfigOption kExecutionAttached;      // execution.attached
extern const ConfigOption kParallelismDefault;     // parallelism.default (1)
extern const ConfigOption kPipelineMaxParallelism; // pipeline.max-parallelism (128 when unset)
extern const ConfigOption kRestAddress;            // rest.address (localhost)
extern const ConfigOption kRestPort;               // rest.port (8081)
extern const ConfigOption kRestBindAddress;        // rest.bind-address (localhost)
extern const ConfigOption kRestBindPort;           // rest.bind-port (rest.port)
extern const ConfigOption kRestServerMaxContentLength;  // rest.server.max-content-length
extern const ConfigOption kRestClientMaxContentLength;  // rest.client.max-content-length
extern const ConfigOption kRestAsyncStoreDuration;      // rest.async.store-duration (5 min)
extern const ConfigOption kRestConnectionTimeout;  // rest.connection-timeout (15 s)
extern const ConfigOption kClientTimeout;          // client.timeout (1 min)
extern const ConfigOption kWebUploadDir;           // web.upload.dir (where uploaded jobs go)
extern const ConfigOption kTaskBufferSize;         // taskmanager.memory.segment-size (128kb)
extern const ConfigOption kTaskBuffersPerChannel;  // taskmanager.network.memory.buffers-per-channel (2)
extern const ConfigOption kTaskFloatingBuffers;    // taskmanager.network.memory.floating-buffers-per-gate (8)
// taskmanager.network.memory.buffer-debloat.*: buffers sized to the consumer's throughput.
extern const ConfigOption kTaskBufferDebloatEnabled;    // .enabled (true)
extern const ConfigOption kTaskBufferDebloatTarget;     // .target (1 s)
extern const ConfigOption kTaskBufferDebloatPeriod;     // .period (200 ms)
extern const ConfigOption kTaskBufferDebloatSamples;    // .samples (20)
extern const ConfigOption kTaskBufferDebloatThreshold;  // .threshold-percentages (25)
extern const ConfigOption kTaskMinBufferSize;           // taskmanager.memory.min-segment-size (256b)
extern const ConfigOption kJobStoreMaxCapacity;    // jobstore.max-capacity (no limit)
extern const ConfigOption kJobStoreExpirationTime; // jobstore.expiration-time (3600 s)

// --- checkpointing (execution.checkpointing.*, with the legacy state.* spellings) ---
extern const ConfigOption kCheckpointingInterval;
extern const ConfigOption kCheckpointingMode;
extern const ConfigOption kCheckpointingTimeout;
extern const ConfigOption kCheckpointingMaxConcurrent;
extern const ConfigOption kCheckpointingMinPause;
extern const ConfigOption kCheckpointingTolerableFailures;
extern const ConfigOption kCheckpointingExternalizedRetention;
extern const ConfigOption kCheckpointingNumRetained;
extern const ConfigOption kCheckpointsHistory;
extern const ConfigOption kCheckpointingDir;
extern const ConfigOption kCheckpointingSavepointDir;
extern const ConfigOption kCheckpointingStorage;
extern const ConfigOption kCheckpointingUnaligned;
extern const ConfigOption kCheckpointingAlignedTimeout;
extern const ConfigOption kCheckpointingIncremental;
extern const ConfigOption kCheckpointingAfterTasksFinish;  // ...checkpoints-after-tasks-finish (true)
extern const ConfigOption kCheckpointingInlineThreshold;   // ...data-inline-threshold (20kb)
extern const ConfigOption kStateBackendType;       // state.backend.type (hashmap)

// --- the rocksdb state backend (state.backend.rocksdb.*) and its memory bound ---
extern const ConfigOption kRocksDbLocalDir;          // ...localdir (the system temp dir)
extern const ConfigOption kRocksDbPredefinedOptions; // ...predefined-options (DEFAULT)
extern const ConfigOption kRocksDbBlockCacheSize;    // ...block.cache-size (8mb)
extern const ConfigOption kRocksDbWriteBufferSize;   // ...writebuffer.size (64mb)
extern const ConfigOption kRocksDbMemoryManaged;     // ...memory.managed (true)
extern const ConfigOption kRocksDbValueCacheSize;    // ...value-cache.size (unset)
extern const ConfigOption kRocksDbValueCacheRatio;   // ...memory.value-cache-ratio (0.5)
extern const ConfigOption kManagedMemorySize;        // taskmanager.memory.managed.size (128mb)

// --- restart strategies ---
extern const ConfigOption kRestartStrategyType;
extern const ConfigOption kFixedDelayAttempts;
extern const ConfigOption kFixedDelayDelay;
extern const ConfigOption kFailureRateMaxFailures;
extern const ConfigOption kFailureRateInterval;
extern const ConfigOption kFailureRateDelay;
extern const ConfigOption kExpDelayInitialBackoff;
extern const ConfigOption kExpDelayMaxBackoff;
extern const ConfigOption kExpDelayMultiplier;
extern const ConfigOption kExpDelayResetThreshold;
extern const ConfigOption kExpDelayJitter;
extern const ConfigOption kExpDelayAttemptsBeforeReset;

// --- restore (what `run -s/-n/--restoreMode` write) ---
extern const ConfigOption kStateRecoveryPath;
extern const ConfigOption kStateRecoveryIgnoreUnclaimed;
extern const ConfigOption kStateRecoveryClaimMode;

// --- S3-compatible checkpoint storage (s3://bucket/prefix), as Flink's S3 plugins ---
extern const ConfigOption kS3Endpoint;             // s3.endpoint (AWS default when unset)
extern const ConfigOption kS3PathStyleAccess;      // s3.path.style.access (false)
extern const ConfigOption kS3AccessKey;            // s3.access-key
extern const ConfigOption kS3SecretKey;            // s3.secret-key
extern const ConfigOption kS3Region;               // s3.region (AWS_REGION, else us-east-1)
// fs.s3a.* are accepted as deprecated spellings of the s3.* keys.

// --- HDFS (hdfs://host:port/path through WebHDFS) ---
extern const ConfigOption kHdfsWebhdfsPort;        // fs.hdfs.webhdfs.port (9870)

// --- runtime process ---
extern const ConfigOption kRuntimeLogFile;         // weir.runtime.log.file (stderr when unset)
extern const ConfigOption kRuntimeLogLevel;        // weir.runtime.log.level (INFO)
extern const ConfigOption kRuntimeBatchScheduling; // weir.runtime.batch-scheduling (true)

// --- high availability (weir's own filesystem type: one machine, no ZooKeeper) ---
extern const ConfigOption kHighAvailabilityType;        // high-availability.type (NONE)
extern const ConfigOption kHighAvailabilityStorageDir;  // high-availability.storageDir

// Every option above, for validation and unknown-key warnings.
const std::vector<const ConfigOption*>& AllOptions();

// The option whose current key or one of whose deprecated keys is `key`; null if none.
const ConfigOption* FindOption(std::string_view key);

}  // namespace weir::options
