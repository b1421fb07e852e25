#include "connectors/kafka/kafka_client.h"

#include <time.h>

#include <algorithm>
#include <stdexcept>

#include "lib/common/logging.h"

namespace weir::kafka {

namespace {
[[noreturn]] void Throw(const std::string& who, const std::string& what) { throw std::runtime_error(who + ": " + what); }

std::string Unreachable(const std::string& who, const std::string& servers, rd_kafka_resp_err_t err) {
  return "Kafka brokers '" + servers + "' unreachable (" + rd_kafka_err2str(err) +
         "); check --bootstrap-servers and that the brokers run";
}
}  // namespace

namespace {
// librdkafka's log lines go to weir's log (not straight to stderr): errors and
// warnings as warnings, the rest as debug.
void LogFromKafka(const rd_kafka_t* rk, int level, const char* facility, const char* message) {
  if (level <= 4) {
    LogWarn("{}: {}: {}", rd_kafka_name(rk), facility, message);
  } else {
    LogDebug("{}: {}: {}", rd_kafka_name(rk), facility, message);
  }
}
}  // namespace

rd_kafka_conf_t* NewKafkaConf(const std::map<std::string, std::string>& props, const std::string& who) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set_log_cb(conf, LogFromKafka);
  char err[512];
  for (const auto& [k, v] : props) {
    if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      Throw(who, "Kafka property '" + k + "=" + v + "': " + err);
    }
  }
  return conf;
}

std::vector<int32_t> CheckTopic(rd_kafka_t* rk, const std::string& topic, const std::string& servers,
                                int64_t timeout_ms, const std::string& who, bool may_create) {
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
  if (!rkt) Throw(who, "cannot use topic '" + topic + "': " + rd_kafka_err2str(rd_kafka_last_error()));
  const rd_kafka_metadata_t* md = nullptr;
  int64_t deadline_ms = timeout_ms;
  std::vector<int32_t> partitions;
  // A topic being created answers LEADER_NOT_AVAILABLE at first: ask again.
  for (int attempt = 0;; ++attempt) {
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, rkt, &md, static_cast<int>(deadline_ms));
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      rd_kafka_topic_destroy(rkt);
      Throw(who, Unreachable(who, servers, err));
    }
    rd_kafka_resp_err_t terr = md->topic_cnt == 1 ? md->topics[0].err : RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
    if (terr == RD_KAFKA_RESP_ERR_NO_ERROR && md->topics[0].partition_cnt > 0) {
      for (int i = 0; i < md->topics[0].partition_cnt; ++i) partitions.push_back(md->topics[0].partitions[i].id);
      rd_kafka_metadata_destroy(md);
      break;
    }
    rd_kafka_metadata_destroy(md);
    bool retry = terr == RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE ||
                 (may_create && terr == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART && attempt == 0) ||
                 terr == RD_KAFKA_RESP_ERR_NO_ERROR;
    if (!retry || attempt >= 50) {
      rd_kafka_topic_destroy(rkt);
      if (terr == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
        Throw(who, "topic '" + topic + "' does not exist on the Kafka brokers '" + servers +
                       "'; create it, or enable auto.create.topics.enable on the brokers");
      }
      Throw(who, "topic '" + topic + "' on '" + servers + "': " + rd_kafka_err2str(terr));
    }
    struct timespec ts{0, 100'000'000};
    nanosleep(&ts, nullptr);
  }
  rd_kafka_topic_destroy(rkt);
  std::sort(partitions.begin(), partitions.end());
  return partitions;
}

std::vector<std::pair<std::string, std::vector<int32_t>>> ListTopics(rd_kafka_t* rk, const std::string& servers,
                                                                     int64_t timeout_ms, const std::string& who) {
  const rd_kafka_metadata_t* md = nullptr;
  rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 1, nullptr, &md, static_cast<int>(timeout_ms));
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) Throw(who, Unreachable(who, servers, err));
  std::vector<std::pair<std::string, std::vector<int32_t>>> out;
  for (int t = 0; t < md->topic_cnt; ++t) {
    const auto& topic = md->topics[t];
    std::string name = topic.topic;
    if (topic.err != RD_KAFKA_RESP_ERR_NO_ERROR || name.starts_with("__")) continue;
    std::vector<int32_t> parts;
    for (int i = 0; i < topic.partition_cnt; ++i) parts.push_back(topic.partitions[i].id);
    std::sort(parts.begin(), parts.end());
    out.emplace_back(name, std::move(parts));
  }
  rd_kafka_metadata_destroy(md);
  std::sort(out.begin(), out.end());
  return out;
}

std::string RegexEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

}  // namespace weir::kafka
