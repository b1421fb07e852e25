// kafka_test_client: what the Kafka tests need from outside weir, on librdkafka.
//
//   kafka_test_client produce BOOTSTRAP TOPIC FROM TO
//       sends the numbers FROM..TO as record values, number n to partition
//       n mod <partitions>, idempotently; exits when all are acknowledged
//   kafka_test_client consume BOOTSTRAP TOPIC [read_committed|read_uncommitted [MIN]]
//       prints every record value of every partition, one a line, up to each
//       partition's end (for read_committed: its last stable offset), waiting (up to
//       30 s without progress) until at least MIN records were read
//   kafka_test_client hang BOOTSTRAP TRANSACTIONAL_ID TOPIC
//       opens a transaction with that id, sends one record "hang" in it and exits
//       without committing (a lingering transaction, as after a crash)
//   kafka_test_client latency BOOTSTRAP IN OUT FROM TO RATE
//       sends FROM..TO to IN at RATE records/s while reading OUT (lines
//       "<n>,...") with read_committed, and prints the end-to-end latency (send ->
//       visible to the reader): median, p99 and max in ms (for the benchmarks)
//
// Exits 0 on success, 1 with a message on stderr otherwise.

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace {

[[noreturn]] void Die(const std::string& msg) {
  std::fprintf(stderr, "kafka_test_client: %s\n", msg.c_str());
  std::exit(1);
}

rd_kafka_t* Make(rd_kafka_type_t type, const std::map<std::string, std::string>& props) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  for (const auto& [k, v] : props) {
    if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) Die(err);
  }
  rd_kafka_t* rk = rd_kafka_new(type, conf, err, sizeof err);
  if (!rk) Die(err);
  return rk;
}

int Partitions(rd_kafka_t* rk, const std::string& topic) {
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
  for (int attempt = 0; attempt < 100; ++attempt) {
    const rd_kafka_metadata_t* md = nullptr;
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, rkt, &md, 10000);
    if (err) Die("metadata of '" + topic + "': " + rd_kafka_err2str(err));
    int n = md->topic_cnt == 1 && md->topics[0].err == 0 ? md->topics[0].partition_cnt : 0;
    rd_kafka_metadata_destroy(md);
    if (n > 0) {
      rd_kafka_topic_destroy(rkt);
      return n;
    }
    rd_kafka_poll(rk, 100);
  }
  Die("topic '" + topic + "' has no partitions");
}

int Produce(const std::string& bootstrap, const std::string& topic, long from, long to) {
  rd_kafka_t* rk = Make(RD_KAFKA_PRODUCER, {{"bootstrap.servers", bootstrap}, {"enable.idempotence", "true"}});
  int parts = Partitions(rk, topic);
  for (long n = from; n <= to; ++n) {
    std::string v = std::to_string(n);
    while (true) {
      rd_kafka_resp_err_t err = rd_kafka_producev(
          rk, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(static_cast<int32_t>(n % parts)),
          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_VALUE(v.data(), v.size()), RD_KAFKA_V_END);
      if (err == RD_KAFKA_RESP_ERR_NO_ERROR) break;
      if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) Die(std::string("produce: ") + rd_kafka_err2str(err));
      rd_kafka_poll(rk, 10);
    }
  }
  if (rd_kafka_flush(rk, 60000) != RD_KAFKA_RESP_ERR_NO_ERROR) Die("flush timed out");
  rd_kafka_destroy(rk);
  return 0;
}

int Consume(const std::string& bootstrap, const std::string& topic, const std::string& isolation, long min) {
  rd_kafka_t* rk = Make(RD_KAFKA_CONSUMER, {{"bootstrap.servers", bootstrap},
                                            {"isolation.level", isolation},
                                            {"enable.partition.eof", "true"},
                                            {"group.id", "kafka-test-client"},
                                            {"enable.auto.commit", "false"}});
  int parts = Partitions(rk, topic);
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(parts);
  for (int p = 0; p < parts; ++p) rd_kafka_topic_partition_list_add(list, topic.c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
  if (rd_kafka_assign(rk, list)) Die("assign failed");
  rd_kafka_topic_partition_list_destroy(list);
  // Until every partition is at its end (for read_committed: its last stable offset)
  // with at least `min` records read: a transaction's commit markers reach the
  // partitions a moment after the commit returns.
  std::vector<bool> at_end(static_cast<size_t>(parts), false);
  long count = 0;
  auto last_progress = std::chrono::steady_clock::now();
  while (true) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 100);
    if (m) {
      if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        at_end[static_cast<size_t>(m->partition)] = true;
      } else if (m->err) {
        Die(rd_kafka_message_errstr(m));
      } else {
        std::fwrite(m->payload, 1, m->len, stdout);
        std::fputc('\n', stdout);
        at_end[static_cast<size_t>(m->partition)] = false;
        ++count;
        last_progress = std::chrono::steady_clock::now();
      }
      rd_kafka_message_destroy(m);
    }
    bool all_at_end = std::all_of(at_end.begin(), at_end.end(), [](bool b) { return b; });
    if (all_at_end && count >= min) break;
    if (std::chrono::steady_clock::now() - last_progress > std::chrono::seconds(30)) {
      Die("read " + std::to_string(count) + " records of '" + topic + "', expected at least " + std::to_string(min) +
          "; nothing more came within 30 s");
    }
  }
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  return 0;
}

int Hang(const std::string& bootstrap, const std::string& id, const std::string& topic) {
  rd_kafka_t* rk = Make(RD_KAFKA_PRODUCER, {{"bootstrap.servers", bootstrap},
                                            {"transactional.id", id},
                                            {"transaction.timeout.ms", "3600000"}});
  auto check = [](rd_kafka_error_t* e, const char* what) {
    if (e) Die(std::string(what) + ": " + rd_kafka_error_string(e));
  };
  check(rd_kafka_init_transactions(rk, 60000), "init_transactions");
  check(rd_kafka_begin_transaction(rk), "begin_transaction");
  rd_kafka_resp_err_t err = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic.c_str()),
                                              RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                              RD_KAFKA_V_VALUE(const_cast<char*>("hang"), 4), RD_KAFKA_V_END);
  if (err) Die(std::string("produce: ") + rd_kafka_err2str(err));
  if (rd_kafka_flush(rk, 60000) != RD_KAFKA_RESP_ERR_NO_ERROR) Die("flush timed out");
  rd_kafka_destroy(rk);  // leaves the transaction open at the broker
  return 0;
}

double NowMs() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

int Latency(const std::string& bootstrap, const std::string& in, const std::string& out, long from, long to,
            double rate) {
  std::vector<double> sent(static_cast<size_t>(to - from + 1), 0.0);
  std::vector<std::atomic<bool>> ready(sent.size());
  rd_kafka_t* consumer = Make(RD_KAFKA_CONSUMER, {{"bootstrap.servers", bootstrap},
                                                  {"isolation.level", "read_committed"},
                                                  {"group.id", "kafka-test-client"},
                                                  {"fetch.wait.max.ms", "10"},
                                                  {"enable.auto.commit", "false"}});
  int out_parts = Partitions(consumer, out);
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(out_parts);
  for (int p = 0; p < out_parts; ++p) {
    int64_t low = 0, high = 0;
    rd_kafka_query_watermark_offsets(consumer, out.c_str(), p, &low, &high, 10000);
    rd_kafka_topic_partition_list_add(list, out.c_str(), p)->offset = high;
  }
  if (rd_kafka_assign(consumer, list)) Die("assign failed");
  rd_kafka_topic_partition_list_destroy(list);
  std::thread producer([&] {
    rd_kafka_t* rk = Make(RD_KAFKA_PRODUCER, {{"bootstrap.servers", bootstrap}, {"linger.ms", "5"}});
    int parts = Partitions(rk, in);
    double start = NowMs();
    for (long n = from; n <= to; ++n) {
      double due = start + static_cast<double>(n - from) * 1000.0 / rate;
      while (NowMs() < due) std::this_thread::sleep_for(std::chrono::microseconds(200));
      std::string v = std::to_string(n);
      sent[n - from] = NowMs();
      ready[n - from].store(true);
      if (rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(in.c_str()), RD_KAFKA_V_PARTITION(static_cast<int32_t>(n % parts)),
                            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_VALUE(v.data(), v.size()),
                            RD_KAFKA_V_END)) {
        Die("produce failed");
      }
      rd_kafka_poll(rk, 0);
    }
    rd_kafka_flush(rk, 60000);
    rd_kafka_destroy(rk);
  });
  std::vector<double> lat;
  double last_seen = NowMs();
  while (static_cast<long>(lat.size()) < to - from + 1 && NowMs() - last_seen < 30000) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer, 100);
    if (!m) continue;
    if (!m->err) {
      double now = NowMs();
      long n = std::atol(std::string(static_cast<const char*>(m->payload), m->len).c_str());
      if (n >= from && n <= to && ready[n - from].load()) lat.push_back(now - sent[n - from]);
      last_seen = now;
    }
    rd_kafka_message_destroy(m);
  }
  producer.join();
  rd_kafka_consumer_close(consumer);
  rd_kafka_destroy(consumer);
  if (lat.empty()) Die("no output record was seen");
  std::sort(lat.begin(), lat.end());
  std::printf("records %zu median_ms %.1f p99_ms %.1f max_ms %.1f\n", lat.size(), lat[lat.size() / 2],
              lat[std::min(lat.size() - 1, lat.size() * 99 / 100)], lat.back());
  return lat.size() == static_cast<size_t>(to - from + 1) ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> a(argv + 1, argv + argc);
  if (a.size() == 5 && a[0] == "produce") return Produce(a[1], a[2], std::atol(a[3].c_str()), std::atol(a[4].c_str()));
  if (a.size() >= 3 && a.size() <= 5 && a[0] == "consume") {
    return Consume(a[1], a[2], a.size() >= 4 ? a[3] : "read_committed", a.size() == 5 ? std::atol(a[4].c_str()) : 0);
  }
  if (a.size() == 4 && a[0] == "hang") return Hang(a[1], a[2], a[3]);
  if (a.size() == 7 && a[0] == "latency") {
    return Latency(a[1], a[2], a[3], std::atol(a[4].c_str()), std::atol(a[5].c_str()), std::atof(a[6].c_str()));
  }
  std::fprintf(stderr,
               "usage: kafka_test_client produce BOOTSTRAP TOPIC FROM TO\n"
               "       kafka_test_client consume BOOTSTRAP TOPIC [read_committed|read_uncommitted [MIN]]\n"
               "       kafka_test_client hang BOOTSTRAP TRANSACTIONAL_ID TOPIC\n"
               "       kafka_test_client latency BOOTSTRAP IN OUT FROM TO RATE\n");
  return 2;
}
