#pragma once
// KafkaTransactionAdmin: the few Kafka protocol requests about transactions that
// librdkafka 2.0 does not offer, spoken directly over TCP (PLAINTEXT):
//
//   Describe     DescribeTransactions v0: state, producer id and epoch of an id
//   Commit       EndTxn v1 (commit): commits a transaction that another producer
//                (one that no longer exists, e.g. before a crash) pre-committed;
//                idempotent: committing a committed transaction is fine
//   Fence        InitProducerId v1: bumps the epoch of an id, which aborts its open
//                transaction (what a new producer with that id would do)
//   ListOngoing  ListTransactions v0 on every broker: the ids of open transactions
//
// The transaction coordinator of an id is found with FindCoordinator v1; brokers
// with Metadata v1. Requests retry on the coordinator's transient errors (loading,
// not coordinator, concurrent transactions) until `timeout_ms` has passed.
//
// Not thread-safe: one instance per user (a sink subtask). It keeps one connection
// per broker and reconnects after an error.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lib/common/status.h"

namespace weir::kafka {

// Kafka's error codes that callers tell apart.
enum class KafkaError : int16_t {
  kNone = 0,
  kCoordinatorLoadInProgress = 14,
  kCoordinatorNotAvailable = 15,
  kNotCoordinator = 16,
  kInvalidProducerEpoch = 47,
  kInvalidTxnState = 48,
  kInvalidProducerIdMapping = 49,
  kConcurrentTransactions = 51,
  kProducerFenced = 90,
  kTransactionalIdNotFound = 105,
};

struct TransactionDescription {
  std::string transactional_id;
  std::string state;  // Kafka's names: Empty, Ongoing, PrepareCommit, CompleteCommit, ...
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  int32_t timeout_ms = 0;
};

struct TransactionListing {
  std::string transactional_id;
  int64_t producer_id = -1;
  std::string state;
};

// What Commit found.
enum class CommitOutcome {
  kCommitted,         // committed now or before (a retry of a committed transaction)
  kNotCommittable,    // fenced, aborted or expired: the data of the transaction is gone
};

class KafkaTransactionAdmin {
 public:
  // `bootstrap_servers`: "host:port[,host:port...]".
  KafkaTransactionAdmin(std::string bootstrap_servers, int timeout_ms);
  ~KafkaTransactionAdmin();
  KafkaTransactionAdmin(const KafkaTransactionAdmin&) = delete;
  KafkaTransactionAdmin& operator=(const KafkaTransactionAdmin&) = delete;

  // kNotFound when the broker has never seen the id.
  Result<TransactionDescription> Describe(const std::string& transactional_id);
  // Commits the transaction of producer (id, epoch); `detail` says why it was not
  // committable when so.
  Result<CommitOutcome> Commit(const std::string& transactional_id, int64_t producer_id, int16_t epoch,
                               std::string* detail);
  // Aborts whatever transaction `transactional_id` has open (fencing its producer).
  Status Fence(const std::string& transactional_id, int32_t transaction_timeout_ms);
  // Open transactions (state Ongoing, PrepareCommit or PrepareAbort) on all brokers.
  Result<std::vector<TransactionListing>> ListOpen();

 private:
  class Connection;
  struct Broker {
    std::string host;
    int port = 0;
  };
  // A connection to one of the bootstrap servers (the first that answers).
  Result<Connection*> AnyBroker();
  Result<Connection*> ConnectTo(const std::string& host, int port);
  Result<Connection*> Coordinator(const std::string& transactional_id);
  Result<std::vector<Broker>> Brokers();
  void Drop(Connection* c);

  std::vector<Broker> bootstrap_;
  int timeout_ms_;
  std::map<std::string, std::unique_ptr<Connection>> connections_;  // "host:port"
};

// "host:port,host:port" -> pairs; InvalidArgument naming the bad entry.
Result<std::vector<std::pair<std::string, int>>> ParseBootstrapServers(const std::string& servers);

}  // namespace weir::kafka
