// The dump's writer alone, without the kernel: loads a tcsync file (a saved
// dump), writes it to /dev/null as YAML and as JSON, best of 9 each. With a
// second argument (that dump as JSON), also what one whole nlohmann
// document of it costs: memory, parse and dump time.
//
//   g++ -O2 -std=c++20 -Isrc bench/dump_writer.cpp build/libtcsync_core.a -lyaml -lpthread -o /tmp/dump_writer
//   /tmp/dump_writer dump.yaml [dump.json]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "file/loader.h"
#include "file/yaml_writer.h"

using namespace tcsync;
using Clock = std::chrono::steady_clock;

static double secs(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
static long peak_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

int main(int argc, char** argv) {
  State s;
  Diagnostics d;
  if (argc < 2 || !load_files({argv[1]}, s, d)) return 1;
  std::ofstream null("/dev/null");
  auto best = [&](auto&& write) {
    double b = 1e9;
    for (int i = 0; i < 9; ++i) {
      auto t0 = Clock::now();
      write();
      b = std::min(b, secs(t0));
    }
    return b;
  };
  std::printf("yaml writer %.3f s\n", best([&] { write_state_yaml(s, null); }));
  std::printf("json writer %.3f s\n", best([&] { write_state_json(s, null); }));
  if (argc < 3) return 0;
  std::ifstream f(argv[2]);
  std::stringstream text;
  text << f.rdbuf();
  long before = peak_rss_kb();
  auto t0 = Clock::now();
  auto doc = nlohmann::ordered_json::parse(text.str());
  double parse = secs(t0);
  t0 = Clock::now();
  std::string out = doc.dump();
  std::printf("nlohmann tree of %zu MB of JSON: +%ld MB peak RSS, parse %.2f s, dump %.2f s\n", text.str().size() >> 20,
              (peak_rss_kb() - before) >> 10, parse, secs(t0));
}
