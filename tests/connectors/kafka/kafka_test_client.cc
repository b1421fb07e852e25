// kafka_test_client: what the Kafka tests need from outside weir, on librdkafka.
//
//   kafka_test_client produce BOOTSTRAP TOPIC FROM TO
//       sends the numbers FROM..TO as record values, number n to partition
//       n mod <partitions>, idempotently; exits when all are acknowledged
//   kafka_test_client consume BOOTSTRAP TOPIC [read_committed|read_uncommitted]
//       prints every record value of every partition, one a line, up to each
//       partition's end (for read_committed: its last stable offset) at the start
//   kafka_test_client hang BOOTSTRAP TRANSACTIONAL_ID TOPIC
//       opens a transaction with that id, sends one record "hang" in it and exits
//       without committing (a lingering transaction, as after a crash)
//
// Exits 0 on success, 1 with a message on stderr otherwise.

#include <librdkafka/rdkafka.h>

#include <cstdio>
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

int Consume(const std::string& bootstrap, const std::string& topic, const std::string& isolation) {
  rd_kafka_t* rk = Make(RD_KAFKA_CONSUMER, {{"bootstrap.servers", bootstrap},
                                            {"isolation.level", isolation},
                                            {"enable.partition.eof", "true"},
                                            {"group.id", "kafka-test-client"},
                                            {"enable.auto.commit", "false"}});
  int parts = Partitions(rk, topic);
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(parts);
  int open = 0;
  for (int p = 0; p < parts; ++p) {
    int64_t low = 0, high = 0;
    rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(rk, topic.c_str(), p, &low, &high, 10000);
    if (err) Die(std::string("watermarks: ") + rd_kafka_err2str(err));
    if (high > low) {
      rd_kafka_topic_partition_list_add(list, topic.c_str(), p)->offset = low;
      ++open;
    }
  }
  if (rd_kafka_assign(rk, list)) Die("assign failed");
  rd_kafka_topic_partition_list_destroy(list);
  while (open > 0) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 30000);
    if (!m) Die("no record within 30 s with " + std::to_string(open) + " partitions not at their end");
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      --open;
    } else if (m->err) {
      Die(rd_kafka_message_errstr(m));
    } else {
      std::fwrite(m->payload, 1, m->len, stdout);
      std::fputc('\n', stdout);
    }
    rd_kafka_message_destroy(m);
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

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> a(argv + 1, argv + argc);
  if (a.size() == 5 && a[0] == "produce") return Produce(a[1], a[2], std::atol(a[3].c_str()), std::atol(a[4].c_str()));
  if ((a.size() == 3 || a.size() == 4) && a[0] == "consume") {
    return Consume(a[1], a[2], a.size() == 4 ? a[3] : "read_committed");
  }
  if (a.size() == 4 && a[0] == "hang") return Hang(a[1], a[2], a[3]);
  std::fprintf(stderr,
               "usage: kafka_test_client produce BOOTSTRAP TOPIC FROM TO\n"
               "       kafka_test_client consume BOOTSTRAP TOPIC [read_committed|read_uncommitted]\n"
               "       kafka_test_client hang BOOTSTRAP TRANSACTIONAL_ID TOPIC\n");
  return 2;
}
