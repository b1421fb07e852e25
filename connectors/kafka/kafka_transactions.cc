#include "connectors/kafka/kafka_transactions.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "lib/common/string_util.h"
#include "lib/common/time_util.h"

namespace weir::kafka {

namespace {

// Kafka's API keys and the versions used (all within what Kafka 3.x and 4.x serve).
constexpr int16_t kMetadata = 3, kMetadataVersion = 1;
constexpr int16_t kFindCoordinator = 10, kFindCoordinatorVersion = 1;
constexpr int16_t kInitProducerId = 22, kInitProducerIdVersion = 1;
constexpr int16_t kEndTxn = 26, kEndTxnVersion = 1;
constexpr int16_t kDescribeTransactions = 65;  // v0, flexible
constexpr int16_t kListTransactions = 66;      // v0, flexible
constexpr const char* kClientId = "weir-kafka-transactions";

// Big-endian request writer with Kafka's primitive types.
class Writer {
 public:
  void I8(int8_t v) { buf_.push_back(static_cast<uint8_t>(v)); }
  void I16(int16_t v) { Be(static_cast<uint16_t>(v), 2); }
  void I32(int32_t v) { Be(static_cast<uint32_t>(v), 4); }
  void I64(int64_t v) { Be(static_cast<uint64_t>(v), 8); }
  void String(const std::string& s) {
    I16(static_cast<int16_t>(s.size()));
    buf_.insert(buf_.end(), s.begin(), s.end());
  }
  void UVarint(uint64_t v) {
    while (v >= 0x80) {
      buf_.push_back(static_cast<uint8_t>(v | 0x80));
      v >>= 7;
    }
    buf_.push_back(static_cast<uint8_t>(v));
  }
  void CompactString(const std::string& s) {
    UVarint(s.size() + 1);
    buf_.insert(buf_.end(), s.begin(), s.end());
  }
  void CompactArrayLength(size_t n) { UVarint(n + 1); }
  void NoTaggedFields() { UVarint(0); }
  std::vector<uint8_t>& bytes() { return buf_; }

 private:
  void Be(uint64_t v, int n) {
    for (int i = n - 1; i >= 0; --i) buf_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  std::vector<uint8_t> buf_;
};

// Response reader; throws std::out_of_range on a short or malformed response
// (turned into Status::Corruption by the caller).
class Reader {
 public:
  explicit Reader(const std::vector<uint8_t>& b) : b_(b) {}
  int8_t I8() { return static_cast<int8_t>(Be(1)); }
  int16_t I16() { return static_cast<int16_t>(Be(2)); }
  int32_t I32() { return static_cast<int32_t>(Be(4)); }
  int64_t I64() { return static_cast<int64_t>(Be(8)); }
  std::string String() {
    int16_t n = I16();
    if (n < 0) return "";
    return Take(static_cast<size_t>(n));
  }
  uint64_t UVarint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t byte = static_cast<uint8_t>(Be(1));
      v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return v;
    }
    throw std::out_of_range("varint too long");
  }
  std::string CompactString() {
    uint64_t n = UVarint();
    if (n == 0) return "";
    return Take(n - 1);
  }
  // Length of a compact array (0 for a null one).
  size_t CompactArrayLength() {
    uint64_t n = UVarint();
    return n == 0 ? 0 : n - 1;
  }
  void SkipTaggedFields() {
    uint64_t n = UVarint();
    for (uint64_t i = 0; i < n; ++i) {
      UVarint();  // tag
      Take(UVarint());
    }
  }

 private:
  uint64_t Be(int n) {
    if (pos_ + static_cast<size_t>(n) > b_.size()) throw std::out_of_range("response too short");
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v = (v << 8) | b_[pos_++];
    return v;
  }
  std::string Take(size_t n) {
    if (pos_ + n > b_.size()) throw std::out_of_range("response too short");
    std::string s(reinterpret_cast<const char*>(b_.data() + pos_), n);
    pos_ += n;
    return s;
  }
  const std::vector<uint8_t>& b_;
  size_t pos_ = 0;
};

bool Transient(int16_t code) {
  switch (static_cast<KafkaError>(code)) {
    case KafkaError::kCoordinatorLoadInProgress:
    case KafkaError::kCoordinatorNotAvailable:
    case KafkaError::kNotCoordinator:
    case KafkaError::kConcurrentTransactions:
      return true;
    default:
      return code == 7 /* REQUEST_TIMED_OUT */;
  }
}

std::string ErrorName(int16_t code) {
  switch (code) {
    case 0: return "NONE";
    case 7: return "REQUEST_TIMED_OUT";
    case 14: return "COORDINATOR_LOAD_IN_PROGRESS";
    case 15: return "COORDINATOR_NOT_AVAILABLE";
    case 16: return "NOT_COORDINATOR";
    case 35: return "UNSUPPORTED_VERSION";
    case 47: return "INVALID_PRODUCER_EPOCH";
    case 48: return "INVALID_TXN_STATE";
    case 49: return "INVALID_PRODUCER_ID_MAPPING";
    case 50: return "INVALID_TRANSACTION_TIMEOUT";
    case 51: return "CONCURRENT_TRANSACTIONS";
    case 53: return "TRANSACTIONAL_ID_AUTHORIZATION_FAILED";
    case 90: return "PRODUCER_FENCED";
    case 105: return "TRANSACTIONAL_ID_NOT_FOUND";
    default: return "error " + std::to_string(code);
  }
}

}  // namespace

Result<std::vector<std::pair<std::string, int>>> ParseBootstrapServers(const std::string& servers) {
  std::vector<std::pair<std::string, int>> out;
  for (const auto& raw : Split(servers, ',')) {
    std::string s = raw;
    while (!s.empty() && s.front() == ' ') s.erase(s.begin());
    while (!s.empty() && s.back() == ' ') s.pop_back();
    if (s.empty()) continue;
    auto colon = s.rfind(':');
    int port = 0;
    if (colon != std::string::npos && colon > 0) {
      try {
        size_t used = 0;
        port = std::stoi(s.substr(colon + 1), &used);
        if (used != s.size() - colon - 1) port = 0;
      } catch (const std::exception&) {
        port = 0;
      }
    }
    if (port <= 0 || port > 65535) {
      return Status::InvalidArgument("bootstrap server '" + s + "' is not host:port")
          .WithHint("give --bootstrap-servers as host:port[,host:port...], e.g. 127.0.0.1:9092");
    }
    std::string host = s.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    out.emplace_back(host, port);
  }
  if (out.empty()) return Status::InvalidArgument("no bootstrap servers given");
  return out;
}

// One TCP connection to a broker: framed request/response, one at a time.
class KafkaTransactionAdmin::Connection {
 public:
  Connection(std::string host, int port) : host_(std::move(host)), port_(port) {}
  ~Connection() {
    if (fd_ >= 0) ::close(fd_);
  }
  std::string name() const { return host_ + ":" + std::to_string(port_); }

  Status Connect(int timeout_ms) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    int rc = ::getaddrinfo(host_.c_str(), std::to_string(port_).c_str(), &hints, &res);
    if (rc != 0) return Status::Unavailable("Kafka broker '" + name() + "': " + ::gai_strerror(rc));
    std::string last = "no address";
    for (addrinfo* a = res; a; a = a->ai_next) {
      int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
      if (fd < 0) continue;
      int c = ::connect(fd, a->ai_addr, a->ai_addrlen);
      if (c != 0 && errno == EINPROGRESS) {
        pollfd p{fd, POLLOUT, 0};
        if (::poll(&p, 1, timeout_ms) == 1) {
          int err = 0;
          socklen_t len = sizeof err;
          ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
          c = err == 0 ? 0 : -1;
          errno = err;
        } else {
          errno = ETIMEDOUT;
          c = -1;
        }
      }
      if (c == 0) {
        fd_ = fd;
        break;
      }
      last = std::strerror(errno);
      ::close(fd);
    }
    ::freeaddrinfo(res);
    if (fd_ < 0) return Status::Unavailable("cannot connect to Kafka broker '" + name() + "': " + last);
    return Status::OK();
  }

  // Sends one request (header v1, or v2 for flexible versions) and returns the
  // response body after its header.
  Result<std::vector<uint8_t>> Call(int16_t api_key, int16_t version, bool flexible, const std::vector<uint8_t>& body,
                                    int timeout_ms) {
    Writer w;
    w.I32(0);  // size, patched below
    w.I16(api_key);
    w.I16(version);
    int32_t correlation = ++correlation_;
    w.I32(correlation);
    w.String(kClientId);
    if (flexible) w.NoTaggedFields();
    auto& bytes = w.bytes();
    bytes.insert(bytes.end(), body.begin(), body.end());
    uint32_t size = static_cast<uint32_t>(bytes.size() - 4);
    for (int i = 0; i < 4; ++i) bytes[i] = static_cast<uint8_t>(size >> (24 - 8 * i));
    int64_t deadline = MonotonicNanos() + int64_t{timeout_ms} * 1'000'000;
    WEIR_RETURN_IF_ERROR(SendAll(bytes.data(), bytes.size(), deadline));
    uint8_t head[4];
    WEIR_RETURN_IF_ERROR(RecvAll(head, 4, deadline));
    uint32_t n = (uint32_t{head[0]} << 24) | (uint32_t{head[1]} << 16) | (uint32_t{head[2]} << 8) | head[3];
    if (n < 4 || n > (64u << 20)) return Status::Corruption("Kafka broker '" + name() + "' sent a bad frame size");
    std::vector<uint8_t> resp(n);
    WEIR_RETURN_IF_ERROR(RecvAll(resp.data(), n, deadline));
    Reader r(resp);
    int32_t got = r.I32();
    if (got != correlation) return Status::Corruption("Kafka broker '" + name() + "' answered out of order");
    size_t skip = 4;
    if (flexible) {
      // Response header v1: tagged fields (in practice none: one 0 byte).
      uint64_t tags = 0;
      int shift = 0;
      while (skip < resp.size()) {
        uint8_t b = resp[skip++];
        tags |= static_cast<uint64_t>(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80)) break;
      }
      if (tags != 0) return Status::Corruption("unexpected tagged fields in a response header");
    }
    return std::vector<uint8_t>(resp.begin() + static_cast<long>(skip), resp.end());
  }

 private:
  Status SendAll(const uint8_t* p, size_t n, int64_t deadline) {
    while (n > 0) {
      ssize_t k = ::send(fd_, p, n, MSG_NOSIGNAL);
      if (k > 0) {
        p += k;
        n -= static_cast<size_t>(k);
        continue;
      }
      if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
        WEIR_RETURN_IF_ERROR(Wait(POLLOUT, deadline));
        continue;
      }
      return Status::Unavailable("Kafka broker '" + name() + "': send failed: " + std::strerror(errno));
    }
    return Status::OK();
  }
  Status RecvAll(uint8_t* p, size_t n, int64_t deadline) {
    while (n > 0) {
      ssize_t k = ::recv(fd_, p, n, 0);
      if (k > 0) {
        p += k;
        n -= static_cast<size_t>(k);
        continue;
      }
      if (k == 0) return Status::Unavailable("Kafka broker '" + name() + "' closed the connection");
      if (errno == EAGAIN || errno == EINTR) {
        WEIR_RETURN_IF_ERROR(Wait(POLLIN, deadline));
        continue;
      }
      return Status::Unavailable("Kafka broker '" + name() + "': receive failed: " + std::strerror(errno));
    }
    return Status::OK();
  }
  Status Wait(short events, int64_t deadline) {
    int64_t left_ms = (deadline - MonotonicNanos()) / 1'000'000;
    if (left_ms <= 0) return Status::TimedOut("Kafka broker '" + name() + "' did not answer in time");
    pollfd p{fd_, events, 0};
    if (::poll(&p, 1, static_cast<int>(left_ms)) == 0) {
      return Status::TimedOut("Kafka broker '" + name() + "' did not answer in time");
    }
    return Status::OK();
  }

  std::string host_;
  int port_;
  int fd_ = -1;
  int32_t correlation_ = 0;
};

KafkaTransactionAdmin::KafkaTransactionAdmin(std::string bootstrap_servers, int timeout_ms) : timeout_ms_(timeout_ms) {
  auto parsed = ParseBootstrapServers(bootstrap_servers);
  if (parsed.ok()) {
    for (auto& [h, p] : *parsed) bootstrap_.push_back({h, p});
  }
}

KafkaTransactionAdmin::~KafkaTransactionAdmin() = default;

Result<KafkaTransactionAdmin::Connection*> KafkaTransactionAdmin::ConnectTo(const std::string& host, int port) {
  std::string key = host + ":" + std::to_string(port);
  auto it = connections_.find(key);
  if (it != connections_.end()) return it->second.get();
  auto c = std::make_unique<Connection>(host, port);
  WEIR_RETURN_IF_ERROR(c->Connect(timeout_ms_));
  Connection* raw = c.get();
  connections_[key] = std::move(c);
  return raw;
}

void KafkaTransactionAdmin::Drop(Connection* c) {
  for (auto it = connections_.begin(); it != connections_.end(); ++it) {
    if (it->second.get() == c) {
      connections_.erase(it);
      return;
    }
  }
}

Result<KafkaTransactionAdmin::Connection*> KafkaTransactionAdmin::AnyBroker() {
  if (bootstrap_.empty()) return Status::InvalidArgument("no valid bootstrap servers");
  Status last = Status::Unavailable("no bootstrap server");
  for (const auto& b : bootstrap_) {
    auto c = ConnectTo(b.host, b.port);
    if (c.ok()) return c;
    last = c.status();
  }
  return last;
}

Result<std::vector<KafkaTransactionAdmin::Broker>> KafkaTransactionAdmin::Brokers() {
  WEIR_ASSIGN_OR_RETURN(Connection * c, AnyBroker());
  Writer body;
  body.I32(0);  // no topics: brokers only
  auto resp = c->Call(kMetadata, kMetadataVersion, false, body.bytes(), timeout_ms_);
  if (!resp.ok()) {
    Drop(c);
    return resp.status();
  }
  std::vector<Broker> out;
  try {
    Reader r(*resp);
    int32_t n = r.I32();
    for (int32_t i = 0; i < n; ++i) {
      r.I32();  // node id
      Broker b;
      b.host = r.String();
      b.port = r.I32();
      r.String();  // rack (nullable)
      out.push_back(b);
    }
  } catch (const std::out_of_range& e) {
    return Status::Corruption(std::string("malformed Metadata response: ") + e.what());
  }
  return out;
}

Result<KafkaTransactionAdmin::Connection*> KafkaTransactionAdmin::Coordinator(const std::string& transactional_id) {
  int64_t deadline = MonotonicNanos() + int64_t{timeout_ms_} * 1'000'000;
  while (true) {
    WEIR_ASSIGN_OR_RETURN(Connection * c, AnyBroker());
    Writer body;
    body.String(transactional_id);
    body.I8(1);  // key type: transaction
    auto resp = c->Call(kFindCoordinator, kFindCoordinatorVersion, false, body.bytes(), timeout_ms_);
    if (!resp.ok()) {
      Drop(c);
      return resp.status();
    }
    int16_t err = 0;
    std::string host;
    int32_t port = 0;
    try {
      Reader r(*resp);
      r.I32();  // throttle
      err = r.I16();
      r.String();  // error message
      r.I32();     // node id
      host = r.String();
      port = r.I32();
    } catch (const std::out_of_range& e) {
      return Status::Corruption(std::string("malformed FindCoordinator response: ") + e.what());
    }
    if (err == 0) return ConnectTo(host, port);
    if (!Transient(err) || MonotonicNanos() > deadline) {
      return Status::Unavailable("no transaction coordinator for '" + transactional_id + "': " + ErrorName(err));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

Result<TransactionDescription> KafkaTransactionAdmin::Describe(const std::string& transactional_id) {
  int64_t deadline = MonotonicNanos() + int64_t{timeout_ms_} * 1'000'000;
  while (true) {
    WEIR_ASSIGN_OR_RETURN(Connection * c, Coordinator(transactional_id));
    Writer body;
    body.CompactArrayLength(1);
    body.CompactString(transactional_id);
    body.NoTaggedFields();
    auto resp = c->Call(kDescribeTransactions, 0, true, body.bytes(), timeout_ms_);
    if (!resp.ok()) {
      Drop(c);
      return resp.status();
    }
    TransactionDescription d;
    int16_t err = 0;
    try {
      Reader r(*resp);
      r.I32();  // throttle
      size_t n = r.CompactArrayLength();
      if (n != 1) return Status::Corruption("DescribeTransactions answered for " + std::to_string(n) + " ids");
      err = r.I16();
      d.transactional_id = r.CompactString();
      d.state = r.CompactString();
      d.timeout_ms = r.I32();
      r.I64();  // start time
      d.producer_id = r.I64();
      d.producer_epoch = r.I16();
    } catch (const std::out_of_range& e) {
      return Status::Corruption(std::string("malformed DescribeTransactions response: ") + e.what());
    }
    if (err == 0) return d;
    if (err == static_cast<int16_t>(KafkaError::kTransactionalIdNotFound)) {
      return Status::NotFound("transactional id '" + transactional_id + "' is unknown to the broker");
    }
    if (!Transient(err) || MonotonicNanos() > deadline) {
      return Status::Unavailable("describing transaction '" + transactional_id + "' failed: " + ErrorName(err));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Result<CommitOutcome> KafkaTransactionAdmin::Commit(const std::string& transactional_id, int64_t producer_id,
                                                    int16_t epoch, std::string* detail) {
  int64_t deadline = MonotonicNanos() + int64_t{timeout_ms_} * 1'000'000;
  while (true) {
    WEIR_ASSIGN_OR_RETURN(Connection * c, Coordinator(transactional_id));
    Writer body;
    body.String(transactional_id);
    body.I64(producer_id);
    body.I16(epoch);
    body.I8(1);  // committed
    auto resp = c->Call(kEndTxn, kEndTxnVersion, false, body.bytes(), timeout_ms_);
    if (!resp.ok()) {
      Drop(c);
      return resp.status();
    }
    int16_t err = 0;
    try {
      Reader r(*resp);
      r.I32();
      err = r.I16();
    } catch (const std::out_of_range& e) {
      return Status::Corruption(std::string("malformed EndTxn response: ") + e.what());
    }
    if (err == 0) return CommitOutcome::kCommitted;
    switch (static_cast<KafkaError>(err)) {
      case KafkaError::kInvalidProducerEpoch:
      case KafkaError::kProducerFenced:
      case KafkaError::kInvalidTxnState:
      case KafkaError::kInvalidProducerIdMapping:
        if (detail) *detail = ErrorName(err);
        return CommitOutcome::kNotCommittable;
      default:
        break;
    }
    if (!Transient(err) || MonotonicNanos() > deadline) {
      return Status::Unavailable("committing transaction '" + transactional_id + "' failed: " + ErrorName(err));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Status KafkaTransactionAdmin::Fence(const std::string& transactional_id, int32_t transaction_timeout_ms) {
  int64_t deadline = MonotonicNanos() + int64_t{timeout_ms_} * 1'000'000;
  while (true) {
    WEIR_ASSIGN_OR_RETURN(Connection * c, Coordinator(transactional_id));
    Writer body;
    body.String(transactional_id);
    body.I32(transaction_timeout_ms);
    auto resp = c->Call(kInitProducerId, kInitProducerIdVersion, false, body.bytes(), timeout_ms_);
    if (!resp.ok()) {
      Drop(c);
      return resp.status();
    }
    int16_t err = 0;
    try {
      Reader r(*resp);
      r.I32();
      err = r.I16();
    } catch (const std::out_of_range& e) {
      return Status::Corruption(std::string("malformed InitProducerId response: ") + e.what());
    }
    // CONCURRENT_TRANSACTIONS: the abort this request started is still being written.
    if (err == 0) return Status::OK();
    if (!Transient(err) || MonotonicNanos() > deadline) {
      return Status::Unavailable("aborting transaction '" + transactional_id + "' failed: " + ErrorName(err));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Result<std::vector<TransactionListing>> KafkaTransactionAdmin::ListOpen() {
  WEIR_ASSIGN_OR_RETURN(auto brokers, Brokers());
  std::vector<TransactionListing> out;
  for (const auto& b : brokers) {
    WEIR_ASSIGN_OR_RETURN(Connection * c, ConnectTo(b.host, b.port));
    Writer body;
    const char* states[] = {"Ongoing", "PrepareCommit", "PrepareAbort"};
    body.CompactArrayLength(3);
    for (const char* s : states) body.CompactString(s);
    body.CompactArrayLength(0);  // no producer id filter
    body.NoTaggedFields();
    auto resp = c->Call(kListTransactions, 0, true, body.bytes(), timeout_ms_);
    if (!resp.ok()) {
      Drop(c);
      return resp.status();
    }
    try {
      Reader r(*resp);
      r.I32();
      int16_t err = r.I16();
      if (err != 0) {
        return Status::Unavailable("listing transactions on broker '" + b.host + ":" + std::to_string(b.port) +
                                   "' failed: " + ErrorName(err));
      }
      size_t unknown = r.CompactArrayLength();
      for (size_t i = 0; i < unknown; ++i) r.CompactString();
      size_t n = r.CompactArrayLength();
      for (size_t i = 0; i < n; ++i) {
        TransactionListing t;
        t.transactional_id = r.CompactString();
        t.producer_id = r.I64();
        t.state = r.CompactString();
        r.SkipTaggedFields();
        out.push_back(std::move(t));
      }
    } catch (const std::out_of_range& e) {
      return Status::Corruption(std::string("malformed ListTransactions response: ") + e.what());
    }
  }
  return out;
}

}  // namespace weir::kafka
