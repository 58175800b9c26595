#include "model/tc_words.h"

#include <algorithm>

namespace tcsync {

const TcWord* TcCursor::value(const TcWord& kw, std::string_view what) {
  if (done()) {
    d_.error(kw.loc, "'" + kw.text + "' needs " + std::string(what) + " after it");
    return nullptr;
  }
  return &take();
}

const TcReader* TcWords::reader(std::string_view word) const {
  for (auto& r : readers)
    if (r.word == word) return &r;
  return nullptr;
}

std::string_view TcWords::key_of(std::string_view word) const {
  for (auto& a : aliases)
    if (a.word == word) return a.key;
  return word;
}

std::string_view TcWords::value_of(std::string_view word) const {
  for (auto& a : value_aliases)
    if (a.word == word) return a.value;
  return word;
}

bool TcWords::refuses_twice(std::string_view key) const {
  return std::find(once.begin(), once.end(), key) != once.end();
}

Node tc_scalar(std::string text, SourceLoc loc) {
  Node n;
  n.type = Node::Type::Scalar;
  n.scalar = std::move(text);
  n.loc = loc;
  return n;
}

Node tc_map(SourceLoc loc) {
  Node n;
  n.type = Node::Type::Map;
  n.loc = loc;
  return n;
}

Node tc_seq(SourceLoc loc) {
  Node n;
  n.type = Node::Type::Seq;
  n.loc = loc;
  return n;
}

Node* tc_find(Node& m, std::string_view key) {
  for (auto& [k, v] : m.map)
    if (k.scalar == key) return &v;
  return nullptr;
}

Node& tc_put(Node& m, std::string key, SourceLoc kloc, Node v) {
  if (Node* old = tc_find(m, key)) return *old = std::move(v);
  m.map.push_back({tc_scalar(std::move(key), kloc), std::move(v)});
  return m.map.back().second;
}

std::string tc_number(const std::string& s) {
  if (s.size() > 1 && s[0] == '0' && s.find_first_not_of("01234567") == std::string::npos)
    return std::to_string(std::stoull(s, nullptr, 8));
  return s;
}

std::string tc_hex(const std::string& s) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) return s;
  return "0x" + s;
}

bool tc_matches(std::string_view arg, std::string_view word) {
  return !arg.empty() && arg.size() <= word.size() && word.substr(0, arg.size()) == arg;
}

std::optional<std::string_view> tc_linklayer(std::string_view arg) {
  for (std::string_view ll : {"ethernet", "atm", "adsl"})
    if (tc_matches(arg, ll)) return ll;
  return std::nullopt;
}

}  // namespace tcsync
