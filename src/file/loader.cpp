#include "file/loader.h"

#include <linux/rtnetlink.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "base/handle.h"
#include "base/hex.h"
#include "base/units.h"
#include "file/row_table.h"
#include "kinds/registry.h"
#include "model/name_cookie.h"
#include "model/scope.h"
#include "model/shared_tables.h"
#include "model/size_table.h"
#include "netlink/wire.h"
#include "yaml/yaml_reader.h"

namespace tcsync {
namespace {

void unknown_key(Diagnostics& d, const Node& key, std::string_view where, std::vector<std::string_view> cands) {
  std::string msg = "unknown key " + quoted(key.scalar) + " in " + std::string(where);
  if (auto dym = did_you_mean(key.scalar, cands); !dym.empty()) msg += " (did you mean " + quoted(dym) + "?)";
  d.error(key.loc, msg);
}

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
  auto v = parse_uint(n.scalar);
  if (!v)
    d.error(n.loc, quoted(key) + " must be a number, not " + quoted(n.scalar));
  else if (*v > max) {
    d.error(n.loc, quoted(key) + " is " + n.scalar + ", more than its maximum " + std::to_string(max));
    return std::nullopt;
  }
  return v;
}

// What a table of filters keeps between its rows. Every row is the template
// with the columns' values in place, so the rows share all but those: the
// first row is parsed in full, and the filter it gives before its kind's
// normalize hook (and the actions the columns reach, before theirs) is kept.
// A later row copies that and parses only its own values with the same
// field parsers, then runs the hooks: the same filter and the same errors
// as parsing the whole entry, for a fraction of the work (a million-rule
// file spends most of its load here). A table with a column of another
// shape, or whose first row has errors, has each row parsed in full.
struct FilterRows {
  enum class How : uint8_t { Handle, Field, ActionField };
  struct Column {
    How how;
    uint16_t field = 0;   // Field, ActionField: the kind's field index
    uint16_t action = 0;  // ActionField: the position in `actions`
  };
  bool full = true;              // parse every row as a written-out entry
  Filter proto;                  // before normalize; its actions normalized
  const Node* handle = nullptr;  // the template's own `handle:`, if any
  std::vector<Column> columns;
  std::vector<Action> actions;  // the actions before normalize, by position
};

struct Loader {
  State& state;
  Diagnostics& d;
  uint32_t file;
  // Where each device was declared, across files.
  std::map<std::string, SourceLoc>& declared;
  const DeviceHook* on_device = nullptr;

  // How a walk over a mapping ended: Done at its end (or after too many
  // errors), Stop when reading must stop (a failed stream, a key that is
  // not a scalar, or the caller's fn said so).
  enum class Walk { Done, Stop };
  template <typename F>
  Walk entries(YamlReader& r, F&& fn, bool unique = true);
  template <typename F>
  Walk each_key(YamlReader& r, const std::string& not_map, F&& fn, bool unique = true);

  void run(YamlReader& r);
  void device(YamlReader& r, const std::string& name, SourceLoc loc);
  void blocks(YamlReader& r);
  template <typename F>
  void list(YamlReader& r, std::string_view what, F&& each);
  template <typename F>
  void table(YamlReader& r, SourceLoc at, F&& each);
  void qdisc(const Node& n, Device& dev);
  void klass(const Node& n, Device& dev);
  void filter(const Node& n, Device& dev);
  bool filter_fields(const Node& n, Device& dev, Filter& f, const Node*& handle);
  void filter_finish(Filter&& f, const Node* handle, Device& dev);
  void root_table_misplaced(SourceLoc at);
  void filter_row(const RowTable& t, FilterRows& rows, Device& dev);
  bool plan_rows(const RowTable& t, const Filter& f, const Node* handle, FilterRows& rows);
  void chain(const Node& n, Device& dev);
  void own_region(const Node& n, Device& dev);
  bool action(const Node& n, Action& out);
  bool action_fields(const Node& n, Action& out);
  void action_normalize(Action& a);
  bool reference(const Node& n, Action& out);
  void action_table(YamlReader& r, SourceLoc loc);
};

// A vector grown by doubling moves every rule at each step and, at a
// million rules, faults in about twice its final size. Once a list has
// many entries, the bytes they took and the bytes left in the file tell
// its likely final size: that is reserved once, with a tenth to spare
// (capacity never used is address space only: its pages are never touched).
// An estimate below 1.5 times the size leaves the growth to the vector, so a
// low guess costs at most the one copy doubling would have made anyway.
template <class V>
void reserve_for_rest(V& v, size_t count0, size_t offset0, const YamlReader& r) {
  constexpr size_t kFrom = 4096;
  if (v.size() != v.capacity() || v.size() - count0 < kFrom || r.offset() <= offset0 || r.size() <= r.offset()) return;
  double per_entry = static_cast<double>(r.offset() - offset0) / static_cast<double>(v.size() - count0);
  auto rest = static_cast<size_t>(static_cast<double>(r.size() - r.offset()) / per_entry * 1.1);
  if (rest <= v.size() / 2) return;
  v.reserve(v.size() + rest);
}

bool is_null(const YamlReader::Event& e) {
  return e.type == YamlReader::Ev::Scalar && e.plain && (e.scalar.empty() || e.scalar == "~" || e.scalar == "null");
}

// The entries of a mapping whose MapStart the caller has taken, through its
// MapEnd: with `unique`, a key given twice is an error (its value skipped);
// fn(key, loc) reads the value and returns false to stop.
template <typename F>
Loader::Walk Loader::entries(YamlReader& r, F&& fn, bool unique) {
  std::set<std::string> seen;
  while (!d.too_many()) {
    const auto& ev = r.next();
    if (ev.type == YamlReader::Ev::MapEnd) return Walk::Done;
    if (ev.type != YamlReader::Ev::Scalar) return Walk::Stop;  // error already reported
    std::string key = ev.scalar;
    SourceLoc kloc = ev.loc;
    if (unique && !seen.insert(key).second) {
      d.error(kloc, "duplicate key " + quoted(key));
      r.skip_node();
      continue;
    }
    if (!fn(key, kloc) || r.failed()) return Walk::Stop;
  }
  return Walk::Done;
}

// A mapping as the next value: null (or nothing) is an empty one, any other
// value the error `not_map` (and skipped); then its entries, as entries().
template <typename F>
Loader::Walk Loader::each_key(YamlReader& r, const std::string& not_map, F&& fn, bool unique) {
  const auto& m = r.peek();
  if (is_null(m)) {
    r.next();
    return Walk::Done;
  }
  if (m.type != YamlReader::Ev::MapStart) {
    if (m.type != YamlReader::Ev::Error) d.error(m.loc, not_map);
    r.skip_node();
    return r.failed() ? Walk::Stop : Walk::Done;
  }
  r.next();
  return entries(r, fn, unique);
}

void Loader::run(YamlReader& r) {
  const auto& first = r.next();
  if (first.type == YamlReader::Ev::StreamEnd) {
    d.error({file, 1, 1}, "empty file: expected 'version: 1' and 'devices:'");
    return;
  }
  if (first.type != YamlReader::Ev::DocStart) return;
  const auto& top = r.peek();
  if (is_null(top)) {
    d.error(top.loc, "empty file: expected 'version: 1' and 'devices:'");
    return;
  }
  if (top.type != YamlReader::Ev::MapStart) {
    if (top.type != YamlReader::Ev::Error)
      d.error(top.loc, "the top level must be a mapping with 'version' and 'devices'");
    return;
  }
  SourceLoc top_loc = top.loc;
  r.next();
  bool have_version = false;
  Walk top_walk = entries(r, [&](const std::string& key, SourceLoc kloc) {
    if (key == "version") {
      Node v;
      if (!r.read_node(v)) return false;
      have_version = true;
      if (!v.is_scalar() || v.scalar != "1")
        d.error(v.loc, "unsupported version " + quoted(v.is_scalar() ? v.scalar : v.type_name()) +
                           ": this tcsync reads version 1");
    } else if (key == "devices") {
      // `devices:` with nothing: no devices
      return each_key(r, "'devices' must be a mapping of device names", [&](const std::string& name, SourceLoc dloc) {
               device(r, name, dloc);
               return true;
             }) == Walk::Done;
    } else if (key == "blocks") {
      blocks(r);
    } else if (key == "actions") {
      action_table(r, kloc);
    } else {
      unknown_key(d, Node{Node::Type::Scalar, true, kloc, key, {}, {}}, "the top level",
                  {"version", "devices", "blocks", "actions"});
      r.skip_node();
    }
    return true;
  });
  if (top_walk == Walk::Stop) return;
  if (!have_version && !d.has_errors())
    d.error(top_loc, "missing 'version: 1' (the format version this file is written for)");
  const auto& end = r.next();
  if (end.type == YamlReader::Ev::DocEnd) {
    const auto& more = r.next();
    if (more.type == YamlReader::Ev::DocStart) d.error(more.loc, "only one YAML document per file");
  }
}

// `blocks:` maps shared block indexes to their filters:
//   blocks:
//     22:
//       filters: [...]     (as a device's, without 'parent')
void Loader::blocks(YamlReader& r) {
  each_key(
      r, "'blocks' must be a mapping of block indexes, such as 22:",
      [&](const std::string& key, SourceLoc bloc) {
        auto index = parse_uint(key);
        if (!index || *index == 0 || *index > 0xFFFFFFFF) {
          d.error(bloc, "block index must be a number from 1 to 4294967295, not " + quoted(key));
          r.skip_node();
          return true;
        }
        std::string name = block_name(static_cast<uint32_t>(*index));
        if (auto it = declared.find(name); it != declared.end()) {
          d.error(bloc, name + " is already declared at " + format_location(it->second) +
                            " (a block belongs to one file; files add blocks, they never override)");
          r.skip_node();
          return true;
        }
        declared[name] = bloc;
        Device& b = state.get_or_add_block(static_cast<uint32_t>(*index));
        b.loc = bloc;
        size_t bi = static_cast<size_t>(&b - state.blocks.data());
        // `22:` alone: a block with no filters
        return each_key(r, name + " must be a mapping with filters", [&](const std::string& k, SourceLoc kloc) {
                 if (k == "filters") {
                   list(r, k, [&, rows = FilterRows{}](const Node& n, const RowTable* t = nullptr) mutable {
                     t ? filter_row(*t, rows, state.blocks[bi]) : filter(n, state.blocks[bi]);
                   });
                 } else if (k == "chains") {
                   list(r, k, [&](const Node& n) { chain(n, state.blocks[bi]); });
                 } else if (k == "own") {
                   state.blocks[bi].scoped = true;
                   state.blocks[bi].own_loc = kloc;
                   list(r, k, [&](const Node& n) { own_region(n, state.blocks[bi]); });
                 } else {
                   unknown_key(d, Node{Node::Type::Scalar, true, kloc, k, {}, {}}, name, {"filters", "chains", "own"});
                   r.skip_node();
                 }
                 return true;
               }) == Walk::Done;
      },
      /*unique=*/false);  // a block given twice is "already declared", as across files
}

void Loader::device(YamlReader& r, const std::string& name, SourceLoc loc) {
  if (name.empty() || name.size() >= 16 || name.find_first_of("/ \t:") != std::string::npos) {
    d.error(loc, quoted(name) + " is not a valid interface name");
    r.skip_node();
    return;
  }
  if (auto it = declared.find(name); it != declared.end()) {
    d.error(loc, "device " + quoted(name) + " is already declared at " + format_location(it->second) +
                     " (a device belongs to one file; files add devices, they never override)");
    r.skip_node();
    return;
  }
  declared[name] = loc;
  if (on_device && *on_device) (*on_device)(name);
  Device& dev = state.get_or_add(name);
  dev.loc = loc;
  // `eth0:` alone: the device has no tc configuration at all.
  // Index, not reference: the device vector may grow while loading.
  size_t di = static_cast<size_t>(&dev - state.devices.data());
  each_key(r, "device " + quoted(name) + " must be a mapping with qdiscs, classes and filters",
           [&](const std::string& key, SourceLoc kloc) {
             if (key == "qdiscs")
               list(r, key, [&](const Node& n) { qdisc(n, state.devices[di]); });
             else if (key == "classes")
               list(r, key, [&, c0 = state.devices[di].classes.size(), o0 = r.offset()](const Node& n) {
                 reserve_for_rest(state.devices[di].classes, c0, o0, r);
                 klass(n, state.devices[di]);
               });
             else if (key == "filters")
               list(r, key,
                    [&, f0 = state.devices[di].filters.size(), o0 = r.offset(), rows = FilterRows{}](
                        const Node& n, const RowTable* t = nullptr) mutable {
                      reserve_for_rest(state.devices[di].filters, f0, o0, r);
                      t ? filter_row(*t, rows, state.devices[di]) : filter(n, state.devices[di]);
                    });
             else if (key == "chains")
               list(r, key, [&](const Node& n) { chain(n, state.devices[di]); });
             else if (key == "own") {
               state.devices[di].scoped = true;
               state.devices[di].own_loc = kloc;
               list(r, key, [&](const Node& n) { own_region(n, state.devices[di]); });
             } else if (key == "atomic") {
               Node v;
               if (!r.read_node(v)) return false;
               if (v.is_scalar() && v.plain && (v.scalar == "true" || v.scalar == "false"))
                 state.devices[di].atomic = v.scalar == "true";
               else
                 d.error(v.loc, "'atomic' must be true or false");
             } else {
               unknown_key(d, Node{Node::Type::Scalar, true, kloc, key, {}, {}}, "device " + quoted(name),
                           {"qdiscs", "classes", "filters", "chains", "atomic", "own"});
               r.skip_node();
             }
             return true;
           });
}

template <typename F>
void Loader::list(YamlReader& r, std::string_view what, F&& each) {
  const auto& s = r.peek();
  if (s.type != YamlReader::Ev::SeqStart) {
    if (is_null(s)) {
      r.next();  // `filters:` with nothing: an empty list
      return;
    }
    if (s.type != YamlReader::Ev::Error) d.error(s.loc, quoted(what) + " must be a list");
    r.skip_node();
    return;
  }
  r.next();
  Node n;  // one entry at a time, reused: its buffers outlive the entry
  while (!d.too_many()) {
    const auto& ev = r.peek();
    if (ev.type == YamlReader::Ev::SeqEnd) {
      r.next();
      return;
    }
    if (ev.type == YamlReader::Ev::Error) return;
    if (ev.type == YamlReader::Ev::MapStart) {
      // A mapping's first key tells a rule table (row_table.h) from an entry.
      SourceLoc at = ev.loc;
      r.next();
      const auto& k = r.peek();
      if (k.type == YamlReader::Ev::Scalar && (k.scalar == "template" || k.scalar == "columns" || k.scalar == "rows")) {
        table(r, at, each);
        if (r.failed()) return;
        continue;
      }
      if (!r.read_map_rest(n, at)) return;
    } else if (!r.read_node(n)) {
      return;
    }
    if (!n.is_map()) {
      d.error(n.loc, "each entry of " + quoted(what) + " must be a mapping, not " + n.type_name());
      continue;
    }
    each(n);
  }
}

template <typename F>
void Loader::table(YamlReader& r, SourceLoc at, F&& each) {
  Node tmpl, cols, row;
  bool have_tmpl = false, have_cols = false, have_rows = false;
  Walk w = entries(r, [&](const std::string& key, SourceLoc kloc) {
    if (key == "template") {
      if (!r.read_node(tmpl)) return false;
      have_tmpl = true;
    } else if (key == "columns") {
      if (!r.read_node(cols)) return false;
      have_cols = true;
    } else if (key == "rows") {
      have_rows = true;
      // Rows are read as they stream, so what they fill must come first.
      if (!have_tmpl || !have_cols) {
        d.error(kloc, "'rows' must come after 'template' and 'columns' in a table");
        r.skip_node();
        return true;
      }
      RowTable t;
      if (!t.init(tmpl, cols, d)) {
        r.skip_node();
        return true;
      }
      const auto& s = r.peek();
      if (is_null(s)) {
        r.next();  // `rows:` with nothing: no entries
        return true;
      }
      if (s.type != YamlReader::Ev::SeqStart) {
        if (s.type != YamlReader::Ev::Error) d.error(s.loc, "'rows' must be a list, one row per entry");
        r.skip_node();
        return true;
      }
      r.next();
      while (!d.too_many()) {
        const auto& e = r.peek();
        if (e.type == YamlReader::Ev::SeqEnd) {
          r.next();
          break;
        }
        if (e.type == YamlReader::Ev::Error || !r.read_node(row)) return false;
        if (const Node* n = t.fill(row, d)) {
          if constexpr (std::is_invocable_v<F&, const Node&, const RowTable*>)
            each(*n, &t);
          else
            each(*n);
        }
      }
    } else {
      unknown_key(d, Node{Node::Type::Scalar, true, kloc, key, {}, {}}, "a table", {"template", "columns", "rows"});
      r.skip_node();
    }
    return true;
  });
  if (w == Walk::Stop) return;
  if (!have_tmpl || !have_cols || !have_rows) d.error(at, "a table needs 'template', 'columns' and 'rows'");
}

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

// The top-level `actions:` list: the action table (model.h ActionTable).
// Each entry is written as a filter's action is, with an index it must have.
void Loader::action_table(YamlReader& r, SourceLoc loc) {
  state.actions.present = true;
  state.actions.loc = loc;
  list(r, "actions", [&](const Node& n) {
    Action a;
    if (n.find("ref")) {
      d.error(n.loc, "'ref' refers to an action of this table from a filter; here declare the action itself");
      return;
    }
    if (!action(n, a)) return;
    if (!a.index) {
      d.error(n.loc, "an action of the table needs an 'index' (filters refer to it as ref: " + a.kind + "/INDEX)");
      return;
    }
    state.actions.actions.push_back(std::move(a));
  });
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
        d.error(v.loc, "'empty' names a classifier kind (u32, fw...), not " + quoted(v.scalar));
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
  if (root_table && filter_ops(f.ops).own_table_handle) {
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
    if (handle && filter_ops(f.ops).own_table_handle) {
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
      d.error(body->loc, "the kernel makes no empty " + f.kind +
                             " list (it needs the rule's options): only u32 and fw lists can be empty");
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
  d.error(at,
          "'root_table' is given on a u32 hash table entry (handle \"2:\" with divisor), for the list it is in; a rule "
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
    const FilterOps& fo = filter_ops(f.ops);
    if (fo.own_table_handle && fo.canonical_key && !f.empty_list) {
      FilterKey k = f.key;
      if (fo.canonical_key(k, f.opts) && k.handle != f.key.handle) {
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

void Loader::filter_row(const RowTable& t, FilterRows& rows, Device& dev) {
  if (t.rows() == 1) {
    // The table's first row: parsed in full, and what the rest share is kept.
    rows = FilterRows{};
    size_t errors = d.error_count();
    Filter f;
    const Node* handle = nullptr;
    bool ok = filter_fields(t.entry(), dev, f, handle);
    if (ok && d.error_count() == errors && plan_rows(t, f, handle, rows)) {
      rows.full = false;
      rows.proto = f;
      // The columns' fields hold a number until each row sets them: present,
      // so a row's Options keep their size and order, and cheap to copy (a
      // MAC or an address would be copied only to be replaced).
      for (const FilterRows::Column& c : rows.columns)
        if (c.how == FilterRows::How::Field)
          rows.proto.opts.set(c.field, uint64_t{0});
        else if (c.how == FilterRows::How::ActionField)
          rows.actions[c.action].opts.set(c.field, uint64_t{0});
    }
    if (ok) filter_finish(std::move(f), handle, dev);
    return;
  }
  if (rows.full) {
    filter(t.entry(), dev);
    return;
  }
  Filter f = rows.proto;
  f.loc = t.entry().loc;
  const Node* handle = rows.handle;
  uint64_t fresh = 0;  // the actions given back their state before normalize
  for (size_t i = 0; i < rows.columns.size(); ++i) {
    const FilterRows::Column& c = rows.columns[i];
    const Node& v = t.value(i);
    if (c.how == FilterRows::How::Handle) {
      handle = &v;
      continue;
    }
    Options* o = &f.opts;
    const KindOps* ops = f.ops;
    if (c.how == FilterRows::How::ActionField) {
      Action& a = f.actions[c.action];
      if (!(fresh >> c.action & 1)) a = rows.actions[c.action], fresh |= uint64_t{1} << c.action;
      o = &a.opts;
      ops = a.ops;
    }
    Value val;
    if (parse_field(ops->fields[c.field], v, val, d))
      o->set(c.field, std::move(val), v.loc);
    else
      o->erase(c.field);  // as a written-out entry: no value
  }
  for (size_t i = 0; i < f.actions.size(); ++i)
    if (fresh >> i & 1) action_normalize(f.actions[i]);
  filter_finish(std::move(f), handle, dev);
}

// Whether every column of a filter table is one a row can set by itself
// (the handle, a field of the filter's kind, a field of one of its
// actions' kinds), and how; `f` is the first row's filter.
bool Loader::plan_rows(const RowTable& t, const Filter& f, const Node* handle, FilterRows& rows) {
  const Node* actions = t.entry().find("actions");
  rows.actions.resize(f.actions.size());
  for (size_t i = 0; i < t.width(); ++i) {
    const std::vector<std::string>& p = t.column(i);
    FilterRows::Column c{FilterRows::How::Handle};
    auto field_of = [](const KindOps& ops, const std::string& key) {
      int idx = ops.field_index(key);
      return idx >= 0 && !(ops.fields[idx].flags & kReadOnly) ? idx : -1;
    };
    if (p.size() == 1 && p[0] == "handle") {
      if (handle != &t.value(i)) return false;
    } else if (p.size() == 2 && p[0] == f.kind && f.ops) {
      int idx = field_of(*f.ops, p[1]);
      if (idx < 0) return false;
      c = {FilterRows::How::Field, static_cast<uint16_t>(idx)};
    } else if (p.size() == 4 && p[0] == "actions" && actions && actions->is_seq() &&
               actions->seq.size() == f.actions.size()) {
      auto n = parse_uint(p[1]);
      if (!n || *n >= f.actions.size()) return false;
      const Action& a = f.actions[*n];
      if (a.ref || p[2] != a.kind || !a.ops) return false;
      int idx = field_of(*a.ops, p[3]);
      if (idx < 0) return false;
      c = {FilterRows::How::ActionField, static_cast<uint16_t>(idx), static_cast<uint16_t>(*n)};
      if (rows.actions[*n].kind.empty() && !action_fields(actions->seq[*n], rows.actions[*n])) return false;
    } else {
      return false;
    }
    rows.columns.push_back(c);
  }
  // The template's own handle (not a column) is the same node every row.
  rows.handle = handle;
  for (const FilterRows::Column& c : rows.columns)
    if (c.how == FilterRows::How::Handle) rows.handle = nullptr;
  return true;
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

// ---- after a file: derived handles, identities, references ----------------

// The filters of one device by identity, to find a duplicate: an
// open-addressing table of pointers (8 bytes a rule, one allocation), where
// a std::map cost a 64-byte node per rule and log n comparisons.
class FilterKeyIndex {
 public:
  explicit FilterKeyIndex(size_t n) {
    size_t cap = 16;
    while (cap < 2 * n) cap *= 2;
    slots_.assign(cap, nullptr);
  }
  // The filter already there with f's key, else null (and f is added).
  const Filter* insert(const Filter& f) {
    size_t mask = slots_.size() - 1;
    for (size_t i = hash(f.key) & mask;; i = (i + 1) & mask) {
      if (!slots_[i]) {
        slots_[i] = &f;
        return nullptr;
      }
      if (slots_[i]->key == f.key) return slots_[i];
    }
  }

 private:
  static size_t hash(const FilterKey& k) {
    uint64_t h = (uint64_t{k.parent} << 32 | k.handle) * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t{k.chain} << 32 | uint64_t{k.pref} << 16 | k.protocol) * 0xC2B2AE3D27D4EB4Full;
    return static_cast<size_t>(h ^ (h >> 29));
  }
  std::vector<const Filter*> slots_;
};

// What a device declares, indexed for the checks below (derive_and_check):
// its qdiscs by parent and by handle, its classes, its clsact/ingress.
struct Declared {
  const Device& dev;
  // A scoped file may hang its objects on a foreign qdisc or class (a tree
  // below someone else's class, filters at someone else's qdisc): those
  // parents are not its to declare.
  const Ownership own;
  std::map<uint32_t, const Qdisc*> by_parent, by_handle;
  std::map<uint32_t, const Class*> classes;
  const Qdisc* hook = nullptr;

  explicit Declared(const Device& d) : dev(d), own(d) {}
  bool foreign_parent(uint32_t p) const { return dev.scoped && !own.owns_tree_of(p); }
  // A class the parent qdisc makes itself (prio's bands, mq's queues).
  bool implicit(uint32_t cls) const {
    auto q = by_handle.find(handle_major(cls));
    if (q == by_handle.end()) return false;
    auto* implicit_class = qdisc_ops(q->second->ops).implicit_class;
    return implicit_class && implicit_class(q->second->opts, handle_minor(cls));
  }
  std::string no_class(uint32_t cls) const {
    std::string msg = "parent class " + format_handle(cls) + " is not declared on " + dev.name;
    auto q = by_handle.find(handle_major(cls));
    if (q != by_handle.end() && qdisc_ops(q->second->ops).implicit_class)
      msg += " and is not one of the classes " + q->second->kind + " " + format_handle(q->second->handle) +
             " makes itself";
    return msg;
  }
  // Where a filter or chain (WHAT) may sit: a hook side with a clsact (or
  // ingress, for the ingress side), "ffff:" with either, or a declared (or
  // foreign) qdisc or class. A block's all sit in the block.
  void check_place(uint32_t p, const std::string& what, SourceLoc loc, Diagnostics& d) const {
    if (dev.block) return;
    if (p == kHandleClsactIngress || p == kHandleClsactEgress) {
      if (!hook)
        d.error(loc, what + " parent " + describe_filter_parent(p) + " needs a clsact (or ingress) qdisc declared on " +
                         dev.name);
      else if (p == kHandleClsactEgress && qdisc_ops(hook->ops).hooks != QdiscOps::Hooks::IngressEgress)
        d.error(loc, "egress " + what + "s need a clsact qdisc, not ingress");
    } else if (p == kHandleIngressQdisc && hook) {
      // "ffff:" is the ingress hook too; kept as written, since the kernel
      // reports each list with the parent it was created with.
    } else if ((handle_minor(p) ? !classes.count(p) && !implicit(p) : !by_handle.count(p)) && !foreign_parent(p)) {
      d.error(loc, what + " parent " + format_handle(p) + " is not a qdisc or class declared on " + dev.name);
    }
  }
};

// Qdiscs: one per parent, handles unique. (clsact and ingress both sit at
// ffff:fff1: a second of them is "a second qdisc" too.)
void check_qdiscs(Declared& decl, Diagnostics& d) {
  for (auto& q : decl.dev.qdiscs) {
    if (auto [it, ok] = decl.by_parent.emplace(q.parent, &q); !ok)
      d.error(q.loc, "a second qdisc at " +
                         (q.parent == kHandleRoot      ? std::string("root")
                          : q.parent == kHandleIngress ? std::string("ingress")
                                                       : "parent " + format_handle(q.parent)) +
                         " of " + decl.dev.name + " (the first is at " + format_location(it->second->loc) + ")");
    if (auto [it, ok] = decl.by_handle.emplace(q.handle, &q); !ok && q.parent != kHandleIngress)
      d.error(q.loc,
              "qdisc handle " + format_handle(q.handle) + " is already used at " + format_location(it->second->loc));
  }
  if (auto it = decl.by_parent.find(kHandleIngress); it != decl.by_parent.end()) decl.hook = it->second;
}

// Classes: classids unique; each hangs off a declared qdisc (of its kind)
// or class of the same major. Needs the qdiscs indexed.
void check_class_tree(Declared& decl, Diagnostics& d) {
  const std::string& name = decl.dev.name;
  for (auto& c : decl.dev.classes) {
    if (auto [it, ok] = decl.classes.emplace(c.classid, &c); !ok)
      d.error(c.loc,
              "class " + format_handle(c.classid) + " is already declared at " + format_location(it->second->loc));
  }
  for (auto& c : decl.dev.classes) {
    auto q = decl.by_handle.find(handle_major(c.classid));
    if (q == decl.by_handle.end())
      d.error(c.loc, "class " + format_handle(c.classid) + ": no qdisc " + format_handle(handle_major(c.classid)) +
                         " is declared on " + name);
    else if (q->second->kind != c.kind)
      d.error(c.loc, "class kind " + quoted(c.kind) + " does not match its qdisc's kind " + quoted(q->second->kind));
    if (handle_minor(c.parent) && !decl.classes.count(c.parent))
      d.error(c.loc, "parent class " + format_handle(c.parent) + " is not declared on " + name);
    else if (handle_major(c.parent) != handle_major(c.classid))
      d.error(c.loc,
              "parent " + format_handle(c.parent) + " belongs to another qdisc than class " + format_handle(c.classid));
  }
}

// A qdisc below a class: the class is declared, or one its qdisc makes
// itself; a qdisc with one class (tbf) holds one qdisc in it, whichever of
// its names (1:, 1:1, 1:5) the file gives. Needs qdiscs and classes indexed.
void check_qdisc_parents(const Declared& decl, Diagnostics& d) {
  std::map<uint32_t, const Qdisc*> one_class;  // qdisc major -> the qdisc in its only class
  for (auto& q : decl.dev.qdiscs) {
    if (q.parent == kHandleRoot || q.parent == kHandleIngress || decl.classes.count(q.parent)) continue;
    if (!decl.implicit(q.parent)) {
      if (!decl.foreign_parent(q.parent)) d.error(q.loc, decl.no_class(q.parent));
      continue;
    }
    // tbf 1:'s parents 1:, 1:1 and 1:5 are one class: the kernel grafts
    // the second qdiscs over the first.
    uint32_t major = handle_major(q.parent);
    if (!decl.implicit(major)) continue;
    if (auto [it, ok] = one_class.emplace(major, &q); !ok)
      d.error(q.loc, "parent " + format_handle(q.parent) + " is the one class of " + decl.by_handle.at(major)->kind +
                         " " + format_handle(major) + ", which already holds the qdisc at " +
                         format_location(it->second->loc));
  }
}

// A filter list: parent, chain, pref, protocol.
using ListKey = std::tuple<uint32_t, uint32_t, uint16_t, uint16_t>;

// A rule's handle where the file gives none: the next of a counter per
// list and fixed part of the kind's handle space (explicit handles move
// the counter on). False (with an error) when none can be derived.
bool derive_handle(Filter& f,
                   std::map<std::tuple<uint32_t, uint32_t, uint16_t, uint16_t, uint32_t>, uint32_t>& counters,
                   Diagnostics& d) {
  uint32_t fixed = 0, mask = 0xFFFFFFFF;
  if (auto* space = filter_ops(f.ops).handle_space) space(f.opts, fixed, mask);
  auto ck = std::make_tuple(f.key.parent, f.key.chain, f.key.pref, f.key.protocol, fixed);
  if (f.key.handle == 0) {
    // counter_mask 0: the options decide the whole handle (route), or,
    // with nothing fixed, only the file can give it.
    if (mask == 0 && fixed == 0) {
      d.error(f.loc, f.kind + " filter needs a 'handle' here");
      return false;
    }
    uint32_t n = mask ? ++counters[ck] : 0;
    if (n > mask) {
      d.error(f.loc, "more than " + std::to_string(mask) + " " + f.kind +
                         " filters in one handle space; give handles or spread them (u32: hash tables)");
      return false;
    }
    f.key.handle = fixed | n;
  } else {
    // Later derived handles continue after an explicit one.
    uint32_t n = f.key.handle & mask;
    if ((f.key.handle & ~mask) == fixed && n > counters[ck]) counters[ck] = n;
  }
  return true;
}

// Filters: parents exist ("root" becomes the root qdisc's handle), a list
// holds one kind, at most one empty list each and none beside rules,
// handles derived, identities unique. Needs the qdiscs and classes indexed
// and the explicit table rules homed (their handles are compared).
void check_filters(Device& dev, const Declared& decl, Diagnostics& d) {
  std::map<std::tuple<uint32_t, uint32_t, uint16_t, uint16_t, uint32_t>, uint32_t> counters;
  std::map<ListKey, const Filter*> group_kind;
  std::map<ListKey, const Filter*> empty_lists;
  // Files list rules in key order mostly (rule tables by handle): while
  // every key is above the one before, none can repeat an earlier one, and
  // the index (a cache miss per rule at a million rules) is built only at
  // the first key out of order, from the filters checked so far.
  std::optional<FilterKeyIndex> keys;
  const Filter* last = nullptr;
  for (auto& f : dev.filters) {
    if (!dev.block && f.key.parent == kHandleRoot) {
      auto it = decl.by_parent.find(kHandleRoot);
      if (it == decl.by_parent.end())
        d.error(f.loc, "filter parent root: no root qdisc is declared on " + dev.name);
      else
        f.key.parent = it->second->handle;
    } else {
      decl.check_place(f.key.parent, "filter", f.loc, d);
    }
    auto gk = std::make_tuple(f.key.parent, f.key.chain, f.key.pref, f.key.protocol);
    if (auto [it, ok] = group_kind.try_emplace(gk, &f); !ok && it->second->kind != f.kind)
      d.error(f.loc, "pref " + std::to_string(f.key.pref) + " already holds " + it->second->kind + " filters (at " +
                         format_location(it->second->loc) +
                         "); one pref and protocol hold one classifier kind: choose another pref");
    if (f.empty_list) {  // no rule: no handle; one per list
      if (auto [it, ok] = empty_lists.try_emplace(gk, &f); !ok)
        d.error(f.loc, "duplicate filter: the empty list at pref " + std::to_string(f.key.pref) +
                           " is already declared at " + format_location(it->second->loc));
      continue;
    }
    if (!derive_handle(f, counters, d)) continue;
    if (!keys && (!last || last->key < f.key)) {
      last = &f;
      continue;
    }
    if (!keys) {
      // The filters before f that got here: those with a handle (the
      // others stopped above with their error, handle still 0).
      keys.emplace(dev.filters.size());
      for (const Filter* g = dev.filters.data(); g != &f; ++g)
        if (g->key.handle) keys->insert(*g);
    }
    if (const Filter* first = keys->insert(f))
      d.error(f.loc, "duplicate filter: " + describe(f) + " is already declared at " + format_location(first->loc));
  }
  // An empty list beside rules of its own (parent, chain, pref, protocol)
  // could never be: the rules are the list.
  if (!empty_lists.empty())
    for (auto& f : dev.filters)
      if (!f.empty_list)
        if (auto it = empty_lists.find(std::make_tuple(f.key.parent, f.key.chain, f.key.pref, f.key.protocol));
            it != empty_lists.end())
          d.error(it->second->loc, "pref " + std::to_string(f.key.pref) + " is declared 'empty' but holds a rule (at " +
                                       format_location(f.loc) + "): leave 'empty' out");
}

// Chains: at places filters may sit, one per (parent, index); a chain's
// filters are of its template's kind (the kernel: "Chain template is set
// to a different filter kind"). After the filters (their parents settled).
void check_chains(const Device& dev, const Declared& decl, Diagnostics& d) {
  std::map<std::pair<uint32_t, uint32_t>, const Chain*> chains;
  if (dev.atomic && !dev.chains.empty())
    d.error(dev.chains.front().loc,
            "'chains' and 'atomic: true' do not mix on " + dev.name + " (atomic switching owns the hook's chains)");
  for (auto& c : dev.chains) {
    decl.check_place(c.parent, "chain", c.loc, d);
    if (auto [it, ok] = chains.emplace(std::make_pair(c.parent, c.index), &c); !ok)
      d.error(c.loc,
              "chain " + std::to_string(c.index) + " is already declared at " + format_location(it->second->loc));
  }
  for (auto& f : dev.filters) {
    auto it = chains.find({f.key.parent, f.key.chain});
    if (it != chains.end() && !it->second->kind.empty() && it->second->kind != f.kind)
      d.error(f.loc, "chain " + std::to_string(f.key.chain) + " has a " + it->second->kind + " template (at " +
                         format_location(it->second->loc) + "): its filters are " + it->second->kind + " filters");
  }
}

// Kind-wide checks (u32 tables and the rules that use them, a kind's
// classes together), last: they read derived handles.
void check_kinds(const Device& dev, Diagnostics& d) {
  std::map<const KindOps*, std::vector<const Filter*>> by_kind;
  for (auto& f : dev.filters)
    if (filter_ops(f.ops).check_device) by_kind[f.ops].push_back(&f);
  for (auto& [ops, fs] : by_kind) filter_ops(ops).check_device(fs, d);
  std::map<const KindOps*, std::vector<const Class*>> classes_by_kind;
  for (auto& c : dev.classes)
    if (c.ops) classes_by_kind[c.ops].push_back(&c);
  for (auto& [ops, cs] : classes_by_kind)
    if (auto* check = class_ops(ops).check_classes) check(cs, d);
}

void derive_and_check(Device& dev, Diagnostics& d) {
  Declared decl(dev);
  check_qdiscs(decl, d);
  check_class_tree(decl, d);
  check_qdisc_parents(decl, d);
  // `900::1` is a rule of hash table 900: where the file declares that
  // table, else of its list's root (read so in filter_finish): settled
  // before handles are counted and compared.
  home_explicit_table_rules(dev.filters);
  check_filters(dev, decl, d);
  check_chains(dev, decl, d);
  check_kinds(dev, d);
}

// A scoped device or block (`own:`) declares only what it owns: anything
// else would be a promise to change someone else's objects. Its clsact or
// ingress qdisc is the exception: declared, it is needed (model/scope.h).
void check_scope(const Device& dev, Diagnostics& d) {
  if (!dev.scoped) return;
  const Ownership own(dev);
  std::string scope =
      " (" + dev.name + " owns " + describe_scope(dev) + ": 'own' at " + format_location(dev.own_loc) + ")";
  for (auto& q : dev.qdiscs)
    if (q.parent != kHandleIngress && !own.owns(q))
      d.error(q.loc, describe(q) + " is outside this file's scope" + scope + "; own it with {qdisc: \"" +
                         format_handle(handle_major(q.handle)) + "\"}");
  for (auto& c : dev.classes)
    if (!own.owns(c)) d.error(c.loc, describe(c) + " is outside this file's scope" + scope);
  for (auto& f : dev.filters)
    if (!own.owns(f)) d.error(f.loc, describe(f, dev.block != 0) + " is outside this file's scope" + scope);
  for (auto& c : dev.chains)
    if (!own.owns(c))
      d.error(c.loc, describe(c, dev.block != 0) + " is outside this file's scope" + scope +
                         " (a chain is owned with all its filters: a region with its parent and chain and no 'prefs')");
  // The switch rule takes over chain 0 of each hook: foreign rules there
  // would never see a packet again.
  if (dev.atomic)
    d.error(dev.own_loc, "'atomic: true' and 'own' do not mix on " + dev.name +
                             ": the atomic switch takes over the hooks' whole filter lists, foreign rules too");
}

// Names the kernel keeps abbreviated (name_cookie.h), said once per file:
// at the first, with how many more. Rules with nowhere to keep a name are
// not counted.
void warn_long_names(const State& s, Diagnostics& d) {
  const Filter* first = nullptr;
  size_t more = 0;
  for_each_filter(s, [&](const Filter& f) {
    if (f.name.size() <= kNameKeptExactly || !name_abbreviated(f.name) || name_action(f) < 0) return;
    if (first)
      ++more;
    else
      first = &f;
  });
  if (!first) return;
  d.warning(first->loc, "name \"" + first->name + "\" is kept in the kernel as \"" + kept_spelling(first->name) +
                            "\" (PREFIX~HASH: names over " + std::to_string(kNameKeptExactly) +
                            " bytes are abbreviated; dump prints that, and it stands for this name)" +
                            (more ? "; so are " + std::to_string(more) + " more names in this file" : ""));
}

bool load_reader(YamlReader& r, uint32_t file, State& out, Diagnostics& d, std::map<std::string, SourceLoc>& declared,
                 const DeviceHook* on_device = nullptr) {
  size_t before = d.error_count();
  State local;
  Loader l{local, d, file, declared, on_device};
  l.run(r);
  for_each_place(local, [&](Device& place) {
    derive_and_check(place, d);
    check_scope(place, d);
  });
  warn_long_names(local, d);
  for (auto& dev : local.devices) out.devices.push_back(std::move(dev));
  for (auto& b : local.blocks) out.blocks.push_back(std::move(b));
  if (local.actions.present) {
    if (!out.actions.present) out.actions.loc = local.actions.loc;
    out.actions.present = true;
    for (auto& a : local.actions.actions) out.actions.actions.push_back(std::move(a));
  }
  return d.error_count() == before;
}

// Across all files: table entries unique by (kind, index); every `ref`
// names one; an index the table declares is used by `ref` only.
void check_actions(const State& s, Diagnostics& d) {
  std::map<std::pair<std::string, uint32_t>, const Action*> table;
  for (auto& a : s.actions.actions)
    if (auto [it, ok] = table.try_emplace({a.kind, *a.index}, &a); !ok)
      d.error(a.loc, "action " + a.kind + " index " + std::to_string(*a.index) + " is already declared at " +
                         format_location(it->second->loc));
  for_each_filter(s, [&](const Filter& f) {
    for (auto& a : f.actions) {
      if (!a.index) continue;
      auto it = table.find({a.kind, *a.index});
      if (a.ref && it == table.end())
        d.error(a.loc,
                "ref " + a.kind + "/" + std::to_string(*a.index) + ": no such action in 'actions:' (declare it there)");
      else if (!a.ref && it != table.end())
        d.error(a.loc, "action " + a.kind + " index " + std::to_string(*a.index) + " is declared in 'actions:' at " +
                           format_location(it->second->loc) + ": refer to it as ref: " + a.kind + "/" +
                           std::to_string(*a.index));
    }
  });
}

// Across all files: a declared block is bound by some declared qdisc (the
// kernel creates a block only when a qdisc binds it, and refuses filters on
// one that does not exist), and a hook side bound to a block has no filters
// of its own (the kernel: "This filter block is shared. Please use the block
// index to manipulate the filters").
void check_blocks(const State& s, Diagnostics& d) {
  std::set<uint32_t> bound;
  for (auto& dev : s.devices)
    for (auto& q : dev.qdiscs) {
      auto [in, eg] = bound_blocks(q);
      if (in) bound.insert(in);
      if (eg) bound.insert(eg);
      if (!in && !eg) continue;
      for (auto& c : dev.chains) {
        uint32_t side = c.parent == kHandleClsactEgress                                       ? eg
                        : c.parent == kHandleClsactIngress || c.parent == kHandleIngressQdisc ? in
                                                                                              : 0;
        if (side)
          d.error(c.loc, "the " +
                             describe_filter_parent(c.parent == kHandleClsactEgress ? kHandleClsactEgress
                                                                                    : kHandleClsactIngress) +
                             " chains of " + dev.name + " are those of shared " + block_name(side) +
                             ": declare this chain under 'blocks: " + std::to_string(side) + ":'");
      }
      for (auto& f : dev.filters) {
        uint32_t side = f.key.parent == kHandleClsactEgress                                           ? eg
                        : f.key.parent == kHandleClsactIngress || f.key.parent == kHandleIngressQdisc ? in
                                                                                                      : 0;
        if (side)
          d.error(f.loc, "the " +
                             describe_filter_parent(f.key.parent == kHandleClsactEgress ? kHandleClsactEgress
                                                                                        : kHandleClsactIngress) +
                             " filters of " + dev.name + " are those of shared " + block_name(side) + " (" + q.kind +
                             " at " + format_location(q.loc) +
                             "): declare this filter under 'blocks: " + std::to_string(side) + ":'");
      }
    }
  for (auto& b : s.blocks)
    if (!bound.count(b.block))
      d.error(b.loc, b.name + " is bound by no declared qdisc: give a clsact or ingress qdisc 'ingress_block: " +
                         std::to_string(b.block) +
                         "' (or egress_block); the kernel creates a block with its first qdisc");
}

}  // namespace

bool load_files(const std::vector<std::string>& paths, State& out, Diagnostics& d, const DeviceHook& on_device) {
  std::map<std::string, SourceLoc> declared;
  bool ok = true;
  for (auto& p : paths) {
    uint32_t id = SourceFiles::instance().add(p);
    YamlReader r(id, d);
    if (!r.open(p)) {
      ok = false;
      continue;
    }
    ok = load_reader(r, id, out, d, declared, &on_device) && ok;
  }
  if (ok) check_blocks(out, d), check_actions(out, d);
  return ok && !d.has_errors();
}

bool load_text(const std::string& name, std::string text, State& out, Diagnostics& d) {
  std::map<std::string, SourceLoc> declared;
  uint32_t id = SourceFiles::instance().add_text(name, text);
  YamlReader r(id, d);
  r.open_string(std::move(text));
  if (!load_reader(r, id, out, d, declared)) return false;
  check_blocks(out, d);
  check_actions(out, d);
  return !d.has_errors();
}

}  // namespace tcsync
