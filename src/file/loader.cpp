// The loader's walk of a document: the top level, devices, blocks and the
// action table, each list entry by entry (a rule table row by row), handed
// to read_entries.cpp and filter_rows.cpp; then the checks (check.h), and
// the file joins the state.
#include "file/loader.h"

#include <map>
#include <set>
#include <type_traits>

#include "base/units.h"
#include "file/check.h"
#include "file/reader.h"
#include "file/row_table.h"
#include "yaml/yaml_reader.h"

namespace tcsync {
namespace loading {
namespace {

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

}  // namespace

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

}  // namespace loading

namespace {

using loading::Loader;

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
