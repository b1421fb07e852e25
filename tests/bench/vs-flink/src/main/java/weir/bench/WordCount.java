package weir.bench;

import java.util.Set;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichFlatMapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.connector.file.src.FileSource;
import org.apache.flink.connector.file.src.reader.TextLineInputFormat;
import org.apache.flink.core.fs.Path;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.Collector;

/**
 * weir's examples/word_count with --sink discard: the lines of a file or directory, split into
 * lower-case ASCII words, a running count per word, "word,count" per occurrence into a
 * discarding sink.
 */
public final class WordCount {
  static final String USAGE =
      "WordCount --input PATH [--parallelism P] [--state-backend hashmap|rocksdb]"
          + " [--checkpoint-interval-ms I --checkpoint-dir DIR]";

  /** weir's SplitWords: runs of ASCII letters and digits, lower-cased. */
  static final class Tokenizer extends RichFlatMapFunction<String, Tuple2<String, Long>>
      implements CheckpointListener {
    private transient LongCounter records;
    private transient LongCounter checkpoints;
    private transient boolean countsCheckpoints;
    private final StringBuilder word = new StringBuilder();

    @Override
    public void open(OpenContext context) {
      records = getRuntimeContext().getLongCounter(BenchJob.RECORDS);
      checkpoints = getRuntimeContext().getLongCounter(BenchJob.CHECKPOINTS);
      countsCheckpoints = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() == 0;
    }

    @Override
    public void flatMap(String line, Collector<Tuple2<String, Long>> out) {
      for (int i = 0; i < line.length(); i++) {
        char c = line.charAt(i);
        boolean upper = c >= 'A' && c <= 'Z';
        if (upper || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
          word.append(upper ? (char) (c + ('a' - 'A')) : c);
        } else if (word.length() > 0) {
          emit(out);
        }
      }
      if (word.length() > 0) emit(out);
    }

    private void emit(Collector<Tuple2<String, Long>> out) {
      out.collect(Tuple2.of(word.toString(), 1L));
      word.setLength(0);
      records.add(1L);
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
      if (countsCheckpoints) checkpoints.add(1L);
    }
  }

  public static void main(String[] argv) throws Exception {
    BenchJob job = new BenchJob(argv, USAGE, Set.of("input"));
    String input = job.get("input", "");
    if (input.isEmpty()) {
      System.err.println("weir-vs-flink: --input PATH is required (a file or a directory)");
      System.err.println("usage: " + USAGE);
      System.exit(2);
    }
    StreamExecutionEnvironment env = job.environment(USAGE);
    FileSource<String> source =
        FileSource.forRecordStreamFormat(new TextLineInputFormat(), new Path(input)).build();
    env.fromSource(source, WatermarkStrategy.noWatermarks(), "File Source")
        .uid("file-source")
        .flatMap(new Tokenizer())
        .name("Tokenizer")
        .uid("tokenizer")
        .keyBy(wc -> wc.f0, Types.STRING)
        .sum(1)
        .name("Count")
        .uid("count")
        .map(wc -> wc.f0 + "," + wc.f1)
        .returns(Types.STRING)
        .name("Format")
        .uid("format")
        .sinkTo(new DiscardingSink<>())
        .name("Discard")
        .uid("discard-sink");
    BenchJob.execute(env, "Word Count");
  }
}
