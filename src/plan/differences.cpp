#include "plan/differences.h"

#include <linux/rtnetlink.h>

#include <algorithm>

#include "base/handle.h"
#include "kinds/registry.h"
#include "model/name_cookie.h"
#include "model/size_table.h"
#include "netlink/wire.h"

namespace tcsync {

std::vector<std::string> diff_options(const KindOps& ops, const Options& want, const Options& have, bool& recreate) {
  std::vector<std::string> out;
  auto* kernel_tunes = qdisc_ops(ops).kernel_tunes;
  // Only a field present on either side can differ: one absent from both
  // reads as its def (or nothing) on both. So the two sorted lists are
  // walked together, in field order, rather than every field of the kind
  // looked up in each (flower has over a hundred; a rule sets a few).
  const auto& a = want.items();
  const auto& b = have.items();
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    uint16_t idx = j == b.size() || (i < a.size() && a[i].field < b[j].field) ? a[i].field : b[j].field;
    const Value* w = i < a.size() && a[i].field == idx ? &a[i++].value : nullptr;
    const Value* h = j < b.size() && b[j].field == idx ? &b[j++].value : nullptr;
    if (idx >= ops.fields.size()) continue;
    const Field& f = ops.fields[idx];
    if (f.flags & (kReadOnly | kInputOnly | kNoCompare)) continue;
    if (kernel_tunes && kernel_tunes(want, idx)) continue;
    Value s1, s2;
    w = or_default(f, w, s1);
    if (!w && (f.flags & kAuto)) continue;  // the kernel's choice is not drift
    h = or_default(f, h, s2);
    if (!w && !h) continue;
    if (w && h && (f.custom && f.custom->same ? f.custom->same(*w, *h) : *w == *h)) continue;
    out.push_back(std::string(f.key) + " " + (h ? describe_field(f, *h) : "(none)") + " -> " +
                  (w ? describe_field(f, *w) : "(none)"));
    if (f.flags & kRecreate) recreate = true;
  }
  return out;
}

// Raw bytes (model.h Raw) are compared as bytes and described by the
// attribute types they hold: what tcsync cannot read is never equal by
// default, and the plan says which attributes differ.
// A qdisc's size table is raw too, but read: it is described as the file
// spells it (model/size_table.h).
void diff_raw(const Raw& want, const Raw& have, std::vector<std::string>& why) {
  auto types = [](const Opaque& o) { return o.empty() ? std::string("(none)") : "attrs " + attr_types(o); };
  if (want.options() != have.options())
    why.push_back("unread options " + types(have.options()) + " -> " + types(want.options()));
  if (want.attrs() == have.attrs()) return;
  // (the TCA_STAB attribute as YAML or "(none)", the other attributes)
  auto split = [](const Opaque& o) {
    std::pair<std::string, Opaque> out{"(none)", {}};
    AttrIter it(o);
    size_t pos = 0;
    for (Attr a; it.next(a);) {
      size_t whole = std::min(nl_align(a.data.size() + 4), o.size() - pos);
      std::optional<std::string> stab = a.type == TCA_STAB ? describe_stab(a.data) : std::nullopt;
      if (stab)
        out.first = *stab;
      else
        out.second.insert(out.second.end(), o.begin() + static_cast<std::ptrdiff_t>(pos),
                          o.begin() + static_cast<std::ptrdiff_t>(pos + whole));
      pos += whole;
    }
    return out;
  };
  auto [w_stab, w_rest] = split(want.attrs());
  auto [h_stab, h_rest] = split(have.attrs());
  if (w_stab != h_stab) why.push_back("stab " + h_stab + " -> " + w_stab);
  if (w_rest != h_rest) why.push_back("unread attributes " + types(h_rest) + " -> " + types(w_rest));
}

namespace {

bool same_action(const Action& want, const Action& have, std::vector<std::string>& why) {
  if (want.kind != have.kind) {
    why.push_back("action " + have.kind + " -> " + want.kind);
    return false;
  }
  // A reference binds the table's action: which one is all it says.
  if (want.ref) {
    if (want.index == have.index) return true;
    why.push_back(want.kind + " index " + (have.index ? std::to_string(*have.index) : "(none)") + " -> " +
                  std::to_string(*want.index));
    return false;
  }
  bool ok = true;
  if (want.index && want.index != have.index) {
    why.push_back(want.kind + " index " + (have.index ? std::to_string(*have.index) : "(none)") + " -> " +
                  std::to_string(*want.index));
    ok = false;
  }
  if (want.cookie != have.cookie) {
    why.push_back(want.kind + " cookie changed");
    ok = false;
  }
  // Compared only when declared: a rule is not replaced just for the flag.
  if (want.percpu_stats && *want.percpu_stats != have.percpu_stats.value_or(true)) {
    auto word = [](bool b) { return b ? "true" : "false"; };
    why.push_back(want.kind + " percpu_stats " + word(have.percpu_stats.value_or(true)) + " -> " +
                  word(*want.percpu_stats));
    ok = false;
  }
  std::vector<std::string> d;
  bool recreate = false;
  if (want.ops && have.ops) d = diff_options(*want.ops, want.opts, have.opts, recreate);
  diff_raw(want.raw, have.raw, d);
  for (auto& x : d) why.push_back(want.kind + " " + x), ok = false;
  return ok;
}

// A filter's own police (FilterOps::old_police_attr) against the live one,
// by the police table's fields: "police rate 1mbit -> 2mbit". A filter
// replace sends the whole new police, so nothing here needs delete + add.
void diff_police(const FilterPolice* want, const FilterPolice* have, std::vector<std::string>& why) {
  if (!want && !have) return;
  if (want && have) {
    bool recreate = false;
    for (auto& x : diff_options(kActionPolice, want->opts, have->opts, recreate)) why.push_back("police " + x);
    return;
  }
  auto text = [](const FilterPolice* p) {
    if (!p) return std::string("(none)");
    std::string s;
    for (auto& o : p->opts.items()) {
      const Field& f = kActionPolice.fields[o.field];
      s += (s.empty() ? "" : ", ") + std::string(f.key) + " " + describe_field(f, o.value);
    }
    return "{" + s + "}";
  };
  why.push_back("police " + text(have) + " -> " + text(want));
}

}  // namespace

std::vector<std::string> qdisc_differences(const Qdisc& q, const Qdisc& l, bool& recreate) {
  std::vector<std::string> d;
  if (l.kind != q.kind) {
    d.push_back("kind " + l.kind + " -> " + q.kind), recreate = true;
  } else if (l.handle != q.handle) {
    d.push_back("handle " + format_handle(l.handle) + " -> " + format_handle(q.handle)), recreate = true;
  } else {
    if (q.ops && l.ops) d = diff_options(*q.ops, q.opts, l.opts, recreate);
    bool opts_differ = !d.empty();
    diff_raw(q.raw, l.raw, d);
    auto* need_recreate = qdisc_ops(q.ops).options_need_recreate;
    if (opts_differ && !recreate && q.ops == l.ops && need_recreate && need_recreate(q.opts, l.opts)) recreate = true;
    if (!d.empty() && (!q.ops || !l.ops || !qdisc_ops(q.ops).can_change)) recreate = true;
  }
  return d;
}

std::vector<std::string> class_differences(const Class& c, const Class& l, bool& recreate, bool* by_options) {
  std::vector<std::string> d;
  if (l.kind != c.kind) {
    d.push_back("kind " + l.kind + " -> " + c.kind), recreate = true;
  } else if (l.parent != c.parent) {
    d.push_back("parent " + format_handle(l.parent) + " -> " + format_handle(c.parent)), recreate = true;
  } else {
    if (c.ops && l.ops) d = diff_options(*c.ops, c.opts, l.opts, recreate);
    bool opts_differ = !d.empty();
    diff_raw(c.raw, l.raw, d);
    auto* need_recreate = class_ops(c.ops).options_need_recreate;
    if (opts_differ && !recreate && c.ops == l.ops && need_recreate && need_recreate(c.opts, l.opts)) {
      recreate = true;
      if (by_options) *by_options = true;
    }
  }
  return d;
}

std::vector<std::string> filter_differences(const Filter& f, const Filter& l, bool& recreate) {
  std::vector<std::string> why;
  if (f.ops && l.ops)
    why = diff_options(*f.ops, f.opts, l.opts, recreate);
  else if (f.raw.options() != l.raw.options() || !l.ops || !f.ops)
    recreate = true;  // a kind without a table
  diff_raw(f.raw, l.raw, why);
  if (f.classid != l.classid)
    why.push_back("classid " + (l.classid ? format_handle(*l.classid) : "(none)") + " -> " +
                  (f.classid ? format_handle(*f.classid) : "(none)"));
  diff_police(f.police.get(), l.police.get(), why);
  // The kernel keeps the name (name_cookie.h): a rename is a change, and a
  // long name equals its abbreviation. Unnamed rules (most of a big
  // file) compare nothing here.
  if (!f.name.empty() || !l.name.empty()) {
    NameCookie want = kept_name(f), have = kept_name(l);
    auto text = [](const NameCookie& c, const Filter& x) {
      return c.empty() ? std::string("(none)") : "\"" + x.name + "\"";
    };
    if (want != have) why.push_back("name " + text(have, l) + " -> " + text(want, f));
  }
  if (f.actions.size() != l.actions.size()) {
    why.push_back("actions " + std::to_string(l.actions.size()) + " -> " + std::to_string(f.actions.size()));
  } else {
    for (size_t i = 0; i < f.actions.size(); ++i) same_action(f.actions[i], l.actions[i], why);
  }
  auto* needs_recreate = filter_ops(f.ops).needs_recreate;
  if (!why.empty() && f.ops == l.ops && needs_recreate && needs_recreate(f, l)) recreate = true;
  return why;
}

std::vector<std::string> action_differences(const Action& want, const Action& have) {
  std::vector<std::string> why;
  same_action(want, have, why);
  return why;
}

std::string join_differences(const std::vector<std::string>& v) {
  std::string s;
  for (auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace tcsync
