#include "connectors/postgres/upsert_sink.h"

namespace weir {

PgUpsertWriter::PgUpsertWriter(PgSinkOptions options) : options_(std::move(options)) {
  ValidateSinkOptions(options_);
  if (options_.table.key.empty()) {
    throw PgError("postgres upsert sink: table '" + options_.table.name + "' has no key to upsert on", "");
  }
}

PgUpsertWriter::PgUpsertWriter(const PgUpsertWriter& other) : options_(other.options_) {}

void PgUpsertWriter::Open(RuntimeContext&) {
  conn_ = std::make_unique<PgConnection>(options_.conninfo);
  writer_ = std::make_unique<PgRowWriter>(options_.table, options_.batch_size);
  rows_.reserve(options_.batch_size);
}

void PgUpsertWriter::Add(PgRow row) {
  rows_.push_back(std::move(row));
  if (static_cast<int>(rows_.size()) >= options_.batch_size) Flush();
}

void PgUpsertWriter::Flush() {
  if (rows_.empty()) return;
  // Outside of a transaction each statement commits by itself.
  writer_->Write(*conn_, rows_);
  rows_.clear();
}

void PgUpsertWriter::Close() {
  writer_.reset();
  conn_.reset();
}

}  // namespace weir
