// Diagnostics: every error is a value with a source location, collected so a
// file reports all its errors at once (like nftables), and printed as
//   FILE:LINE:COL: error: message
//     source line
//     ^
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tcsync {

// Files are interned once; a location is three small integers so every model
// object can afford to carry one.
struct SourceLoc {
  uint32_t file = 0;  // index into SourceFiles; 0 = no file
  uint32_t line = 0;  // 1-based; 0 = unknown
  uint32_t col = 0;   // 1-based
  bool known() const { return file != 0 && line != 0; }
  bool operator==(const SourceLoc&) const = default;
};

// The files a run has read, so a location can print its name and line text.
class SourceFiles {
 public:
  static SourceFiles& instance();
  uint32_t add(std::string path);
  // A source held in memory (tests, stdin): its lines come from here.
  uint32_t add_text(std::string name, std::string text);
  const std::string& path(uint32_t id) const;
  // The text of one line, read again from disk when asked: the loader
  // streams, so whole files are never kept in memory for the sake of errors.
  std::string line_text(uint32_t id, uint32_t line) const;
  // Forgets every source (fuzzers load millions of inputs in one process).
  void clear() { paths_.resize(1), texts_.resize(1); }

 private:
  std::vector<std::string> paths_{""};
  std::vector<std::string> texts_{""};  // non-empty for in-memory sources
};

enum class Severity { Error, Warning, Note };

struct Diagnostic {
  Severity severity = Severity::Error;
  SourceLoc loc;
  std::string message;
};

class Diagnostics {
 public:
  void error(SourceLoc loc, std::string msg) { add(Severity::Error, loc, std::move(msg)); }
  void warning(SourceLoc loc, std::string msg) { add(Severity::Warning, loc, std::move(msg)); }
  void note(SourceLoc loc, std::string msg) { add(Severity::Note, loc, std::move(msg)); }
  void add(Severity s, SourceLoc loc, std::string msg);
  bool has_errors() const { return errors_ > 0; }
  size_t error_count() const { return errors_; }
  size_t warning_count() const { return warnings_; }
  const std::vector<Diagnostic>& all() const { return diags_; }
  // A bound: past this many errors a broken 1M-line file stops being read.
  static constexpr size_t kMaxErrors = 100;
  bool too_many() const { return errors_ >= kMaxErrors; }

 private:
  std::vector<Diagnostic> diags_;
  size_t errors_ = 0;
  size_t warnings_ = 0;
};

// "FILE:LINE:COL: error: msg\n  line\n  ^\n" (source and caret when known).
std::string format_diagnostic(const Diagnostic& d, bool color = false);
std::string format_location(SourceLoc loc);
// The same text appended to `out` (no temporaries: plans print one per rule).
void append_location(std::string& out, SourceLoc loc);

// Closest candidate by edit distance, for "did you mean 'rate'?".
std::string_view did_you_mean(std::string_view word, const std::vector<std::string_view>& candidates);

}  // namespace tcsync
