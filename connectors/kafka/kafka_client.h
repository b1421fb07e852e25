#pragma once
// Helpers shared by the Kafka source and sink around librdkafka: configuration
// with errors that name the property, and a metadata check that tells an
// unreachable broker from an unknown topic. They throw std::runtime_error with
// `who` ("kafka source", "kafka sink") in front of the message, which fails the task.

#include <librdkafka/rdkafka.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace weir::kafka {

// A librdkafka configuration with `props` set; throws naming a bad property.
rd_kafka_conf_t* NewKafkaConf(const std::map<std::string, std::string>& props, const std::string& who);

// The partitions of `topic` (sorted); throws "... brokers '<servers>' unreachable"
// when no broker answers within `timeout_ms`, and "... topic '<topic>' does not
// exist" when the brokers do not know it (`may_create`: a producer's request may
// create it when the broker auto-creates topics).
std::vector<int32_t> CheckTopic(rd_kafka_t* rk, const std::string& topic, const std::string& servers,
                                int64_t timeout_ms, const std::string& who, bool may_create);

// Every topic the brokers know (internal ones excluded), sorted; throws when none answers.
std::vector<std::pair<std::string, std::vector<int32_t>>> ListTopics(rd_kafka_t* rk, const std::string& servers,
                                                                     int64_t timeout_ms, const std::string& who);

// `text` with the characters that ECMAScript regular expressions treat specially escaped.
std::string RegexEscape(const std::string& text);

}  // namespace weir::kafka
