// weir: the git-style dispatcher. `weir <action> [args...]` runs the executable
// weir-<action> found beside `weir` (through /proc/self/exe), else on PATH, with the same
// arguments. It links no weir library so that it starts at once.
//
//   weir -h | --help | help    lists the installed actions, exit 0
//   weir help <action>         runs `weir-<action> --help`
//   weir -v | --version        prints "Version: <version>", exit 0
//   weir                       the help on stderr, exit 2
//   weir <unknown action>      `"<action>" is not a valid action.` and the list, exit 2

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

namespace {

constexpr int kExitUsage = 2;
constexpr int kExitFailed = 1;
constexpr char kActionPrefix[] = "weir-";

struct KnownAction {
  const char* name;
  const char* description;
};

// In the order the help lists them; other weir-* executables follow, sorted.
constexpr KnownAction kKnownActions[] = {
    {"run", "Compiles and runs a program."},
    {"list", "Lists running and scheduled programs."},
    {"cancel", "Cancels a running program."},
    {"savepoint", "Triggers savepoints for a running job or disposes existing ones."},
    {"stop", "Stops a running program with a savepoint (streaming jobs only)."},
    {"checkpoint", "Triggers checkpoints for a running job."},
    {"runtime", "Runs the local weir runtime in the foreground."},
    {"inspect", "Prints the metadata of a savepoint or checkpoint."},
};

std::string SelfDir(const char* argv0) {
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) exe = std::filesystem::absolute(argv0 != nullptr ? argv0 : "weir", ec);
  return exe.parent_path().string();
}

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

bool IsValidActionName(const std::string& name) {
  if (name.empty() || name[0] == '-') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

const char* DescriptionOf(const std::string& action) {
  for (const auto& known : kKnownActions) {
    if (action == known.name) return known.description;
  }
  return nullptr;
}

// The weir-* executables beside `weir`, known actions first.
std::vector<std::string> InstalledActions(const std::string& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::string file = entry.path().filename().string();
    if (file.rfind(kActionPrefix, 0) != 0) continue;
    std::string action = file.substr(std::strlen(kActionPrefix));
    if (IsValidActionName(action) && IsExecutableFile(entry.path().string())) {
      found.push_back(action);
    }
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> ordered;
  for (const auto& known : kKnownActions) {
    if (std::find(found.begin(), found.end(), known.name) != found.end()) {
      ordered.push_back(known.name);
    }
  }
  for (const auto& action : found) {
    if (DescriptionOf(action) == nullptr) ordered.push_back(action);
  }
  return ordered;
}

void PrintHelp(std::ostream& out, const std::string& dir) {
  out << "Usage: weir <action> [OPTIONS] [ARGUMENTS]\n\n"
      << "Runs weir-<action> from the directory of weir (else from PATH) with the arguments.\n\n"
      << "Actions:\n";
  std::vector<std::string> actions = InstalledActions(dir);
  if (actions.empty()) out << "  (none installed beside " << dir << ")\n";
  size_t width = 0;
  for (const auto& a : actions) width = std::max(width, a.size());
  for (const auto& a : actions) {
    const char* description = DescriptionOf(a);
    out << "  " << a << std::string(width - a.size() + 3, ' ')
        << (description != nullptr ? description : "(no description)") << '\n';
  }
  out << "\nOptions:\n"
      << "  -h, --help     Print this help and exit\n"
      << "  -v, --version  Print the version and exit\n\n"
      << "Run 'weir <action> --help' to see the options of an action.\n";
}

void PrintInvalidAction(const std::string& action, const std::string& dir) {
  std::cerr << "weir: \"" << action << "\" is not a valid action.\n";
  std::vector<std::string> actions = InstalledActions(dir);
  if (!actions.empty()) {
    std::cerr << "\nValid actions are ";
    for (size_t i = 0; i < actions.size(); ++i) {
      if (i > 0) std::cerr << (i + 1 == actions.size() ? ", or " : ", ");
      std::cerr << '"' << actions[i] << '"';
    }
    std::cerr << ".\n\n";
  }
  std::cerr << "hint: run 'weir --help' to see what each action does\n";
}

// Replaces this process with weir-<action>; returns only on failure.
int Exec(const std::string& action, const std::string& dir, int argc, char** argv,
         int first_arg) {
  std::string beside = dir + "/" + kActionPrefix + action;
  std::string name = kActionPrefix + action;
  bool use_beside = IsExecutableFile(beside);
  std::vector<char*> args;
  args.push_back(const_cast<char*>(use_beside ? beside.c_str() : name.c_str()));
  for (int i = first_arg; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  std::cout.flush();
  if (use_beside) {
    ::execv(beside.c_str(), args.data());
  } else {
    ::execvp(name.c_str(), args.data());
  }
  int err = errno;
  if (err == ENOENT || err == ENOTDIR) {
    PrintInvalidAction(action, dir);
    return kExitUsage;
  }
  std::cerr << "weir: cannot run '" << (use_beside ? beside : name) << "': " << std::strerror(err)
            << '\n';
  return kExitFailed;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = SelfDir(argc > 0 ? argv[0] : nullptr);
  if (argc < 2) {
    PrintHelp(std::cerr, dir);
    std::cerr << "\nweir: please specify an action\n";
    return kExitUsage;
  }
  const std::string first = argv[1];
  if (first == "-h" || first == "--help" || (first == "help" && argc == 2)) {
    PrintHelp(std::cout, dir);
    return std::cout.flush() ? 0 : kExitFailed;
  }
  if (first == "-v" || first == "--version") {
    std::cout << "Version: " << WEIR_VERSION << '\n';
    return std::cout.flush() ? 0 : kExitFailed;
  }
  if (first == "help") {
    std::string action = argv[2];
    if (!IsValidActionName(action)) {
      PrintInvalidAction(action, dir);
      return kExitUsage;
    }
    char help_flag[] = "--help";
    char* help_argv[] = {argv[0], argv[2], help_flag};
    return Exec(action, dir, 3, help_argv, 2);
  }
  if (first.size() > 1 && first[0] == '-') {
    std::cerr << "weir: unknown option '" << first << "'\n"
              << "hint: run 'weir --help'; options of an action go after it: weir <action> "
              << first << '\n';
    return kExitUsage;
  }
  if (!IsValidActionName(first)) {
    PrintInvalidAction(first, dir);
    return kExitUsage;
  }
  return Exec(first, dir, argc, argv, 2);
}
