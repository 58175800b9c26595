// The outcome of a system call or a kernel request at the edge (kernel/,
// cli/, watch/'s edge): success, or a failure with the sentence that says
// why ("cannot open /run/netns/x: Permission denied"). No location: what
// failed is the host, not a line of a file (those errors are Diagnostics,
// base/diag.h, with FILE:LINE:COL). The caller decides what the sentence
// becomes: a line on stderr and an exit code, a Diagnostics entry, a watch
// event (docs/architecture.md, "How errors travel").
//
//   Status open(...);            // the result, if any, through an out parameter
//   if (Status st = sock.open(o); !st) return st;   // passed up as is
//   std::cerr << "tcsync: error: " << st.error() << "\n";
#pragma once
#include <cassert>
#include <string>
#include <utility>

namespace tcsync {

class [[nodiscard]] Status {
 public:
  Status() = default;  // success
  static Status ok() { return {}; }
  // A failure always says why: an empty sentence would print as
  // "tcsync: error: " and nothing, so it is a bug of the caller.
  static Status fail(std::string why) {
    assert(!why.empty());
    Status s;
    s.failed_ = true;
    s.error_ = std::move(why);
    return s;
  }
  explicit operator bool() const { return !failed_; }
  // The sentence; empty on success.
  const std::string& error() const { return error_; }

 private:
  bool failed_ = false;
  std::string error_;
};

}  // namespace tcsync
