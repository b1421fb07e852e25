#include "connectors/postgres/pg_connection.h"

#include <libpq-fe.h>

#include <cstring>

#include "lib/common/logging.h"
#include "lib/common/string_util.h"

namespace weir {

namespace {

struct ResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using ResultPtr = std::unique_ptr<PGresult, ResultDeleter>;

struct OptionsDeleter {
  void operator()(PQconninfoOption* o) const { PQconninfoFree(o); }
};

// libpq messages end with a newline and may span lines ("FATAL: ...\nDETAIL: ...").
std::string OneLine(const char* message) {
  std::string s = Trim(message ? message : "");
  for (char& c : s) {
    if (c == '\n') c = ' ';
  }
  return s;
}

std::string ReplaceAll(std::string s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size())) {
    s.replace(pos, from.size(), to);
  }
  return s;
}

// A hint for the connection failures users meet most.
std::string ConnectHint(const std::string& message) {
  if (message.find("password authentication failed") != std::string::npos ||
      message.find("no password supplied") != std::string::npos) {
    return "hint: check the user and its password; PGPASSWORD or ~/.pgpass keep the password off the "
           "command line";
  }
  if (message.find("database \"") != std::string::npos && message.find("does not exist") != std::string::npos) {
    return "hint: create the database (createdb NAME) or name an existing one with dbname=";
  }
  if (message.find("role \"") != std::string::npos && message.find("does not exist") != std::string::npos) {
    return "hint: create the role or name an existing one with user=";
  }
  if (message.find("Connection refused") != std::string::npos ||
      message.find("could not translate host name") != std::string::npos ||
      message.find("timeout expired") != std::string::npos) {
    return "hint: is the server running and listening on that host and port?";
  }
  return "";
}

// Server notices ("relation ... already exists, skipping") are debug output, not
// something to print on a tool's stderr as libpq's default does.
void LogNotice(void*, const char* message) { LogDebug("postgres notice: {}", OneLine(message)); }

std::vector<const char*> ParamPointers(const std::vector<PgValue>& params) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
  return values;
}

}  // namespace

std::string DescribeConninfo(const std::string& conninfo) {
  char* err = nullptr;
  std::unique_ptr<PQconninfoOption, OptionsDeleter> options(PQconninfoParse(conninfo.c_str(), &err));
  if (!options) {
    std::string message = OneLine(err ? err : "out of memory");
    if (err) PQfreemem(err);
    throw PgError("postgres: invalid connection string: " + message +
                      "\nhint: use 'host=H port=P dbname=D user=U' or 'postgresql://U@H:P/D'",
                  "");
  }
  std::string out;
  for (const char* key : {"host", "hostaddr", "port", "dbname", "user"}) {
    for (PQconninfoOption* o = options.get(); o->keyword; ++o) {
      if (std::strcmp(o->keyword, key) == 0 && o->val && *o->val) {
        if (!out.empty()) out += ' ';
        out += std::string(key) + "=" + o->val;
      }
    }
  }
  return out.empty() ? "the default server (PGHOST, PGPORT, ...)" : out;
}

PgConnection::PgConnection(const std::string& conninfo) : server_(DescribeConninfo(conninfo)) {
  char* err = nullptr;
  std::unique_ptr<PQconninfoOption, OptionsDeleter> options(PQconninfoParse(conninfo.c_str(), &err));
  if (err) PQfreemem(err);
  for (PQconninfoOption* o = options ? options.get() : nullptr; o && o->keyword; ++o) {
    if (std::strcmp(o->keyword, "password") == 0 && o->val) password_ = o->val;
  }
  // Later entries win, so what `conninfo` (expanded from "dbname") sets overrides these.
  const char* keys[] = {"connect_timeout", "application_name", "dbname", nullptr};
  const char* values[] = {"10", "weir", conninfo.c_str(), nullptr};
  conn_ = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  if (!conn_ || PQstatus(conn_) != CONNECTION_OK) {
    std::string message = OneLine(conn_ ? PQerrorMessage(conn_) : "out of memory");
    if (conn_) PQfinish(conn_);
    conn_ = nullptr;
    std::string hint = ConnectHint(message);
    message = "postgres: cannot connect to " + server_ + ": " + message;
    if (!hint.empty()) message += "\n" + hint;
    if (!password_.empty()) message = ReplaceAll(message, password_, "****");
    throw PgError(message, "");
  }
  PQsetNoticeProcessor(conn_, LogNotice, nullptr);
}

PgConnection::~PgConnection() {
  if (conn_) PQfinish(conn_);
}

void PgConnection::Fail(const std::string& what, const char* sqlstate) {
  std::string message = "postgres (" + server_ + "): " + what + ": " + OneLine(PQerrorMessage(conn_));
  if (!password_.empty()) message = ReplaceAll(message, password_, "****");
  throw PgError(message, sqlstate ? sqlstate : "");
}

namespace {
// Throws through `fail` unless `r` has one of the OK statuses.
template <class FailFn>
ResultPtr Check(PGresult* raw, const std::string& what, FailFn fail) {
  ResultPtr r(raw);
  ExecStatusType st = r ? PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK && st != PGRES_COPY_IN) {
    std::string sqlstate;
    if (r) {
      const char* s = PQresultErrorField(r.get(), PG_DIAG_SQLSTATE);
      if (s) sqlstate = s;
    }
    fail(what, sqlstate);
  }
  return r;
}

std::string Abbreviate(const std::string& sql) {
  std::string s = OneLine(sql.c_str());
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}
}  // namespace

void PgConnection::Execute(const std::string& sql) {
  // PQexec runs every statement of `sql`; its result is the last one's.
  Check(PQexec(conn_, sql.c_str()), "'" + Abbreviate(sql) + "' failed",
        [this](const std::string& w, const std::string& s) { Fail(w, s.c_str()); });
}

void PgConnection::Execute(const std::string& sql, const std::vector<PgValue>& params) {
  auto values = ParamPointers(params);
  Check(PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(), nullptr,
                     nullptr, 0),
        "'" + Abbreviate(sql) + "' failed",
        [this](const std::string& w, const std::string& s) { Fail(w, s.c_str()); });
}

std::vector<PgRow> PgConnection::Query(const std::string& sql, const std::vector<PgValue>& params) {
  auto values = ParamPointers(params);
  ResultPtr r = Check(PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr,
                                   values.data(), nullptr, nullptr, 0),
                      "'" + Abbreviate(sql) + "' failed",
                      [this](const std::string& w, const std::string& s) { Fail(w, s.c_str()); });
  std::vector<PgRow> rows;
  const int n = PQntuples(r.get());
  const int cols = PQnfields(r.get());
  rows.reserve(n);
  for (int i = 0; i < n; ++i) {
    PgRow row;
    row.reserve(cols);
    for (int c = 0; c < cols; ++c) {
      if (PQgetisnull(r.get(), i, c)) {
        row.emplace_back(std::nullopt);
      } else {
        row.emplace_back(std::string(PQgetvalue(r.get(), i, c), PQgetlength(r.get(), i, c)));
      }
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

void PgConnection::Prepare(const std::string& name, const std::string& sql, int param_count) {
  Check(PQprepare(conn_, name.c_str(), sql.c_str(), param_count, nullptr),
        "cannot prepare '" + Abbreviate(sql) + "'",
        [this](const std::string& w, const std::string& s) { Fail(w, s.c_str()); });
}

void PgConnection::ExecutePrepared(const std::string& name, const std::vector<PgValue>& params) {
  auto values = ParamPointers(params);
  Check(PQexecPrepared(conn_, name.c_str(), static_cast<int>(values.size()), values.data(), nullptr, nullptr,
                       0),
        "statement '" + name + "' failed",
        [this](const std::string& w, const std::string& s) { Fail(w, s.c_str()); });
}

void PgConnection::CopyIn(const std::string& copy_sql, const std::string& data) {
  auto fail = [this](const std::string& w, const std::string& s) { Fail(w, s.c_str()); };
  const std::string what = "'" + Abbreviate(copy_sql) + "' failed";
  ResultPtr start = Check(PQexec(conn_, copy_sql.c_str()), what, fail);
  if (PQresultStatus(start.get()) != PGRES_COPY_IN) Fail(what + " (the server did not start a COPY)", nullptr);
  if (PQputCopyData(conn_, data.data(), static_cast<int>(data.size())) != 1 || PQputCopyEnd(conn_, nullptr) != 1) {
    Fail(what, nullptr);
  }
  // The COPY's own result, then the end of the command.
  ResultPtr end(PQgetResult(conn_));
  Check(end.release(), what, fail);
  while (PGresult* extra = PQgetResult(conn_)) PQclear(extra);
}

std::string PgConnection::QuoteLiteral(const std::string& s) {
  char* quoted = PQescapeLiteral(conn_, s.data(), s.size());
  if (!quoted) Fail("cannot quote a literal", nullptr);
  std::string out(quoted);
  PQfreemem(quoted);
  return out;
}

}  // namespace weir
