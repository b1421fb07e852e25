#pragma once
// Helpers for cli_tests: a real HTTP server on a free loopback port (cpp-httplib), an empty
// configuration directory, a refused port, and running a built executable.

#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
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

// A loopback port nothing listens on (bound, then closed).
inline int RefusedPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

// A fresh temporary directory, removed at the end of the scope.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "weir-cli-test-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string Write(const std::string& name, const std::string& content) const {
    std::string p = path_ + "/" + name;
    std::ofstream(p) << content;
    return p;
  }

 private:
  std::string path_;
};

// Points WEIR_CONF_DIR at a directory holding `config_yaml` (empty: defaults only) for the
// scope, so that a conf/ of the source tree does not leak into the tests.
class ScopedConfDir {
 public:
  explicit ScopedConfDir(const std::string& config_yaml = "") {
    if (!config_yaml.empty()) dir_.Write("config.yaml", config_yaml);
    const char* old = std::getenv("WEIR_CONF_DIR");
    had_old_ = old != nullptr;
    if (had_old_) old_ = old;
    ::setenv("WEIR_CONF_DIR", dir_.path().c_str(), 1);
  }
  ~ScopedConfDir() {
    if (had_old_) {
      ::setenv("WEIR_CONF_DIR", old_.c_str(), 1);
    } else {
      ::unsetenv("WEIR_CONF_DIR");
    }
  }

 private:
  TempDir dir_;
  bool had_old_ = false;
  std::string old_;
};

struct ProcessResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs `argv` (argv[0] is a path) and waits; stdout and stderr go through temporary files.
inline ProcessResult RunProcess(const std::vector<std::string>& argv) {
  TempDir dir;
  std::string out_path = dir.path() + "/out", err_path = dir.path() + "/err";
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
