#include "yaml/yaml_out.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <set>
#include <sstream>

#include "base/json_text.h"

namespace tcsync {

void YamlOut::sep() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_ += ", ";
    first_.back() = false;
  }
}

void YamlOut::map_begin() {
  sep();
  out_ += '{';
  first_.push_back(true);
}
void YamlOut::map_end() {
  out_ += '}';
  first_.pop_back();
}
void YamlOut::seq_begin() {
  sep();
  out_ += '[';
  first_.push_back(true);
}
void YamlOut::seq_end() {
  out_ += ']';
  first_.pop_back();
}
void YamlOut::key(std::string_view k) {
  sep();
  if (json_)
    append_json_string(out_, k);
  else
    out_ += k;
  out_ += ": ";
  after_key_ = true;
}
void YamlOut::num(uint64_t v) {
  sep();
  char buf[20];
  out_.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}
void YamlOut::number(std::string_view text) {
  sep();
  if (json_ && !is_json_number(text))
    append_json_string(out_, text);
  else
    out_ += text;
}
void YamlOut::boolean(bool b) {
  sep();
  out_ += b ? "true" : "false";
}
void YamlOut::null() {
  sep();
  out_ += "null";
}

namespace {
// What each byte says about a scalar, looked up once a character (a search
// of a string of specials per character cost a dump of 100k u32 rules a
// tenth of its user time):
//   kQuote:  quoted wherever it stands: flow syntax, a space, a control
//            byte, and (char being signed, < 0x20 held them) bytes past 0x7f;
//   kNumber: one of the characters numbers are made of.
constexpr uint8_t kQuote = 1, kNumber = 2;
struct ByteClasses {
  uint8_t of[256] = {};
  constexpr ByteClasses() {
    for (int c = 0; c < 0x20; ++c) of[c] |= kQuote;
    for (int c = 0x80; c < 0x100; ++c) of[c] |= kQuote;
    for (char c : std::string_view(":{}[],#&*!|>'\"%@`? ")) of[static_cast<unsigned char>(c)] |= kQuote;
    for (char c : std::string_view("0123456789abcdefABCDEFxXoO.:_+-")) of[static_cast<unsigned char>(c)] |= kNumber;
  }
};
constexpr ByteClasses kByteClasses;

// ASCII only: the program never sets a locale, so std::tolower is this, at
// the price of a call.
constexpr char ascii_lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}
}  // namespace

bool yaml_needs_quotes(std::string_view s) {
  if (s.empty()) return true;
  // Anything YAML 1.1 might type (numbers, bools, null, sexagesimal "1:10",
  // hex) or that carries flow syntax gets quotes; our loader does not care,
  // but other YAML tools reading a dump should see the same strings.
  // (Compared in place: a lowercased copy per scalar cost a dump 10%.)
  static constexpr std::string_view words[] = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"};
  if (s.size() <= 5)
    for (auto w : words)
      if (w.size() == s.size() &&
          std::equal(s.begin(), s.end(), w.begin(), [](char a, char b) { return ascii_lower(a) == b; }))
        return true;
  uint8_t any = 0, all = kNumber;
  for (char c : s) {
    uint8_t k = kByteClasses.of[static_cast<unsigned char>(c)];
    any |= k;
    all &= k;
  }
  if (any & kQuote) return true;
  // "100mbit" is safe; "10", "0x0000ffff", "1:10", "1e3", "1.5" are not:
  // quote anything made only of number characters that starts as a number.
  return (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-' || s[0] == '+' || s[0] == '.') && all;
}

// Runs that need no escape go in whole: a dump quotes a few strings a rule.
static void append_quoted(std::string& out, std::string_view s) {
  out += '"';
  size_t run = 0;  // where the part not yet written starts
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool control = static_cast<unsigned char>(c) < 0x20;
    if (!control && c != '"' && c != '\\') continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
    if (control) {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", static_cast<unsigned char>(c));
      out += b;
    } else {
      out += '\\';
      out += c;
    }
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

std::string yaml_scalar(std::string_view s) {
  if (!yaml_needs_quotes(s)) return std::string(s);
  std::string out;
  append_quoted(out, s);
  return out;
}

void YamlOut::str(std::string_view s) {
  sep();
  if (json_)
    append_json_string(out_, s);
  else if (!yaml_needs_quotes(s))
    out_ += s;
  else
    append_quoted(out_, s);
}

DocOut::DocOut(std::ostream& os, YamlOut::Style style)
    : os_(os), json_(style == YamlOut::Style::json), flow_(out_, style) {
  out_.reserve(72 * 1024);
}

DocOut::~DocOut() {
  os_.write(out_.data(), static_cast<std::streamsize>(out_.size()));
}

void DocOut::indent(size_t depth) {
  out_.append(2 * depth, ' ');
}

// YAML: a key opens its line ("devices:") and the first thing inside the
// value ends it; JSON: the comma and line break come before each entry.
void DocOut::key(std::string_view k) {
  if (json_) {
    if (!empty_.back()) out_ += ',';
    empty_.back() = false;
    out_ += '\n';
    indent(empty_.size());
    append_json_string(out_, k);
    out_ += ": ";
    return;
  }
  if (empty_.back() && empty_.size() > 1) out_ += '\n';
  empty_.back() = false;
  indent(empty_.size() - 1);
  out_ += yaml_scalar(k);
  out_ += ':';
}

void DocOut::key(uint64_t k) {
  if (json_) return key(std::to_string(k));
  if (empty_.back() && empty_.size() > 1) out_ += '\n';
  empty_.back() = false;
  indent(empty_.size() - 1);
  out_ += std::to_string(k);
  out_ += ':';
}

void DocOut::num(uint64_t v) {
  out_ += json_ ? "" : " ";
  out_ += std::to_string(v);
  if (!json_) out_ += '\n';
}

void DocOut::boolean(bool b) {
  out_ += json_ ? "" : " ";
  out_ += b ? "true" : "false";
  if (!json_) out_ += '\n';
}

void DocOut::map_begin() {
  if (json_) out_ += '{';
  empty_.push_back(true);
}

void DocOut::seq_begin() {
  if (json_) out_ += '[';
  empty_.push_back(true);
}

void DocOut::close(char bracket, const char* empty_yaml) {
  bool empty = empty_.back();
  empty_.pop_back();
  if (json_) {
    if (!empty) {
      out_ += '\n';
      indent(empty_.size());
    }
    out_ += bracket;
    if (empty_.empty()) out_ += '\n';
  } else if (empty && !empty_.empty()) {
    out_ += empty_yaml;
  }
}

void DocOut::map_end() {
  close('}', " {}\n");
}
void DocOut::seq_end() {
  close(']', " []\n");
}

void DocOut::item_begin() {
  if (json_) {
    if (!empty_.back()) out_ += ',';
    empty_.back() = false;
    out_ += '\n';
    indent(empty_.size());
    return;
  }
  if (empty_.back()) out_ += '\n';
  empty_.back() = false;
  indent(empty_.size() - 1);
  out_ += "- ";
}

void DocOut::item_end() {
  if (!json_) out_ += '\n';
  if (out_.size() >= 64 * 1024) {
    os_.write(out_.data(), static_cast<std::streamsize>(out_.size()));
    out_.clear();
  }
}

}  // namespace tcsync
