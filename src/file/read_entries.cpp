// One entry of a file's lists (a qdisc, class, filter, chain, `own:`
// region, action) into the model, every error at its key or value. The
// walk that hands the entries over is loader.cpp.
#include <linux/rtnetlink.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "base/handle.h"
#include "base/hex.h"
#include "base/units.h"
#include "file/loader.h"
#include "file/reader.h"
#include "kinds/registry.h"
#include "model/name_cookie.h"
#include "model/scope.h"
#include "model/shared_tables.h"
#include "model/size_table.h"
#include "netlink/wire.h"

namespace tcsync::loading {

void unknown_key(Diagnostics& d, const Node& key, std::string_view where, std::vector<std::string_view> cands) {
  std::string msg = "unknown key " + quoted(key.scalar) + " in " + std::string(where);
  if (auto dym = did_you_mean(key.scalar, cands); !dym.empty()) msg += " (did you mean " + quoted(dym) + "?)";
  d.error(key.loc, msg);
}

namespace {

bool scalar(const Node& n, std::string_view key, Diagnostics& d) {
  if (n.is_scalar()) return true;
  d.error(n.loc, quoted(key) + " must be a single value, not " + n.type_name());
  return false;
}

// `raw_options` and `raw_attrs`: kernel attribute bytes that no kind table
// reads (model.h Raw), in hex as dump writes them, sent back as they are.
// `whole`: the bytes must be whole attributes (a table's leftovers); a kind
// without a table may carry a bare struct (multiq, the fifos). The key
// names the part the bytes set.
bool parse_raw(const Node& v, std::string_view key, Raw& raw, Diagnostics& d, bool whole = true) {
  if (!scalar(v, key, d)) return false;
  auto bytes = from_hex(v.scalar);
  if (!bytes) {
    d.error(v.loc, quoted(key) + " must be hex digits, two a byte (the kernel's attribute bytes, as dump writes them)");
    return false;
  }
  // Whole attributes only: a length that does not add up would make the
  // kernel read the rest of the message as garbage.
  if (whole && !whole_attrs(*bytes)) {
    d.error(v.loc, quoted(key) + " is not a run of netlink attributes (the lengths do not add up)");
    return false;
  }
  if (key == "raw_options")
    raw.set_options(std::move(*bytes));
  else
    raw.set_attrs(std::move(*bytes));
  return true;
}

// `stab: {...}` joins a qdisc's raw attributes as the TCA_STAB the kernel
// reports (model/size_table.h), in attribute-type order, which is where the
// kernel's dump puts it among the others: so diff compares like with like.
void add_stab(const Node& n, Raw& raw, Diagnostics& d) {
  auto stab = parse_stab(n, d);
  if (!stab) return;
  Opaque attrs = raw.attrs();
  AttrIter it(attrs);
  size_t pos = 0, at = attrs.size();
  for (Attr a; it.next(a);) {
    if (a.type == TCA_STAB) {
      d.error(n.loc, "a size table is given twice: as 'stab' and in 'raw_attrs' (attribute 8); keep one");
      return;
    }
    if (a.type > TCA_STAB && at == attrs.size()) at = pos;
    pos += nl_align(a.data.size() + 4);
  }
  attrs.insert(attrs.begin() + static_cast<std::ptrdiff_t>(std::min(at, attrs.size())), stab->begin(), stab->end());
  raw.set_attrs(std::move(attrs));
}

// Fills `o` from the entries of `map` that belong to the kind; the caller has
// already taken the common keys (listed in `common` for "did you mean").
// `raw`: where `raw_options` goes, if the map may have it.
void parse_kind_fields(const KindOps& ops, const Node& map, const std::vector<std::string_view>& common, Options& o,
                       Diagnostics& d, std::string_view where, Raw* raw = nullptr) {
  // Present, even if invalid: no "needs" error then. On the stack for the
  // kinds' usual sizes: this runs once per rule.
  bool given_small[64] = {};
  std::vector<bool> given_big(ops.fields.size() > 64 ? ops.fields.size() : 0);
  auto mark = [&](size_t i) { ops.fields.size() > 64 ? (void)(given_big[i] = true) : (void)(given_small[i] = true); };
  auto was_given = [&](size_t i) { return ops.fields.size() > 64 ? bool(given_big[i]) : given_small[i]; };
  o.reserve(o.items().size() + map.map.size());
  for (auto& [k, v] : map.map) {
    if (std::find(common.begin(), common.end(), k.scalar) != common.end()) continue;
    if (raw && k.scalar == "raw_options") {
      parse_raw(v, "raw_options", *raw, d);
      continue;
    }
    int idx = ops.field_index(k.scalar);
    if (idx < 0 || (ops.fields[idx].flags & kReadOnly)) {
      auto cands = ops.keys();
      cands.insert(cands.end(), common.begin(), common.end());
      unknown_key(d, k, where, cands);
      continue;
    }
    Value val;
    mark(static_cast<size_t>(idx));
    if (parse_field(ops.fields[idx], v, val, d)) o.set(static_cast<uint16_t>(idx), std::move(val), v.loc);
  }
  for (size_t i = 0; i < ops.fields.size(); ++i)
    if ((ops.fields[i].flags & kRequired) && !was_given(i))
      d.error(map.loc, std::string(where) + " needs " + quoted(ops.fields[i].key));
}

// A kind tcsync has no table for, as dump writes it (model.h Raw): its
// options are raw_options only. Said by the entry (`map`) having them.
bool tableless(const Node* kind, const Node& map) {
  return kind && kind->is_scalar() && !kind->scalar.empty() && map.is_map() && map.find("raw_options");
}
void parse_tableless(const Node& map, const std::vector<std::string_view>& common, Raw& raw, Diagnostics& d,
                     std::string_view where) {
  for (auto& [k, v] : map.map) {
    if (k.scalar == "raw_options")
      parse_raw(v, "raw_options", raw, d, false);
    else if (std::find(common.begin(), common.end(), k.scalar) == common.end())
      d.error(k.loc, "unknown key " + quoted(k.scalar) + " in " + std::string(where) +
                         ": tcsync has no table for this kind; raw_options (as dump writes it) holds its options");
  }
}

const KindOps* kind_of(ObjType t, const Node& n, Diagnostics& d) {
  if (!scalar(n, "kind", d)) return nullptr;
  if (auto* k = find_kind(t, n.scalar)) return k;
  auto names = kind_names(t);
  std::string list;
  for (auto nm : names) list += (list.empty() ? "" : ", ") + std::string(nm);
  std::string msg =
      "unknown " + std::string(obj_type_name(t)) + " kind " + quoted(n.scalar) + " (tcsync knows " + list + ")";
  if (auto dym = did_you_mean(n.scalar, names); !dym.empty()) msg += "; did you mean " + quoted(dym) + "?";
  d.error(n.loc, msg);
  return nullptr;
}

std::optional<uint32_t> handle_value(const Node& n, std::string_view key, Diagnostics& d) {
  if (!scalar(n, key, d)) return std::nullopt;
  auto h = parse_handle(n.scalar);
  if (!h) d.error(n.loc, quoted(key) + " must be a tc handle such as \"1:\" or \"1:10\", not " + quoted(n.scalar));
  return h;
}

std::optional<uint64_t> uint_value(const Node& n, std::string_view key, uint64_t max, Diagnostics& d) {
  if (!scalar(n, key, d)) return std::nullopt;
  bool too_large = false;
  auto v = parse_uint(n.scalar, &too_large);
  if (!v && !too_large)
    d.error(n.loc, quoted(key) + " must be a number, not " + quoted(n.scalar));
  else if (!v || *v > max) {
    d.error(n.loc, quoted(key) + " is " + n.scalar + ", more than its maximum " + std::to_string(max));
    return std::nullopt;
  }
  return v;
}

}  // namespace

void Loader::qdisc(const Node& n, Device& dev) {
  static const std::vector<std::string_view> common = {"kind", "parent", "handle", "stab", "raw_attrs"};
  Qdisc q;
  q.loc = n.loc;
  const Node* kind = n.find("kind");
  if (!kind) {
    std::string list;
    for (auto nm : kind_names(ObjType::Qdisc)) list += (list.empty() ? "" : ", ") + std::string(nm);
    d.error(n.loc, "qdisc needs 'kind' (one of: " + list + ")");
    return;
  }
  bool no_table = !find_kind(ObjType::Qdisc, kind->scalar) && tableless(kind, n);
  if (no_table) {
    q.kind = kind->scalar;
  } else {
    q.ops = kind_of(ObjType::Qdisc, *kind, d);
    if (!q.ops) return;
    q.kind = std::string(q.ops->name);
  }
  bool hook = qdisc_ops(q.ops).hooks != QdiscOps::Hooks::None;
  q.parent = hook ? kHandleIngress : kHandleRoot;
  q.handle = hook ? kHandleIngressQdisc : 0;
  if (auto* p = n.find("parent")) {
    if (hook) {
      if (!p->is_scalar() || p->scalar != "ingress")
        d.error(p->loc, q.kind + " always sits at parent 'ingress'; leave 'parent' out");
    } else if (scalar(*p, "parent", d)) {
      if (p->scalar == "ingress" || p->scalar == "egress")
        d.error(p->loc, "only clsact and ingress qdiscs sit at 'ingress'");
      else if (auto h = handle_value(*p, "parent", d))
        q.parent = *h;
    }
  }
  if (auto* h = n.find("handle")) {
    if (auto v = handle_value(*h, "handle", d)) {
      if (hook && *v != kHandleIngressQdisc)
        d.error(h->loc, q.kind + "'s handle is always ffff:");
      else if (handle_minor(*v))
        d.error(h->loc, "a qdisc handle has no minor number: write \"" + format_handle(handle_major(*v)) + "\"");
      else
        q.handle = *v;
    }
  } else if (!hook) {
    // tcsync never lets the kernel pick a handle: an auto handle (8001:)
    // would differ on every host and after every re-creation.
    d.error(n.loc, "qdisc " + q.kind + " needs a 'handle', such as \"1:\"");
    return;
  }
  if (no_table)
    parse_tableless(n, common, q.raw, d, q.kind + " qdisc");
  else
    parse_kind_fields(*q.ops, n, common, q.opts, d, q.kind + " qdisc", &q.raw);
  if (auto* r = n.find("raw_attrs")) parse_raw(*r, "raw_attrs", q.raw, d);
  if (auto* st = n.find("stab")) add_stab(*st, q.raw, d);
  if (q.ops) normalize_options(*q.ops, q.opts, KindCtx{q.handle, 0, nullptr, &d, q.loc}, d, q.loc);
  dev.qdiscs.push_back(std::move(q));
}

void Loader::klass(const Node& n, Device& dev) {
  static const std::vector<std::string_view> common = {"kind", "parent", "classid", "raw_attrs"};
  Class c;
  c.loc = n.loc;
  const Node* cid = n.find("classid");
  if (!cid) {
    d.error(n.loc, "class needs 'classid', such as \"1:10\"");
    return;
  }
  auto id = handle_value(*cid, "classid", d);
  if (!id) return;
  if (!handle_major(*id) || !handle_minor(*id) || *id == kHandleRoot) {
    d.error(cid->loc, "classid needs a major and a minor number, such as \"1:10\"");
    return;
  }
  c.classid = *id;
  c.parent = handle_major(*id);  // default: directly under the qdisc
  if (auto* p = n.find("parent"))
    if (auto h = handle_value(*p, "parent", d)) c.parent = *h;
  const Node* k = n.find("kind");
  bool no_table = k && !find_kind(ObjType::Class, k->scalar) && tableless(k, n);
  if (no_table) {
    c.kind = k->scalar;
    parse_tableless(n, common, c.raw, d, c.kind + " class");
    if (auto* r = n.find("raw_attrs")) parse_raw(*r, "raw_attrs", c.raw, d);
    dev.classes.push_back(std::move(c));
    return;
  }
  if (k) {
    c.ops = kind_of(ObjType::Class, *k, d);
  } else {
    // Default: the kind of the qdisc that owns this class.
    for (auto& q : dev.qdiscs)
      if (q.handle == handle_major(c.classid)) c.ops = find_kind(ObjType::Class, q.kind);
    if (!c.ops) {
      d.error(n.loc, "class " + format_handle(c.classid) + " needs 'kind' (no qdisc " +
                         format_handle(handle_major(c.classid)) + " with classes is declared above it)");
      return;
    }
  }
  if (!c.ops) return;
  c.kind = std::string(c.ops->name);
  parse_kind_fields(*c.ops, n, common, c.opts, d, c.kind + " class", &c.raw);
  if (auto* r = n.find("raw_attrs")) parse_raw(*r, "raw_attrs", c.raw, d);
  normalize_options(*c.ops, c.opts, KindCtx{c.classid, 0, nullptr, &d, c.loc}, d, c.loc);
  dev.classes.push_back(std::move(c));
}

// `ref: KIND/INDEX`: the filter binds action INDEX of the table.
bool Loader::reference(const Node& n, Action& a) {
  for (auto& [k, v] : n.map)
    if (k.scalar != "ref") {
      d.error(k.loc, quoted(k.scalar) + " does not go with 'ref': the table's entry declares the action");
      return false;
    }
  const Node& v = *n.find("ref");
  if (!scalar(v, "ref", d)) return false;
  auto slash = v.scalar.find('/');
  std::string kind = v.scalar.substr(0, slash == std::string::npos ? v.scalar.size() : slash);
  uint64_t index = slash == std::string::npos ? 0 : parse_uint(v.scalar.substr(slash + 1)).value_or(0);
  a.ops = find_kind(ObjType::Action, kind);
  if (!a.ops || index == 0 || index > 0xFFFFFFFF) {
    d.error(v.loc, "'ref' must name an action of the table as KIND/INDEX, such as mirred/7, not " + quoted(v.scalar));
    return false;
  }
  a.kind = std::string(a.ops->name);
  a.index = static_cast<uint32_t>(index);
  a.ref = true;
  return true;
}

// An action entry, up to its kind's normalize hook (action() runs it).
bool Loader::action_fields(const Node& n, Action& a) {
  a.loc = n.loc;
  if (!n.is_map()) {
    d.error(n.loc, "an action must be a mapping such as {mirred: {action: redirect, dev: eth1}}");
    return false;
  }
  if (n.find("ref")) return reference(n, a);
  const Node* body = nullptr;
  const Node* cookie = nullptr;
  for (auto& [k, v] : n.map) {
    std::string_view key = k.scalar;
    if (key == "index") {
      if (auto i = uint_value(v, "index", 0xFFFFFFFF, d)) {
        if (*i == 0)
          d.error(v.loc, "action index 0 means 'any': leave 'index' out instead");
        else
          a.index = static_cast<uint32_t>(*i);
      }
    } else if (key == "cookie") {
      if (!scalar(v, "cookie", d)) continue;
      std::string s = v.scalar;
      if (s.size() % 2 || s.size() > 32 || s.empty() ||
          s.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
        d.error(v.loc, "cookie must be 1 to 16 bytes in hex, such as \"0a1b2c\"");
        continue;
      }
      for (size_t i = 0; i < s.size(); i += 2)
        a.cookie.push_back(static_cast<uint8_t>(std::stoul(s.substr(i, 2), nullptr, 16)));
      cookie = &v;
    } else if (key == "raw_attrs") {
      parse_raw(v, key, a.raw, d);
    } else if (k.scalar == "percpu_stats") {
      if (!scalar(v, "percpu_stats", d)) continue;
      if (v.scalar == "true")
        a.percpu_stats = true;
      else if (v.scalar == "false")
        a.percpu_stats = false;
      else
        d.error(v.loc, "\"percpu_stats\" must be true or false, not " + quoted(v.scalar));
    } else if (auto* ops = find_kind(ObjType::Action, k.scalar); ops || tableless(&k, v)) {
      if (body) {
        d.error(k.loc, "one action per list entry: " + quoted(a.kind) + " and " + quoted(k.scalar) + " given");
        continue;
      }
      a.ops = ops;
      a.kind = k.scalar;
      body = &v;
    } else {
      auto cands = kind_names(ObjType::Action);
      cands.push_back("index");
      cands.push_back("cookie");
      cands.push_back("percpu_stats");
      cands.push_back("ref");
      cands.push_back("raw_attrs");
      unknown_key(d, k, "an action (expected an action kind such as mirred)", cands);
    }
  }
  // On an action of one rule, the kernel's copy would read back as the
  // rule's name (name_cookie.h); a shared one never holds a name.
  if (cookie && !a.index && is_name_cookie(a.cookie))
    d.error(cookie->loc,
            "a cookie starting 74636e01 or 74636e02 (\"tcn\" and 1 or 2) is how tcsync keeps a rule's "
            "name in the kernel: give the rule a 'name' instead, or another cookie");
  if (!body) {
    if (!d.has_errors()) d.error(n.loc, "action entry names no action kind (such as mirred)");
    return false;
  }
  if (!body->is_map()) {
    d.error(body->loc, a.kind + " options must be a mapping");
    return false;
  }
  if (!a.ops)
    parse_tableless(*body, {}, a.raw, d, a.kind + " action");
  else
    parse_kind_fields(*a.ops, *body, {}, a.opts, d, a.kind + " action", &a.raw);
  return true;
}

void Loader::action_normalize(Action& a) {
  if (!a.ref && a.ops) normalize_options(*a.ops, a.opts, KindCtx{0, 0, nullptr, &d, a.loc}, d, a.loc);
}

bool Loader::action(const Node& n, Action& a) {
  if (!action_fields(n, a)) return false;
  action_normalize(a);
  return true;
}

void Loader::filter(const Node& n, Device& dev) {
  Filter f;
  const Node* handle = nullptr;
  if (filter_fields(n, dev, f, handle)) filter_finish(std::move(f), handle, dev);
}

// An entry up to its kind's normalize hook: false when it is no filter at
// all (no kind, options not a mapping), after saying why.
bool Loader::filter_fields(const Node& n, Device& dev, Filter& f, const Node*& handle) {
  f.loc = n.loc;
  f.key.pref = 0;
  f.key.protocol = 0x0003;  // ETH_P_ALL, tc's default
  const Node* body = nullptr;
  bool have_parent = false, have_pref = false;
  static const std::vector<std::string_view> common = {"parent",    "chain",   "pref",      "protocol", "handle",
                                                       "name",      "classid", "flowid",    "police",   "actions",
                                                       "raw_attrs", "empty",   "root_table"};
  const Node* extra = nullptr;  // a key an empty list cannot have
  const Node* root_table = nullptr;
  const Node* handle_key = nullptr;
  const Node* police = nullptr;
  for (auto& [k, v] : n.map) {
    // A view: comparing it with a literal checks the length first, with no strlen.
    std::string_view key = k.scalar;
    if (key == "parent") {
      if (dev.block) {
        d.error(k.loc, "a filter of " + dev.name + " has no 'parent': the block is its place (leave 'parent' out)");
        continue;
      }
      if (!scalar(v, "parent", d)) continue;
      have_parent = true;
      if (v.scalar == "ingress")
        f.key.parent = kHandleClsactIngress;
      else if (v.scalar == "egress")
        f.key.parent = kHandleClsactEgress;
      else if (auto h = handle_value(v, "parent", d))
        f.key.parent = *h;
    } else if (key == "chain") {
      // The kernel's limit for chain indexes (TC_ACT_EXT_VAL_MASK: a goto
      // chain carries the index in the low 28 bits of a verdict).
      if (auto c = uint_value(v, "chain", 0x0FFFFFFF, d)) f.key.chain = static_cast<uint32_t>(*c);
    } else if (key == "pref" || key == "prio") {
      if (auto p = uint_value(v, key, 0xFFFF, d)) {
        if (*p == 0) d.error(v.loc, "pref 0 means 'let the kernel choose'; tcsync needs a fixed pref (1 to 65535)");
        f.key.pref = static_cast<uint16_t>(*p);
        have_pref = true;
      }
    } else if (key == "protocol") {
      if (!scalar(v, "protocol", d)) continue;
      if (auto p = parse_protocol(v.scalar))
        f.key.protocol = *p;
      else
        d.error(v.loc, "unknown protocol " + quoted(v.scalar) +
                           " (use ip, ipv6, all, arp, 802.1q, 802.1ad or a hex number like 0x88cc)");
    } else if (key == "handle") {
      handle = &v;
      handle_key = &k;
    } else if (key == "empty") {
      // An empty list of a kind (model.h Filter::empty_list): any kind the
      // kernel may hold, known here or not.
      if (!scalar(v, "empty", d)) continue;
      if (v.scalar.empty() ||
          v.scalar.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos) {
        d.error(v.loc, "'empty' names a classifier kind (" + kind_names_where(makes_empty_lists, ", ") + "...), not " +
                           quoted(v.scalar));
        continue;
      }
      if (body) {
        d.error(k.loc, "a filter has one kind: " + quoted(f.kind) + " and " + quoted(v.scalar) + " given");
        continue;
      }
      f.ops = find_kind(ObjType::Filter, v.scalar);
      f.kind = v.scalar;
      f.empty_list = true;
      body = &v;
    } else if (key == "root_table") {
      // The root of a list that holds only hash tables (model.h
      // Filter::list_root), said on a table entry; read in the kind's
      // notation once the kind is known (below), checked for being on a
      // table once the handle is (filter_finish).
      extra = &k;
      if (scalar(v, "root_table", d)) root_table = &v;
    } else if (key == "name") {
      extra = &k;  // a label of rules; the kernel keeps none for a list
      if (scalar(v, "name", d)) f.name = v.scalar;
    } else if (key == "classid" || key == "flowid") {
      extra = &k;
      if (f.classid)
        d.error(k.loc, "give 'classid' or 'flowid', not both");
      else if (auto h = handle_value(v, key, d))
        f.classid = *h;
    } else if (key == "police") {
      // The filter's own police (FilterOps::old_police_attr): the police
      // action's fields, read by its table.
      extra = police = &k;
      if (v.is_map()) {
        auto& p = f.police.emplace(FilterPolice{{}, v.loc});
        parse_kind_fields(kActionPolice, v, {}, p.opts, d, "a filter's police");
      } else
        d.error(v.loc,
                "'police' must be a mapping of the police action's fields, such as {rate: 1mbit, burst: 10k, exceed: "
                "drop}");
    } else if (key == "actions") {
      extra = &k;
      if (!v.is_seq()) {
        d.error(v.loc, "'actions' must be a list");
        continue;
      }
      if (v.seq.size() > 32) d.error(v.loc, "at most 32 actions per filter (TCA_ACT_MAX_PRIO)");
      for (auto& an : v.seq) {
        Action a;
        if (action(an, a)) f.actions.push_back(std::move(a));
      }
    } else if (key == "raw_attrs") {
      extra = &k;  // sent, but an empty list reports none back: diff would never settle
      parse_raw(v, key, f.raw, d);
    } else if (auto* ops = find_kind(ObjType::Filter, key); ops || tableless(&k, v)) {
      if (body && f.empty_list) {
        d.error(k.loc, "a filter has one kind: " + quoted(f.kind) + " and " + quoted(key) + " given");
        continue;
      }
      if (body) {
        d.error(k.loc, "a filter has one kind: " + quoted(f.kind) + " and " + quoted(key) + " given");
        continue;
      }
      f.ops = ops;
      f.kind = key;
      body = &v;
    } else {
      auto cands = kind_names(ObjType::Filter);
      cands.insert(cands.end(), common.begin(), common.end());
      unknown_key(d, k, "a filter", cands);
    }
  }
  if (root_table && shared_tables(f.ops)) {
    auto h = parse_filter_handle(f.ops, root_table->scalar);
    if (h && names_root_table(f.ops, *h))
      f.list_root = *h;
    else
      d.error(root_table->loc, "'root_table' names the kernel's root table of the entry's list (800: to fff:), not " +
                                   quoted(root_table->scalar));
  } else if (root_table && body && !f.empty_list) {
    // A kind without kernel-numbered roots has no notation for one: said
    // as for a u32 entry that is no table (filter_finish).
    root_table_misplaced(f.loc);
  }
  if (dev.block)
    f.key.parent = dev.block;  // tcm_parent carries the block index
  else if (!have_parent)
    d.error(n.loc, "filter needs 'parent' (a qdisc or class handle such as \"1:\", or ingress/egress)");
  if (!body) {
    auto names = kind_names(ObjType::Filter);
    std::string list;
    for (auto nm : names) list += (list.empty() ? "" : ", ") + std::string(nm);
    d.error(n.loc, "filter needs a classifier key, one of: " + list);
    return false;
  }
  if (!have_pref) f.key.pref = kDefaultPref;
  if (f.empty_list) {
    // An empty u32 list's handle names its root table, as the kernel
    // numbered it (801:): model/shared_tables.h. No other has a handle.
    if (handle && shared_tables(f.ops)) {
      auto h = scalar(*handle, "handle", d) ? parse_filter_handle(f.ops, handle->scalar) : std::nullopt;
      if (h && names_root_table(f.ops, *h))
        f.wire_handle = *h;
      else
        d.error(handle->loc, "an empty " + f.kind + " list's handle names its root table (800: to fff:), not " +
                                 quoted(handle->scalar));
    } else if (handle) {
      extra = handle_key;
    }
    handle = nullptr;
    if (extra)
      d.error(extra->loc, "an empty " + f.kind + " list has no " + quoted(extra->scalar) + ": it holds no rule");
    // A kind with no table may be one the kernel makes empty: it is the authority.
    // (An unknown kind was reported where it was read.)
    auto empty = f.ops ? filter_ops(f.ops).empty_list : FilterOps::EmptyList::Allowed;
    if (empty == FilterOps::EmptyList::Refused)
      d.error(body->loc, "the kernel makes no empty " + f.kind + " list (it needs the rule's options): only " +
                             kind_names_where(makes_empty_lists, " and ") + " lists can be empty");
    else if (empty == FilterOps::EmptyList::NotOnBlock && dev.block)
      d.error(body->loc, "the kernel makes no empty " + f.kind + " list on a shared block (it needs a mark there)");
    return true;
  }
  if (police) {
    if (!filter_ops(f.ops).old_police_attr)
      d.error(police->loc, "a " + f.kind +
                               " filter has no police of its own (tc's 'police' among its words): use a police action, "
                               "'actions: [{police: {...}}]'");
    else if (!f.actions.empty())
      d.error(police->loc,
              "give a filter 'police' or 'actions', not both: the kernel keeps the filter's own police and drops its "
              "actions");
    if (f.police)
      normalize_options(kActionPolice, f.police->opts, KindCtx{0, 0, nullptr, &d, f.police->loc}, d, f.police->loc);
  }
  if (body->is_scalar() && body->plain && (body->scalar.empty() || body->scalar == "~" || body->scalar == "null")) {
    // `matchall:` with no options
  } else if (!body->is_map()) {
    d.error(body->loc, f.kind + " options must be a mapping");
    return false;
  } else if (!f.ops) {
    parse_tableless(*body, {}, f.raw, d, f.kind + " filter");
  } else {
    parse_kind_fields(*f.ops, *body, {}, f.opts, d, f.kind + " filter", &f.raw);
  }
  return true;
}

void Loader::root_table_misplaced(SourceLoc at) {
  d.error(at, "'root_table' is given on a " + kind_names_where(has_shared_tables, " or ") +
                  " hash table entry (handle \"2:\" with divisor), for the list it is in; a rule "
                  "of the root table "
                  "says it in its handle (\"801::5\"), an empty list as its handle (\"801:\")");
}

// The handle (its syntax is the kind's), the kind's normalize hook, and the
// filter joins the device.
void Loader::filter_finish(Filter&& f, const Node* handle, Device& dev) {
  if (handle) {
    if (scalar(*handle, "handle", d)) {
      auto h = parse_filter_handle(f.ops, handle->scalar);
      if (!h)
        d.error(handle->loc, "invalid " + f.kind + " handle " + quoted(handle->scalar));
      else
        f.key.handle = *h;
    }
    // A rule in a list's root table may name the table as the kernel
    // numbered it (801::5): the list's root, declared (model/shared_tables.h);
    // the rule itself is ::5, as when the file leaves the table out.
    if (auto* tables = shared_tables(f.ops); tables && !f.empty_list) {
      FilterKey k = f.key;
      if (tables->canonical_key(k, f.opts) && k.handle != f.key.handle) {
        f.wire_handle = f.key.handle;
        f.key.handle = k.handle;
      }
    }
  }
  // Only a hash table carries its list's root: a rule shows it in its own
  // handle (801::5), an empty list as its handle (801:).
  if (f.list_root && !f.empty_list && !(handle && is_table_entry(f))) root_table_misplaced(f.loc);
  if (f.ops && !f.empty_list)
    normalize_options(*f.ops, f.opts, KindCtx{f.key.handle, 0, nullptr, &d, f.loc, &f}, d, f.loc);
  // handle 0 with a given `handle:` key is rejected later with the others.
  f.key.handle = handle ? f.key.handle : 0;
  dev.filters.push_back(std::move(f));
}

// One region of `own:` (model/scope.h):
//   {qdisc: "1:"}                                  a qdisc and all below it
//   {parent: ingress, chain: 0, prefs: 100-199}    filters at one place
// A block's regions are {chain, prefs} (its filters have no parent). (list()
// has said so of an entry that is not a mapping.)
void Loader::own_region(const Node& n, Device& dev) {
  OwnRegion r;
  r.loc = n.loc;
  const Node* tree_key = nullptr;
  const Node* filter_key = nullptr;  // the first of parent, chain, prefs
  bool have_parent = false, ok = true;
  for (auto& [k, v] : n.map) {
    std::string_view key = k.scalar;
    if (key == "qdisc") {
      tree_key = &k;
      if (dev.block) {
        d.error(k.loc, dev.name + " holds filters only: its 'own' entries are {chain, prefs}");
        ok = false;
      } else if (auto h = handle_value(v, "qdisc", d)) {
        if (handle_minor(*h) || *h == 0 || *h == kHandleRoot)
          d.error(v.loc, "'qdisc' is a qdisc's handle such as \"1:\" (or \"ffff:\" for clsact/ingress), not " +
                             quoted(v.scalar)),
              ok = false;
        else
          r.tree = true, r.major = *h;
      } else {
        ok = false;
      }
    } else if (key == "parent") {
      if (!filter_key) filter_key = &k;
      if (dev.block) {
        d.error(k.loc, "a region of " + dev.name + " has no 'parent': the block is its place (leave 'parent' out)");
        ok = false;
        continue;
      }
      if (!scalar(v, "parent", d)) {
        ok = false;
        continue;
      }
      have_parent = true;
      if (v.scalar == "ingress")
        r.parent = kHandleClsactIngress;
      else if (v.scalar == "egress")
        r.parent = kHandleClsactEgress;
      else if (auto h = handle_value(v, "parent", d))
        r.parent = *h == kHandleIngressQdisc ? kHandleClsactIngress : *h;
      else
        ok = false;
    } else if (key == "chain") {
      if (!filter_key) filter_key = &k;
      if (auto c = uint_value(v, "chain", 0x0FFFFFFF, d))
        r.chain = static_cast<uint32_t>(*c);
      else
        ok = false;
    } else if (key == "prefs") {
      if (!filter_key) filter_key = &k;
      if (!scalar(v, "prefs", d)) {
        ok = false;
        continue;
      }
      // "100-199", or one pref: "100"
      auto dash = v.scalar.find('-');
      auto lo = parse_uint(v.scalar.substr(0, dash));
      auto hi = dash == std::string::npos ? lo : parse_uint(v.scalar.substr(dash + 1));
      if (!lo || !hi || *lo < 1 || *hi > 0xFFFF || *lo > *hi) {
        d.error(v.loc, "'prefs' is a range of prefs such as 100-199 (1 to 65535, low to high), or one pref, not " +
                           quoted(v.scalar));
        ok = false;
        continue;
      }
      r.pref_lo = static_cast<uint16_t>(*lo);
      r.pref_hi = static_cast<uint16_t>(*hi);
    } else {
      unknown_key(d, k, "an 'own' entry", {"qdisc", "parent", "chain", "prefs"});
      ok = false;
    }
  }
  if (tree_key && filter_key) {
    d.error(filter_key->loc,
            "an 'own' entry is a qdisc tree ({qdisc: \"1:\"}) or a place for filters ({parent, chain, prefs}), not "
            "both: give two entries");
    return;
  }
  if (!dev.block && !tree_key && !have_parent) {
    if (ok)
      d.error(n.loc,
              "an 'own' entry needs 'qdisc' (a qdisc and all below it) or 'parent' (filters at ingress, egress or a "
              "handle)");
    return;
  }
  if (ok) dev.own.push_back(r);
}

// A chain created explicitly (tc chain add), with an optional template:
//   {parent: ingress, chain: 5, protocol: ip, template: {flower: {dst_ip: 0.0.0.0/16}}}
void Loader::chain(const Node& n, Device& dev) {
  Chain c;
  c.loc = n.loc;
  bool have_parent = false, have_index = false, have_protocol = false, have_template = false;
  for (auto& [k, v] : n.map) {
    std::string_view key = k.scalar;
    if (key == "parent") {
      if (dev.block) {
        d.error(k.loc, "a chain of " + dev.name + " has no 'parent': the block is its place (leave 'parent' out)");
        continue;
      }
      if (!scalar(v, "parent", d)) continue;
      have_parent = true;
      if (v.scalar == "ingress")
        c.parent = kHandleClsactIngress;
      else if (v.scalar == "egress")
        c.parent = kHandleClsactEgress;
      else if (auto h = handle_value(v, "parent", d))
        c.parent = *h == kHandleIngressQdisc ? kHandleClsactIngress : *h;  // "ffff:" is ingress
    } else if (key == "chain") {
      if (auto x = uint_value(v, "chain", 0x0FFFFFFF, d)) c.index = static_cast<uint32_t>(*x), have_index = true;
    } else if (key == "protocol") {
      if (!scalar(v, "protocol", d)) continue;
      have_protocol = true;
      if (auto p = parse_protocol(v.scalar))
        c.protocol = *p;
      else
        d.error(v.loc, "unknown protocol " + quoted(v.scalar) +
                           " (use ip, ipv6, all, arp, 802.1q, 802.1ad or a hex number like 0x88cc)");
    } else if (key == "raw_attrs") {
      parse_raw(v, key, c.raw, d);
    } else if (key == "template") {
      have_template = true;
      if (!v.is_map() || v.map.size() != 1) {
        d.error(v.loc,
                "'template' must be a mapping with one classifier kind, such as {flower: {dst_mac: "
                "00:00:00:00:00:00/ff:ff:ff:ff:ff:ff}}");
        continue;
      }
      auto& [tk, tv] = v.map.front();
      // Only classifiers with template operations (FilterOps::
      // template_protocol_attr: cls_flower) take one; the others get "Chain
      // templates are not supported with specified classifier".
      c.ops = find_kind(ObjType::Filter, tk.scalar);
      if (!c.ops || !filter_ops(c.ops).template_protocol_attr) {
        std::string with;
        for (const KindOps* k : all_kinds())
          if (k->obj == ObjType::Filter && filter_ops(k).template_protocol_attr)
            with += (with.empty() ? "" : ", ") + std::string(k->name);
        d.error(tk.loc,
                "chain templates exist for " + with + " only (the kernel has no " + quoted(tk.scalar) + " templates)");
        c.ops = nullptr;
        continue;
      }
      c.kind = std::string(c.ops->name);
      if (tv.is_scalar() && tv.plain && (tv.scalar.empty() || tv.scalar == "~" || tv.scalar == "null")) continue;
      if (!tv.is_map()) {
        d.error(tv.loc, c.kind + " template must be a mapping of keys");
        continue;
      }
      parse_kind_fields(*c.ops, tv, {}, c.opts, d, c.kind + " template", &c.raw);
    } else {
      unknown_key(d, k, "a chain", {"parent", "chain", "protocol", "template", "raw_attrs"});
    }
  }
  if (dev.block)
    c.parent = dev.block;
  else if (!have_parent)
    d.error(n.loc, "chain needs 'parent' (ingress/egress, or a qdisc or class handle such as \"1:\")");
  if (!have_index) d.error(n.loc, "chain needs 'chain' (its index, such as 5)");
  if (have_protocol && !have_template)
    d.error(n.loc, "a chain's 'protocol' belongs to its template: give a 'template' or leave it out");
  if (c.ops) {
    // The template's keys are checked as a filter's, with the chain's protocol.
    Filter shape;
    shape.key.protocol = c.protocol;
    shape.key.chain = c.index;
    shape.kind = c.kind;
    shape.ops = c.ops;
    normalize_options(*c.ops, c.opts, KindCtx{0, 0, nullptr, &d, c.loc, &shape}, d, c.loc);
  }
  dev.chains.push_back(std::move(c));
}

}  // namespace tcsync::loading
