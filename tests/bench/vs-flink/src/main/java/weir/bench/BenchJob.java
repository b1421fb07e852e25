package weir.bench;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * What the benchmark jobs share: their command line, a local execution environment set up as
 * weir runs the same job (object reuse, the heap state backend or with --state-backend rocksdb
 * the embedded RocksDB one, exactly-once checkpoints to a local directory, incremental on
 * RocksDB, 3 retained), and the one result line tests/bench/vs-flink/harness.py reads:
 *
 * <pre>result runtime_ms=R records=N checkpoints=C</pre>
 *
 * R is Flink's net runtime of the job (as weir's "Job Runtime"), N the records the measured
 * operator processed, C the checkpoints that operator's first subtask was told were complete.
 * A bad argument prints the problem on stderr and exits 2.
 */
final class BenchJob {
  static final String RECORDS = "records";
  static final String CHECKPOINTS = "checkpoints";

  private final Map<String, String> args = new HashMap<>();

  /** Parses "--name value" pairs; the common options plus `jobOptions` are known. */
  BenchJob(String[] argv, String usage, Set<String> jobOptions) {
    Set<String> common = Set.of("parallelism", "checkpoint-interval-ms", "checkpoint-dir", "state-backend");
    for (int i = 0; i < argv.length; i += 2) {
      String name = argv[i].startsWith("--") ? argv[i].substring(2) : "";
      if (name.isEmpty() || i + 1 >= argv.length) usageError("expected --name value, got '" + argv[i] + "'", usage);
      if (!common.contains(name) && !jobOptions.contains(name)) usageError("unknown option '--" + name + "'", usage);
      args.put(name, argv[i + 1]);
    }
  }

  String get(String name, String fallback) {
    return args.getOrDefault(name, fallback);
  }

  long getLong(String name, long fallback, long min, String usage) {
    String v = args.get(name);
    if (v == null) return fallback;
    try {
      long n = Long.parseLong(v);
      if (n >= min) return n;
    } catch (NumberFormatException e) {
      // reported below
    }
    usageError("--" + name + " must be a whole number >= " + min + ", not '" + v + "'", usage);
    return fallback;
  }

  /**
   * A local environment (Flink's MiniCluster in this JVM) at the given parallelism. The state
   * backend is "hashmap" or "rocksdb" (EmbeddedRocksDBStateBackend, which flink-dist ships; Flink
   * 2 chooses it by configuration only), with the local environment's 128 MB of managed memory.
   */
  StreamExecutionEnvironment environment(String usage) {
    int parallelism = (int) getLong("parallelism", 1, 1, usage);
    long interval = getLong("checkpoint-interval-ms", 0, 0, usage);
    String backend = get("state-backend", "hashmap");
    if (!backend.equals("hashmap") && !backend.equals("rocksdb")) {
      usageError("--state-backend must be hashmap or rocksdb, not '" + backend + "'", usage);
    }
    Map<String, String> conf = new HashMap<>();
    conf.put("state.backend.type", backend);
    conf.put("execution.checkpointing.num-retained", "3");
    if (interval > 0) {
      String dir = get("checkpoint-dir", "");
      if (dir.isEmpty()) usageError("--checkpoint-interval-ms needs --checkpoint-dir DIR", usage);
      conf.put("execution.checkpointing.interval", interval + " ms");
      conf.put("execution.checkpointing.mode", "EXACTLY_ONCE");
      conf.put("execution.checkpointing.dir", "file://" + dir);
      conf.put("execution.checkpointing.incremental", String.valueOf(backend.equals("rocksdb")));
    }
    StreamExecutionEnvironment env =
        StreamExecutionEnvironment.createLocalEnvironment(parallelism, Configuration.fromMap(conf));
    env.getConfig().enableObjectReuse();
    return env;
  }

  /** Runs the job and prints the result line. */
  static void execute(StreamExecutionEnvironment env, String name) throws Exception {
    JobExecutionResult result = env.execute(name);
    Long records = result.getAccumulatorResult(RECORDS);
    Long checkpoints = result.getAccumulatorResult(CHECKPOINTS);
    System.out.printf(
        "result runtime_ms=%d records=%d checkpoints=%d%n",
        result.getNetRuntime(), records == null ? 0 : records, checkpoints == null ? 0 : checkpoints);
  }

  private static void usageError(String problem, String usage) {
    System.err.println("weir-vs-flink: " + problem);
    System.err.println("usage: " + usage);
    System.exit(2);
  }
}
