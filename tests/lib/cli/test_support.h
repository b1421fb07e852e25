#pragma once
// Helpers for cli_tests: a real HTTP server on a free loopback port (cpp-httplib), an empty
// configuration directory, and running a built executable.

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

#include "lib/cli/run_tool.h"
#include "lib/client/rest_client.h"
#include "tests/testutil/free_port.h"
#include "tests/testutil/scoped_env.h"
#include "tests/testutil/temp_dir.h"

namespace weir::testing {

// What a tool printed and returned.
struct ToolRun {
  int exit_code;
  std::string out;
  std::string err;
};

// Runs a command as its executable does (RunTool) on `argv`, capturing stdout and stderr.
inline ToolRun RunToolCaptured(CLI::App& app, const cli::CommonOptions& common,
                               const std::vector<std::string>& argv, const cli::ToolBody& body) {
  std::ostringstream out, err;
  int code = cli::RunTool(app, common, argv, out, err, body);
  return {code, out.str(), err.str()};
}

// An httplib::Server on 127.0.0.1:<free port>. Register handlers on server(), then Start().
class TestHttpServer {
 public:
  TestHttpServer() { port_ = server_.bind_to_any_port("127.0.0.1"); }
  ~TestHttpServer() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }
  void Start() {
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    for (int i = 0; i < 2000 && !server_.is_running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  httplib::Server& server() { return server_; }
  int port() const { return port_; }
  std::string host_port() const { return "127.0.0.1:" + std::to_string(port_); }
  RestClientOptions options() const {
    RestClientOptions o;
    o.endpoint.host = "127.0.0.1";
    o.endpoint.port = port_;
    o.connect_timeout = std::chrono::milliseconds(2000);
    o.request_timeout = std::chrono::milliseconds(5000);
    return o;
  }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
};

// Points WEIR_CONF_DIR at a directory holding `config_yaml` (empty: defaults only) for the
// scope, so that a conf/ of the source tree does not leak into the tests.
class ScopedConfDir {
 public:
  explicit ScopedConfDir(const std::string& config_yaml = "")
      : env_("WEIR_CONF_DIR", Prepare(dir_, config_yaml).c_str()) {}

 private:
  static std::string Prepare(const TempDir& dir, const std::string& config_yaml) {
    if (!config_yaml.empty()) dir.Write("config.yaml", config_yaml);
    return dir.path().string();
  }
  TempDir dir_;
  ScopedEnv env_;
};

struct ProcessResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs `argv` (argv[0] is a path) and waits; stdout and stderr go through temporary files.
inline ProcessResult RunProcess(const std::vector<std::string>& argv) {
  TempDir dir;
  std::string out_path = dir / "out", err_path = dir / "err";
  pid_t pid = ::fork();
  if (pid == 0) {
    FILE* out = std::freopen(out_path.c_str(), "w", stdout);
    FILE* err = std::freopen(err_path.c_str(), "w", stderr);
    (void)out;
    (void)err;
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    std::_Exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ProcessResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::stringstream out, err;
  out << std::ifstream(out_path).rdbuf();
  err << std::ifstream(err_path).rdbuf();
  result.out = out.str();
  result.err = err.str();
  return result;
}

}  // namespace weir::testing
