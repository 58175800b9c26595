#include "file/yaml_writer.h"

#include <linux/rtnetlink.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <set>
#include <sstream>

#include "base/handle.h"
#include "base/hex.h"
#include "base/json_text.h"
#include "kinds/registry.h"
#include "model/shared_tables.h"
#include "model/size_table.h"
#include "netlink/wire.h"

namespace tcsync {

void write_options(const KindOps& ops, const Options& o, YamlOut& y) {
  for (auto& opt : o.items()) {
    const Field& f = ops.fields[opt.field];
    y.key(f.key);
    emit_field(f, opt.value, y);
  }
}

}  // namespace tcsync

namespace tcsync {

// Fields equal to their default are left out: a dump reads like a file a
// person wrote, and applies back to the same state.
static void write_fields(const KindOps& ops, const Options& o, YamlOut& y) {
  for (auto& opt : o.items()) {
    const Field& f = ops.fields[opt.field];
    if (f.flags & kInputOnly) continue;  // never reported by a kernel; never printed
    if (f.def && std::holds_alternative<uint64_t>(opt.value) && std::get<uint64_t>(opt.value) == *f.def) continue;
    y.key(f.key);
    emit_field(f, opt.value, y);
  }
}

// What no kind table reads (model.h Raw), as the kernel's bytes in hex:
// apply sends them back as they are.
// A kind without a table (no `ops`) always has the key, empty or not: it
// is how the loader knows the kind's options are raw.
static void write_raw_options(const Raw& raw, YamlOut& y, const KindOps* ops) {
  if (raw.options().empty() && ops) return;
  y.key("raw_options");
  y.str(to_hex(raw.options()));
}
static void write_raw_attrs(const Raw& raw, YamlOut& y) {
  if (raw.attrs().empty()) return;
  y.key("raw_attrs");
  y.str(to_hex(raw.attrs()));
}

// A qdisc's raw attributes, its size table (TCA_STAB) spelled as `stab`
// when it is a spec model/size_table.h reads; the rest as hex.
static void write_qdisc_attrs(const Raw& raw, YamlOut& y) {
  if (raw.attrs().empty()) return;
  Opaque rest;
  AttrIter it(raw.attrs());
  size_t pos = 0;
  for (Attr a; it.next(a);) {
    size_t whole = std::min(nl_align(a.data.size() + 4), raw.attrs().size() - pos);
    if (!(a.type == TCA_STAB && emit_stab(a.data, y)))
      rest.insert(rest.end(), raw.attrs().begin() + pos, raw.attrs().begin() + pos + whole);
    pos += whole;
  }
  if (rest.empty()) return;
  y.key("raw_attrs");
  y.str(to_hex(rest));
}

void write_qdisc(const Qdisc& q, YamlOut& y) {
  y.map_begin();
  y.key("kind");
  y.str(q.kind);
  if (q.parent != kHandleIngress) {
    y.key("parent");
    y.str(format_handle(q.parent));
    y.key("handle");
    y.str(format_handle(q.handle));
  }
  if (q.ops) write_fields(*q.ops, q.opts, y);
  write_raw_options(q.raw, y, q.ops);
  write_qdisc_attrs(q.raw, y);
  y.map_end();
}

void write_class(const Class& c, YamlOut& y) {
  y.map_begin();
  y.key("classid");
  y.str(format_handle(c.classid));
  if (c.parent != handle_major(c.classid)) {
    y.key("parent");
    y.str(format_handle(c.parent));
  }
  y.key("kind");
  y.str(c.kind);
  if (c.ops) write_fields(*c.ops, c.opts, y);
  write_raw_options(c.raw, y, c.ops);
  write_raw_attrs(c.raw, y);
  y.map_end();
}

static void write_action(const Action& a, YamlOut& y) {
  y.map_begin();
  if (a.ref) {
    y.key("ref");
    y.str(a.kind + "/" + std::to_string(a.index.value_or(0)));
    y.map_end();
    return;
  }
  y.key(a.kind);
  y.map_begin();
  if (a.ops) write_fields(*a.ops, a.opts, y);
  write_raw_options(a.raw, y, a.ops);
  y.map_end();
  if (a.index) {
    y.key("index");
    y.num(*a.index);
  }
  if (!a.cookie.empty()) {
    y.key("cookie");
    y.str(to_hex(a.cookie));
  }
  write_raw_attrs(a.raw, y);
  // Only the kernel's default (tc-made actions) is worth saying: off is
  // tcsync's default.
  if (a.percpu_stats.value_or(false)) {
    y.key("percpu_stats");
    y.boolean(true);
  }
  y.map_end();
}

// show_root: the handle names the kernel's root table the entry shows
// (801::5; an empty list's 801:), for lists whose roots tcsync's creation
// order would not give back (model/shared_tables.h).
static void write_filter(const Filter& f, YamlOut& y, bool on_block, bool show_root) {
  y.map_begin();
  if (!f.name.empty()) {
    y.key("name");
    y.str(f.name);
  }
  if (!on_block) {  // a block's filters have no parent
    y.key("parent");
    y.str(describe_filter_parent(f.key.parent));
  }
  if (f.key.chain) {
    y.key("chain");
    y.num(f.key.chain);
  }
  y.key("pref");
  y.num(f.key.pref);
  y.key("protocol");
  y.str(format_protocol(f.key.protocol));
  uint32_t root = show_root ? kernel_root_of(f) : 0;
  if (f.empty_list) {
    y.key("empty");
    y.str(f.kind);
    if (root) {
      y.key("handle");
      y.str(format_filter_handle(f.ops, root));
    }
    y.map_end();
    return;
  }
  y.key("handle");
  y.str(format_filter_handle(f.ops, root && !f.list_root ? f.wire_handle : f.key.handle));
  if (root && f.list_root) {  // a hash table, for the list it is in (model.h Filter::list_root)
    y.key("root_table");
    y.str(format_filter_handle(f.ops, root));
  }
  y.key(f.kind);
  y.map_begin();
  if (f.ops) write_fields(*f.ops, f.opts, y);
  write_raw_options(f.raw, y, f.ops);
  y.map_end();
  if (f.classid) {
    y.key("classid");
    y.str(format_handle(*f.classid));
  }
  if (f.police) {  // the filter's own (FilterOps::old_police_attr), in the police action's fields
    y.key("police");
    y.map_begin();
    write_fields(kActionPolice, f.police->opts, y);
    y.map_end();
  }
  if (!f.actions.empty()) {
    y.key("actions");
    y.seq_begin();
    for (auto& a : f.actions) write_action(a, y);
    y.seq_end();
  }
  write_raw_attrs(f.raw, y);
  y.map_end();
}

void write_filter(const Filter& f, YamlOut& y, bool on_block) {
  write_filter(f, y, on_block, false);
}

// A list's root is written only where the file's order would not give it.
static auto filter_writer(const std::vector<Filter>& fs, bool on_block) {
  return [moved = moved_root_spaces(fs), on_block](const Filter& f, YamlOut& y) {
    write_filter(f, y, on_block, !moved.empty() && moved.count(table_space_of(f.key.parent)));
  };
}

// Chains worth writing: those with a template, and empty ones (made
// explicitly); a chain that only holds filters is the kernel's own.
static std::vector<const Chain*> explicit_chains(const Device& d) {
  std::set<std::pair<uint32_t, uint32_t>> used;
  for (auto& f : d.filters)
    used.insert({f.key.parent == kHandleIngressQdisc ? kHandleClsactIngress : f.key.parent, f.key.chain});
  std::vector<const Chain*> out;
  for (auto& c : d.chains)
    if (!c.kind.empty() || !used.count({c.parent, c.index})) out.push_back(&c);
  return out;
}

static void write_chain(const Chain& c, YamlOut& y, bool on_block) {
  y.map_begin();
  if (!on_block) {
    y.key("parent");
    y.str(describe_filter_parent(c.parent));
  }
  y.key("chain");
  y.num(c.index);
  if (!c.kind.empty()) {
    if (c.protocol) {
      y.key("protocol");
      y.str(format_protocol(c.protocol));
    }
    y.key("template");
    y.map_begin();
    y.key(c.kind);
    y.map_begin();
    if (c.ops) write_fields(*c.ops, c.opts, y);
    write_raw_options(c.raw, y, c.ops);
    y.map_end();
    y.map_end();
  }
  write_raw_attrs(c.raw, y);
  y.map_end();
}

// One region of `own:` (model/scope.h) as the loader reads it.
static void write_own_region(const OwnRegion& r, YamlOut& y, bool on_block) {
  y.map_begin();
  if (r.tree) {
    y.key("qdisc");
    y.str(format_handle(r.major));
  } else {
    if (!on_block) {
      y.key("parent");
      y.str(describe_filter_parent(r.parent));
    }
    if (r.chain) {
      y.key("chain");
      y.num(*r.chain);
    }
    if (r.pref_lo > 1 || r.pref_hi < 0xFFFF) {
      y.key("prefs");
      y.str(std::to_string(r.pref_lo) + (r.pref_hi == r.pref_lo ? "" : "-" + std::to_string(r.pref_hi)));
    }
  }
  y.map_end();
}

static void write_state(const State& s, std::ostream& os, YamlOut::Style style) {
  DocOut doc(os, style);
  doc.map_begin();
  doc.key("version");
  doc.num(1);
  // The table only when it holds something: an empty `actions:` would own
  // the table (delete what others create there).
  if (s.actions.present && !s.actions.actions.empty()) {
    doc.key("actions");
    doc.seq_begin();
    for (auto& a : s.actions.actions) doc.item([&](YamlOut& y) { write_action(a, y); });
    doc.seq_end();
  }
  auto section = [&](const char* name, const auto& items, auto&& write) {
    if (items.empty()) return;
    doc.key(name);
    doc.seq_begin();
    for (auto& it : items) doc.item([&](YamlOut& y) { write(it, y); });
    doc.seq_end();
  };
  doc.key("devices");
  doc.map_begin();
  for (auto& d : s.devices) {
    doc.key(d.name);
    doc.map_begin();
    auto chains = explicit_chains(d);
    // A scoped desired state keeps its scope (live states have none): an
    // empty list too, which owns nothing.
    if (d.scoped) {
      doc.key("own");
      doc.seq_begin();
      for (auto& r : d.own) doc.item([&](YamlOut& y) { write_own_region(r, y, false); });
      doc.seq_end();
    }
    if (!d.qdiscs.empty() || !d.classes.empty() || !d.filters.empty() || !chains.empty()) {
      if (d.atomic) {
        doc.key("atomic");
        doc.boolean(true);
      }
      section("qdiscs", d.qdiscs, write_qdisc);
      section("classes", d.classes, write_class);
      section("chains", chains, [](const Chain* c, YamlOut& y) { write_chain(*c, y, false); });
      section("filters", d.filters, filter_writer(d.filters, false));
    }
    doc.map_end();
  }
  doc.map_end();
  // Shared blocks by index, with their filters (a block has nothing else).
  if (!s.blocks.empty()) {
    doc.key("blocks");
    doc.map_begin();
    for (auto& b : s.blocks) {
      doc.key(uint64_t{b.block});
      doc.map_begin();
      if (b.scoped) {
        doc.key("own");
        doc.seq_begin();
        for (auto& r : b.own) doc.item([&](YamlOut& y) { write_own_region(r, y, true); });
        doc.seq_end();
      }
      section("chains", explicit_chains(b), [](const Chain* c, YamlOut& y) { write_chain(*c, y, true); });
      section("filters", b.filters, filter_writer(b.filters, true));
      doc.map_end();
    }
    doc.map_end();
  }
  doc.map_end();
}

void write_state_yaml(const State& s, std::ostream& os) {
  write_state(s, os, YamlOut::Style::yaml);
}
void write_state_json(const State& s, std::ostream& os) {
  write_state(s, os, YamlOut::Style::json);
}

std::string write_state_json(const State& s) {
  std::ostringstream os;
  write_state_json(s, os);
  return std::move(os).str();
}

std::string write_state_yaml(const State& s) {
  std::ostringstream os;
  write_state_yaml(s, os);
  return std::move(os).str();
}

}  // namespace tcsync
