// libFuzzer target: the loader must never crash, hang or leak on any input,
// and whatever it accepts must survive dump -> load unchanged (an empty plan
// between the two).
#include <cstdint>
#include <cstdlib>
#include <string>

#include "file/loader.h"
#include "file/yaml_writer.h"
#include "plan/differ.h"

using namespace tcsync;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 1 << 16) return 0;
  SourceFiles::instance().clear();
  State s;
  Diagnostics d;
  std::string text(reinterpret_cast<const char*>(data), size);
  if (!load_text("fuzz.yaml", text, s, d)) {
    for (auto& x : d.all()) (void)format_diagnostic(x);
    return 0;
  }
  std::string again = write_state_yaml(s);
  State back;
  Diagnostics d2;
  if (!load_text("dump.yaml", again, back, d2)) {
    for (auto& x : d2.all()) fprintf(stderr, "%s", format_diagnostic(x).c_str());
    fprintf(stderr, "dump of an accepted file does not load:\n%s\n", again.c_str());
    abort();
  }
  Plan p = make_plan(s, back);
  if (!p.empty()) {
    fprintf(stderr, "dump of an accepted file differs from it:\n%s\n", again.c_str());
    abort();
  }
  return 0;
}
