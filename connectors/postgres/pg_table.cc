#include "connectors/postgres/pg_table.h"

#include <algorithm>
#include <unordered_map>

#include "lib/common/string_util.h"

namespace weir {

namespace {

// PostgreSQL's limit on the parameters of one statement.
constexpr int kMaxParams = 65535;

bool IsPlainIdentifier(const std::string& s) {
  if (s.empty() || s.size() > 63) return false;
  if (!(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$';
  });
}

[[noreturn]] void Invalid(const std::string& message) { throw PgError("postgres: " + message, ""); }

std::string KeyOf(const PgRow& row, const std::vector<size_t>& key_columns) {
  std::string k;
  for (size_t c : key_columns) {
    if (!row[c]) {
      k += "n|";
    } else {
      k += std::to_string(row[c]->size()) + ":" + *row[c] + "|";
    }
  }
  return k;
}

}  // namespace

void ValidateTable(const PgTable& table) {
  auto parts = Split(table.name, '.');
  if (parts.empty() || parts.size() > 2 ||
      !std::all_of(parts.begin(), parts.end(), [](const std::string& p) { return IsPlainIdentifier(p); })) {
    Invalid("table name '" + table.name +
            "' is not a plain SQL identifier (letters, digits, '_', at most 63 characters, optionally "
            "schema-qualified)");
  }
  if (table.columns.empty()) Invalid("table '" + table.name + "' has no columns");
  for (const auto& c : table.columns) {
    if (!IsPlainIdentifier(c.name)) Invalid("column name '" + c.name + "' is not a plain SQL identifier");
  }
  for (const auto& k : table.key) {
    bool found = std::any_of(table.columns.begin(), table.columns.end(),
                             [&](const PgColumn& c) { return c.name == k; });
    if (!found) Invalid("key column '" + k + "' is not a column of table '" + table.name + "'");
  }
}

void CreateTableIfMissing(PgConnection& conn, const PgTable& table) {
  ValidateTable(table);
  std::string ddl = "CREATE TABLE IF NOT EXISTS " + table.name + " (";
  for (size_t i = 0; i < table.columns.size(); ++i) {
    if (i) ddl += ", ";
    if (table.columns[i].type.empty()) Invalid("column '" + table.columns[i].name + "' has no type");
    ddl += table.columns[i].name + " " + table.columns[i].type;
  }
  if (!table.key.empty()) ddl += ", PRIMARY KEY (" + Join(table.key, ", ") + ")";
  ddl += ")";
  // Two sessions running CREATE TABLE IF NOT EXISTS at once can both pass the check
  // and one fails on the catalog's unique index; the transaction-scoped lock orders them.
  conn.Execute("BEGIN; SELECT pg_advisory_xact_lock(hashtext(" + conn.QuoteLiteral("weir:" + table.name) +
               ")); " + ddl + "; COMMIT");
}

std::string UpsertSql(const PgTable& table, int rows, const char* every_value) {
  std::vector<std::string> names;
  for (const auto& c : table.columns) names.push_back(c.name);
  const int cols = static_cast<int>(names.size());
  std::string sql = "INSERT INTO " + table.name + " (" + Join(names, ", ") + ") VALUES ";
  int param = 1;
  for (int r = 0; r < rows; ++r) {
    sql += r ? ",(" : "(";
    for (int c = 0; c < cols; ++c) {
      if (c) sql += ',';
      sql += every_value ? std::string(every_value) : "$" + std::to_string(param++);
    }
    sql += ')';
  }
  sql += " ON CONFLICT (" + Join(table.key, ", ") + ") DO ";
  std::vector<std::string> updates;
  for (const auto& c : table.columns) {
    if (std::find(table.key.begin(), table.key.end(), c.name) == table.key.end()) {
      updates.push_back(c.name + " = EXCLUDED." + c.name);
    }
  }
  sql += updates.empty() ? "NOTHING" : "UPDATE SET " + Join(updates, ", ");
  return sql;
}

void AppendCopyLine(const PgRow& row, size_t columns, std::string* out) {
  if (row.size() != columns) {
    throw PgError("postgres: a row has " + std::to_string(row.size()) + " values for " + std::to_string(columns) +
                      " columns",
                  "");
  }
  for (size_t c = 0; c < row.size(); ++c) {
    if (c) out->push_back('\t');
    if (!row[c]) {
      out->append("\\N");
      continue;
    }
    for (char ch : *row[c]) {
      switch (ch) {
        case '\\': out->append("\\\\"); break;
        case '\t': out->append("\\t"); break;
        case '\n': out->append("\\n"); break;
        case '\r': out->append("\\r"); break;
        default: out->push_back(ch);
      }
    }
  }
  out->push_back('\n');
}

PgRowWriter::PgRowWriter(PgTable table, int batch_size) : table_(std::move(table)) {
  ValidateTable(table_);
  prepared_rows_ = std::clamp<int>(batch_size, 1, kMaxParams / static_cast<int>(table_.columns.size()));
  std::vector<std::string> names;
  for (const auto& c : table_.columns) names.push_back(c.name);
  column_list_ = Join(names, ", ");
  copy_sql_ = "COPY " + table_.name + " (" + column_list_ + ") FROM STDIN";
}

void PgRowWriter::CheckTarget(PgConnection& conn) {
  conn.Execute("SELECT " + column_list_ + " FROM " + table_.name + " WHERE false");
  if (table_.key.empty()) return;
  // The conflict target is matched to a unique index when the statement is planned:
  // EXPLAIN plans it without running it.
  try {
    conn.Execute("EXPLAIN " + UpsertSql(table_, 1, "NULL"));
  } catch (const PgError& e) {
    throw PgError(std::string(e.what()) + "\nhint: upserts need a primary key or unique index on (" +
                      Join(table_.key, ", ") + ") of table '" + table_.name + "'",
                  e.sqlstate());
  }
}

void PgRowWriter::Write(PgConnection& conn, std::span<const PgRow> rows) {
  if (rows.empty()) return;
  const size_t cols = table_.columns.size();
  if (table_.key.empty()) {
    std::string data;
    data.reserve(rows.size() * 16 * cols);
    for (const auto& row : rows) AppendCopyLine(row, cols, &data);
    conn.CopyIn(copy_sql_, data);
    return;
  }
  // ON CONFLICT DO UPDATE may not touch a row twice in one statement: keep the last
  // row of each key.
  std::vector<size_t> key_columns;
  for (const auto& k : table_.key) {
    for (size_t c = 0; c < cols; ++c) {
      if (table_.columns[c].name == k) key_columns.push_back(c);
    }
  }
  std::unordered_map<std::string, size_t> slot;
  std::vector<const PgRow*> unique;
  unique.reserve(rows.size());
  for (const auto& row : rows) {
    if (row.size() != cols) {
      throw PgError("postgres: a row for table '" + table_.name + "' has " + std::to_string(row.size()) +
                        " values for " + std::to_string(cols) + " columns",
                    "");
    }
    auto [it, inserted] = slot.emplace(KeyOf(row, key_columns), unique.size());
    if (inserted) {
      unique.push_back(&row);
    } else {
      unique[it->second] = &row;
    }
  }
  Upsert(conn, unique);
}

void PgRowWriter::Upsert(PgConnection& conn, const std::vector<const PgRow*>& rows) {
  const size_t cols = table_.columns.size();
  const size_t max_rows = std::max<size_t>(1, kMaxParams / cols);
  std::vector<PgValue> params;
  for (size_t begin = 0; begin < rows.size(); begin += max_rows) {
    const size_t n = std::min(max_rows, rows.size() - begin);
    params.clear();
    params.reserve(n * cols);
    for (size_t r = begin; r < begin + n; ++r) params.insert(params.end(), rows[r]->begin(), rows[r]->end());
    // The statement for the usual batch size is parsed and planned once.
    if (static_cast<int>(n) == prepared_rows_) {
      if (!prepared_) {
        conn.Prepare("weir_upsert", UpsertSql(table_, prepared_rows_), prepared_rows_ * static_cast<int>(cols));
        prepared_ = true;
      }
      conn.ExecutePrepared("weir_upsert", params);
    } else {
      conn.Execute(UpsertSql(table_, static_cast<int>(n)), params);
    }
  }
}

}  // namespace weir
