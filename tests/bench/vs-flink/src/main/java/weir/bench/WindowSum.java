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
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

/**
 * weir's examples/window_sum with --sink discard: the numbers 1..count from one source subtask
 * with event time n ms (monotonous timestamps), keyed by n mod --keys (2: parity), event-time
 * windows of --window-ms, tumbling or, with --slide-ms S, sliding every S ms, a sum and a count
 * per window and key into a discarding sink.
 *
 * <p>--hold true keeps the job running after the count-th number (one more number every 100 ms,
 * so that windows of an hour stay open) and prints "windows-open checkpoint=C" once checkpoint C,
 * taken after the count-th number, completed: tests/bench/window_state_size.sh measures it.
 */
public final class WindowSum {
  static final String USAGE =
      "WindowSum --count N [--window-ms W] [--slide-ms S] [--keys K] [--hold true] [--parallelism P]"
          + " [--checkpoint-interval-ms I --checkpoint-dir DIR] [--state-backend hashmap|rocksdb]";

  /** Counts the records (and, in subtask 0, the completed checkpoints) for the harness. */
  static final class Counted extends RichMapFunction<Long, Long> implements CheckpointListener {
    private final long count;
    private final boolean hold;
    private transient LongCounter records;
    private transient LongCounter checkpoints;
    private transient long seen;
    private transient long firstAfterAll;

    Counted(long count, boolean hold) {
      this.count = count;
      this.hold = hold;
    }

    @Override
    public void open(OpenContext context) {
      records = getRuntimeContext().getLongCounter(BenchJob.RECORDS);
      checkpoints = getRuntimeContext().getLongCounter(BenchJob.CHECKPOINTS);
    }

    @Override
    public Long map(Long n) throws InterruptedException {
      records.add(1L);
      if (++seen > count && hold) Thread.sleep(100);
      return n;
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
      checkpoints.add(1L);
      if (!hold || seen < count) return;
      // The first checkpoint completed after the count-th number may have passed before it;
      // the next one was triggered after it, so its barrier follows every window's records.
      if (firstAfterAll == 0) {
        firstAfterAll = checkpointId;
      } else if (checkpointId == firstAfterAll + 1) {
        System.out.println("windows-open checkpoint=" + checkpointId);
        System.out.flush();
      }
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
    BenchJob job = new BenchJob(argv, USAGE, Set.of("count", "window-ms", "slide-ms", "keys", "hold"));
    long count = job.getLong("count", 1000, 1, USAGE);
    long windowMs = job.getLong("window-ms", 1000, 1, USAGE);
    long slideMs = job.getLong("slide-ms", 0, 0, USAGE);
    long keys = job.getLong("keys", 2, 1, USAGE);
    boolean hold = Boolean.parseBoolean(job.get("hold", "false"));
    StreamExecutionEnvironment env = job.environment(USAGE);
    WindowAssigner<Object, TimeWindow> windows =
        slideMs == 0
            ? TumblingEventTimeWindows.of(Duration.ofMillis(windowMs))
            : SlidingEventTimeWindows.of(Duration.ofMillis(windowMs), Duration.ofMillis(slideMs));
    env.fromSequence(1, hold ? Long.MAX_VALUE : count)
        .name("Sequence")
        .uid("sequence-source")
        .setParallelism(1)
        .map(new Counted(count, hold))
        .setParallelism(1)
        .name("Count")
        .assignTimestampsAndWatermarks(
            WatermarkStrategy.<Long>forMonotonousTimestamps().withTimestampAssigner((n, ts) -> n))
        .setParallelism(1)
        .keyBy((KeySelector<Long, Long>) n -> n % keys, Types.LONG)
        .window(windows)
        .aggregate(new SumCount())
        .name("Window Sum")
        .uid("window-sum")
        .sinkTo(new DiscardingSink<>())
        .name("Discard")
        .uid("discard-sink");
    BenchJob.execute(env, "Window Sum");
  }
}
