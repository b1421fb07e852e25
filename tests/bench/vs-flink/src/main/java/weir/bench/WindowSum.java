package weir.bench;

import java.time.Duration;
import java.util.Set;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;

/**
 * weir's examples/window_sum with --sink discard: the numbers 1..count from one source subtask
 * with event time n ms (monotonous timestamps), keyed by parity, tumbling event-time windows of
 * --window-ms, a sum and a count per window and key into a discarding sink.
 */
public final class WindowSum {
  static final String USAGE =
      "WindowSum --count N [--window-ms W] [--parallelism P] [--state-backend hashmap|rocksdb]"
          + " [--checkpoint-interval-ms I --checkpoint-dir DIR]";

  /** Counts the records (and, in subtask 0, the completed checkpoints) for the harness. */
  static final class Counted extends RichMapFunction<Long, Long> implements CheckpointListener {
    private transient LongCounter records;
    private transient LongCounter checkpoints;

    @Override
    public void open(OpenContext context) {
      records = getRuntimeContext().getLongCounter(BenchJob.RECORDS);
      checkpoints = getRuntimeContext().getLongCounter(BenchJob.CHECKPOINTS);
    }

    @Override
    public Long map(Long n) {
      records.add(1L);
      return n;
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
      checkpoints.add(1L);
    }
  }

  /** Sum and count of a window's numbers: weir's window_sum line without the window bounds. */
  static final class SumCount implements AggregateFunction<Long, long[], long[]> {
    @Override
    public long[] createAccumulator() {
      return new long[2];
    }

    @Override
    public long[] add(Long n, long[] acc) {
      acc[0] += n;
      acc[1] += 1;
      return acc;
    }

    @Override
    public long[] getResult(long[] acc) {
      return acc;
    }

    @Override
    public long[] merge(long[] a, long[] b) {
      return new long[] {a[0] + b[0], a[1] + b[1]};
    }
  }

  public static void main(String[] argv) throws Exception {
    BenchJob job = new BenchJob(argv, USAGE, Set.of("count", "window-ms"));
    long count = job.getLong("count", 1000, 1, USAGE);
    long windowMs = job.getLong("window-ms", 1000, 1, USAGE);
    StreamExecutionEnvironment env = job.environment(USAGE);
    env.fromSequence(1, count)
        .name("Sequence")
        .uid("sequence-source")
        .setParallelism(1)
        .map(new Counted())
        .setParallelism(1)
        .name("Count")
        .assignTimestampsAndWatermarks(
            WatermarkStrategy.<Long>forMonotonousTimestamps().withTimestampAssigner((n, ts) -> n))
        .setParallelism(1)
        .keyBy((KeySelector<Long, Long>) n -> n % 2, Types.LONG)
        .window(TumblingEventTimeWindows.of(Duration.ofMillis(windowMs)))
        .aggregate(new SumCount())
        .name("Window Sum")
        .uid("window-sum")
        .sinkTo(new DiscardingSink<>())
        .name("Discard")
        .uid("discard-sink");
    BenchJob.execute(env, "Window Sum");
  }
}
