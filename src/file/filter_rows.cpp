// A rule table's rows (file/row_table.h) as filters: the first row parsed
// in full, each later one as a copy of it with its own columns parsed
// (FilterRows, file/reader.h).
#include "base/units.h"
#include "file/reader.h"
#include "file/row_table.h"
#include "kinds/registry.h"

namespace tcsync::loading {

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

}  // namespace tcsync::loading
