// `tc filter` lines: the words before the kind, the list they name, the
// kind's words, the actions and police among them, the lists the kernel
// makes; the tables a kind's lists share are the kind's (TcTables).
#include <algorithm>

#include "base/handle.h"
#include "base/units.h"
#include "file/loader.h"
#include "import/importer.h"
#include "kinds/registry.h"
#include "model/shared_tables.h"

namespace tcsync::importing {
namespace {

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

// Whether the word at c starts an action where tc's parse_action looks for
// one: an action kind's name, or a verdict word (gact's short form).
bool starts_action(Cursor& c) {
  if (c.done()) return false;
  if (find_kind(ObjType::Action, c.peek().text)) return true;
  const KindOps* verdict_kind = tc_verdict_kind();
  if (!verdict_kind || !verdict_kind->tc_words || !verdict_kind->tc_words->bare) return false;
  size_t at = c.pos();
  Node scratch = mapping(c.peek().loc);
  bool verdict = verdict_kind->tc_words->bare(c, scratch);
  c.rewind(at);
  return verdict;
}

}  // namespace

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
  // tc's parse_action reads, after an action's words, the next word as
  // another action's kind (or a verdict, gact's) without `action` before
  // it: `pedit ... pipe csum ip`, `ctinfo ... mirred ...`.
  bool chained = false;
  while (c.is("action") || c.is("actions") || (chained && starts_action(c))) {
    chained = true;
    const TcWord& aw = c.is("action") || c.is("actions") ? c.take() : c.peek();
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
    if (!c.done() && !starts_action(c) && !(filter_kind && knows_word(*filter_kind, c.peek().text))) {
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

const Node* Importer::filter_action(const std::string& kind, const std::string& index) {
  sync();
  auto it = action_index_.find({kind, index});
  if (it == action_index_.end()) return nullptr;
  auto& slots = it->second;
  for (auto s = slots.begin(); s != slots.end();) {
    const Obj& o = objs_[s->first];
    const Node* acts = o.dead ? nullptr : o.node.find("actions");
    if (acts && s->second < acts->seq.size()) {
      const Node& e = acts->seq[s->second];
      if (const Node* i = e.find("index"); i && i->scalar == index && e.find(kind)) return &e;
    }
    s = slots.erase(s);  // dead, or rewritten since (reindex has its new entries)
  }
  return nullptr;
}

// A `tc filter` line, read in steps: the words before the kind, the list
// they name, the kind and handle; a delete acts there. Else the kind's
// words, the shared table the rule lives in, the lists the kernel makes,
// the handle it gives, and the entry goes in.
void Importer::filter(Cursor& c, Verb v, const TcWord& head) {
  FilterLine f{head};
  if (!filter_words(c, f) || !filter_key(f) || !filter_kind(f) || !filter_handle(f)) return;
  const Block block{f.dev->text, block_of(f.dev->text, f.key.parent)};
  if (v == Verb::Delete) {
    // A kind whose lists share tables names a rule by its table (u32's
    // 800::9 is the rule ::9 of the pref that owns root table 800:).
    if (TcTables* tables = f.ops ? tables_of(f.ops) : nullptr) {
      TcRule rule{*f.ops, block.first, block.second, f.head, f.handle, f.key, f.body, f.hval, f.handle_text};
      if (!tables->place(rule, d_)) return;
    }
    delete_filters(f, block);
    return;
  }
  if (!f.ops) {
    d_.error(f.dev->loc, "tc filter needs a classifier kind such as " + kind_names_where(has_shared_tables, " or "));
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
  // The kernel makes a classifier instance for each new pref; a kind whose
  // lists share tables counts them (TcWords::tables: it may name tables by them).
  TcTables* tables = tables_of(f.ops);
  TcRule rule{*f.ops, block.first, block.second, f.head, f.handle, f.key, f.body, f.hval, f.handle_text};
  if (!prefs.count(f.key.pref) && tables) tables->list_made(block.first, block.second, f.key.pref, f.key.protocol);
  prefs.insert(f.key.pref);
  if (tables && !tables->place(rule, d_)) return;
  Options opts;
  if (!check_fields(*f.ops, f.body, opts)) return;
  if (only_a_list(f, block, asked)) {
    note_device(*f.dev);
    return;
  }
  if (tables && !tables->number(rule, opts, d_)) return;
  Obj o = filter_obj(f);
  note_device(*f.dev);
  Obj* existing = f.hval ? filter_existing(o.dev, o.key) : nullptr;
  if (existing && !rule.new_only.empty()) {
    // The kernel does not look this handle up: even a replace makes a new
    // rule, and the id is the earlier line's.
    d_.error(head.loc, "filter " + f.parent_text + " pref " + std::to_string(o.key.pref) +
                           " with this handle is "
                           "already added at " +
                           format_location(existing->loc) + ", and " + rule.new_only);
    return;
  }
  if (v == Verb::Change && existing) v = Verb::Replace;  // a filter change restates the rule
  if (existing && v == Verb::Replace && tables)
    if (const Node* old_body = existing->node.find(f.ops->name); old_body && existing->ops == f.ops)
      if (Node* new_body = find(o.node, std::string(f.ops->name))) tables->restate(*old_body, *new_body);
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
  if (auto* tables = shared_tables(f.ops))
    f.hval = tables->parse_handle(f.handle_text);
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
  sync();
  const uint32_t dev = dev_id(f.dev->text);
  size_t n = 0;
  auto kill = [&](Obj& o) {
    if (!o.dead && (!f.hval || o.key.handle == *f.hval) && (!f.ops || o.ops == f.ops)) o.dead = true, ++n;
  };
  // The lists of the block's chain (of that pref and protocol when given);
  // a handle names one key in each.
  for (uint32_t parent : parents_of_block(f.dev->text, block.second)) {
    auto it = lists_.lower_bound({dev, parent, key.chain, f.have_pref ? key.pref : uint16_t{0}, uint16_t{0}});
    for (; it != lists_.end(); ++it) {
      auto& [d, p, chain, pref, proto] = it->first;
      if (d != dev || p != parent || chain != key.chain || (f.have_pref && pref != key.pref)) break;
      if (f.proto && proto != key.protocol) continue;
      if (f.hval) {
        each_with_key(dev, FilterKey{parent, chain, pref, proto, *f.hval}, kill);
        continue;
      }
      for (Pos s : it->second.all) kill(objs_[s]);
      std::erase_if(it->second.all, [&](Pos s) { return objs_[s].dead; });
    }
  }
  if (!n)
    delete_of_nothing(f.head, false);
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
      if (!id) return false;
      std::string text = id->text;
      // tc's get_tc_classid reads a word without a colon as the whole 32-bit
      // id in hex: `flowid 10` is 0:10, `flowid 10010` is 1:10.
      if (!text.empty() && text.size() <= 8 && text.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos)
        text = format_handle(static_cast<uint32_t>(std::stoul(text, nullptr, 16)));
      TcWord as_read = *id;
      as_read.text = text;
      if (!handle_word(as_read, d_, w.text)) return false;
      put(f.extra, "classid", w.loc, scalar(text, id->loc));  // tc takes the last one given
    } else if (w.text == "action" || w.text == "actions") {
      if (!actions(c, f.extra, f.ops)) return false;
    } else if (!police(c, f.extra, *f.ops)) {
      return false;
    }
  }
}

// The lists the line makes as the kernel does: with no options at all the
// kernel makes the list alone (FilterOps::empty_list) and adds nothing to a
// list that is there (true: the line is only that list); a rule placed in
// another pref's table (TcTables::place) still made its own list, ASKED. A list that now holds the
// rule is no longer an empty one.
bool Importer::only_a_list(const FilterLine& f, const Block& block, const FilterKey& asked) {
  const bool empty = f.body.map.empty() && f.extra.map.empty() && !f.hval &&
                     filter_ops(f.ops).empty_list != FilterOps::EmptyList::Refused;
  sync();
  const uint32_t dev = dev_id(f.dev->text);
  const Parents parents = parents_of_block(f.dev->text, block.second);
  // The live filters of K's list, found through each parent that names it.
  auto slots_of = [&](const FilterKey& k, uint32_t parent) -> ListSlots* {
    auto it = lists_.find({dev, parent, k.chain, k.pref, k.protocol});
    return it == lists_.end() ? nullptr : &it->second;
  };
  auto list_held = [&](const FilterKey& k) {
    sync();
    for (uint32_t parent : parents)
      if (ListSlots* l = slots_of(k, parent)) {
        while (!l->all.empty() && objs_[l->all.back()].dead) l->all.pop_back();
        if (!l->all.empty()) return true;
      }
    return false;
  };
  if (!empty && !list_held(asked)) {
    if (asked.pref != f.key.pref || asked.protocol != f.key.protocol)
      objs_.push_back(empty_list_obj(*f.dev, f.head, asked, f.parent_text, *f.ops));
  }
  if (empty) {
    if (!list_held(f.key)) objs_.push_back(empty_list_obj(*f.dev, f.head, f.key, f.parent_text, *f.ops));
    return true;
  }
  sync();
  for (uint32_t parent : parents)
    if (ListSlots* l = slots_of(f.key, parent)) {
      for (Pos s : l->empties)
        if (Obj& e = objs_[s]; e.empty_list && !e.dead) e.dead = true;  // the list now holds this rule
      l->empties.clear();  // an entry made a rule (replaced) is never an empty list again
    }
  return false;
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

// After `tc filter del ... [prio N]`: those prefs' instances are gone, and
// the kinds that number their tables are told (TcTables::lists_gone).
void Importer::forget_prefs(const Block& b, uint32_t chain, std::optional<uint16_t> pref) {
  sync();
  const uint32_t dev = dev_id(b.first);
  const Parents parents = parents_of_block(b.first, b.second);
  // Whether a live filter of the block is at PREF of CHAIN, of any protocol.
  auto in_use = [&](uint16_t p) {
    for (uint32_t parent : parents)
      for (auto it = lists_.lower_bound({dev, parent, chain, p, uint16_t{0}});
           it != lists_.end() && std::get<0>(it->first) == dev && std::get<1>(it->first) == parent &&
           std::get<2>(it->first) == chain && std::get<3>(it->first) == p;
           ++it) {
        auto& all = it->second.all;
        while (!all.empty() && objs_[all.back()].dead) all.pop_back();
        if (!all.empty()) return true;
      }
    return false;
  };
  auto& prefs = prefs_[{b, chain}];
  for (auto it = prefs.begin(); it != prefs.end();) {
    bool gone = (!pref || *it == *pref) && !in_use(*it);
    if (gone) {
      for (auto& [ops, t] : tables_) t->lists_gone(b.first, b.second, *it);
      it = prefs.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace tcsync::importing
