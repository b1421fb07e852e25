#pragma once
// PgConnection: one libpq connection, with the few calls weir's PostgreSQL sinks
// need. Every failure throws PgError, whose message names the server (host, port,
// database, user: never the password) and, for the usual connection problems, a
// hint. Not thread-safe: owned and used by one sink subtask.
//
// This library (weir_postgres) is the only part of weir that includes libpq.

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

struct pg_conn;

namespace weir {

// One value of a row in text form; nullopt is SQL NULL.
using PgValue = std::optional<std::string>;
using PgRow = std::vector<PgValue>;

class PgError : public std::runtime_error {
 public:
  PgError(const std::string& message, std::string sqlstate)
      : std::runtime_error(message), sqlstate_(std::move(sqlstate)) {}
  // The five-character SQLSTATE of a server error ("42P01"), empty for a client or
  // connection error.
  const std::string& sqlstate() const { return sqlstate_; }

 private:
  std::string sqlstate_;
};

// "host=127.0.0.1 port=5432 dbname=db user=u": the server a libpq connection string
// (keywords or a postgresql:// URI) points at, for messages. Never the password.
// Throws PgError when `conninfo` cannot be parsed.
std::string DescribeConninfo(const std::string& conninfo);

class PgConnection {
 public:
  // Connects (connect_timeout 10 s unless `conninfo` sets one). Throws PgError
  // naming the server and the reason, e.g. a wrong password or a missing database.
  explicit PgConnection(const std::string& conninfo);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  // Runs one or more statements without parameters.
  void Execute(const std::string& sql);
  // Runs one statement with text parameters ($1, $2, ...).
  void Execute(const std::string& sql, const std::vector<PgValue>& params);
  // Runs a query; the rows in text form.
  std::vector<PgRow> Query(const std::string& sql, const std::vector<PgValue>& params = {});
  // Prepares a named statement with `param_count` untyped parameters, and runs it.
  void Prepare(const std::string& name, const std::string& sql, int param_count);
  void ExecutePrepared(const std::string& name, const std::vector<PgValue>& params);
  // COPY ... FROM STDIN with `data` in COPY's text format.
  void CopyIn(const std::string& copy_sql, const std::string& data);

  // SQL literal of `s` ('it''s'), escaped for this connection.
  std::string QuoteLiteral(const std::string& s);
  // The server, as DescribeConninfo says it.
  const std::string& server() const { return server_; }

 private:
  [[noreturn]] void Fail(const std::string& what, const char* sqlstate);

  pg_conn* conn_ = nullptr;
  std::string server_;
  std::string password_;  // only to scrub it from messages
};

}  // namespace weir
