// A thin, streaming layer over libyaml's event parser. The loader walks the
// top of a document event by event and asks for one small Node tree per rule,
// so a million-rule file never exists as one tree in memory.
//
// libyaml's parsing is a fifth to a third of the loader's time on big files
// (perf of a 1M-rule diff: 20% of the samples), and it needs nothing from the
// loader, so for a big file it runs on a second thread: that thread fills
// batches of events, the loader takes them. Batches are reused
// (their strings keep their capacity), at most kBatches exist, so memory stays
// bounded however far ahead the parser could get. Small files and strings are
// parsed on the caller's thread, by the same code.
//
// Scalars are never typed here: "1:10", "0x10" and "02:00:00:00:00:01" stay
// strings; the kind tables decide what they mean.
#pragma once
#include <yaml.h>

#include <condition_variable>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "base/diag.h"
#include "yaml/yaml_event.h"

namespace tcsync {

class FastScan;
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

// How errors name what they got: a scalar in single quotes ('10mbitt'), a
// map or sequence by its type ("a map").
std::string quoted(std::string_view s);
std::string text_of(const Node& n);

// One key and its value (a struct, not std::pair: pair may not hold the
// still-incomplete Node, and clang's library says so).
struct NodeEntry {
  Node first;
  Node second;
};

class YamlReader {
 public:
  using Ev = YamlEv;
  using Event = YamlEvent;
  // Where the parsing runs. Auto: a second thread for files from
  // kThreadFrom bytes on.
  enum class Parse : uint8_t { Inline, Thread, Auto };
  static constexpr size_t kThreadFrom = 128 << 10;

  // Limits that keep hostile input bounded: nesting depth and scalar size.
  static constexpr int kMaxDepth = 64;
  static constexpr size_t kMaxScalar = 64 * 1024;
  // A value read whole (a rule, a qdisc) has at most a few hundred keys; the
  // sections that name many things (devices, blocks) are walked, not read.
  static constexpr size_t kMaxKeys = 65536;

  YamlReader(uint32_t file_id, Diagnostics& diags);
  ~YamlReader();
  YamlReader(const YamlReader&) = delete;
  YamlReader& operator=(const YamlReader&) = delete;

  bool open(const std::string& path, Parse how = Parse::Auto);  // reports unreadable files
  void open_string(std::string text, Parse how = Parse::Inline);

  // The next event (after peek, the peeked one). Ev::Error after a parse
  // error, with the diagnostic already reported; the stream then ends.
  // Valid until the next call but one.
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
  // Before open: parse with libyaml alone, as before the fast scanner (the
  // tests compare the two; bench/ times them).
  void libyaml_only() { fast_allowed_ = false; }
  // Whether the fast scanner made every event so far (no hand-over).
  bool fast() const { return fast_allowed_ && !libyaml_; }
  // The input's size in bytes (0 when unknown), and where the event next()
  // last returned starts: together, how much of the input is left.
  size_t size() const { return size_; }
  size_t offset() const { return cur_ ? cur_->offset : 0; }

 private:
  // A run of parsed events; the first n of ev are valid.
  struct Batch {
    std::vector<Event> ev;
    size_t n = 0;
  };
  static constexpr size_t kBatch = 2048;  // events
  static constexpr size_t kBatches = 4;

  // Parser side (the second thread, when there is one). produce() fills b
  // and says which batches the reader may have now (publish) and which are
  // free again (freed); at most two of each.
  struct Handover {
    Batch* publish[2] = {};
    Batch* freed = nullptr;
  };
  bool parse_one(Event& ev);  // false: ev is the last one (stream end or error)
  void produce(Batch* b, Handover& h);
  void fill(Batch& b);
  void start_libyaml();
  void parse_loop();
  SourceLoc loc_of_offset(size_t offset) const;
  // Reader side.
  const Event* take();
  bool refill();
  void start(Parse how, size_t size);
  static int read_input(void* self, unsigned char* buf, size_t size, size_t* got);
  bool read_node(Node& out, int depth);
  bool read_map_entries(Node& out, int depth);

  uint32_t file_;
  Diagnostics& diags_;
  yaml_parser_t parser_{};
  bool libyaml_ = false;  // parser_ initialized
  // The whole input, in memory (a file read whole, or the string given).
  std::string text_;
  std::string_view input_;
  size_t size_ = 0;  // of the input
  bool open_ = false;
  size_t text_pos_ = 0;  // how much of input_ libyaml has taken
  // The fast scanner, until the end or until it hands over to libyaml.
  // Until then a filled batch is held back until the next one is filled
  // too: libyaml reads at most a line ahead of an event, and the next batch
  // holds at least one line, so whatever the scanner published is what
  // libyaml would make before any error it could find. On a hand-over the
  // held and current batches are dropped and libyaml starts from the top,
  // skipping the published events (skip_).
  std::unique_ptr<FastScan> fast_;
  bool fast_allowed_ = true;
  Batch* held_ = nullptr;
  size_t published_ = 0;
  size_t skip_ = 0;
  bool flow_too_deep_ = false;  // read_input refused more input: see there
  bool parsed_all_ = false;     // the parser side made its last event

  Batch batches_[kBatches];
  Batch* cur_batch_ = nullptr;  // the batch events are taken from
  size_t pos_ = 0;
  bool ended_ = false;  // the reader took the last event

  // With a thread: batches move between the two sides through these lists.
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Batch*> full_;    // parsed, oldest first
  std::vector<Batch*> empty_;  // free for the parser
  bool stop_ = false;

  // Events are read where the parser side left them, not copied: a batch
  // goes back to the parser side one refill after the reader left it, so
  // what next() and peek() returned stays valid across a batch's end.
  Batch* prev_batch_ = nullptr;
  const Event* cur_ = nullptr;
  const Event* peeked_ = nullptr;
  Event end_;  // after the last event: the stream stays ended (or failed)
  bool has_peeked_ = false;
  bool failed_ = false;
};

}  // namespace tcsync
