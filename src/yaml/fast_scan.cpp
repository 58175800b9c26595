#include "yaml/fast_scan.h"

#include <cstring>

namespace tcsync {

namespace {

bool printable(unsigned char c) {
  return c >= 0x20 && c < 0x7F;  // tab, CR, control and non-ASCII bytes: libyaml's
}

bool alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool flow_indicator(char c) {
  return c == ',' || c == '[' || c == ']' || c == '{' || c == '}';
}

}  // namespace

YamlEvent& FastScan::emit(YamlEv type, size_t offset) {
  if (*n_ == out_->size()) out_->emplace_back();
  YamlEvent& e = (*out_)[(*n_)++];
  e.type = type;
  e.plain = true;
  e.offset = offset;
  if (offset >= in_.size())
    e.loc = {file_, line_ + 1, 1};  // the end: libyaml puts it on a line of its own
  else
    e.loc = {file_, line_ + 1, static_cast<uint32_t>(offset - ls_ + 1)};
  e.scalar.clear();
  return e;
}

FastScan::Step FastScan::fill(std::vector<YamlEvent>& ev, size_t& n, size_t want) {
  out_ = &ev;
  n_ = &n;
  while (!done_ && n < want)
    if (!line()) return Step::Bail;
  return done_ ? Step::End : Step::More;
}

bool FastScan::line_end(size_t i) const {
  i = spaces(i);
  // A comment needs a space before it (else '#' is part of a scalar).
  return i == eol_ || (in_[i] == '#' && i > ls_ && in_[i - 1] == ' ');
}

// One line: the blank and comment lines before it skipped, the blocks it
// leaves closed, its entry read.
bool FastScan::line() {
  size_t c, p;
  for (;;) {
    if (pos_ >= in_.size()) return finish();
    ls_ = pos_;
    const void* nl = std::memchr(in_.data() + ls_, '\n', in_.size() - ls_);
    eol_ = nl ? static_cast<size_t>(static_cast<const char*>(nl) - in_.data()) : in_.size();
    // A line's events go to the reader together: a line of megabytes (a
    // hostile file's one mapping of millions of keys) is libyaml's, read
    // event by event up to the limits that refuse it.
    if (eol_ - ls_ > kMaxLine) return false;
    for (size_t i = ls_; i < eol_; ++i)
      if (!printable(static_cast<unsigned char>(in_[i]))) return false;
    pos_ = nl ? eol_ + 1 : eol_;
    p = spaces(ls_);
    c = p - ls_;
    if (p < eol_ && in_[p] != '#') break;
    ++line_;  // blank or comment only
  }
  auto starts = [&](const char* s) { return eol_ - ls_ >= 3 && std::memcmp(in_.data() + ls_, s, 3) == 0; };
  bool marker = c == 0 && (starts("---") || starts("...") || in_[p] == '%');
  if (!started_) {
    started_ = true;
    if (marker && starts("---") && (eol_ == ls_ + 3 || in_[ls_ + 3] == ' ')) {
      if (!line_end(ls_ + 3)) return false;
      emit(YamlEv::DocStart, ls_);
      ++line_;
      return true;
    }
    if (!marker) emit(YamlEv::DocStart, p);
  }
  if (marker) return false;  // directives, a second document, an end marker: libyaml's
  bool dash = in_[p] == '-' && (p + 1 == eol_ || in_[p + 1] == ' ');
  // Blocks indented deeper than this line end here, at its first token.
  while (!stack_.empty()) {
    Frame& f = stack_.back();
    if (f.pending) {
      if (c > f.indent || (c == f.indent && dash)) break;
      return false;  // a key with no value (null)
    }
    if (f.indent > c || (f.kind == Frame::Kind::Indentless && f.indent == c && !dash)) {
      emit(f.kind == Frame::Kind::Map ? YamlEv::MapEnd : YamlEv::SeqEnd, p);
      stack_.pop_back();
      continue;
    }
    break;
  }
  bool ok;
  if (stack_.empty() || stack_.back().pending) {
    // The value of the key above (or the document's node) begins here.
    if (stack_.empty() && rooted_) return false;  // a second node at the top
    if (stack_.size() >= kMaxFrames) return false;
    rooted_ = true;
    bool indentless = !stack_.empty() && c == stack_.back().indent;
    if (!stack_.empty()) stack_.back().pending = false;
    if (dash) {
      emit(YamlEv::SeqStart, p);
      stack_.push_back({indentless ? Frame::Kind::Indentless : Frame::Kind::Seq, false, c});
      ok = seq_entry(p);
    } else {
      stack_.push_back({Frame::Kind::Map, false, c});
      ok = map_entry(p, true);
    }
  } else if (stack_.back().indent != c) {
    return false;  // a continued scalar, or indentation libyaml refuses
  } else if (stack_.back().kind == Frame::Kind::Map) {
    ok = !dash && map_entry(p, false);
  } else {
    ok = dash && seq_entry(p);
  }
  ++line_;
  return ok;
}

bool FastScan::finish() {
  if (!rooted_) return false;  // an empty document: libyaml's
  // libyaml first closes the blocks deeper than where the input stops, there;
  // then, the stream ending, it moves to a new line and closes the rest.
  size_t last = in_.rfind('\n');
  size_t col = in_.size() - (last == std::string_view::npos ? 0 : last + 1);
  while (!stack_.empty()) {
    if (stack_.back().pending) return false;
    YamlEv end = stack_.back().kind == Frame::Kind::Map ? YamlEv::MapEnd : YamlEv::SeqEnd;
    if (col > 0 && stack_.back().indent > col)
      emit(end, in_.size()).loc = {file_, line_, static_cast<uint32_t>(col + 1)};
    else
      emit(end, in_.size());
    stack_.pop_back();
  }
  emit(YamlEv::DocEnd, in_.size());
  emit(YamlEv::StreamEnd, in_.size());
  done_ = true;
  return true;
}

// `KEY: VALUE` at p, the mapping's frame on top; `first`: its first key.
bool FastScan::map_entry(size_t p, bool first) {
  if (in_[p] == '{' || in_[p] == '[') return false;  // a collection as a key
  // The key is made before its MapStart is known to be needed: check first.
  size_t end = in_[p] == '"' || in_[p] == '\'' ? in_.find(in_[p], p + 1) : plain_end(p, false);
  if (end == kNone || end >= eol_) return false;
  size_t colon = spaces(in_[p] == '"' || in_[p] == '\'' ? end + 1 : end);
  if (colon >= eol_ || in_[colon] != ':' || colon - p > kMaxKey) return false;
  if (colon + 1 < eol_ && in_[colon + 1] != ' ') return false;
  if (first) emit(YamlEv::MapStart, p);
  if (scalar(p, false, true) == kNone) return false;
  size_t q = spaces(colon + 1);
  if (line_end(q)) {
    stack_.back().pending = true;
    return true;
  }
  return value_rest(q);
}

// `- ENTRY` at p, the list's frame on top.
bool FastScan::seq_entry(size_t p) {
  size_t q = spaces(p + 1);
  if (q == eol_ || in_[q] == '#' || in_[q] == '-') return false;  // an entry on later lines, a list in a list
  if (in_[q] != '{' && in_[q] != '[') {
    // `- key: value`: a mapping begins at the key.
    size_t end = in_[q] == '"' || in_[q] == '\'' ? in_.find(in_[q], q + 1) : plain_end(q, false);
    if (end == kNone || end >= eol_) return false;
    size_t colon = spaces(in_[q] == '"' || in_[q] == '\'' ? end + 1 : end);
    if (colon < eol_ && in_[colon] == ':') {
      if (stack_.size() >= kMaxFrames) return false;
      stack_.push_back({Frame::Kind::Map, false, q - ls_});
      return map_entry(q, true);
    }
  }
  return value_rest(q);
}

// A value that starts at q and ends the line.
bool FastScan::value_rest(size_t q) {
  size_t end = in_[q] == '{' || in_[q] == '[' ? flow(q, 1) : scalar(q, false, false);
  return end != kNone && line_end(end);  // anything else (`a: b: c`, `{...}: x`): libyaml's
}

// A one-line flow collection at q: the end, or kNone.
size_t FastScan::flow(size_t q, int depth) {
  if (depth > kMaxFlow) return kNone;
  bool map = in_[q] == '{';
  char close = map ? '}' : ']';
  emit(map ? YamlEv::MapStart : YamlEv::SeqStart, q);
  size_t i = spaces(q + 1);
  if (i < eol_ && in_[i] == close) {
    emit(map ? YamlEv::MapEnd : YamlEv::SeqEnd, i);
    return i + 1;
  }
  for (;;) {
    if (i >= eol_) return kNone;
    if (map) {
      if (in_[i] == '{' || in_[i] == '[') return kNone;
      size_t k = i;
      i = scalar(i, true, true);
      if (i == kNone) return kNone;
      i = spaces(i);
      if (i + 1 >= eol_ || in_[i] != ':' || in_[i + 1] != ' ' || i - k > kMaxKey) return kNone;
      i = spaces(i + 1);
      if (i >= eol_) return kNone;
    }
    i = in_[i] == '{' || in_[i] == '[' ? flow(i, depth + 1) : scalar(i, true, false);
    if (i == kNone) return kNone;
    i = spaces(i);
    if (i >= eol_) return kNone;
    if (in_[i] == close) {
      emit(map ? YamlEv::MapEnd : YamlEv::SeqEnd, i);
      return i + 1;
    }
    if (in_[i] != ',') return kNone;  // `[a: b]` and the like: libyaml's
    i = spaces(i + 1);
    if (i < eol_ && (in_[i] == close || in_[i] == ',')) return kNone;
  }
}

// Where a plain scalar starting at q ends (trailing spaces left out), or
// kNone when libyaml could read it otherwise than as it is here.
size_t FastScan::plain_end(size_t q, bool flow_ctx) const {
  char s = in_[q];
  char s1 = q + 1 < eol_ ? in_[q + 1] : '\n';
  bool start = alnum(s) || s == '_' || s == '.' || s == '/' || s == '~' || s == '+' || s == '$' || s == '(' ||
               s == '^' || s == '=' || (s == '-' && (alnum(s1) || s1 == '.' || s1 == '_'));
  if (!start) return kNone;
  size_t end = q + 1, i = q + 1;
  while (i < eol_) {
    char ch = in_[i];
    if (ch == ' ') {
      size_t j = spaces(i);
      if (j == eol_ || in_[j] == '#') return end;
      i = j;
      continue;
    }
    if (ch == ':') {
      char nx = i + 1 < eol_ ? in_[i + 1] : '\n';
      if (nx == ' ' || nx == '\n') return end;
      if (flow_indicator(nx) || nx == '?' || nx == ':') return flow_ctx ? end : kNone;
    } else if (flow_ctx && flow_indicator(ch)) {
      return end;
    } else if (ch == '#' && in_[i - 1] == ' ') {
      return end;
    }
    end = ++i;
    if (end - q > kMaxScalar) return kNone;
  }
  return end;
}

// The scalar at q, made an event: the end, or kNone.
size_t FastScan::scalar(size_t q, bool flow_ctx, bool key) {
  (void)key;
  char s = in_[q];
  if (s == '"' || s == '\'') {
    size_t i = q + 1;
    while (i < eol_ && in_[i] != s) {
      if (in_[i] == '\\' && s == '"') return kNone;  // escapes: libyaml's
      ++i;
    }
    if (i >= eol_ || i - q > kMaxScalar) return kNone;                  // a quoted scalar over lines
    if (s == '\'' && i + 1 < eol_ && in_[i + 1] == '\'') return kNone;  // '' in a single-quoted one
    YamlEvent& e = emit(YamlEv::Scalar, q);
    e.scalar.assign(in_.data() + q + 1, i - q - 1);
    e.plain = false;
    return i + 1;
  }
  size_t end = plain_end(q, flow_ctx);
  if (end == kNone) return kNone;
  YamlEvent& e = emit(YamlEv::Scalar, q);
  e.scalar.assign(in_.data() + q, end - q);
  return end;
}

}  // namespace tcsync
