#pragma once
// PeerServer: a real peer (scripts/peers/<name>.sh) started for one test process, on free
// loopback ports in a work directory of its own, and stopped when the object goes away.
// `start` prints "key=value" lines (s3.endpoint=..., fs.defaultFS=..., conninfo=...), kept in
// values().
//
//   PeerServer s3("s3", "S3_WORK_DIR");
//   PeerServer pg("postgres", "PG_WORK_DIR", {{"PG_PORT", std::to_string(FreePort())}});
//   REQUIRE(s3.Start());                 // INFO shows the script's output when it fails
//   s3.value("s3.endpoint");

#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <filesystem>
#include <map>
#include <string>

#include "lib/common/ids.h"

namespace weir::testing {

class PeerServer {
 public:
  // `work_dir_env` is the variable the script takes its work directory from; `env` holds
  // more variables for every run of the script.
  PeerServer(std::string name, std::string work_dir_env, std::map<std::string, std::string> env = {})
      : name_(std::move(name)), work_dir_env_(std::move(work_dir_env)), env_(std::move(env)),
        work_dir_((std::filesystem::temp_directory_path() /
                   ("weir-test-" + name_ + "-" + Id16::Generate().ToHex().substr(0, 8)))
                      .string()) {}
  ~PeerServer() {
    Stop();
    std::error_code ec;
    std::filesystem::remove_all(work_dir_, ec);
  }
  PeerServer(const PeerServer&) = delete;
  PeerServer& operator=(const PeerServer&) = delete;

  // Runs `<name>.sh start`; true when it succeeded. output() has what it printed.
  bool Start() { return Run("start", &output_) && Parse(); }
  // Runs `<name>.sh stop` (a stopped S3 server keeps its data and port for Start()).
  bool Stop() {
    std::string ignored;
    return Run("stop", &ignored);
  }

  const std::string& output() const { return output_; }
  std::string value(const std::string& key) const {
    auto it = values_.find(key);
    return it == values_.end() ? "" : it->second;
  }
  const std::string& work_dir() const { return work_dir_; }

 private:
  bool Run(const std::string& action, std::string* out) {
    // PEER_OWNER_PID: the server stops by itself if this test process dies.
    std::string cmd = "PEER_OWNER_PID=" + std::to_string(::getpid()) + " " + work_dir_env_ + "='" + work_dir_ + "'";
    for (const auto& [key, value] : env_) cmd += " " + key + "='" + value + "'";
    cmd += " bash '" + std::string(WEIR_SOURCE_DIR) + "/scripts/peers/" + name_ + ".sh' " + action + " 2>&1";
    FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) return false;
    out->clear();
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
    return ::pclose(p) == 0;
  }
  bool Parse() {
    size_t pos = 0;
    while (pos < output_.size()) {
      size_t end = output_.find('\n', pos);
      if (end == std::string::npos) end = output_.size();
      std::string line = output_.substr(pos, end - pos);
      // A result line: a key without spaces (messages start "<script>.sh: ...").
      size_t eq = line.find('=');
      if (eq != std::string::npos && line.find(' ') > eq) values_[line.substr(0, eq)] = line.substr(eq + 1);
      pos = end + 1;
    }
    return !values_.empty();
  }

  std::string name_;
  std::string work_dir_env_;
  std::map<std::string, std::string> env_;
  std::string work_dir_;
  std::string output_;
  std::map<std::string, std::string> values_;
};

}  // namespace weir::testing
