// A scanner for the YAML that files are written in almost always: block
// mappings and lists by indentation, one-line flow collections ({...} and
// [...], as `tcsync dump` writes a rule), plain and simple quoted scalars,
// comments. It makes the events libyaml would make for that text, with the
// same locations, at a fraction of the cost (100k dump-form rules: libyaml's
// bare event loop 0.54 s, libfyaml's 0.60 s, this one under 0.1 s; see
// bench/RESULTS.md), and copies no scalar it does not hand over.
//
// It never reports an error: on anything outside that subset (an escape, a
// tab, a block scalar, an anchor, a null value, non-ASCII text, anything
// malformed) it says Bail, and YamlReader replays the file through libyaml
// from the start, skipping the events the loader already took. So every
// error, and every construct it does not know, is libyaml's, as before.
// What it accepts, libyaml accepts with the same events: tests/unit/
// fast_scan_test.cpp compares the two on every YAML file of the repository.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "yaml/yaml_event.h"

namespace tcsync {

class FastScan {
 public:
  FastScan(std::string_view text, uint32_t file) : in_(text), file_(file) {}

  enum class Step : uint8_t { More, End, Bail };
  // Appends the events of whole lines to ev from ev[n] on (reusing the
  // elements there, and their strings' buffers) until n reaches `want` or
  // the stream ends. Bail: what this call appended is not to be used.
  Step fill(std::vector<YamlEvent>& ev, size_t& n, size_t want);
  // Where the next line starts: everything before it was scanned.
  size_t scanned() const { return pos_; }

 private:
  struct Frame {
    enum class Kind : uint8_t { Map, Seq, Indentless };  // Indentless: a list at its key's column
    Kind kind;
    bool pending = false;  // a key whose value starts on a later line
    size_t indent;
  };
  static constexpr size_t kNone = static_cast<size_t>(-1);
  static constexpr size_t kMaxFrames = 48;  // under YamlReader::kMaxDepth: deeper goes to libyaml
  static constexpr int kMaxFlow = 16;
  static constexpr size_t kMaxKey = 1000;      // libyaml's simple keys end at 1024 characters
  static constexpr size_t kMaxScalar = 60000;  // under YamlReader::kMaxScalar
  static constexpr size_t kMaxLine = 65536;

  bool line();
  bool finish();
  bool map_entry(size_t p, bool first);
  bool seq_entry(size_t p);
  bool value_rest(size_t q);
  size_t flow(size_t q, int depth);
  size_t scalar(size_t q, bool flow_ctx, bool key);  // emits it; the end, or kNone
  size_t plain_end(size_t q, bool flow_ctx) const;
  size_t spaces(size_t i) const {
    while (i < eol_ && in_[i] == ' ') ++i;
    return i;
  }
  bool line_end(size_t i) const;  // only spaces and a comment from i on
  YamlEvent& emit(YamlEv type, size_t offset);

  std::string_view in_;
  uint32_t file_;
  size_t pos_ = 0;           // the next line's first byte
  uint32_t line_ = 0;        // its number, from 0
  size_t ls_ = 0, eol_ = 0;  // the line being read: its start and end
  bool started_ = false;     // DocStart made
  bool rooted_ = false;      // the document's node begun
  bool done_ = false;
  std::vector<Frame> stack_;
  std::vector<YamlEvent>* out_ = nullptr;
  size_t* n_ = nullptr;
};

}  // namespace tcsync
