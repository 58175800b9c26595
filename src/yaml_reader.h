// A thin, streaming layer over libyaml's event parser. The loader walks the
// top of a document event by event and asks for one small Node tree per rule,
// so a million-rule file never exists as one tree in memory.
//
// Scalars are never typed here: "1:10", "0x10" and "02:00:00:00:00:01" stay
// strings; the kind tables decide what they mean.
#pragma once
#include <yaml.h>

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "diag.h"

namespace tcsync {

struct NodeEntry;

struct Node {
  enum class Type : uint8_t { Scalar, Map, Seq };
  Type type = Type::Scalar;
  bool plain = true;  // an unquoted scalar (so `null`/`~` can mean absent)
  SourceLoc loc;
  std::string scalar;
  std::vector<NodeEntry> map;  // keys are scalar nodes
  std::vector<Node> seq;

  bool is_scalar() const { return type == Type::Scalar; }
  bool is_map() const { return type == Type::Map; }
  bool is_seq() const { return type == Type::Seq; }
  const Node* find(std::string_view key) const;
  const char* type_name() const;
};

// One key and its value (a struct, not std::pair: pair may not hold the
// still-incomplete Node, and clang's library says so).
struct NodeEntry {
  Node first;
  Node second;
};

class YamlReader {
 public:
  enum class Ev : uint8_t { StreamEnd, DocStart, DocEnd, MapStart, MapEnd, SeqStart, SeqEnd, Scalar, Error };
  struct Event {
    Ev type = Ev::Error;
    SourceLoc loc;
    std::string scalar;
    bool plain = true;
  };

  // Limits that keep hostile input bounded: nesting depth and scalar size.
  static constexpr int kMaxDepth = 64;
  static constexpr size_t kMaxScalar = 64 * 1024;

  YamlReader(uint32_t file_id, Diagnostics& diags);
  ~YamlReader();
  YamlReader(const YamlReader&) = delete;
  YamlReader& operator=(const YamlReader&) = delete;

  bool open(const std::string& path);   // reports unreadable files
  void open_string(std::string text);   // for tests

  // The next event (after peek, the peeked one). Ev::Error after a parse
  // error, with the diagnostic already reported; the stream then ends.
  const Event& next();
  const Event& peek();
  // Reads the whole value starting at the next event into a Node.
  bool read_node(Node& out);
  // Reads the entries of a mapping whose MapStart the caller has taken
  // (to look at its first key), up to and including its MapEnd.
  bool read_map_rest(Node& out, SourceLoc loc);
  // Skips one whole value (scalar, map or sequence).
  void skip_node();
  bool failed() const { return failed_; }

 private:
  bool fetch(Event& ev);
  SourceLoc loc_of_offset(size_t offset) const;
  bool read_node(Node& out, int depth);
  bool read_map_entries(Node& out, int depth);
  uint32_t file_;
  Diagnostics& diags_;
  yaml_parser_t parser_{};
  FILE* fp_ = nullptr;
  std::string text_;
  Event cur_, peeked_;
  bool has_peeked_ = false;
  bool failed_ = false;
  bool open_ = false;
};

}  // namespace tcsync
