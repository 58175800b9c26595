#include "base/diag.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

namespace tcsync {

SourceFiles& SourceFiles::instance() {
  static SourceFiles files;
  return files;
}

uint32_t SourceFiles::add(std::string path) {
  paths_.push_back(std::move(path));
  texts_.emplace_back();
  return static_cast<uint32_t>(paths_.size() - 1);
}

uint32_t SourceFiles::add_text(std::string name, std::string text) {
  paths_.push_back(std::move(name));
  texts_.push_back(std::move(text));
  return static_cast<uint32_t>(paths_.size() - 1);
}

const std::string& SourceFiles::path(uint32_t id) const {
  return id < paths_.size() ? paths_[id] : paths_[0];
}

std::string SourceFiles::line_text(uint32_t id, uint32_t line) const {
  if (id == 0 || id >= paths_.size() || line == 0) return {};
  std::istringstream mem(texts_[id]);
  std::ifstream file;
  if (texts_[id].empty()) file.open(paths_[id], std::ios::binary);
  std::istream& in = texts_[id].empty() ? static_cast<std::istream&>(file) : mem;
  std::string text;
  for (uint32_t n = 1; std::getline(in, text); ++n)
    if (n == line) {
      if (!text.empty() && text.back() == '\r') text.pop_back();
      return text;
    }
  return {};
}

void Diagnostics::add(Severity s, SourceLoc loc, std::string msg) {
  if (s == Severity::Error) {
    if (errors_ >= kMaxErrors) return;
    ++errors_;
  }
  if (s == Severity::Warning) ++warnings_;
  diags_.push_back({s, loc, std::move(msg)});
}

void append_location(std::string& out, SourceLoc loc) {
  if (loc.file == 0) {
    out += "tcsync";
    return;
  }
  out += SourceFiles::instance().path(loc.file);
  if (loc.line) {
    char buf[24];
    buf[0] = ':';
    char* p = std::to_chars(buf + 1, buf + 11, loc.line).ptr;
    *p++ = ':';
    p = std::to_chars(p, buf + sizeof buf, loc.col ? loc.col : 1).ptr;
    out.append(buf, p);
  }
}

std::string format_location(SourceLoc loc) {
  std::string out;
  append_location(out, loc);
  return out;
}

std::string format_diagnostic(const Diagnostic& d, bool color) {
  static const char* names[] = {"error", "warning", "note"};
  static const char* colors[] = {"\033[1;31m", "\033[1;35m", "\033[1;36m"};
  const int i = static_cast<int>(d.severity);
  std::string out = format_location(d.loc) + ": ";
  if (color) out += colors[i];
  out += names[i];
  if (color) out += "\033[0m";
  out += ": " + d.message + "\n";
  if (d.loc.known()) {
    std::string text = SourceFiles::instance().line_text(d.loc.file, d.loc.line);
    if (!text.empty()) {
      out += "  " + text + "\n  ";
      // Keep tabs so the caret lines up under tab-indented text.
      for (uint32_t c = 1; c < d.loc.col && c <= text.size(); ++c) out += text[c - 1] == '\t' ? '\t' : ' ';
      out += "^\n";
    }
  }
  return out;
}

static size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string_view did_you_mean(std::string_view word, const std::vector<std::string_view>& candidates) {
  std::string_view best;
  size_t best_d = std::max<size_t>(2, word.size() / 3) + 1;
  for (auto c : candidates) {
    size_t d = edit_distance(word, c);
    if (d < best_d) best_d = d, best = c;
  }
  return best;
}

}  // namespace tcsync
