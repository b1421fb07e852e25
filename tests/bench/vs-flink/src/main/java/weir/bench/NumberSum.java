package weir.bench;

import java.util.Set;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.Collector;

/**
 * weir's examples/number_sum with --sink discard: the numbers 1..count from one source subtask,
 * keyed by n mod keys (number_sum's parity is keys = 2), a running sum per key in a ValueState,
 * one SumLine per input into a discarding sink.
 */
public final class NumberSum {
  static final String USAGE =
      "NumberSum --count N [--keys K] [--parallelism P] [--state-backend hashmap|rocksdb]"
          + " [--checkpoint-interval-ms I --checkpoint-dir DIR]";

  /** One output record: the input, its key and the key's sum so far (weir's SumLine). */
  public static final class SumLine {
    public long n;
    public long key;
    public long sum;

    public SumLine() {}

    SumLine(long n, long key, long sum) {
      this.n = n;
      this.key = key;
      this.sum = sum;
    }
  }

  static final class KeySum extends KeyedProcessFunction<Long, Long, SumLine> implements CheckpointListener {
    private transient ValueState<Long> sum;
    private transient LongCounter records;
    private transient LongCounter checkpoints;
    private transient boolean countsCheckpoints;

    @Override
    public void open(OpenContext context) {
      sum = getRuntimeContext().getState(new ValueStateDescriptor<>("sum", Types.LONG));
      records = getRuntimeContext().getLongCounter(BenchJob.RECORDS);
      checkpoints = getRuntimeContext().getLongCounter(BenchJob.CHECKPOINTS);
      countsCheckpoints = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() == 0;
    }

    @Override
    public void processElement(Long n, Context ctx, Collector<SumLine> out) throws Exception {
      Long before = sum.value();
      long after = (before == null ? 0 : before) + n;
      sum.update(after);
      records.add(1L);
      out.collect(new SumLine(n, ctx.getCurrentKey(), after));
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
      if (countsCheckpoints) checkpoints.add(1L);
    }
  }

  public static void main(String[] argv) throws Exception {
    BenchJob job = new BenchJob(argv, USAGE, Set.of("count", "keys"));
    long count = job.getLong("count", 1000, 1, USAGE);
    long keys = job.getLong("keys", 2, 1, USAGE);
    StreamExecutionEnvironment env = job.environment(USAGE);
    env.fromSequence(1, count)
        .name("Sequence")
        .uid("sequence-source")
        .setParallelism(1)
        .keyBy((KeySelector<Long, Long>) n -> n % keys, Types.LONG)
        .process(new KeySum())
        .name("Key Sum")
        .uid("key-sum")
        .sinkTo(new DiscardingSink<>())
        .name("Discard")
        .uid("discard-sink");
    BenchJob.execute(env, "Number Sum");
  }
}
