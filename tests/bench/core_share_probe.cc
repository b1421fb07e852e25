// How steadily this machine's cores run code that issues several instructions a cycle, as
// weir's task threads do, against code that waits on one chain of results. Two loops of
// fixed work, one thread pinned to each allowed CPU in turn:
//   wide:   six independent chains of additions, exclusive ors and shifts;
//   narrow: one chain of multiplications and shifts, each step waiting for the last.
// On a quiet core both take the same time every run. When something else runs on the
// same physical core (another hyperthread: on a virtual machine, the host's other work),
// the wide loop slows, by up to three quarters on the Zen 4 VM of the README, and the
// narrow one does not; steal time does not show it. A benchmark's figures taken at such
// moments are slower for weir than for code that issues fewer instructions a cycle.
// Figures only, no pass/fail.
//
//   build/bin/core_share_probe [--runs N (8)] [--scale S (1.0): the loops' length]
//
// Prints two lines, "wide MIN MEDIAN MAX" and "narrow MIN MEDIAN MAX", in milliseconds over
// the N runs of each. Exit codes: 0 printed; 2 bad arguments.

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

constexpr uint64_t kWideSteps = 100'000'000;
constexpr uint64_t kNarrowSteps = 100'000'000;

uint64_t WideLoop(uint64_t steps) {
  uint64_t a = 1, b = 2, c = 3, d = 4, e = 5, f = 6;
  for (uint64_t i = 0; i < steps; ++i) {
    a += i;
    b ^= i;
    c += a >> 3;
    d ^= b << 1;
    e += i ^ c;
    f += d;
    // Keeps the six chains in registers as written: no vectorizing, no folding.
    asm volatile("" : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f));
  }
  return a + b + c + d + e + f;
}

uint64_t NarrowLoop(uint64_t steps) {
  uint64_t s = 0, x = 1;
  for (uint64_t i = 0; i < steps; ++i) {
    s += i * x;
    x ^= s >> 7;
    asm volatile("" : "+r"(s), "+r"(x));
  }
  return s + x;
}

// The loops' empty asm statements keep them from being dropped though their results are not used.
template <class Loop>
double Milliseconds(Loop loop, uint64_t steps) {
  const auto start = std::chrono::steady_clock::now();
  loop(steps);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    }
  }
  return cpus;
}

void PinTo(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof(set), &set);  // best effort: unpinned runs still measure
}

void PrintRange(const char* name, std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  std::printf("%s %.0f %.0f %.0f\n", name, ms.front(), ms[ms.size() / 2], ms.back());
}

int Usage(const char* problem) {
  std::fprintf(stderr, "core_share_probe: %s\nusage: core_share_probe [--runs N] [--scale S]\n", problem);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 8;
  double scale = 1.0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--runs" || arg == "--scale") && i + 1 < argc) {
      char* end = nullptr;
      const char* value = argv[++i];
      if (arg == "--runs") {
        runs = static_cast<int>(std::strtol(value, &end, 10));
        if (*end != '\0' || runs < 1) return Usage("--runs takes a positive whole number");
      } else {
        scale = std::strtod(value, &end);
        if (*end != '\0' || !(scale > 0)) return Usage("--scale takes a positive number");
      }
    } else {
      return Usage(("unknown argument '" + arg + "'").c_str());
    }
  }
  const auto wide_steps = static_cast<uint64_t>(kWideSteps * scale) + 1;
  const auto narrow_steps = static_cast<uint64_t>(kNarrowSteps * scale) + 1;
  std::vector<int> cpus = AllowedCpus();
  std::vector<double> wide, narrow;
  for (int i = 0; i < runs; ++i) {
    if (!cpus.empty()) PinTo(cpus[i % cpus.size()]);
    wide.push_back(Milliseconds(WideLoop, wide_steps));
    narrow.push_back(Milliseconds(NarrowLoop, narrow_steps));
  }
  PrintRange("wide", wide);
  PrintRange("narrow", narrow);
  return 0;
}
