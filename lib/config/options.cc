#include "lib/config/options.h"

#include <string>
#include <unordered_map>

// Defaults are Flink's (1.19/1.20 names, 1.19+ restart defaults) except where weir
// chooses otherwise: execution.target, rest.address and rest.bind-address default to
// a local, loopback-only setup. Keep conf/config.yaml and man/weir-conf.5 in step with
// this file (tests/lib/config checks that every key appears in both).

namespace weir::options {

namespace {
constexpr double kMaxPort = 65535;
constexpr double kIntMax = 2147483647;  // Java's Integer.MAX_VALUE, Flink's int limit
}  // namespace

// --- execution / client / rest ---

const ConfigOption kExecutionTarget{
    .key = "execution.target",
    .type = OptionType::kEnum,
    .default_value = "local",
    .enum_values = {"local", "remote"},
    .description = "Where `weir run` runs a job: 'local' runs it embedded in the weir-run "
                   "process; 'remote' submits it to the REST endpoint at rest.address:rest.port.",
};

const ConfigOption kExecutionAttached{
    .key = "execution.attached",
    .type = OptionType::kBool,
    .default_value = "false",
    .description = "Whether the client waits for the job to finish; `weir run` sets it from -d.",
};

const ConfigOption kParallelismDefault{
    .key = "parallelism.default",
    .type = OptionType::kInt,
    .default_value = "1",
    .description = "Parallelism of operators that do not set their own.",
    .min_value = 1,
    .max_value = 32768,
};

const ConfigOption kPipelineMaxParallelism{
    .key = "pipeline.max-parallelism",
    .type = OptionType::kInt,
    .default_value = "",
    .description = "Number of key groups, the upper limit for rescaling keyed state; "
                   "weir uses 128 when unset.",
    .min_value = 1,
    .max_value = 32768,
};

const ConfigOption kRestAddress{
    .key = "rest.address",
    .type = OptionType::kString,
    .default_value = "localhost",
    .description = "Address the clients connect to.",
};

const ConfigOption kRestPort{
    .key = "rest.port",
    .type = OptionType::kInt,
    .default_value = "8081",
    .description = "Port the clients connect to; the server binds to it too unless "
                   "rest.bind-port is set.",
    .min_value = 1,
    .max_value = kMaxPort,
};

const ConfigOption kRestBindAddress{
    .key = "rest.bind-address",
    .type = OptionType::kString,
    .default_value = "localhost",
    .description = "Address the REST server binds to (loopback only by default; 0.0.0.0 for "
                   "every interface).",
};

const ConfigOption kRestBindPort{
    .key = "rest.bind-port",
    .type = OptionType::kInt,
    .default_value = "",
    .description = "Port the REST server binds to; rest.port when unset. One port (Flink's "
                   "ranges such as '50100-50200' are not supported); 0 picks a free port.",
    .min_value = 0,
    .max_value = kMaxPort,
};

const ConfigOption kRestServerMaxContentLength{
    .key = "rest.server.max-content-length",
    .type = OptionType::kInt,
    .default_value = "104857600",
    .description = "Largest request body the server accepts, in bytes (limits job uploads).",
    .min_value = 1,
    .max_value = kIntMax,
};

const ConfigOption kRestClientMaxContentLength{
    .key = "rest.client.max-content-length",
    .type = OptionType::kInt,
    .default_value = "104857600",
    .description = "Largest response body the client accepts, in bytes.",
    .min_value = 1,
    .max_value = kIntMax,
};

const ConfigOption kRestAsyncStoreDuration{
    .key = "rest.async.store-duration",
    .type = OptionType::kDuration,
    .default_value = "5 min",
    .description = "How long the result of an asynchronous operation (savepoint, stop) stays "
                   "available after it completed.",
};

const ConfigOption kRestConnectionTimeout{
    .key = "rest.connection-timeout",
    .type = OptionType::kDuration,
    .default_value = "15 s",
    .description = "How long the client waits to establish a connection.",
    .min_value = 1,
};

const ConfigOption kClientTimeout{
    .key = "client.timeout",
    .type = OptionType::kDuration,
    .default_value = "1 min",
    .description = "How long a client action waits for the endpoint before it gives up.",
    .min_value = 1,
};

const ConfigOption kWebUploadDir{
    .key = "web.upload.dir",
    .type = OptionType::kString,
    .default_value = "",
    .description = "Directory where uploaded jobs are stored; when unset the runtime creates a "
                   "directory under the system's temporary directory.",
};

const ConfigOption kTaskBufferSize{
    .key = "taskmanager.memory.segment-size",
    .type = OptionType::kMemorySize,
    .default_value = "128kb",
    .description = "Size of the buffers that carry records between tasks. Larger than Flink's 32kb: "
                   "a task hands a buffer to the next in the same process, and each hand-off may "
                   "wake a thread; fewer, larger hand-offs keep the cores busier.",
    .min_value = 4096,
    .max_value = 1 << 30,
};

const ConfigOption kTaskBuffersPerChannel{
    .key = "taskmanager.network.memory.buffers-per-channel",
    .type = OptionType::kInt,
    .default_value = "2",
    .description = "Exclusive buffers per input channel; with the floating buffers this bounds "
                   "the data in flight and so gives backpressure.",
    .min_value = 1,
    .max_value = kIntMax,
};

const ConfigOption kTaskFloatingBuffers{
    .key = "taskmanager.network.memory.floating-buffers-per-gate",
    .type = OptionType::kInt,
    .default_value = "8",
    .description = "Extra buffers shared by all channels of one input gate.",
    .min_value = 0,
    .max_value = kIntMax,
};

const ConfigOption kTaskBufferDebloatEnabled{
    .key = "taskmanager.network.memory.buffer-debloat.enabled",
    .type = OptionType::kBool,
    .default_value = "true",
    .description = "Buffers sized to what their consumer processes: each task measures its input's "
                   "throughput and asks its producers for buffers that together hold about "
                   "buffer-debloat.target of it, so that a backpressured job keeps little data in "
                   "flight and its aligned barriers do not wait behind it. On by default (Flink: off), "
                   "since weir's buffers are larger than Flink's.",
};

const ConfigOption kTaskBufferDebloatTarget{
    .key = "taskmanager.network.memory.buffer-debloat.target",
    .type = OptionType::kDuration,
    .default_value = "1 s",
    .description = "How long the data queued at a task's input should take it to process.",
    .min_value = 1,
};

const ConfigOption kTaskBufferDebloatPeriod{
    .key = "taskmanager.network.memory.buffer-debloat.period",
    .type = OptionType::kDuration,
    .default_value = "200 ms",
    .description = "How often a task measures its throughput and sizes its input's buffers again.",
    .min_value = 1,
};

const ConfigOption kTaskBufferDebloatSamples{
    .key = "taskmanager.network.memory.buffer-debloat.samples",
    .type = OptionType::kInt,
    .default_value = "20",
    .description = "The measurements the buffer size averages (an exponential moving average): more "
                   "react more slowly.",
    .min_value = 1,
    .max_value = kIntMax,
};

const ConfigOption kTaskBufferDebloatThreshold{
    .key = "taskmanager.network.memory.buffer-debloat.threshold-percentages",
    .type = OptionType::kInt,
    .default_value = "25",
    .description = "A new buffer size is asked for only when it differs from the last by at least "
                   "this many percent (or reaches the minimum or the maximum).",
    .min_value = 0,
    .max_value = kIntMax,
};

const ConfigOption kTaskMinBufferSize{
    .key = "taskmanager.memory.min-segment-size",
    .type = OptionType::kMemorySize,
    .default_value = "256b",
    .description = "The smallest buffer size buffer debloating asks for; at most "
                   "taskmanager.memory.segment-size.",
    .min_value = 64,
    .max_value = 1 << 30,
};

// --- checkpointing ---

const ConfigOption kCheckpointingInterval{
    .key = "execution.checkpointing.interval",
    .type = OptionType::kDuration,
    .default_value = "",
    .description = "Time between checkpoints; checkpointing is off when unset.",
    .min_value = 10,
};

const ConfigOption kCheckpointingMode{
    .key = "execution.checkpointing.mode",
    .type = OptionType::kEnum,
    .default_value = "EXACTLY_ONCE",
    .enum_values = {"EXACTLY_ONCE", "AT_LEAST_ONCE"},
    .description = "Checkpointing guarantee: EXACTLY_ONCE aligns barriers, AT_LEAST_ONCE does not "
                   "block channels (records may be replayed twice after a failure).",
};

const ConfigOption kCheckpointingTimeout{
    .key = "execution.checkpointing.timeout",
    .type = OptionType::kDuration,
    .default_value = "10 min",
    .description = "A checkpoint that has not completed after this long is discarded.",
    .min_value = 10,
};

const ConfigOption kCheckpointingMaxConcurrent{
    .key = "execution.checkpointing.max-concurrent-checkpoints",
    .type = OptionType::kInt,
    .default_value = "1",
    .description = "Most checkpoints in progress at the same time.",
    .min_value = 1,
    .max_value = kIntMax,
};

const ConfigOption kCheckpointingMinPause{
    .key = "execution.checkpointing.min-pause",
    .type = OptionType::kDuration,
    .default_value = "0 ms",
    .description = "Least time between the end of one checkpoint and the start of the next.",
};

const ConfigOption kCheckpointingTolerableFailures{
    .key = "execution.checkpointing.tolerable-failed-checkpoints",
    .type = OptionType::kInt,
    .default_value = "0",
    .description = "Consecutive failed checkpoints tolerated before the job fails over.",
    .min_value = 0,
    .max_value = kIntMax,
};

const ConfigOption kCheckpointingExternalizedRetention{
    .key = "execution.checkpointing.externalized-checkpoint-retention",
    .type = OptionType::kEnum,
    .default_value = "NO_EXTERNALIZED_CHECKPOINTS",
    .enum_values = {"DELETE_ON_CANCELLATION", "RETAIN_ON_CANCELLATION",
                    "NO_EXTERNALIZED_CHECKPOINTS"},
    .description = "What happens to completed checkpoints when the job ends: "
                   "RETAIN_ON_CANCELLATION keeps them after a cancel, DELETE_ON_CANCELLATION "
                   "deletes them after a cancel, NO_EXTERNALIZED_CHECKPOINTS deletes them always.",
};

const ConfigOption kCheckpointingNumRetained{
    .key = "execution.checkpointing.num-retained",
    .type = OptionType::kInt,
    .default_value = "1",
    .deprecated_keys = {"state.checkpoints.num-retained"},
    .description = "Completed checkpoints kept; older ones are deleted.",
    .min_value = 1,
    .max_value = kIntMax,
};

const ConfigOption kCheckpointsHistory{
    .key = "web.checkpoints.history",
    .type = OptionType::kInt,
    .default_value = "10",
    .description = "Recent checkpoints a job's checkpoint statistics keep "
                   "(/jobs/:jobid/checkpoints history and details).",
    .min_value = 1,
    .max_value = kIntMax,
};

const ConfigOption kCheckpointingDir{
    .key = "execution.checkpointing.dir",
    .type = OptionType::kString,
    .default_value = "",
    .deprecated_keys = {"state.checkpoints.dir", "state.backend.fs.checkpointdir"},
    .description = "Directory (a path, file:// or s3:// URI) for checkpoints, one "
                   "sub-directory per job id.",
};

const ConfigOption kCheckpointingSavepointDir{
    .key = "execution.checkpointing.savepoint-dir",
    .type = OptionType::kString,
    .default_value = "",
    .deprecated_keys = {"state.savepoints.dir", "savepoints.state.backend.fs.dir"},
    .description = "Default target directory of savepoints (a path, file:// or s3:// URI).",
};

const ConfigOption kCheckpointingStorage{
    .key = "execution.checkpointing.storage",
    .type = OptionType::kEnum,
    .default_value = "",
    .deprecated_keys = {"state.checkpoint-storage"},
    .enum_values = {"jobmanager", "filesystem"},
    .description = "Where checkpoints are kept: 'jobmanager' (in memory) or 'filesystem' "
                   "(execution.checkpointing.dir); when unset, filesystem if a directory is set, "
                   "else jobmanager.",
};

const ConfigOption kCheckpointingUnaligned{
    .key = "execution.checkpointing.unaligned.enabled",
    .type = OptionType::kBool,
    .default_value = "false",
    .deprecated_keys = {"execution.checkpointing.unaligned"},
    .description = "Unaligned checkpoints: barriers overtake in-flight data, which is stored with "
                   "the checkpoint. Needs EXACTLY_ONCE and max-concurrent-checkpoints 1.",
};

const ConfigOption kCheckpointingAlignedTimeout{
    .key = "execution.checkpointing.aligned-checkpoint-timeout",
    .type = OptionType::kDuration,
    .default_value = "0 s",
    .deprecated_keys = {"execution.checkpointing.alignment-timeout"},
    .description = "With unaligned checkpoints: align first and switch to unaligned after this "
                   "long; 0 starts unaligned at once.",
};

const ConfigOption kCheckpointingIncremental{
    .key = "execution.checkpointing.incremental",
    .type = OptionType::kBool,
    .default_value = "false",
    .deprecated_keys = {"state.backend.incremental"},
    .description = "Incremental checkpoints (rocksdb backend only): upload only new files.",
};

const ConfigOption kCheckpointingInlineThreshold{
    .key = "execution.checkpointing.data-inline-threshold",
    .type = OptionType::kMemorySize,
    .default_value = "20kb",
    .deprecated_keys = {"state.storage.fs.memory-threshold"},
    .description = "State streams up to this size are kept in _metadata instead of files of their "
                   "own (at most 1mb).",
};

const ConfigOption kCheckpointingAfterTasksFinish{
    .key = "execution.checkpointing.checkpoints-after-tasks-finish",
    .type = OptionType::kBool,
    .default_value = "true",
    .deprecated_keys = {"execution.checkpointing.checkpoints-after-tasks-finish.enabled"},
    .description = "Checkpoints go on after some tasks finished, and finishing tasks wait for a "
                   "final checkpoint so two-phase-commit sinks commit everything (FLIP-147). "
                   "weir requires true.",
};

const ConfigOption kJobStoreMaxCapacity{
    .key = "jobstore.max-capacity",
    .type = OptionType::kInt,
    .default_value = "2147483647",
    .description = "How many finished, cancelled or failed jobs the runtime keeps for the REST API "
                   "and 'weir list -a'; the oldest go first.",
};

const ConfigOption kJobStoreExpirationTime{
    .key = "jobstore.expiration-time",
    .type = OptionType::kInt,
    .default_value = "3600",
    .description = "How many seconds a finished, cancelled or failed job is kept (Flink's unit).",
};

const ConfigOption kStateBackendType{
    .key = "state.backend.type",
    .type = OptionType::kEnum,
    .default_value = "hashmap",
    .deprecated_keys = {"state.backend"},
    .enum_values = {"hashmap", "rocksdb", "jobmanager", "memory", "filesystem", "MemoryStateBackend",
                    "FsStateBackend", "RocksDBStateBackend"},
    .description = "State backend: 'hashmap' (on the heap) or 'rocksdb' (embedded RocksDB); the "
                   "legacy names 'jobmanager'/'memory'/'MemoryStateBackend' and "
                   "'filesystem'/'FsStateBackend' mean hashmap with jobmanager or filesystem "
                   "checkpoint storage, 'RocksDBStateBackend' means rocksdb.",
};

// --- the rocksdb state backend ---

const ConfigOption kRocksDbLocalDir{
    .key = "state.backend.rocksdb.localdir",
    .type = OptionType::kString,
    .description = "Where the rocksdb backend keeps its working files: one directory per operator "
                   "subtask, removed when it closes; several directories separated by commas are "
                   "used in turn. Default: the system's temporary directory.",
};

const ConfigOption kRocksDbPredefinedOptions{
    .key = "state.backend.rocksdb.predefined-options",
    .type = OptionType::kEnum,
    .default_value = "DEFAULT",
    .enum_values = {"DEFAULT", "SPINNING_DISK_OPTIMIZED", "SPINNING_DISK_OPTIMIZED_HIGH_MEM",
                    "FLASH_SSD_OPTIMIZED"},
    .description = "RocksDB tuning for the disk the working files are on, with Flink's profiles.",
};

const ConfigOption kRocksDbBlockCacheSize{
    .key = "state.backend.rocksdb.block.cache-size",
    .type = OptionType::kMemorySize,
    .default_value = "8mb",
    .description = "Block cache of each rocksdb instance, when its memory is not managed.",
};

const ConfigOption kRocksDbWriteBufferSize{
    .key = "state.backend.rocksdb.writebuffer.size",
    .type = OptionType::kMemorySize,
    .default_value = "64mb",
    .description = "Memtable size of each state (column family) before it is flushed to a file.",
};

const ConfigOption kRocksDbMemoryManaged{
    .key = "state.backend.rocksdb.memory.managed",
    .type = OptionType::kBool,
    .default_value = "true",
    .description = "The rocksdb instances of a slot share one block cache that also accounts for "
                   "their write buffers, bounded by the slot's share of managed memory.",
};

const ConfigOption kRocksDbValueCacheSize{
    .key = "state.backend.rocksdb.value-cache.size",
    .type = OptionType::kMemorySize,
    .description = "Values of value, reducing and aggregating state that each rocksdb instance "
                   "keeps on the heap, as read or written last: a read finds them without "
                   "RocksDB, and writes go into RocksDB when the cache is full and at each "
                   "snapshot. At most this many bytes per instance; 0 turns the cache off. Unset: "
                   "16mb per instance without managed memory; with it, the slot's value-cache "
                   "share of managed memory (state.backend.rocksdb.memory.value-cache-ratio).",
};

const ConfigOption kRocksDbValueCacheRatio{
    .key = "state.backend.rocksdb.memory.value-cache-ratio",
    .type = OptionType::kDouble,
    .default_value = "0.5",
    .description = "With managed memory, the share of a slot's managed memory that the value "
                   "caches of its rocksdb instances may take together. Their bytes are charged "
                   "to the slot's block cache, as the write buffers' are, so that all of "
                   "rocksdb's memory stays within the slot's share; 0 turns the caches off.",
    .min_value = 0.0,
    .max_value = 0.9,
};

const ConfigOption kManagedMemorySize{
    .key = "taskmanager.memory.managed.size",
    .type = OptionType::kMemorySize,
    .default_value = "128mb",
    .description = "Managed memory of a job, divided evenly between its slots (subtask i of every "
                   "operator is in slot i): the bound of rocksdb's memory when "
                   "state.backend.rocksdb.memory.managed is true.",
};

// --- restart strategies ---

const ConfigOption kRestartStrategyType{
    .key = "restart-strategy.type",
    .type = OptionType::kEnum,
    .default_value = "",
    .deprecated_keys = {"restart-strategy"},
    .enum_values = {"none", "off", "disable", "fixed-delay", "fixeddelay", "failure-rate",
                    "failurerate", "exponential-delay", "exponentialdelay"},
    .description = "What happens when a task fails. Unset: 'disable' without checkpointing, "
                   "'exponential-delay' with it.",
};

const ConfigOption kFixedDelayAttempts{
    .key = "restart-strategy.fixed-delay.attempts",
    .type = OptionType::kInt,
    .default_value = "1",
    .description = "fixed-delay: restarts tried before the job fails.",
    .min_value = 0,
    .max_value = kIntMax,
};

const ConfigOption kFixedDelayDelay{
    .key = "restart-strategy.fixed-delay.delay",
    .type = OptionType::kDuration,
    .default_value = "1 s",
    .description = "fixed-delay: wait between two restarts.",
};

const ConfigOption kFailureRateMaxFailures{
    .key = "restart-strategy.failure-rate.max-failures-per-interval",
    .type = OptionType::kInt,
    .default_value = "1",
    .description = "failure-rate: restarts allowed within one interval before the job fails.",
    .min_value = 1,
    .max_value = kIntMax,
};

const ConfigOption kFailureRateInterval{
    .key = "restart-strategy.failure-rate.failure-rate-interval",
    .type = OptionType::kDuration,
    .default_value = "1 min",
    .description = "failure-rate: the interval over which failures are counted.",
    .min_value = 1,
};

const ConfigOption kFailureRateDelay{
    .key = "restart-strategy.failure-rate.delay",
    .type = OptionType::kDuration,
    .default_value = "1 s",
    .description = "failure-rate: wait between two restarts.",
};

const ConfigOption kExpDelayInitialBackoff{
    .key = "restart-strategy.exponential-delay.initial-backoff",
    .type = OptionType::kDuration,
    .default_value = "1 s",
    .description = "exponential-delay: wait before the first restart.",
    .min_value = 1,
};

const ConfigOption kExpDelayMaxBackoff{
    .key = "restart-strategy.exponential-delay.max-backoff",
    .type = OptionType::kDuration,
    .default_value = "1 min",
    .description = "exponential-delay: the longest wait between two restarts.",
    .min_value = 1,
};

const ConfigOption kExpDelayMultiplier{
    .key = "restart-strategy.exponential-delay.backoff-multiplier",
    .type = OptionType::kDouble,
    .default_value = "1.5",
    .description = "exponential-delay: factor applied to the wait after each failure.",
    .min_value = 1.0,
};

const ConfigOption kExpDelayResetThreshold{
    .key = "restart-strategy.exponential-delay.reset-backoff-threshold",
    .type = OptionType::kDuration,
    .default_value = "1 h",
    .description = "exponential-delay: after running this long without failure the wait goes "
                   "back to initial-backoff.",
    .min_value = 1,
};

const ConfigOption kExpDelayJitter{
    .key = "restart-strategy.exponential-delay.jitter-factor",
    .type = OptionType::kDouble,
    .default_value = "0.1",
    .description = "exponential-delay: random fraction added to or removed from each wait.",
    .min_value = 0.0,
    .max_value = 1.0,
};

const ConfigOption kExpDelayAttemptsBeforeReset{
    .key = "restart-strategy.exponential-delay.attempts-before-reset-backoff",
    .type = OptionType::kInt,
    .default_value = "2147483647",
    .description = "exponential-delay: restarts tried before the job fails (counted since the "
                   "last reset); the default means no limit.",
    .min_value = 1,
    .max_value = kIntMax,
};

// --- restore ---

const ConfigOption kStateRecoveryPath{
    .key = "execution.state-recovery.path",
    .type = OptionType::kString,
    .default_value = "",
    .deprecated_keys = {"execution.savepoint.path"},
    .description = "Savepoint or retained checkpoint to start the job from (`weir run -s`).",
};

const ConfigOption kStateRecoveryIgnoreUnclaimed{
    .key = "execution.state-recovery.ignore-unclaimed-state",
    .type = OptionType::kBool,
    .default_value = "false",
    .deprecated_keys = {"execution.savepoint.ignore-unclaimed-state"},
    .description = "Start even if the snapshot holds state no operator claims (`weir run -n`).",
};

const ConfigOption kStateRecoveryClaimMode{
    .key = "execution.state-recovery.claim-mode",
    .type = OptionType::kEnum,
    .default_value = "NO_CLAIM",
    .deprecated_keys = {"execution.savepoint-restore-mode"},
    .enum_values = {"CLAIM", "NO_CLAIM", "LEGACY"},
    .description = "Who owns the snapshot a job starts from: CLAIM (weir takes it over and may "
                   "delete it), NO_CLAIM (the user; the first checkpoint is a full one), LEGACY.",
};

// --- S3 ---

const ConfigOption kS3Endpoint{
    .key = "s3.endpoint",
    .type = OptionType::kString,
    .default_value = "",
    .deprecated_keys = {"fs.s3a.endpoint"},
    .description = "Host or URL of an S3-compatible store for s3:// paths (e.g. MinIO); AWS when "
                   "unset.",
};

const ConfigOption kS3PathStyleAccess{
    .key = "s3.path.style.access",
    .type = OptionType::kBool,
    .default_value = "false",
    .deprecated_keys = {"fs.s3a.path.style.access"},
    .description = "Path-style URLs (endpoint/bucket/key) instead of virtual-host style, as MinIO "
                   "needs.",
};

const ConfigOption kS3AccessKey{
    .key = "s3.access-key",
    .type = OptionType::kString,
    .default_value = "",
    .deprecated_keys = {"fs.s3a.access.key", "s3.access.key"},
    .description = "Access key id for s3:// paths.",
};

const ConfigOption kS3SecretKey{
    .key = "s3.secret-key",
    .type = OptionType::kString,
    .default_value = "",
    .deprecated_keys = {"fs.s3a.secret.key", "s3.secret.key"},
    .description = "Secret access key for s3:// paths.",
};

const ConfigOption kS3Region{
    .key = "s3.region",
    .type = OptionType::kString,
    .default_value = "",
    .deprecated_keys = {"fs.s3a.endpoint.region"},
    .description = "Region that S3 requests are signed for; AWS_REGION, else us-east-1, when unset.",
};

// --- HDFS (hdfs://host:port/path, through WebHDFS) ---

const ConfigOption kHdfsWebhdfsPort{
    .key = "fs.hdfs.webhdfs.port",
    .type = OptionType::kInt,
    .default_value = "9870",
    .description = "HTTP port of the namenode's WebHDFS, which weir uses for hdfs:// paths (the "
                   "URI's port is the RPC port). The user is HADOOP_USER_NAME, else the OS user.",
    .min_value = 1,
    .max_value = kMaxPort,
};

// --- runtime process ---

const ConfigOption kRuntimeLogFile{
    .key = "weir.runtime.log.file",
    .type = OptionType::kString,
    .default_value = "",
    .description = "File the runtime appends its log to; stderr when unset.",
};

const ConfigOption kRuntimeLogLevel{
    .key = "weir.runtime.log.level",
    .type = OptionType::kEnum,
    .default_value = "INFO",
    .enum_values = {"DEBUG", "INFO", "WARN", "ERROR"},
    .description = "Least severe runtime log messages written.",
};

const ConfigOption kRuntimeBatchScheduling{
    .key = "weir.runtime.batch-scheduling",
    .type = OptionType::kBool,
    .default_value = "true",
    .description = "Task threads run under Linux's SCHED_BATCH policy: a task woken by input does "
                   "not preempt the task running on that core, so tasks that outnumber the cores "
                   "switch less often. false: the default policy, under which a woken task may.",
};

// --- high availability ---

const ConfigOption kHighAvailabilityType{
    .key = "high-availability.type",
    .type = OptionType::kEnum,
    .default_value = "NONE",
    .deprecated_keys = {"high-availability"},
    .enum_values = {"NONE", "filesystem", "zookeeper", "kubernetes"},
    .description = "'filesystem': weir-runtime records every job and its latest completed "
                   "checkpoint in high-availability.storageDir, and a restarted weir-runtime on "
                   "that directory resumes the jobs that were running. 'zookeeper' and "
                   "'kubernetes' are Flink's and are refused.",
};

const ConfigOption kHighAvailabilityStorageDir{
    .key = "high-availability.storageDir",
    .type = OptionType::kString,
    .default_value = "",
    .description = "Local directory of the high-availability records (required with "
                   "high-availability.type: filesystem); one runtime at a time uses it.",
};

const std::vector<const ConfigOption*>& AllOptions() {
  static const std::vector<const ConfigOption*> all = {
      &kExecutionTarget,
      &kExecutionAttached,
      &kParallelismDefault,
      &kPipelineMaxParallelism,
      &kRestAddress,
      &kRestPort,
      &kRestBindAddress,
      &kRestBindPort,
      &kRestServerMaxContentLength,
      &kRestClientMaxContentLength,
      &kRestAsyncStoreDuration,
      &kRestConnectionTimeout,
      &kClientTimeout,
      &kWebUploadDir,
      &kTaskBufferSize,
      &kTaskBuffersPerChannel,
      &kTaskFloatingBuffers,
      &kTaskBufferDebloatEnabled,
      &kTaskBufferDebloatTarget,
      &kTaskBufferDebloatPeriod,
      &kTaskBufferDebloatSamples,
      &kTaskBufferDebloatThreshold,
      &kTaskMinBufferSize,
      &kJobStoreMaxCapacity,
      &kJobStoreExpirationTime,
      &kCheckpointingInterval,
      &kCheckpointingMode,
      &kCheckpointingTimeout,
      &kCheckpointingMaxConcurrent,
      &kCheckpointingMinPause,
      &kCheckpointingTolerableFailures,
      &kCheckpointingExternalizedRetention,
      &kCheckpointingNumRetained,
      &kCheckpointsHistory,
      &kCheckpointingDir,
      &kCheckpointingSavepointDir,
      &kCheckpointingStorage,
      &kCheckpointingUnaligned,
      &kCheckpointingAlignedTimeout,
      &kCheckpointingIncremental,
      &kCheckpointingAfterTasksFinish,
      &kCheckpointingInlineThreshold,
      &kStateBackendType,
      &kRocksDbLocalDir,
      &kRocksDbPredefinedOptions,
      &kRocksDbBlockCacheSize,
      &kRocksDbWriteBufferSize,
      &kRocksDbMemoryManaged,
      &kRocksDbValueCacheSize,
      &kRocksDbValueCacheRatio,
      &kManagedMemorySize,
      &kRestartStrategyType,
      &kFixedDelayAttempts,
      &kFixedDelayDelay,
      &kFailureRateMaxFailures,
      &kFailureRateInterval,
      &kFailureRateDelay,
      &kExpDelayInitialBackoff,
      &kExpDelayMaxBackoff,
      &kExpDelayMultiplier,
      &kExpDelayResetThreshold,
      &kExpDelayJitter,
      &kExpDelayAttemptsBeforeReset,
      &kStateRecoveryPath,
      &kStateRecoveryIgnoreUnclaimed,
      &kStateRecoveryClaimMode,
      &kS3Endpoint,
      &kS3PathStyleAccess,
      &kS3AccessKey,
      &kS3SecretKey,
      &kS3Region,
      &kHdfsWebhdfsPort,
      &kRuntimeLogFile,
      &kRuntimeLogLevel,
      &kRuntimeBatchScheduling,
      &kHighAvailabilityType,
      &kHighAvailabilityStorageDir,
  };
  return all;
}

const ConfigOption* FindOption(std::string_view key) {
  static const std::unordered_map<std::string, const ConfigOption*> by_key = [] {
    std::unordered_map<std::string, const ConfigOption*> m;
    for (const ConfigOption* o : AllOptions()) {
      m.emplace(o->key, o);
      for (const std::string& d : o->deprecated_keys) m.emplace(d, o);
    }
    return m;
  }();
  auto it = by_key.find(std::string(key));
  return it == by_key.end() ? nullptr : it->second;
}

}  // namespace weir::options
