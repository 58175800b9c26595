#include "import/import_tc.h"
#include "base/hex.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "base/handle.h"
#include "base/units.h"
#include "file/loader.h"
#include "import/lexer.h"
#include "kinds/registry.h"
#include "model/kind.h"
#include "model/model.h"
#include "model/shared_tables.h"
#include "model/tc_words.h"
#include "yaml/yaml_out.h"
#include "yaml/yaml_reader.h"

namespace tcsync {
namespace {

using Cursor = TcCursor;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// tc's own abbreviation rule (utils.c matches()): ARG may be any prefix of WORD.
bool matches(std::string_view arg, std::string_view word) {
  return tc_matches(arg, word);
}

using shell::Command;
using shell::lex;
using shell::Word;

// ---- the YAML being built ----------------------------------------------------------

Node scalar(std::string text, SourceLoc loc) {
  return tc_scalar(std::move(text), loc);
}
Node mapping(SourceLoc loc) {
  return tc_map(loc);
}
Node* find(Node& m, std::string_view key) {
  return tc_find(m, key);
}
Node& put(Node& m, std::string key, SourceLoc kloc, Node v) {
  return tc_put(m, std::move(key), kloc, std::move(v));
}

// Plain decimal numbers print bare; everything else as the writer quotes it.
void emit_node(const Node& n, YamlOut& y) {
  switch (n.type) {
    case Node::Type::Scalar: {
      const std::string& s = n.scalar;
      bool decimal = !s.empty() && s.size() < 19 && s.find_first_not_of("0123456789") == std::string::npos &&
                     (s.size() == 1 || s[0] != '0');
      if (decimal)
        y.num(std::stoull(s));
      else if (s == "true" || s == "false")
        y.boolean(s == "true");
      else
        y.str(s);
      break;
    }
    case Node::Type::Map:
      y.map_begin();
      for (auto& [k, v] : n.map) {
        y.key(k.scalar);
        emit_node(v, y);
      }
      y.map_end();
      break;
    case Node::Type::Seq:
      y.seq_begin();
      for (auto& e : n.seq) emit_node(e, y);
      y.seq_end();
      break;
  }
}

// ---- objects -----------------------------------------------------------------------------

enum class Verb { Add, Change, Replace, Delete, Show };

struct Obj {
  ObjType type = ObjType::Qdisc;
  std::string dev;
  SourceLoc loc;  // the command's first tc word
  const KindOps* ops = nullptr;
  uint32_t parent = 0, handle = 0;  // qdisc: parent, handle; class: parent, classid
  FilterKey key;                    // filters
  Node node;                        // the YAML entry, keys in the order they print
  bool dead = false;
  bool empty_list = false;  // a filter list with no rule (`empty: KIND`)
};

class Importer {
 public:
  Importer(Diagnostics& d, const ImportOptions& o) : d_(d), opt_(o) {}
  void command(const Command& c);
  bool to_yaml(const std::string& source_name, std::string& yaml);

  Diagnostics& d_;

  // Reads the words of a kind (its fields by key, tc's bare enum words, flags)
  // into BODY until the words run out or one of STOP comes; with
  // STOP_AT_UNKNOWN (actions) an unknown word also ends it.
  bool kind_words(const KindOps& ops, Cursor& c, Node& body, std::initializer_list<std::string_view> stop,
                  bool stop_at_unknown, uint32_t own_handle);
  // Reads each field of BODY with the kind table's parser (errors at the tc
  // words); the values land in OUT.
  bool check_fields(const KindOps& ops, const Node& body, Options& out);
  bool set_once(Node& m, const TcWord& kw, std::string key, Node v);

 private:
  void tc(const Command& c, size_t first, const TcWord* ns);
  void qdisc(Cursor& c, Verb v, const TcWord& head);
  void klass(Cursor& c, Verb v, const TcWord& head);
  void filter(Cursor& c, Verb v, const TcWord& head);
  // `filter_kind`: the filter whose words may follow the actions; null for
  // `tc actions`, where none do.
  bool actions(Cursor& c, Node& filter_node, const KindOps* filter_kind);
  bool police(Cursor& c, Node& filter_node, const KindOps& filter_kind);
  // The action entry of a filter above that made action KIND INDEX.
  const Node* filter_action(const std::string& kind, const std::string& index) const;
  void table(Cursor& c, Verb v, const TcWord& head);
  void note_device(const TcWord& dev);
  Obj* find_qdisc(const std::string& dev, std::optional<uint32_t> parent, std::optional<uint32_t> handle);
  void drop_qdisc_subtree(const std::string& dev, uint32_t handle);
  uint32_t pick_qdisc_handle(const std::string& dev, uint32_t parent);
  void place(Obj o, Verb v, const TcWord& head, Obj* existing, const std::string& what);

  const ImportOptions& opt_;
  std::vector<Obj> objs_;
  std::vector<std::pair<std::string, SourceLoc>> devices_;
  // `tc actions add`: the action table, (kind, index) -> its entry.
  std::map<std::pair<std::string, std::string>, Node> table_;
  std::optional<std::pair<std::string, SourceLoc>> ns_;  // the namespace of the lines imported so far ("" = none)
  // A filter list: (device, the qdisc or class whose filters they are).
  using Block = std::pair<std::string, uint32_t>;
  uint32_t block_of(const std::string& dev, uint32_t parent);
  Obj empty_list_obj(const TcWord& dev, const TcWord& head, const FilterKey& key, const std::string& parent_text,
                     const KindOps& ops);
  void forget_prefs(const Block& b, uint32_t chain, std::optional<uint16_t> pref);
  // One `tc filter` line as filter() reads it, step by step.
  struct FilterLine {
    const TcWord& head;
    // The words before the kind (null when the line lacks one) and the kind.
    const TcWord *dev = nullptr, *parent = nullptr, *handle = nullptr, *proto = nullptr, *pref = nullptr,
                 *chain = nullptr, *kindw = nullptr;
    FilterKey key;
    std::string parent_text = "root";
    bool have_pref = false;
    const KindOps* ops = nullptr;
    std::optional<uint32_t> hval;
    std::string handle_text;
    Node body;   // the kind's options
    Node extra;  // classid and actions, which follow the kind's body
    bool u32() const { return filter_ops(ops).own_table_handle != 0; }  // a kind with its own root tables
  };
  bool filter_words(Cursor& c, FilterLine& f);
  bool filter_key(FilterLine& f);
  bool filter_kind(FilterLine& f);
  bool filter_handle(FilterLine& f);
  void delete_filters(const FilterLine& f, const Block& block);
  bool filter_body(Cursor& c, FilterLine& f);
  bool home_in_root_table(FilterLine& f, const Block& block);
  bool only_a_list(const FilterLine& f, const Block& block, const FilterKey& asked);
  bool u32_node_id(FilterLine& f, const Block& block, const Options& opts);
  Obj filter_obj(FilterLine& f);
  void write_u32_roots();
  // The prefs in use per (block, chain): the kernel picks one for a filter without.
  std::map<std::pair<Block, uint32_t>, std::set<uint16_t>> prefs_;
  // u32 root tables per table space (the kernel's tc_u_common: a qdisc,
  // its classes and a clsact's two sides; model/shared_tables.h), keyed
  // (device, table_space_of(block)): id (800, 801...) -> the list's
  // (block, pref, protocol).
  struct RootOf {
    uint32_t block;
    uint16_t pref, protocol;
  };
  std::map<Block, std::map<uint32_t, RootOf>> u32_roots_;
  std::map<Block, uint32_t> u32_next_root_;
  // Hash tables the batch made with ids of 800: and above (`handle 900:
  // divisor 1`), per table space: `ht 900:` and handle 900::5 name them,
  // not a root.
  std::map<Block, std::set<uint32_t>> u32_high_tables_;
  Block space_of(const Block& b) const { return {b.first, table_space_of(b.second)}; }
  // u32 node ids in use per (block, pref, protocol, table and bucket): a rule
  // without a handle gets the first free id from 0x800.
  std::map<std::tuple<Block, uint32_t, uint32_t, uint32_t>, std::set<uint32_t>> u32_nodes_;
};

bool is_tc_program(const Word& w) {
  if (w.text == "tc" || (w.text.size() > 3 && w.text.ends_with("/tc") && w.text.find('=') == std::string::npos))
    return !w.expands;
  // TC=/sbin/tc ... $TC qdisc add ...: a common indirection.
  return w.expands && (w.text == "$TC" || w.text == "${TC}");
}

void Importer::command(const Command& raw) {
  // Shell operators: redirections and a trailing `&` only matter when tc runs;
  // a pipe means the line is about tc's output, not about state.
  Command c;
  const Word* pipe = nullptr;
  for (size_t i = 0; i < raw.size() && !pipe; ++i) {
    const Word& w = raw[i];
    if (!w.op) {
      c.push_back(w);
      continue;
    }
    if (w.text == "|") pipe = &w;
    if (w.text == "&" || pipe) continue;
    // Redirections: "> file", "2>/dev/null" (the target is the next word unless ">&N" named it).
    if (w.text.back() == '>' || w.text.back() == '<') ++i;
  }
  if (c.empty()) return;
  size_t k = 0;
  const Word* ns = nullptr;
  if (c[k].text == "sudo") {
    ++k;
    while (k < c.size() && c[k].text.starts_with("-")) ++k;
  }
  if (k + 3 < c.size() && c[k].text == "ip" && c[k + 1].text == "netns" && c[k + 2].text == "exec") {
    ns = &c[k + 3];
    k += 4;
  }
  static const std::string_view kBatchWords[] = {"qdisc",   "class", "filter",  "action",
                                                 "actions", "chain", "monitor", "exec"};
  if (k < c.size() && is_tc_program(c[k]) && pipe) {
    d_.warning(pipe->loc, "tc piped into another command reads state, it does not make any: skipped");
  } else if (k < c.size() && is_tc_program(c[k])) {
    tc(c, k + 1, ns);
  } else if (k == 0 && (c[0].text.starts_with("-") || std::find(std::begin(kBatchWords), std::end(kBatchWords),
                                                                c[0].text) != std::end(kBatchWords))) {
    tc(c, 0, nullptr);  // a `tc -b` line: tc's arguments without "tc"
  } else {
    d_.warning(c[0].loc, "not a tc command: skipped");
  }
}

void Importer::tc(const Command& c, size_t first, const TcWord* ns) {
  for (size_t i = first; i < c.size(); ++i)
    if (c[i].expands) {
      d_.error(c[i].loc, "shell expansion " + quoted(c[i].text) +
                             ": import reads the script's text, it does not run it (expand first, e.g. run the script "
                             "with TC=\"echo tc\" and import its output)");
      return;
    }
  // From here on only the words matter (the shell's have been dealt with).
  std::vector<TcWord> words(c.begin() + static_cast<std::ptrdiff_t>(first), c.end());
  Cursor cur{words, 0, d_};
  // tc's global options (tc.c): only -n/-netns changes what a line does.
  while (!cur.done() && cur.peek().text.size() > 1 && cur.peek().text[0] == '-') {
    const TcWord& w = cur.take();
    std::string o = w.text.substr(w.text[1] == '-' ? 2 : 1);
    if (matches(o, "netns") || o == "n") {
      ns = cur.value(w, "a namespace name");
      if (!ns) return;
    } else if (matches(o, "batch")) {
      d_.warning(w.loc, "tc -batch: import that file on its own; line skipped");
      return;
    } else if (matches(o, "Version")) {
      return;
    } else if (matches(o, "force") || o == "OK" || matches(o, "statistics") || matches(o, "details") ||
               matches(o, "raw") || matches(o, "pretty") || matches(o, "iec") || matches(o, "json") ||
               matches(o, "graph") || matches(o, "timestamp") || o == "ts" || o == "tshort" || matches(o, "names") ||
               o == "nm" || o.starts_with("color") || o == "c") {
      continue;  // output and error-handling options: no effect on state
    } else {
      d_.error(w.loc, "unknown tc option " + quoted(w.text));
      return;
    }
  }
  if (cur.done()) {
    d_.warning(c[first ? first - 1 : 0].loc, "tc without an object: skipped");
    return;
  }
  const TcWord& obj = cur.take();
  enum { Qd, Cl, Fi, Ac } what;
  if (matches(obj.text, "qdisc"))
    what = Qd;
  else if (matches(obj.text, "class"))
    what = Cl;
  else if (matches(obj.text, "filter"))
    what = Fi;
  else if (matches(obj.text, "actions"))
    what = Ac;  // tc's `action` is the same word
  else if (matches(obj.text, "monitor") || obj.text == "help")
    return;
  else {
    d_.error(obj.loc, "tcsync import reads qdisc, class, filter and actions commands, not " + quoted(obj.text));
    return;
  }
  if (cur.done()) {
    d_.warning(obj.loc, "tc " + obj.text + " without a command lists state: skipped");
    return;
  }
  const TcWord& vw = cur.take();
  Verb v;
  const std::string& t = vw.text;
  if (what == Ac && matches(t, "flush")) {
    d_.error(vw.loc, "tc actions flush: import reads what a script makes; delete the actions by index instead");
    return;
  }
  if (matches(t, "add"))
    v = Verb::Add;
  else if (matches(t, "change"))
    v = Verb::Change;
  else if (matches(t, "replace"))
    v = Verb::Replace;
  else if (matches(t, "delete"))
    v = Verb::Delete;
  else if (matches(t, "show") || matches(t, "list") || matches(t, "lst") || matches(t, "get"))
    v = Verb::Show;
  else {
    d_.error(vw.loc, "unknown tc command " + quoted(t) + " (import reads add, replace, change and delete)");
    return;
  }
  if (v == Verb::Show) {
    d_.warning(vw.loc, "tc " + obj.text + " " + t + " changes nothing: skipped");
    return;
  }
  // One file describes one namespace.
  std::string nsname = ns ? ns->text : "";
  if (opt_.netns) {
    if (nsname != *opt_.netns) return;
  } else if (!ns_) {
    ns_ = {nsname, ns ? ns->loc : c[0].loc};
  } else if (ns_->first != nsname) {
    auto name = [](const std::string& s) {
      return s.empty() ? std::string("the host's namespace") : "namespace " + quoted(s);
    };
    d_.error(ns ? ns->loc : c[first].loc,
             "this line is for " + name(nsname) + ", earlier lines (" + format_location(ns_->second) + ") for " +
                 name(ns_->first) + ": a tcsync file describes one namespace (import each with --netns NAME)");
    return;
  }
  const TcWord& head = obj;
  if (what == Qd)
    qdisc(cur, v, head);
  else if (what == Cl)
    klass(cur, v, head);
  else if (what == Ac)
    table(cur, v, head);
  else
    filter(cur, v, head);
}

// `tc actions add|replace|change action KIND ... index N`: entries of the
// action table; `tc actions delete action KIND index N` removes one.
void Importer::table(Cursor& c, Verb v, const TcWord& head) {
  if (!c.is("action") && !c.is("actions")) {
    d_.error(c.done() ? head.loc : c.peek().loc,
             "tc actions " + std::string(v == Verb::Delete ? "delete" : "add") + " needs 'action KIND ...' after it");
    return;
  }
  if (v == Verb::Delete) {
    while (c.is("action") || c.is("actions")) {
      c.take();
      if (c.done()) return;
      const TcWord& kw = c.take();
      if (!c.is("index")) {
        d_.error(kw.loc, "tc actions delete: import needs 'index N' (one action, not a whole kind)");
        return;
      }
      const TcWord& iw = c.take();
      const TcWord* val = c.value(iw);
      if (!val) return;
      table_.erase({kw.text, tc_number(val->text)});
    }
    return;
  }
  Node tmp = mapping(head.loc);
  if (!actions(c, tmp, nullptr)) return;
  if (!c.done()) {
    d_.error(c.peek().loc, "unknown word " + quoted(c.peek().text) + " after an action of tc actions");
    return;
  }
  for (auto& e : find(tmp, "actions")->seq) {
    Node* idx = find(e, "index");
    if (find(e, "ref") || !idx) {
      d_.error(e.loc, "a table action needs 'index N': the kernel's own number is nothing a file can name");
      continue;
    }
    std::string kind = e.map.front().first.scalar;
    table_[{kind, idx->scalar}] = std::move(e);  // add, replace and change all leave this one
  }
}

void Importer::note_device(const TcWord& dev) {
  for (auto& [name, loc] : devices_)
    if (name == dev.text) return;
  devices_.emplace_back(dev.text, dev.loc);
}

bool Importer::set_once(Node& m, const TcWord& kw, std::string key, Node v) {
  if (Node* old = find(m, key)) {
    d_.error(kw.loc, quoted(key) + " is given twice (first at " + format_location(old->loc) + ")");
    return false;
  }
  put(m, std::move(key), kw.loc, std::move(v));
  return true;
}

// The one Enum field of OPS that has WORD among its values (tc's positional
// words: mirred's `egress redirect`, a verdict such as `pipe`).
const Field* enum_owner(const KindOps& ops, std::string_view word) {
  const Field* owner = nullptr;
  for (auto& f : ops.fields) {
    if (f.type != FieldType::Enum || (f.flags & kReadOnly)) continue;
    for (auto& e : f.names)
      if (e.name == word) {
        if (owner) return nullptr;  // ambiguous: the key must be written
        owner = &f;
      }
  }
  return owner;
}

// A kind's tc spellings; a kind without any has only its table's keys.
const TcWords& tc_words_of(const KindOps& ops) {
  static const TcWords kNone;
  return ops.tc_words ? *ops.tc_words : kNone;
}

bool Importer::kind_words(const KindOps& ops, Cursor& c, Node& body, std::initializer_list<std::string_view> stop,
                          bool stop_at_unknown, uint32_t own_handle) {
  const std::string kname(ops.name);
  const TcWords& tw = tc_words_of(ops);
  // tc's parsers overwrite an option given twice (the last wins), except
  // the few each kind lists as refused.
  auto set = [&](const TcWord& kw, std::string_view key, Node v) {
    if (tw.refuses_twice(key))
      if (Node* old = find(body, key)) {
        d_.error(kw.loc,
                 quoted(key) + " is given twice (first at " + format_location(old->loc) + "); tc refuses that too");
        return false;
      }
    put(body, std::string(key), kw.loc, std::move(v));
    return true;
  };
  while (!c.done()) {
    const TcWord& w = c.peek();
    if (std::find(stop.begin(), stop.end(), w.text) != stop.end()) return true;
    if (const TcReader* r = tw.reader(w.text)) {
      c.take();
      if (!r->read(c, w, body)) return false;
      continue;
    }
    std::string_view key = tw.key_of(w.text);
    int idx = ops.field_index(key);
    if (idx >= 0 && !(ops.fields[idx].flags & kReadOnly)) {
      const Field& f = ops.fields[idx];
      c.take();
      if (f.type == FieldType::Bool) {  // tc's flags: skip_hw
        if (!set(w, f.key, scalar("true", w.loc))) return false;
        continue;
      }
      // A key that is also one of its own values (cake's `atm`, a flag to
      // tc, as in `atm overhead 44`): a value only when one follows.
      if (f.type == FieldType::Enum && enum_owner(ops, w.text) == &f &&
          (c.done() || enum_owner(ops, tw.value_of(c.peek().text)) != &f)) {
        if (!set(w, f.key, scalar(w.text, w.loc))) return false;
        continue;
      }
      // A structured value tc spells as one word (flower's dst_ip
      // 10.0.0.0/8, dst_port 1000-2000): the kind's own parser reads it in
      // check_fields. Several words need a reader (tc_words.h).
      const TcWord* v = c.value(w);
      if (!v) return false;
      std::string text = v->text;
      switch (f.type) {
        case FieldType::Rate:
        case FieldType::Size:
        case FieldType::Time:
          text = lower(text);
          break;  // tc's units ignore case
        case FieldType::Uint:
          text = tc_number(text);
          break;
        case FieldType::Handle:
          // htb's `default 30`: tc reads a bare hex minor of the qdisc's own handle.
          if (text.find(':') == std::string::npos && text != "root" && text != "none")
            text = (own_handle ? hex_digits(own_handle >> 16) : std::string()) + ":" + text;
          break;
        case FieldType::Enum:
          text = tw.value_of(text);
          break;
        default:
          break;
      }
      if (!set(w, f.key, scalar(text, v->loc))) return false;
      continue;
    }
    std::string word(tw.value_of(w.text));
    if (const Field* f = enum_owner(ops, word)) {
      c.take();
      if (!set(w, f->key, scalar(word, w.loc))) return false;
      continue;
    }
    if (tw.bare) {
      size_t at = c.pos();
      if (tw.bare(c, body)) continue;
      c.rewind(at);
    }
    if (stop_at_unknown) return true;
    std::vector<std::string_view> cands = ops.keys();
    for (auto& f : ops.fields)
      if (f.type == FieldType::Enum)
        for (auto& e : f.names) cands.push_back(e.name);
    for (auto& r : tw.readers) cands.push_back(r.word);
    for (auto& a : tw.aliases) cands.push_back(a.word);
    for (auto s : stop) cands.push_back(s);
    std::string msg = "unknown word " + quoted(w.text) + " for " + kname + " " + obj_type_name(ops.obj);
    if (auto dym = did_you_mean(w.text, cands); !dym.empty())
      msg += " (did you mean " + quoted(dym) + "?)";
    else if (!ops.fields.empty()) {
      std::string list;
      for (auto k : ops.keys()) list += (list.empty() ? "" : ", ") + std::string(k);
      msg += ": tcsync reads " + list;
    }
    d_.error(w.loc, msg);
    return false;
  }
  return true;
}

bool Importer::check_fields(const KindOps& ops, const Node& body, Options& out) {
  bool ok = true;
  for (auto& [k, v] : body.map) {
    int idx = ops.field_index(k.scalar);
    if (idx < 0) continue;  // not a field (a u32 selector under construction is one)
    Value val;
    if (parse_field(ops.fields[idx], v, val, d_))
      out.set(static_cast<uint16_t>(idx), std::move(val), v.loc);
    else
      ok = false;
  }
  return ok;
}

// ---- qdiscs ------------------------------------------------------------------------------

std::optional<uint32_t> handle_word(const TcWord& w, Diagnostics& d, std::string_view what) {
  auto h = parse_handle(w.text);
  if (!h) d.error(w.loc, std::string(what) + " must be a tc handle such as 1: or 1:10, not " + quoted(w.text));
  return h;
}

// A qdisc's own handle as tc reads it (get_qdisc_handle): a hex major,
// with or without the colon ("1" is 1:); a minor after the colon is ignored.
std::optional<uint32_t> qdisc_handle_word(const TcWord& w, Diagnostics& d) {
  std::string_view t = w.text;
  std::string_view major = t.substr(0, t.find(':'));
  uint32_t v = 0;
  bool ok = !major.empty() && major.size() <= 4 &&
            major.find_first_not_of("0123456789abcdefABCDEF") == std::string_view::npos;
  for (char ch : major)
    v = v * 16 +
        static_cast<uint32_t>(std::isdigit(static_cast<unsigned char>(ch)) ? ch - '0' : (std::tolower(ch) - 'a' + 10));
  if (ok && major.size() < t.size() && !parse_handle(w.text)) ok = false;  // "1:zz"
  if (!ok) {
    d.error(w.loc, "handle must be a qdisc handle such as 1: or 1, not " + quoted(w.text));
    return std::nullopt;
  }
  return v << 16;
}

Obj* Importer::find_qdisc(const std::string& dev, std::optional<uint32_t> parent, std::optional<uint32_t> handle) {
  for (auto& o : objs_)
    if (!o.dead && o.type == ObjType::Qdisc && o.dev == dev &&
        (parent ? o.parent == *parent : o.handle == handle.value_or(~0u)))
      return &o;
  return nullptr;
}

// A deleted qdisc takes its classes, filters and child qdiscs with it.
void Importer::drop_qdisc_subtree(const std::string& dev, uint32_t handle) {
  for (auto& o : objs_) {
    if (o.dead || o.dev != dev) continue;
    if (o.type == ObjType::Class && handle_major(o.handle) == handle) o.dead = true;
    if (o.type == ObjType::Filter && handle_major(o.key.parent) == handle) o.dead = true;
  }
  // Its filter lists go with it, and its u32 root ids start again at 800:.
  std::erase_if(prefs_,
                [&](auto& e) { return e.first.first.first == dev && handle_major(e.first.first.second) == handle; });
  u32_roots_.erase(space_of({dev, handle}));
  u32_next_root_.erase(space_of({dev, handle}));
  u32_high_tables_.erase(space_of({dev, handle}));
  for (auto& o : objs_)
    if (!o.dead && o.dev == dev && o.type == ObjType::Qdisc && handle_major(o.parent) == handle &&
        o.parent != kHandleRoot) {
      o.dead = true;
      drop_qdisc_subtree(dev, o.handle);
    }
}

uint32_t Importer::pick_qdisc_handle(const std::string& dev, uint32_t parent) {
  std::set<uint32_t> used;
  for (auto& o : objs_)
    if (!o.dead && o.dev == dev && o.type == ObjType::Qdisc) used.insert(o.handle);
  // Under class 1:30 the handle 30: reads best; at the root 1:.
  if (parent != kHandleRoot && handle_minor(parent) && !used.count(handle_minor(parent) << 16))
    return handle_minor(parent) << 16;
  for (uint32_t m = 1; m < 0x8000; ++m)
    if (!used.count(m << 16)) return m << 16;
  return 0;
}

// add / replace / change of one object whose identity matched EXISTING (or nothing).
void Importer::place(Obj o, Verb v, const TcWord& head, Obj* existing, const std::string& what) {
  if (v == Verb::Add && existing) {
    d_.error(head.loc, what + " is already added at " + format_location(existing->loc) +
                           " (tc would fail with \"File exists\"; use replace to redefine it)");
    return;
  }
  if (v == Verb::Change && !existing) {
    d_.error(head.loc,
             "tc change of " + what + ", which no line above adds (tc would fail: there is nothing to change)");
    return;
  }
  if (existing && v == Verb::Change) {
    // Only the options the change gives are replaced; a keyed list's
    // entries one by one (gred's virtual queues, by dp).
    static const TcWords kNone;
    const TcWords& tw = o.ops ? tc_words_of(*o.ops) : kNone;
    for (auto& [k, val] : o.node.map) {
      const std::string& key = k.scalar;  // clang 14 cannot capture a structured binding
      auto kl = std::find_if(tw.keyed_lists.begin(), tw.keyed_lists.end(),
                             [&](const TcKeyedList& l) { return l.key == key; });
      Node* old = kl == tw.keyed_lists.end() ? nullptr : find(existing->node, k.scalar);
      if (!old || !old->is_seq() || !val.is_seq()) {
        put(existing->node, k.scalar, k.loc, val);
        continue;
      }
      for (const Node& entry : val.seq) {
        const Node* id = entry.find(kl->id);
        auto same = std::find_if(old->seq.begin(), old->seq.end(), [&](const Node& e) {
          const Node* other = e.find(kl->id);
          return id && other && id->scalar == other->scalar;
        });
        if (same != old->seq.end())
          *same = entry;
        else
          old->seq.push_back(entry);
      }
    }
    existing->loc = o.loc;
    return;
  }
  if (existing) {
    *existing = std::move(o);
    return;
  }
  objs_.push_back(std::move(o));
}

void Importer::qdisc(Cursor& c, Verb v, const TcWord& head) {
  const TcWord *dev = nullptr, *parent = nullptr, *handle = nullptr, *kindw = nullptr;
  std::optional<Node> stab;
  while (!c.done() && !kindw) {
    const TcWord& w = c.take();
    if (w.text == "dev") {
      if (!(dev = c.value(w, "a device name"))) return;
    } else if (w.text == "handle") {
      if (!(handle = c.value(w, "a handle such as 1:"))) return;
    } else if (w.text == "root") {
      parent = &w;
    } else if (w.text == "parent") {
      if (!(parent = c.value(w, "a handle such as 1:10"))) return;
    } else if (w.text == "ingress" || w.text == "clsact") {
      kindw = &w;
    } else if (w.text == "stab") {
      // tc_stab.c: its words, each a prefix tc accepts, until one is not.
      stab = mapping(w.loc);
      static constexpr std::string_view kWords[] = {"mtu", "mpu", "overhead", "tsize", "linklayer"};
      while (!c.done()) {
        auto word = std::find_if(std::begin(kWords), std::end(kWords),
                                 [&](std::string_view k) { return tc_matches(c.peek().text, k); });
        if (word == std::end(kWords)) break;
        const TcWord& kw = c.take();
        const TcWord* val = c.value(kw, *word == "linklayer" ? "ethernet, atm or adsl" : "a number");
        if (!val) return;
        std::string v = tc_number(val->text);
        if (*word == "linklayer") v = std::string(tc_linklayer(val->text).value_or(val->text));
        put(*stab, std::string(*word), kw.loc, scalar(v, val->loc));
      }
    } else if (w.text == "estimator" || w.text == "ingress_block" || w.text == "egress_block") {
      d_.error(w.loc, quoted(w.text) + " has no tcsync spelling yet");
      return;
    } else {
      kindw = &w;
    }
  }
  if (!dev) {
    d_.error(head.loc, "tc qdisc needs 'dev NAME'");
    return;
  }
  const KindOps* ops = nullptr;
  if (kindw) {
    ops = find_kind(ObjType::Qdisc, kindw->text);
    if (!ops) {
      auto names = kind_names(ObjType::Qdisc);
      std::string list;
      for (auto nm : names) list += (list.empty() ? "" : ", ") + std::string(nm);
      std::string msg = "unknown qdisc kind " + quoted(kindw->text) + " (tcsync knows " + list + ")";
      if (auto dym = did_you_mean(kindw->text, names); !dym.empty()) msg += "; did you mean " + quoted(dym) + "?";
      d_.error(kindw->loc, msg);
      return;
    }
  }
  bool hook = qdisc_ops(ops).hooks != QdiscOps::Hooks::None;
  std::optional<uint32_t> p, h;
  if (parent && !(p = handle_word(*parent, d_, "parent"))) return;
  if (handle && !(h = qdisc_handle_word(*handle, d_))) return;
  if (ops && !hook && (p == kHandleIngress || h == kHandleIngressQdisc)) {
    d_.error(kindw->loc, "only clsact and ingress qdiscs sit at ingress (handle ffff:), not " + quoted(kindw->text));
    return;
  }
  if (hook || p == kHandleIngress || h == kHandleIngressQdisc) p = kHandleIngress, h = kHandleIngressQdisc;
  if (v == Verb::Delete) {
    Obj* o = find_qdisc(dev->text, p, h);
    if (!o) {
      d_.note(head.loc, "deletes nothing an earlier line added: skipped (tcsync deletes what its file does not list)");
      return;
    }
    o->dead = true;
    if (o->parent == kHandleIngress) {
      for (auto& f : objs_)
        if (f.dev == o->dev && f.type == ObjType::Filter &&
            (f.key.parent == kHandleClsactIngress || f.key.parent == kHandleClsactEgress ||
             f.key.parent == kHandleIngressQdisc))
          f.dead = true;
      std::erase_if(prefs_, [&](auto& e) {
        return e.first.first.first == o->dev && table_space_of(e.first.first.second) == table_space_of(kHandleIngress);
      });
      u32_roots_.erase(space_of({o->dev, kHandleIngress}));
      u32_next_root_.erase(space_of({o->dev, kHandleIngress}));
      u32_high_tables_.erase(space_of({o->dev, kHandleIngress}));
    } else {
      drop_qdisc_subtree(o->dev, o->handle);
    }
    return;
  }
  if (!ops) {
    d_.error(dev->loc,
             "tc qdisc " + std::string(v == Verb::Change ? "change" : "add") + " needs a qdisc kind such as htb");
    return;
  }
  if (!p && !h && v == Verb::Change) {
    d_.error(head.loc, "tc qdisc change needs 'root', 'parent' or 'handle' to say which qdisc");
    return;
  }
  if (!p) p = kHandleRoot;
  Obj* existing = find_qdisc(dev->text, p, std::nullopt);
  if (v == Verb::Change && !existing && h) existing = find_qdisc(dev->text, std::nullopt, h);
  if (!h && !hook) {
    if (v == Verb::Change && existing) {
      h = existing->handle;
    } else {
      h = pick_qdisc_handle(dev->text, *p);
      d_.warning(kindw->loc, "qdisc " + std::string(ops->name) +
                                 " without a handle: the kernel would pick one (8001: and up, " +
                                 "different on every host); tcsync needs a fixed one and uses " + format_handle(*h));
    }
  }
  Obj o;
  o.type = ObjType::Qdisc;
  o.dev = dev->text;
  o.loc = head.loc;
  o.ops = ops;
  o.parent = *p;
  o.handle = *h;
  o.node = mapping(head.loc);
  put(o.node, "kind", kindw->loc, scalar(std::string(ops->name), kindw->loc));
  if (!hook) {
    if (*p != kHandleRoot) put(o.node, "parent", parent->loc, scalar(format_handle(*p), parent->loc));
    put(o.node, "handle", handle ? handle->loc : kindw->loc,
        scalar(format_handle(*h), handle ? handle->loc : kindw->loc));
  }
  if (stab) put(o.node, "stab", stab->loc, std::move(*stab));
  Node body = mapping(kindw->loc);
  if (!kind_words(*ops, c, body, {}, false, *h)) return;
  Options opts;
  if (!check_fields(*ops, body, opts)) return;
  for (auto& kv : body.map) o.node.map.push_back(std::move(kv));
  note_device(*dev);
  if (v == Verb::Change && existing && existing->ops != ops) {
    d_.error(kindw->loc, "tc qdisc change cannot change the kind (" + std::string(existing->ops->name) + " → " +
                             std::string(ops->name) + "); use replace");
    return;
  }
  std::string what =
      "qdisc " + std::string(ops->name) + " at " + (hook ? "ingress" : format_handle(*p)) + " of " + dev->text;
  place(std::move(o), v, head, existing, what);
}

// ---- classes -----------------------------------------------------------------------------

void Importer::klass(Cursor& c, Verb v, const TcWord& head) {
  const TcWord *dev = nullptr, *parent = nullptr, *classid = nullptr, *kindw = nullptr;
  while (!c.done() && !kindw) {
    const TcWord& w = c.take();
    if (w.text == "dev") {
      if (!(dev = c.value(w, "a device name"))) return;
    } else if (w.text == "classid" || w.text == "handle") {
      if (!(classid = c.value(w, "a class id such as 1:10"))) return;
    } else if (w.text == "root") {
      parent = &w;
    } else if (w.text == "parent") {
      if (!(parent = c.value(w, "a handle such as 1:"))) return;
    } else if (w.text == "estimator") {
      d_.error(w.loc, "'estimator' has no tcsync spelling yet");
      return;
    } else {
      kindw = &w;
    }
  }
  if (!dev || !classid) {
    d_.error(head.loc, std::string("tc class needs ") + (!dev ? "'dev NAME'" : "'classid X:Y'"));
    return;
  }
  auto id = handle_word(*classid, d_, "classid");
  if (!id) return;
  if (!handle_major(*id) || !handle_minor(*id) || *id == kHandleRoot) {
    d_.error(classid->loc, "classid needs a major and a minor number, such as 1:10");
    return;
  }
  auto same = [&](const Obj& o) {
    return !o.dead && o.type == ObjType::Class && o.dev == dev->text && o.handle == *id;
  };
  auto it = std::find_if(objs_.begin(), objs_.end(), same);
  Obj* existing = it == objs_.end() ? nullptr : &*it;
  if (v == Verb::Delete) {
    if (!existing)
      d_.note(head.loc, "deletes nothing an earlier line added: skipped (tcsync deletes what its file does not list)");
    else
      existing->dead = true;
    return;
  }
  const KindOps* ops = nullptr;
  if (kindw) ops = find_kind(ObjType::Class, kindw->text);
  if (!ops) {
    auto names = kind_names(ObjType::Class);
    std::string list;
    for (auto nm : names) list += (list.empty() ? "" : ", ") + std::string(nm);
    if (kindw)
      d_.error(kindw->loc, "unknown class kind " + quoted(kindw->text) + " (tcsync knows " + list + ")");
    else
      d_.error(head.loc, "tc class needs a class kind such as htb");
    return;
  }
  uint32_t par = handle_major(*id);
  if (parent && parent->text != "root") {
    auto ph = handle_word(*parent, d_, "parent");
    if (!ph) return;
    par = *ph;
  }
  Obj o;
  o.type = ObjType::Class;
  o.dev = dev->text;
  o.loc = head.loc;
  o.ops = ops;
  o.parent = par;
  o.handle = *id;
  o.node = mapping(head.loc);
  put(o.node, "classid", classid->loc, scalar(format_handle(*id), classid->loc));
  if (handle_minor(par)) put(o.node, "parent", parent->loc, scalar(format_handle(par), parent->loc));
  // The kind is the owning qdisc's unless said otherwise.
  Obj* owner = find_qdisc(dev->text, std::nullopt, handle_major(*id));
  if (!owner || owner->ops->name != ops->name)
    put(o.node, "kind", kindw->loc, scalar(std::string(ops->name), kindw->loc));
  Node body = mapping(kindw->loc);
  if (!kind_words(*ops, c, body, {}, false, *id)) return;
  Options opts;
  if (!check_fields(*ops, body, opts)) return;
  for (auto& kv : body.map) o.node.map.push_back(std::move(kv));
  note_device(*dev);
  place(std::move(o), v, head, existing, "class " + format_handle(*id) + " of " + dev->text);
}

// ---- filters -----------------------------------------------------------------------------

// The action kind tc makes of a verdict word where a kind goes
// (ActionOps::tc_verdict_kind), found once.
const KindOps* tc_verdict_kind() {
  static const KindOps* kind = [] {
    for (const KindOps* k : all_kinds())
      if (k->obj == ObjType::Action && action_ops(k).tc_verdict_kind) return k;
    return static_cast<const KindOps*>(nullptr);
  }();
  return kind;
}

// Whether OPS reads WORD (a key, an alias, a reader's word, a bare enum value).
bool knows_word(const KindOps& ops, std::string_view word) {
  const TcWords& tw = tc_words_of(ops);
  return tw.reader(word) || ops.field_index(tw.key_of(word)) >= 0 || enum_owner(ops, word);
}

// `police WORDS` among a filter's words: its own police
// (FilterOps::old_police_attr), read with the police action's words. tc's
// parse_police stops at the first word it does not know (flowid, action,
// match...) and goes back to the filter's.
bool Importer::police(Cursor& c, Node& fnode, const KindOps& filter_kind) {
  const TcWord& pw = c.take();
  if (!filter_ops(filter_kind).old_police_attr) {
    d_.error(pw.loc,
             "a " + std::string(filter_kind.name) + " filter has no police of its own: write 'action police ...'");
    return false;
  }
  Node body = mapping(pw.loc);
  if (!kind_words(kActionPolice, c, body, {}, true, 0)) return false;
  if (c.is("index")) {
    d_.error(c.peek().loc,
             "a filter's own police has no 'index' in tcsync (the kernel picks one): bind the action with 'action "
             "police index N'");
    return false;
  }
  if (body.map.empty()) {
    d_.error(pw.loc, "'police' needs the police action's words after it, such as 'rate 1mbit burst 10k drop'");
    return false;
  }
  Options opts;
  if (!check_fields(kActionPolice, body, opts)) return false;
  put(fnode, "police", pw.loc, std::move(body));  // given twice, the kernel keeps the last
  return true;
}

bool Importer::actions(Cursor& c, Node& fnode, const KindOps* filter_kind) {
  Node* seq = find(fnode, "actions");
  if (!seq) {
    Node s;
    s.type = Node::Type::Seq;
    s.loc = c.peek().loc;
    seq = &put(fnode, "actions", c.peek().loc, std::move(s));
  }
  while (c.is("action") || c.is("actions")) {
    const TcWord& aw = c.take();
    if (c.done()) {
      d_.error(aw.loc, quoted(aw.text) + " needs an action kind such as mirred after it");
      return false;
    }
    const TcWord& kw = c.peek();
    const KindOps* ops = find_kind(ObjType::Action, kw.text);
    if (ops) {
      c.take();
    } else {
      // `action drop`: tc's short form of the verdict kind (gact), read by
      // that kind's own bare verdict.
      const KindOps* verdict_kind = tc_verdict_kind();
      size_t at = c.pos();
      Node scratch_body = mapping(kw.loc);
      bool verdict = verdict_kind && verdict_kind->tc_words && verdict_kind->tc_words->bare &&
                     verdict_kind->tc_words->bare(c, scratch_body);
      c.rewind(at);
      if (verdict) {
        ops = verdict_kind;
      } else {
        auto names = kind_names(ObjType::Action);
        std::string list;
        for (auto nm : names) list += (list.empty() ? "" : ", ") + std::string(nm);
        std::string msg = "unknown action kind " + quoted(kw.text) + " (tcsync knows " + list + ")";
        if (auto dym = did_you_mean(kw.text, names); !dym.empty()) msg += "; did you mean " + quoted(dym) + "?";
        d_.error(kw.loc, msg);
        return false;
      }
    }
    Node an = mapping(aw.loc);
    Node body = mapping(kw.loc);
    bool no_percpu = false;
    while (true) {
      if (!kind_words(*ops, c, body,
                      {"action", "actions", "classid", "flowid", "police", "index", "cookie", "no_percpu"}, true, 0))
        return false;
      if (c.is("no_percpu")) {
        c.take();
        no_percpu = true;
        continue;
      }
      if (c.is("index") || c.is("cookie")) {
        const TcWord& w = c.take();
        const TcWord* val = c.value(w);
        if (!val || !set_once(an, w, w.text, scalar(w.text == "index" ? tc_number(val->text) : val->text, val->loc)))
          return false;
        continue;
      }
      break;
    }
    // tc goes back to the filter's words after an action; a word neither
    // knows is reported against the action, where it most likely belongs.
    if (!c.done() && !(filter_kind && knows_word(*filter_kind, c.peek().text))) {
      static const std::string_view kFilterWords[] = {"action", "actions", "classid", "flowid", "police"};
      const TcWord& w = c.peek();
      if (std::find(std::begin(kFilterWords), std::end(kFilterWords), w.text) == std::end(kFilterWords)) {
        std::vector<std::string_view> cands = ops->keys();
        std::string msg = "unknown word " + quoted(w.text) + " for " + std::string(ops->name) + " action";
        if (auto dym = did_you_mean(w.text, cands); !dym.empty()) msg += " (did you mean " + quoted(dym) + "?)";
        d_.error(w.loc, msg);
        return false;
      }
    }
    // `action mirred index 7` alone binds action 7: one of the table, or
    // one a filter above made with that index (the kernel ignores the
    // options of an action it binds, and tc sends none here).
    if (Node* idx = find(an, "index"); idx && body.map.empty() && an.map.size() == 1) {
      const std::string kind(ops->name);
      if (table_.count({kind, idx->scalar})) {
        Node entry = mapping(aw.loc);
        put(entry, "ref", aw.loc, scalar(kind + "/" + idx->scalar, idx->loc));
        seq->seq.push_back(std::move(entry));
        continue;
      }
      if (const Node* made = filter_action(kind, idx->scalar)) {
        seq->seq.push_back(*made);
        continue;
      }
      d_.error(idx->loc,
               "'action " + kind + " index " + idx->scalar +
                   "' alone binds an existing action, and no line above makes " + kind + " " + idx->scalar +
                   " (import reads the script, not the host's action table: add the line that makes it, such as "
                   "'tc actions add action " +
                   kind + " ... index " + idx->scalar + "')");
      return false;
    }
    Options opts;
    if (!check_fields(*ops, body, opts)) return false;
    Node entry = mapping(aw.loc);
    put(entry, std::string(ops->name), kw.loc, std::move(body));
    for (auto& kv : an.map) entry.map.push_back(std::move(kv));
    // tc's actions keep per-CPU statistics unless told `no_percpu`;
    // tcsync's do not unless told, so the import says it.
    if (!no_percpu) put(entry, "percpu_stats", aw.loc, scalar("true", aw.loc));
    seq->seq.push_back(std::move(entry));
  }
  return true;
}

const Node* Importer::filter_action(const std::string& kind, const std::string& index) const {
  for (auto& o : objs_) {
    if (o.dead || o.type != ObjType::Filter) continue;
    const Node* acts = o.node.find("actions");
    if (!acts) continue;
    for (auto& e : acts->seq)
      if (const Node* i = e.find("index"); i && i->scalar == index && e.find(kind)) return &e;
  }
  return nullptr;
}

// A `tc filter` line, read in steps: the words before the kind, the list
// they name, the kind and handle; a delete acts there. Else the kind's
// words, the u32 table the rule lives in, the lists the kernel makes, the
// node id it gives, and the entry goes in.
void Importer::filter(Cursor& c, Verb v, const TcWord& head) {
  FilterLine f{head};
  if (!filter_words(c, f) || !filter_key(f) || !filter_kind(f) || !filter_handle(f)) return;
  const Block block{f.dev->text, block_of(f.dev->text, f.key.parent)};
  if (v == Verb::Delete) {
    delete_filters(f, block);
    return;
  }
  if (!f.ops) {
    d_.error(f.dev->loc, "tc filter needs a classifier kind such as u32");
    return;
  }
  auto& prefs = prefs_[{block, f.key.chain}];
  if (!f.have_pref) {
    // The kernel's choice (tc_new_tfilter): just below the first pref from
    // 0x8000 up, 0xC000 when there is none.
    auto it = prefs.lower_bound(0x8000);
    f.key.pref = it == prefs.end() ? kDefaultPref : static_cast<uint16_t>(*it - 1);
  }
  if (!filter_body(c, f)) return;
  const FilterKey asked = f.key;  // the list the request makes, wherever its rule goes
  // The kernel makes a classifier instance for each new pref; u32 gives it a
  // root table named 800:, 801:... in the order instances appear (a kind
  // with its own root tables: FilterOps::own_table_handle).
  if (!prefs.count(f.key.pref) && f.u32()) {
    uint32_t& next = u32_next_root_[space_of(block)];
    if (!next) next = 0x800;
    u32_roots_[space_of(block)][next++] = {block.second, f.key.pref, f.key.protocol};
  }
  prefs.insert(f.key.pref);
  if (f.u32() && !home_in_root_table(f, block)) return;
  Options opts;
  if (!check_fields(*f.ops, f.body, opts)) return;
  if (only_a_list(f, block, asked)) {
    note_device(*f.dev);
    return;
  }
  if (f.u32() && filter_ops(f.ops).handle_space && !u32_node_id(f, block, opts)) return;
  Obj o = filter_obj(f);
  note_device(*f.dev);
  Obj* existing = nullptr;
  if (f.hval)
    for (auto& e : objs_)
      if (!e.dead && e.type == ObjType::Filter && e.dev == o.dev && e.key == o.key) existing = &e;
  if (v == Verb::Change && existing) v = Verb::Replace;  // a filter change restates the rule
  place(std::move(o), v, head, existing,
        "filter " + f.parent_text + " pref " + std::to_string(f.key.pref) + " handle " + f.handle_text + " of " +
            f.dev->text);
}

// The words before the kind, in any order, each with its value; the first
// other word is the kind. A device is required (blocks are not imported).
bool Importer::filter_words(Cursor& c, FilterLine& f) {
  while (!c.done() && !f.kindw) {
    const TcWord& w = c.take();
    if (w.text == "dev") {
      if (!(f.dev = c.value(w, "a device name"))) return false;
    } else if (w.text == "root" || w.text == "ingress" || w.text == "egress") {
      f.parent = &w;
    } else if (w.text == "parent") {
      if (!(f.parent = c.value(w, "a handle such as 1:"))) return false;
    } else if (w.text == "handle") {
      if (!(f.handle = c.value(w, "a filter handle"))) return false;
    } else if (matches(w.text, "protocol")) {
      if (!(f.proto = c.value(w, "a protocol such as ip"))) return false;
    } else if (matches(w.text, "priority") || matches(w.text, "preference")) {
      if (!(f.pref = c.value(w, "a number"))) return false;
    } else if (w.text == "chain") {
      if (!(f.chain = c.value(w, "a number"))) return false;
    } else if (w.text == "block" || w.text == "estimator") {
      d_.error(w.loc, quoted(w.text) + " has no tcsync spelling yet");
      return false;
    } else {
      f.kindw = &w;
    }
  }
  if (!f.dev) {
    d_.error(f.head.loc, "tc filter needs 'dev NAME' (shared blocks are not imported yet)");
    return false;
  }
  return true;
}

// The list the words name: parent (tc's default root), chain, protocol
// (tc's default all) and pref (the kernel picks one later when none).
bool Importer::filter_key(FilterLine& f) {
  FilterKey& key = f.key;
  key.protocol = 0x0003;  // tc's default: all
  key.parent = kHandleRoot;
  if (f.parent) {
    if (f.parent->text == "ingress")
      key.parent = kHandleClsactIngress;
    else if (f.parent->text == "egress")
      key.parent = kHandleClsactEgress;
    else if (auto h = handle_word(*f.parent, d_, "parent"))
      key.parent = *h;
    else
      return false;
    f.parent_text = key.parent == kHandleClsactIngress  ? "ingress"
                    : key.parent == kHandleClsactEgress ? "egress"
                                                        : format_handle(key.parent);
  }
  if (f.chain) {
    auto n = parse_uint(tc_number(f.chain->text));
    if (!n || *n > 0xFFFFFFFF) {
      d_.error(f.chain->loc, "chain must be a number, not " + quoted(f.chain->text));
      return false;
    }
    key.chain = static_cast<uint32_t>(*n);
  }
  if (f.proto) {
    auto p = parse_protocol(lower(f.proto->text));
    if (!p) {
      d_.error(f.proto->loc, "unknown protocol " + quoted(f.proto->text) +
                                 " (use ip, ipv6, all, arp, 802.1q, 802.1ad or a hex number like 0x88cc)");
      return false;
    }
    key.protocol = *p;
  }
  if (f.pref) {
    auto n = parse_uint(tc_number(f.pref->text));
    if (!n || *n == 0 || *n > 0xFFFF) {
      d_.error(f.pref->loc, "pref must be a number from 1 to 65535, not " + quoted(f.pref->text));
      return false;
    }
    key.pref = static_cast<uint16_t>(*n);
    f.have_pref = true;
  }
  return true;
}

// The classifier kind, if the line names one (a delete may not).
bool Importer::filter_kind(FilterLine& f) {
  f.ops = f.kindw ? find_kind(ObjType::Filter, f.kindw->text) : nullptr;
  if (!f.kindw || f.ops) return true;
  auto names = kind_names(ObjType::Filter);
  std::string list;
  for (auto nm : names) list += (list.empty() ? "" : ", ") + std::string(nm);
  std::string msg = "unknown filter kind " + quoted(f.kindw->text) + " (tcsync knows " + list + ")";
  if (auto dym = did_you_mean(f.kindw->text, names); !dym.empty()) msg += "; did you mean " + quoted(dym) + "?";
  d_.error(f.kindw->loc, msg);
  return false;
}

// The handle in the kind's own words (tc_words' handle: fw's mask lands in
// the body as an option), and its value.
bool Importer::filter_handle(FilterLine& f) {
  f.body = mapping(f.handle ? f.handle->loc : f.head.loc);  // options the handle word carries (fw's mask)
  if (!f.handle) return true;
  f.handle_text = f.handle->text;
  if (f.ops && tc_words_of(*f.ops).handle) {
    auto h = tc_words_of(*f.ops).handle(*f.handle, f.body, d_);
    if (!h) return false;
    f.handle_text = *h;
  }
  if (auto* parse = filter_ops(f.ops).parse_handle)
    f.hval = parse(f.handle_text);
  else if (auto n = parse_uint(f.handle_text))
    f.hval = static_cast<uint32_t>(*n);
  if (!f.hval) {
    d_.error(f.handle->loc,
             "invalid " + std::string(f.ops ? f.ops->name : "filter") + " handle " + quoted(f.handle->text));
    return false;
  }
  return true;
}

// `tc filter del`: every filter an earlier line added that the words match
// goes; a delete by pref (or of all) also ends those prefs' instances.
void Importer::delete_filters(const FilterLine& f, const Block& block) {
  const FilterKey& key = f.key;
  size_t n = 0;
  for (auto& o : objs_)
    if (!o.dead && o.type == ObjType::Filter && o.dev == f.dev->text && block_of(o.dev, o.key.parent) == block.second &&
        o.key.chain == key.chain && (!f.have_pref || o.key.pref == key.pref) &&
        (!f.proto || o.key.protocol == key.protocol) && (!f.hval || o.key.handle == *f.hval) &&
        (!f.ops || o.ops == f.ops))
      o.dead = true, ++n;
  if (!n)
    d_.note(f.head.loc, "deletes nothing an earlier line added: skipped (tcsync deletes what its file does not list)");
  else if (!f.hval)
    forget_prefs(block, key.chain, f.have_pref ? std::optional<uint16_t>(key.pref) : std::nullopt);
}

// The kind's words, then classid and actions, which may follow in turns.
bool Importer::filter_body(Cursor& c, FilterLine& f) {
  f.body.loc = f.kindw->loc;
  f.extra = mapping(f.kindw->loc);  // classid and actions follow the kind's body
  while (true) {
    if (!kind_words(*f.ops, c, f.body, {"classid", "flowid", "action", "actions", "police"}, false, 0)) return false;
    if (c.done()) return true;
    const TcWord& w = c.peek();
    if (w.text == "classid" || w.text == "flowid") {
      c.take();
      const TcWord* id = c.value(w, "a class id such as 1:10");
      if (!id || !handle_word(*id, d_, w.text)) return false;
      put(f.extra, "classid", w.loc, scalar(id->text, id->loc));  // tc takes the last one given
    } else if (w.text == "action" || w.text == "actions") {
      if (!actions(c, f.extra, f.ops)) return false;
    } else if (!police(c, f.extra, *f.ops)) {
      return false;
    }
  }
}

// u32: a rule placed in a root table by its kernel name (`ht 800::`,
// handle 800::5) lives in the pref that owns that table, whatever its own
// pref: tcsync names it by that pref and no table. Needs the roots the
// lines so far made (filter()).
bool Importer::home_in_root_table(FilterLine& f, const Block& block) {
  std::optional<uint32_t> table;
  SourceLoc tloc;
  auto& high = u32_high_tables_[space_of(block)];
  auto root_id = [&](uint32_t h) { return (h >> 20) >= 0x800 && !high.count(h & 0xFFF00000u); };
  if (f.hval && find(f.body, "divisor") && (*f.hval >> 20) >= 0x800)
    high.insert(*f.hval & 0xFFF00000u);
  else if (Node* ht = find(f.body, "ht")) {
    if (auto h = parse_u32_handle(ht->scalar); h && root_id(*h)) {
      table = *h & 0xFFF00000u, tloc = ht->loc;
      std::erase_if(f.body.map, [](auto& kv) { return kv.first.scalar == "ht"; });
    }
  }
  if (f.hval && root_id(*f.hval)) {
    if (table && *table != (*f.hval & 0xFFF00000u)) {
      d_.error(f.handle->loc, "handle " + f.handle->text + " is not in table " +
                                  filter_ops(f.ops).format_handle(*table) + " that 'ht' names");
      return false;
    }
    table = *f.hval & 0xFFF00000u, tloc = f.handle->loc;
    *f.hval &= 0xFFFFF;
    f.handle_text = filter_ops(f.ops).format_handle(*f.hval);
  }
  if (!table) return true;
  auto& roots = u32_roots_[space_of(block)];
  auto it = roots.find(*table >> 20);
  if (it != roots.end() && it->second.block != block.second) {
    // One table space (a clsact's two sides, an htb qdisc and its
    // classes) numbers its lists' roots together.
    d_.error(tloc, "u32 table " + filter_ops(f.ops).format_handle(*table) + " is the root table of the list at pref " +
                       std::to_string(it->second.pref) +
                       " of another parent of this qdisc (its u32 lists share one numbering)");
    return false;
  }
  if (it == roots.end()) {
    d_.error(tloc, "u32 table " + filter_ops(f.ops).format_handle(*table) +
                       " is a root table the kernel makes for each pref, and no line above made this one");
    return false;
  }
  f.key.pref = it->second.pref;
  f.key.protocol = it->second.protocol;
  return true;
}

// The lists the line makes as the kernel does: with no options at all the
// kernel makes the list alone (u32, fw) and adds nothing to a list that is
// there (true: the line is only that list); a u32 rule placed in another
// pref's table still made its own list, ASKED. A list that now holds the
// rule is no longer an empty one.
bool Importer::only_a_list(const FilterLine& f, const Block& block, const FilterKey& asked) {
  const bool empty = f.body.map.empty() && f.extra.map.empty() && !f.hval &&
                     filter_ops(f.ops).empty_list != FilterOps::EmptyList::Refused;
  auto same_list = [&](const Obj& e, const FilterKey& k) {
    return !e.dead && e.type == ObjType::Filter && e.dev == f.dev->text &&
           block_of(e.dev, e.key.parent) == block.second && e.key.chain == k.chain && e.key.pref == k.pref &&
           e.key.protocol == k.protocol;
  };
  auto list_held = [&](const FilterKey& k) {
    return std::any_of(objs_.begin(), objs_.end(), [&](const Obj& e) { return same_list(e, k); });
  };
  if (!empty && !list_held(asked)) {
    if (asked.pref != f.key.pref || asked.protocol != f.key.protocol)
      objs_.push_back(empty_list_obj(*f.dev, f.head, asked, f.parent_text, *f.ops));
  }
  if (empty) {
    if (!list_held(f.key)) objs_.push_back(empty_list_obj(*f.dev, f.head, f.key, f.parent_text, *f.ops));
    return true;
  }
  for (auto& e : objs_)
    if (e.empty_list && same_list(e, f.key)) e.dead = true;  // the list now holds this rule
  return false;
}

// u32: a rule without a handle gets the kernel's first free node id from
// 0x800 in its table and bucket, so the state tcsync makes equals tc's.
bool Importer::u32_node_id(FilterLine& f, const Block& block, const Options& opts) {
  uint32_t fixed = 0, mask = 0;
  filter_ops(f.ops).handle_space(opts, fixed, mask);
  if (f.hval) fixed = *f.hval & 0xFFFFF000u;
  const bool root_table = (fixed >> 20) == 0;
  auto& used = u32_nodes_[{block, root_table ? f.key.pref : 0u, root_table ? f.key.protocol : 0u, fixed}];
  if (!f.hval && mask) {
    uint32_t node = 0x800;
    while (node <= 0xFFF && used.count(node)) ++node;
    if (node > 0xFFF)
      for (node = 1; node < 0x800 && used.count(node); ++node) {
      }
    if (node == 0x800 && used.count(node)) {
      d_.error(f.head.loc,
               "a 4,096th rule in one u32 bucket: the kernel gives it (and every further one) the bucket's last id " +
                   filter_ops(f.ops).format_handle(fixed | 0xFFF) +
                   ", which tcsync cannot carry apart from the rule that has it; "
                   "spread such rules over a hash table with 'divisor', or over prefs");
      return false;
    }
    f.hval = fixed | node;
    f.handle_text = filter_ops(f.ops).format_handle(*f.hval);
  }
  if (f.hval && mask) used.insert(*f.hval & 0xFFF);
  return true;
}

// The file's entry for the rule: its list's keys where the line gave them
// (or they differ from tc's defaults), its handle, the kind's body, then
// classid and actions.
Obj Importer::filter_obj(FilterLine& f) {
  Obj o;
  o.type = ObjType::Filter;
  o.dev = f.dev->text;
  o.loc = f.head.loc;
  o.ops = f.ops;
  o.node = mapping(f.head.loc);
  SourceLoc ploc = f.parent ? f.parent->loc : f.head.loc;
  put(o.node, "parent", ploc, scalar(f.parent_text, ploc));
  if (f.chain) put(o.node, "chain", f.chain->loc, scalar(std::to_string(f.key.chain), f.chain->loc));
  SourceLoc prefloc = f.pref ? f.pref->loc : f.kindw->loc;
  put(o.node, "pref", prefloc, scalar(std::to_string(f.key.pref), prefloc));
  if (f.proto || f.key.protocol != 0x0003) {
    SourceLoc l = f.proto ? f.proto->loc : f.kindw->loc;
    put(o.node, "protocol", l, scalar(format_protocol(f.key.protocol), l));
  }
  if (f.hval) {
    f.key.handle = *f.hval;
    SourceLoc hl = f.handle ? f.handle->loc : f.kindw->loc;
    put(o.node, "handle", hl, scalar(f.handle_text, hl));
  }
  put(o.node, std::string(f.ops->name), f.kindw->loc, std::move(f.body));
  for (auto& kv : f.extra.map) o.node.map.push_back(std::move(kv));
  o.key = f.key;
  return o;
}

// `empty: KIND` at KEY's list (no handle, no options).
Obj Importer::empty_list_obj(const TcWord& dev, const TcWord& head, const FilterKey& key,
                             const std::string& parent_text, const KindOps& ops) {
  Obj o;
  o.type = ObjType::Filter;
  o.dev = dev.text;
  o.loc = head.loc;
  o.ops = &ops;
  o.key = key;
  o.key.handle = 0;
  o.empty_list = true;
  o.node = mapping(head.loc);
  put(o.node, "parent", head.loc, scalar(parent_text, head.loc));
  if (key.chain) put(o.node, "chain", head.loc, scalar(std::to_string(key.chain), head.loc));
  put(o.node, "pref", head.loc, scalar(std::to_string(key.pref), head.loc));
  if (key.protocol != 0x0003) put(o.node, "protocol", head.loc, scalar(format_protocol(key.protocol), head.loc));
  put(o.node, "empty", head.loc, scalar(std::string(ops.name), head.loc));
  return o;
}

// The filter list a parent names: "root" is the root qdisc's own.
uint32_t Importer::block_of(const std::string& dev, uint32_t parent) {
  if (parent != kHandleRoot) return parent;
  if (Obj* q = find_qdisc(dev, kHandleRoot, std::nullopt)) return q->handle;
  return parent;
}

// After `tc filter del ... [prio N]`: those prefs' instances are gone (their
// root table ids are not reused: the kernel hands them out cyclically).
void Importer::forget_prefs(const Block& b, uint32_t chain, std::optional<uint16_t> pref) {
  auto& prefs = prefs_[{b, chain}];
  for (auto it = prefs.begin(); it != prefs.end();) {
    bool gone = (!pref || *it == *pref) && std::none_of(objs_.begin(), objs_.end(), [&](const Obj& o) {
                  return !o.dead && o.type == ObjType::Filter && o.dev == b.first &&
                         block_of(o.dev, o.key.parent) == b.second && o.key.chain == chain && o.key.pref == *it;
                });
    if (gone) {
      auto& roots = u32_roots_[space_of(b)];
      std::erase_if(roots, [&](auto& r) { return r.second.block == b.second && r.second.pref == *it; });
      // The last list of a table space takes the space with it (u32_destroy):
      // the next list made is 800: again.
      if (roots.empty()) u32_next_root_.erase(space_of(b));
      it = prefs.erase(it);
    } else {
      ++it;
    }
  }
}

// ---- output ---------------------------------------------------------------------------------

// u32 root tables as the batch numbered them (u32_roots_), written where
// tcsync's own order of making the lists would number them otherwise
// (model/shared_tables.h, as dump decides): in the handle of each rule of a
// root table (801::5) and as an empty list's handle (801:); a list that
// holds only hash tables, as its first table's root_table (model.h
// Filter::list_root).
void Importer::write_u32_roots() {
  std::map<std::string, std::vector<Filter>> lists;  // device -> its u32 entries, as the loader would hold them
  std::map<std::string, std::vector<Obj*>> objs;
  using List =
      std::tuple<std::string, uint32_t, uint32_t, uint16_t, uint16_t>;  // (device, block, chain, pref, protocol)
  auto list_of = [&](const Obj& o) {
    return List{o.dev, block_of(o.dev, o.key.parent), o.key.chain, o.key.pref, o.key.protocol};
  };
  auto is_table = [](const Obj& o) { return !o.empty_list && o.key.handle && !(o.key.handle & 0xFFFFFu); };
  std::set<List> showing;  // lists an entry shows the root of (a rule of the root table, an empty list)
  for (auto& o : objs_)
    if (!o.dead && o.type == ObjType::Filter && filter_ops(o.ops).own_table_handle &&
        (o.empty_list || !(o.key.handle & 0xFFF00000u)))
      showing.insert(list_of(o));
  std::set<List> carried;  // table-only lists whose first table carries the root
  for (auto& o : objs_) {
    if (o.dead || o.type != ObjType::Filter || !filter_ops(o.ops).own_table_handle) continue;
    bool table_root = is_table(o) && !showing.count(list_of(o)) && carried.insert(list_of(o)).second;
    if (!o.empty_list && (o.key.handle & 0xFFF00000u) && !table_root)
      continue;  // a hash table or a rule in one: no root shown
    uint32_t b = block_of(o.dev, o.key.parent);
    auto roots = u32_roots_.find(space_of({o.dev, b}));
    if (roots == u32_roots_.end()) continue;
    auto it = std::find_if(roots->second.begin(), roots->second.end(), [&](auto& r) {
      return r.second.block == b && r.second.pref == o.key.pref && r.second.protocol == o.key.protocol;
    });
    if (it == roots->second.end()) continue;
    Filter f;
    f.key = o.key;
    f.key.parent = b;
    f.ops = o.ops;
    f.empty_list = o.empty_list;
    if (table_root)
      f.list_root = it->first << 20;
    else
      f.wire_handle = (it->first << 20) | (o.empty_list ? 0 : o.key.handle);
    lists[o.dev].push_back(std::move(f));
    objs[o.dev].push_back(&o);
  }
  for (auto& [dev, fs] : lists) {
    std::set<uint32_t> moved = moved_root_spaces(fs);
    for (size_t i = 0; i < fs.size(); ++i) {
      if (!moved.count(table_space_of(fs[i].key.parent))) continue;
      Obj& o = *objs[dev][i];
      if (fs[i].list_root) {
        // Next to the handle, where dump writes it.
        auto h = std::find_if(o.node.map.begin(), o.node.map.end(),
                              [](const NodeEntry& e) { return e.first.scalar == "handle"; });
        NodeEntry e{scalar("root_table", o.loc), scalar(filter_ops(o.ops).format_handle(fs[i].list_root), o.loc)};
        o.node.map.insert(h == o.node.map.end() ? h : std::next(h), std::move(e));
        continue;
      }
      std::string text = filter_ops(o.ops).format_handle(fs[i].wire_handle);
      if (Node* h = find(o.node, "handle"))
        h->scalar = text;
      else
        put(o.node, "handle", o.loc, scalar(text, o.loc));
    }
  }
}

bool Importer::to_yaml(const std::string& source_name, std::string& yaml) {
  write_u32_roots();
  // One object per line, and the tc line each came from, by output line.
  std::vector<SourceLoc> origin(1);
  std::string out;
  auto line = [&](const std::string& text, SourceLoc from) {
    out += text + "\n";
    origin.push_back(from);
  };
  line("# Imported by `tcsync import` from " + source_name + ".", {});
  line("version: 1", {});
  if (!table_.empty()) {
    line("actions:", {});
    for (auto& [key, e] : table_) {
      std::string entry;
      YamlOut y(entry);
      emit_node(e, y);
      line("  - " + entry, e.loc);
    }
  }
  line("devices:", {});
  bool any = false;
  for (auto& [name, loc] : devices_) {
    std::string dev_line;
    YamlOut dy(dev_line);
    dy.str(name);
    bool declared = false;
    for (ObjType t : {ObjType::Qdisc, ObjType::Class, ObjType::Filter}) {
      bool first = true;
      for (auto& o : objs_) {
        if (o.dead || o.dev != name || o.type != t) continue;
        if (!declared) line("  " + dev_line + ":", loc), declared = true;
        if (first) {
          line(std::string("    ") +
                   (t == ObjType::Qdisc   ? "qdiscs"
                    : t == ObjType::Class ? "classes"
                                          : "filters") +
                   ":",
               o.loc);
          first = false;
        }
        std::string entry;
        YamlOut y(entry);
        emit_node(o.node, y);
        line("      - " + entry, o.loc);
      }
    }
    any |= declared;
  }
  if (!any) out += "  {}\n";

  // The loader checks what one object cannot see (classes of a declared
  // qdisc, u32 tables, duplicate identities); its errors point at the tc line.
  const std::string gen_name = "<import of " + source_name + ">";
  State s;
  Diagnostics ld;
  load_text(gen_name, out, s, ld);
  auto map_loc = [&](SourceLoc l) { return l.line < origin.size() ? origin[l.line] : SourceLoc{}; };
  for (auto& x : ld.all()) {
    std::string msg = x.message;
    // Locations quoted inside the message ("declared at <import>:12:9").
    for (size_t pos; (pos = msg.find(gen_name + ":")) != std::string::npos;) {
      size_t p = pos + gen_name.size() + 1, e = p;
      while (e < msg.size() && (std::isdigit(static_cast<unsigned char>(msg[e])) || msg[e] == ':')) ++e;
      uint32_t ln = static_cast<uint32_t>(std::atoi(msg.c_str() + p));
      SourceLoc m = map_loc({1, ln, 1});
      msg.replace(pos, e - pos, m.known() ? format_location(m) : std::string("?"));
    }
    d_.add(x.severity, map_loc(x.loc), msg);
  }
  if (ld.has_errors()) return false;
  yaml = std::move(out);
  return true;
}

}  // namespace

bool import_tc_text(const std::string& name, const std::string& text, const ImportOptions& o, std::string& yaml,
                    Diagnostics& d) {
  uint32_t file = SourceFiles::instance().add_text(name, text);
  size_t before = d.error_count();
  Importer im(d, o);
  for (auto& c : lex(file, text, d)) {
    if (d.too_many()) break;
    im.command(c);
  }
  if (d.error_count() != before) return false;
  return im.to_yaml(name, yaml) && d.error_count() == before;
}

bool import_tc_file(const std::string& path, const ImportOptions& o, std::string& yaml, Diagnostics& d) {
  std::string text;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    return import_tc_text("<stdin>", text, o, yaml, d);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    d.error({}, "cannot read " + path + ": " + std::strerror(errno));
    return false;
  }
  text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return import_tc_text(path, text, o, yaml, d);
}

}  // namespace tcsync
