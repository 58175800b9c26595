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
#include "import/importer.h"
#include "import/lexer.h"
#include "kinds/registry.h"
#include "model/kind.h"
#include "model/model.h"
#include "model/shared_tables.h"
#include "model/tc_tables.h"
#include "model/tc_words.h"
#include "yaml/yaml_out.h"
#include "yaml/yaml_reader.h"

namespace tcsync {
namespace importing {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

namespace {

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

}  // namespace

// ---- objects -----------------------------------------------------------------------------

namespace {

bool is_tc_program(const Word& w) {
  if (w.text == "tc" || (w.text.size() > 3 && w.text.ends_with("/tc") && w.text.find('=') == std::string::npos))
    return !w.expands;
  // TC=/sbin/tc ... $TC qdisc add ...: a common indirection.
  return w.expands && (w.text == "$TC" || w.text == "${TC}");
}

// What of a command that is not tc makes the tc lines around it run other
// than once each, in order, as written: a loop, a conditional, a function,
// a variable or a command's output. Empty: nothing (set -e, echo, ip link).
std::string shell_construct(const Command& c) {
  static const std::string_view kLoop[] = {"for", "while", "until", "select", "do", "done", "break", "continue"};
  static const std::string_view kCond[] = {"if", "then", "else", "elif", "fi", "case", "esac", "[", "[[", "test"};
  static const std::string_view kRuns[] = {"source", ".", "eval", "xargs", "sh", "bash", "return"};
  const std::string& w = c[0].text;
  auto in = [&](auto& list) { return std::find(std::begin(list), std::end(list), w) != std::end(list); };
  if (!c[0].expands && in(kLoop)) return "a shell loop, which runs the tc lines in it any number of times";
  if (!c[0].expands && in(kCond)) return "a shell conditional, which decides whether the tc lines after it run";
  if (!c[0].expands && (w == "function" || w == "{" || w == "}" || w == "(" || w == ")" || w.ends_with("()") ||
                        (c.size() > 1 && c[1].text.starts_with("()"))))
    return "a shell function or group, whose tc lines run where and as often as it is called, with its arguments";
  if (!c[0].expands && in(kRuns)) return "a command that runs other commands, which import does not read";
  for (auto& x : c)
    if (x.expands && !(&x == &c[0] && x.text.starts_with("TC=")))
      return "a shell variable or a command's output (" + x.text +
             "), which the tc lines may use and import cannot know";
  return {};
}

}  // namespace

void Importer::command(const Command& raw) {
  // Shell operators: redirections and a trailing `&` only matter when tc runs;
  // a pipe means the line is about tc's output, not about state.
  Command c;
  const Word* pipe = nullptr;
  may_fail_ = false;
  for (size_t i = 0; i < raw.size() && !pipe; ++i) {
    const Word& w = raw[i];
    if (!w.op) {
      c.push_back(w);
      continue;
    }
    // `|| true`, `2>/dev/null`: the script expects the command may fail.
    if (w.text == "||" || w.text.starts_with("2>") || w.text.starts_with("&>")) may_fail_ = true;
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
  } else if (std::string what = shell_construct(c); what.empty()) {
    d_.warning(c[0].loc, "not a tc command: skipped");
  } else if (opt_.skip_shell) {
    d_.warning(c[0].loc, quoted(c[0].text) + ": " + what + ": skipped (--skip-shell)");
  } else {
    d_.error(c[0].loc, quoted(c[0].text) + ": " + what +
                           ". import reads a script and runs nothing, so the state it makes is not known: import the "
                           "tc lines as the script runs them (tc -b batch text), or tcsync dump a namespace the "
                           "script ran in; --skip-shell skips such lines and imports the rest");
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

// A delete of what no line above made: tc fails there on a device with no
// tc state of its own, unless the line says it may fail (`|| true`,
// `2>/dev/null`: it clears what the host had before) or the host may hold
// it (HOST_MAY_HAVE: a device's own root qdisc).
void Importer::delete_of_nothing(const TcWord& head, bool host_may_have) {
  if (may_fail_ || host_may_have) {
    d_.note(head.loc, "deletes nothing an earlier line added: skipped (tcsync deletes what its file does not list)");
    return;
  }
  d_.error(head.loc,
           "deletes nothing an earlier line added: tc fails here (the kernel has no such object); import reads "
           "the script as run on devices without tc state. A line that clears what a host had before says it may "
           "fail ('2>/dev/null' or '|| true' after it), and import skips it");
}

void Importer::note_device(const TcWord& dev) {
  const uint32_t d = dev_id(dev.text);
  if (dev_noted_[d]) return;
  dev_noted_[d] = true;
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

TcTables* Importer::tables_of(const KindOps* ops) {
  auto make = ops ? tc_words_of(*ops).tables : nullptr;
  if (!make) return nullptr;
  auto& t = tables_[ops];
  if (!t) t = make();
  return t.get();
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
    if (idx < 0) continue;  // not a field (a reader's form under construction is one)
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

namespace {

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

}  // namespace

Obj* Importer::find_qdisc(const std::string& dev, std::optional<uint32_t> parent, std::optional<uint32_t> handle) {
  sync();
  const uint32_t d = dev_id(dev);
  if (parent) {
    auto it = qdisc_by_parent_.find(dev_key(d, *parent));
    return it == qdisc_by_parent_.end() ? nullptr : first_live(it->second, 0, false);
  }
  const uint32_t h = handle.value_or(~0u);
  auto it = qdisc_by_handle_.find(dev_key(d, h));
  return it == qdisc_by_handle_.end() ? nullptr : first_live(it->second, h, true);
}

// A deleted qdisc takes its classes, filters and child qdiscs with it.
void Importer::drop_qdisc_subtree(const std::string& dev, uint32_t handle) {
  sync();
  const uint32_t d = dev_id(dev);
  if (auto it = class_by_major_.find(dev_key(d, handle)); it != class_by_major_.end()) {
    for (Pos s : it->second) objs_[s].dead = true;
    class_by_major_.erase(it);
  }
  // Filters whose parent's major is HANDLE: the lists of parents HANDLE to HANDLE|ffff.
  if (!handle_minor(handle))
    for (auto it = lists_.lower_bound({d, handle, 0u, uint16_t{0}, uint16_t{0}});
         it != lists_.end() && std::get<0>(it->first) == d && handle_major(std::get<1>(it->first)) == handle; ++it) {
      for (Pos s : it->second.all) objs_[s].dead = true;
      it->second.all.clear();
      it->second.empties.clear();
    }
  // Its filter lists go with it, and the tables they shared.
  std::erase_if(prefs_,
                [&](auto& e) { return e.first.first.first == dev && handle_major(e.first.first.second) == handle; });
  for (auto& [ops, t] : tables_) t->space_gone(dev, handle);
  auto it = qdisc_by_parent_major_.find(dev_key(d, handle));
  if (it == qdisc_by_parent_major_.end()) return;
  std::vector<Pos> kids = it->second;  // the recursion below may touch this map
  for (Pos s : kids) {
    Obj& o = objs_[s];
    if (!o.dead && o.parent != kHandleRoot) {
      o.dead = true;
      drop_qdisc_subtree(dev, o.handle);
    }
  }
  it = qdisc_by_parent_major_.find(dev_key(d, handle));
  if (it != qdisc_by_parent_major_.end()) std::erase_if(it->second, [&](Pos s) { return objs_[s].dead; });
}

uint32_t Importer::pick_qdisc_handle(const std::string& dev) {
  auto used = [&](uint32_t h) { return find_qdisc(dev, std::nullopt, h) != nullptr; };
  // The kernel's own way (qdisc_alloc_handle): 8001: and up, the first
  // free one. A handle a script names (1:, 30:) would give its other lines'
  // flowid 1:1 a class tc never made there.
  for (uint32_t m = 0x8001; m <= 0xFFFF; ++m)
    if (!used(m << 16)) return m << 16;
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
    reindex(static_cast<Pos>(existing - objs_.data()));
    return;
  }
  if (existing) {
    *existing = std::move(o);
    reindex(static_cast<Pos>(existing - objs_.data()));
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
      // A device's own root qdisc (pfifo_fast, mq) deletes; a virtual
      // device's noqueue does not: which one the host has is not known here.
      delete_of_nothing(head, !hook && (!p || *p == kHandleRoot) && !h);
      return;
    }
    o->dead = true;
    if (o->parent == kHandleIngress) {
      drop_hook_filters(o->dev);
      std::erase_if(prefs_, [&](auto& e) {
        return e.first.first.first == o->dev && table_space_of(e.first.first.second) == table_space_of(kHandleIngress);
      });
      for (auto& [ops, t] : tables_) t->space_gone(o->dev, kHandleIngress);
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
      h = pick_qdisc_handle(dev->text);
      d_.warning(kindw->loc,
                 "qdisc " + std::string(ops->name) +
                     " without a handle: the kernel picks one (8001: and up, from one counter for the whole "
                     "kernel: different on every host); tcsync needs a fixed one and uses the first a fresh "
                     "kernel would pick, " +
                     format_handle(*h));
    }
  }
  if (Obj* same = hook ? nullptr : find_qdisc(dev->text, std::nullopt, *h); same && same != existing) {
    // The kernel finds a qdisc by its handle first: one elsewhere is not moved.
    d_.error(handle ? handle->loc : head.loc,
             "qdisc handle " + format_handle(*h) + " is the handle of the qdisc at " + format_location(same->loc) +
                 ": tc fails here (the kernel: \"Cannot move an existing qdisc to a different parent\")");
    return;
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
  if (existing && !hook && (v == Verb::Change || (v == Verb::Replace && existing->handle == *h))) {
    // The kernel changes the qdisc it finds by handle at that parent in
    // place (tc_modify_qdisc): the kind stays, and only a kind with
    // ->change takes it.
    if (existing->ops != ops && v == Verb::Replace) {
      d_.error(kindw->loc, "tc qdisc replace keeping handle " + format_handle(*h) + " changes qdisc " +
                               std::string(existing->ops->name) + " (" + format_location(existing->loc) +
                               ") in place, which cannot change its kind: tc fails here (the kernel: \"Invalid qdisc "
                               "name: must match existing qdisc\"); give another handle to replace it");
      return;
    }
    if (!qdisc_ops(ops).can_change) {
      d_.error(kindw->loc,
               "tc qdisc " + std::string(v == Verb::Change ? "change" : "replace keeping handle " + format_handle(*h)) +
                   " changes the " + std::string(ops->name) + " qdisc in place, which " + std::string(ops->name) +
                   " cannot do: tc fails here (the kernel: \"Change operation not supported by "
                   "specified qdisc\"); give another handle to replace it");
      return;
    }
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
  Obj* existing = find_class(dev->text, *id);
  if (v == Verb::Delete) {
    if (!existing)
      delete_of_nothing(head, false);
    else
      existing->dead = true;
    return;
  }
  const KindOps* ops = nullptr;
  if (kindw) ops = find_kind(ObjType::Class, kindw->text);
  // A class the qdisc makes whose options are the qdisc's own (ets's
  // quantum): the line changes the owning qdisc.
  if (!ops && kindw && v != Verb::Add)
    if (Obj* owner = find_qdisc(dev->text, std::nullopt, handle_major(*id));
        owner && owner->ops->name == kindw->text && tc_words_of(*owner->ops).class_words) {
      tc_words_of(*owner->ops).class_words(c, *kindw, handle_minor(*id), owner->node);
      return;
    }
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

// ---- output ---------------------------------------------------------------------------------

// Each kind whose lists share tables writes what of the batch's numbering
// its entries must carry (table ids where tcsync's own order of making the
// lists would number them otherwise).
void Importer::write_tables() {
  for (auto& [ops, t] : tables_) {
    std::vector<TcEntry> entries;
    for (auto& o : objs_)
      if (!o.dead && o.type == ObjType::Filter && o.ops == ops)
        entries.push_back({o.dev, block_of(o.dev, o.key.parent), o.key, o.ops, o.empty_list, o.node, o.loc});
    t->write(entries);
  }
}

bool Importer::to_yaml(const std::string& source_name, std::string& yaml) {
  write_tables();
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
  // Each device's live objects of each type, in objs_ order: one pass, not
  // one per device.
  std::vector<uint32_t> slot_of(dev_ids_.size(), kNoPos);
  for (size_t i = 0; i < devices_.size(); ++i) slot_of[dev_id(devices_[i].first)] = static_cast<uint32_t>(i);
  auto type_slot = [](ObjType t) { return t == ObjType::Qdisc ? 0 : t == ObjType::Class ? 1 : 2; };
  std::vector<std::vector<Pos>> of_device(devices_.size() * 3);
  for (size_t i = 0; i < objs_.size(); ++i) {
    const Obj& o = objs_[i];
    if (o.dead || (o.type != ObjType::Qdisc && o.type != ObjType::Class && o.type != ObjType::Filter)) continue;
    uint32_t d = dev_id(o.dev);
    if (d < slot_of.size() && slot_of[d] != kNoPos)
      of_device[slot_of[d] * 3 + type_slot(o.type)].push_back(static_cast<Pos>(i));
  }
  bool any = false;
  for (size_t slot = 0; slot < devices_.size(); ++slot) {
    auto& [name, loc] = devices_[slot];
    std::string dev_line;
    YamlOut dy(dev_line);
    dy.str(name);
    bool declared = false;
    for (ObjType t : {ObjType::Qdisc, ObjType::Class, ObjType::Filter}) {
      bool first = true;
      for (Pos p : of_device[slot * 3 + type_slot(t)]) {
        const Obj& o = objs_[p];
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
  // qdisc, shared tables, duplicate identities); its errors point at the tc line.
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

}  // namespace importing

bool import_tc_text(const std::string& name, const std::string& text, const ImportOptions& o, std::string& yaml,
                    Diagnostics& d) {
  uint32_t file = SourceFiles::instance().add_text(name, text);
  size_t before = d.error_count();
  importing::Importer im(d, o);
  for (auto& c : shell::lex(file, text, d)) {
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
