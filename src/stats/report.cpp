#include "stats/report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "base/diag.h"
#include "base/handle.h"
#include "base/json_text.h"

namespace tcsync {

namespace {

std::string qdisc_parent_text(uint32_t parent) {
  if (parent == kHandleRoot) return "root";
  if (parent == kHandleIngress) return "ingress";
  return format_handle(parent);
}

// rate, or rate/ceil, as the kind table prints them (htb, hfsc's have other
// names: only `rate` and `ceil` are looked for).
template <typename Obj>
std::string rate_text(const Obj& o) {
  if (!o.ops) return {};
  std::string s;
  for (std::string_view key : {"rate", "ceil"}) {
    int i = o.ops->field_index(key);
    if (i < 0) continue;
    if (auto* v = o.opts.get(static_cast<uint16_t>(i))) {
      if (!s.empty()) s += "/";
      s += describe_field(o.ops->fields[static_cast<size_t>(i)], *v);
    }
  }
  return s;
}

}  // namespace

std::string_view StatRow::kind() const {
  return qdisc ? qdisc->kind : cls ? cls->kind : filter->kind;
}

std::string_view StatRow::name() const {
  return filter ? std::string_view(filter->name) : std::string_view();
}

std::string StatRow::id() const {
  if (qdisc) return format_handle(qdisc->handle);
  if (cls) return format_handle(cls->classid);
  const Filter& f = *filter;
  std::string id = parent();
  id.reserve(64);
  if (f.key.chain) id += " chain ", id += std::to_string(f.key.chain);
  id += " pref ", id += std::to_string(f.key.pref);
  id += " protocol ", id += format_protocol(f.key.protocol);
  id += " handle ", id += format_filter_handle(f.ops, f.key.handle);
  return id;
}

std::string StatRow::parent() const {
  if (qdisc) return qdisc_parent_text(qdisc->parent);
  if (cls) return format_handle(cls->parent);
  return on_block ? std::string(place) : describe_filter_parent(filter->key.parent);
}

std::string StatRow::target() const {
  return filter && filter->classid ? format_handle(*filter->classid) : std::string();
}

std::string StatRow::where() const {
  if (!decl.known()) return {};
  return SourceFiles::instance().path(decl.file) + ":" + std::to_string(decl.line);
}

std::string StatRow::rate() const {
  return qdisc ? rate_text(*qdisc) : cls ? rate_text(*cls) : std::string();
}

std::string StatRow::label() const {
  return name().empty() ? id() : std::string(name());
}

std::string_view StatRow::action_kind(size_t i) const {
  return filter && i < filter->actions.size() ? std::string_view(filter->actions[i].kind) : std::string_view();
}

size_t StatsReport::missing() const {
  return static_cast<size_t>(std::count_if(declared.begin(), declared.end(), [](const StatRow& r) { return !r.live; }));
}

namespace {

void qdisc_row(StatRow& r, std::string_view place, const Qdisc& q) {
  r.type = StatRow::Type::Qdisc;
  r.place = place, r.qdisc = &q;
  r.handle = q.handle, r.parent_handle = q.parent;
}

void class_row(StatRow& r, std::string_view place, const Class& c) {
  r.type = StatRow::Type::Class;
  r.place = place, r.cls = &c;
  r.handle = c.classid, r.parent_handle = c.parent;
}

void filter_row(StatRow& r, std::string_view place, const Filter& f, bool on_block) {
  r.type = StatRow::Type::Filter;
  r.place = place, r.filter = &f, r.on_block = on_block;
  r.parent_handle = f.key.parent;
}

void attach(StatRow& r, const ObjStats* s) {
  r.stats = s;
}

// The rows of one place (a device or a block): with `declared` (the file's
// place, or null), the file's objects first, joined to the live ones; then
// the live objects it does not declare.
void join_place(const Device* want, const Device* have, const StatsTable& t, StatsReport& out) {
  const std::string& place = want ? want->name : have->name;
  bool on_block = (want ? want->block : have->block) != 0;
  if (want)
    out.declared.reserve(out.declared.size() + want->qdiscs.size() + want->classes.size() + want->filters.size());
  if (have)
    out.undeclared.reserve(out.undeclared.size() + have->qdiscs.size() + have->classes.size() + have->filters.size());
  auto ps = t.places.find(place);
  const PlaceStats* counted = ps == t.places.end() ? nullptr : &ps->second;
  auto filter_stats = [&](const FilterKey& k) -> const ObjStats* {
    if (!counted) return nullptr;
    auto it = counted->filters.find(k);
    return it == counted->filters.end() ? nullptr : &it->second;
  };
  std::set<uint32_t> q_decl, c_decl;
  std::set<FilterKey> f_decl;
  std::map<uint32_t, const Qdisc*> q_live;
  std::map<uint32_t, const Class*> c_live;
  std::map<FilterKey, const Filter*> f_live;
  if (have && want) {  // to join the file's objects to (without a file: not needed)
    for (auto& q : have->qdiscs) q_live[q.parent] = &q;
    for (auto& c : have->classes) c_live[c.classid] = &c;
    for (auto& f : have->filters)
      if (!f.empty_list) f_live[f.key] = &f;
  }
  if (want) {
    for (auto& q : want->qdiscs) {
      q_decl.insert(q.parent);
      auto it = q_live.find(q.parent);
      StatRow& r = out.declared.emplace_back();
      qdisc_row(r, place, it != q_live.end() && !q.handle ? *it->second : q);
      r.decl = q.loc, r.live = it != q_live.end();
      if (r.live) attach(r, t.qdisc(place, q.parent));
    }
    for (auto& c : want->classes) {
      c_decl.insert(c.classid);
      StatRow& r = out.declared.emplace_back();
      class_row(r, place, c);
      r.decl = c.loc, r.live = c_live.count(c.classid) > 0;
      if (r.live) attach(r, t.cls(place, c.classid));
    }
    for (auto& f : want->filters) {
      if (f.empty_list) continue;
      f_decl.insert(f.key);
      StatRow& r = out.declared.emplace_back();
      filter_row(r, place, f, on_block);
      r.decl = f.loc, r.live = f_live.count(f.key) > 0;
      if (r.live) attach(r, filter_stats(f.key));
    }
  }
  if (!have) return;
  for (auto& q : have->qdiscs)
    if (!q_decl.count(q.parent)) {
      StatRow& r = out.undeclared.emplace_back();
      qdisc_row(r, place, q);
      r.live = true;
      attach(r, t.qdisc(place, q.parent));
    }
  for (auto& c : have->classes)
    if (!c_decl.count(c.classid)) {
      StatRow& r = out.undeclared.emplace_back();
      class_row(r, place, c);
      r.live = true;
      attach(r, t.cls(place, c.classid));
    }
  for (auto& f : have->filters)
    if (!f.empty_list && !f_decl.count(f.key)) {
      StatRow& r = out.undeclared.emplace_back();
      filter_row(r, place, f, on_block);
      r.live = true;
      attach(r, filter_stats(f.key));
    }
}

const char* type_name(StatRow::Type t) {
  switch (t) {
    case StatRow::Type::Qdisc:
      return "qdisc";
    case StatRow::Type::Class:
      return "class";
    case StatRow::Type::Filter:
      return "filter";
  }
  return "?";
}

// ---- text ---------------------------------------------------------------

void counters_text(const Counters& c, std::ostream& out, bool queues = true) {
  if (c.basic) out << " " << c.packets << " pkt " << c.bytes << " bytes";
  if (c.hw && (c.hw_packets || c.hw_bytes)) out << " (hw " << c.hw_packets << " pkt " << c.hw_bytes << " bytes)";
  if (c.queue && !queues)
    out << " dropped " << c.drops << " overlimits " << c.overlimits;
  else if (c.queue)
    out << " dropped " << c.drops << " overlimits " << c.overlimits << " requeues " << c.requeues << " backlog "
        << c.backlog << "b " << c.qlen << "p";
  if (c.rate) out << " rate " << c.bps << " B/s " << c.pps << " pps";
}

void row_text(const StatRow& r, std::ostream& out) {
  out << "  " << type_name(r.type) << " " << r.kind() << " " << r.id();
  if (r.type == StatRow::Type::Class) out << " parent " << r.parent();
  if (r.type == StatRow::Type::Qdisc) {
    std::string parent = r.parent();
    out << " " << (parent == "root" || parent == "ingress" ? "" : "parent ") << parent;
  }
  if (!r.name().empty()) out << " \"" << r.name() << "\"";
  if (std::string t = r.target(); !t.empty()) out << " -> " << t;
  if (std::string w = r.where(); !w.empty()) out << "  (" << w << ")";
  out << "\n   ";
  if (!r.live) {
    out << " not in the kernel\n";
    return;
  }
  if (!r.stats) {
    out << " no counters reported\n";
    return;
  }
  if (r.type == StatRow::Type::Filter) {
    auto p = r.stats->filter_packets();
    auto b = r.stats->filter_bytes();
    if (p) out << " " << *p << " pkt";
    if (b) out << " " << *b << " bytes";
    if (r.stats->lookups) out << " (" << *r.stats->lookups << " looked up)";
    if (!p && !b) out << " no counters (no action; u32 counts its own hits only with CONFIG_CLS_U32_PERF)";
    out << "\n";
    for (size_t i = 0; i < r.stats->actions.size(); ++i) {
      std::string_view kind = r.action_kind(i);
      out << "    action " << (i + 1) << " " << (kind.empty() ? "?" : kind) << ":";
      counters_text(r.stats->actions[i], out, false);
      out << "\n";
    }
    return;
  }
  counters_text(r.stats->c, out);
  if (auto& h = r.stats->kind_xstats.htb)
    out << " lended " << h->lends << " borrowed " << h->borrows << " giants " << h->giants;
  out << "\n";
}

void rows_text(const std::vector<StatRow>& rows, std::ostream& out) {
  std::string_view place;
  bool first = true;
  for (auto& r : rows) {
    if (first || r.place != place) out << r.place << ":\n";
    first = false;
    place = r.place;
    row_text(r, out);
  }
}

// ---- JSON ---------------------------------------------------------------

void counters_json(const Counters& c, std::string& s) {
  s += "{";
  bool first = true;
  auto field = [&](const char* k, uint64_t v) {
    if (!first) s += ", ";
    first = false;
    s += "\"";
    s += k;
    s += "\": ";
    s += std::to_string(v);
  };
  if (c.basic) field("bytes", c.bytes), field("packets", c.packets);
  if (c.hw) field("hw_bytes", c.hw_bytes), field("hw_packets", c.hw_packets);
  if (c.hw && c.basic)
    field("sw_bytes", c.bytes - std::min(c.bytes, c.hw_bytes)),
        field("sw_packets", c.packets - std::min(c.packets, c.hw_packets));
  if (c.queue)
    field("drops", c.drops), field("overlimits", c.overlimits), field("requeues", c.requeues),
        field("backlog", c.backlog), field("qlen", c.qlen);
  if (c.rate) field("rate_bps", c.bps), field("rate_pps", c.pps);
  s += "}";
}

void row_json(const StatRow& r, std::string& s) {
  auto str = [&](const char* k, std::string_view v) {
    s += ", \"";
    s += k;
    s += "\": ";
    append_json_string(s, v);
  };
  s += "{\"object\": \"";
  s += type_name(r.type);
  s += "\"";
  str("place", r.place);
  str("kind", r.kind());
  str("id", r.id());
  str("parent", r.parent());
  if (!r.name().empty()) str("name", r.name());
  if (std::string t = r.target(); !t.empty()) str("classid", t);
  if (std::string rate = r.rate(); !rate.empty()) str("rate", rate);
  if (std::string w = r.where(); !w.empty()) str("where", w);
  s += ", \"live\": ";
  s += r.live ? "true" : "false";
  if (r.stats) {
    if (r.type == StatRow::Type::Filter) {
      if (auto p = r.stats->filter_packets()) s += ", \"packets\": " + std::to_string(*p);
      if (auto b = r.stats->filter_bytes()) s += ", \"bytes\": " + std::to_string(*b);
      if (r.stats->hits) s += ", \"hits\": " + std::to_string(*r.stats->hits);
      if (r.stats->lookups) s += ", \"lookups\": " + std::to_string(*r.stats->lookups);
      s += ", \"actions\": [";
      for (size_t i = 0; i < r.stats->actions.size(); ++i) {
        if (i) s += ", ";
        s += "{\"kind\": ";
        append_json_string(s, r.action_kind(i));
        s += ", \"counters\": ";
        counters_json(r.stats->actions[i], s);
        s += "}";
      }
      s += "]";
    } else {
      s += ", \"counters\": ";
      counters_json(r.stats->c, s);
      if (auto& h = r.stats->kind_xstats.htb)
        s += ", \"htb\": {\"lends\": " + std::to_string(h->lends) + ", \"borrows\": " + std::to_string(h->borrows) +
             ", \"giants\": " + std::to_string(h->giants) + ", \"tokens\": " + std::to_string(h->tokens) +
             ", \"ctokens\": " + std::to_string(h->ctokens) + "}";
    }
  }
  s += "}";
}

// ---- Prometheus ---------------------------------------------------------

// Streams the exposition: each family's HELP and TYPE once, then its
// samples, one pass over the rows a family (about 30 passes; no sample is
// held: 100k rules would otherwise hold every line of every family).
class Exposition {
 public:
  Exposition(const StatsReport& r, std::ostream& out) : out_(out) {
    for (const auto* rows : {&r.declared, &r.undeclared})
      for (auto& row : *rows) {
        if (!row.stats) continue;
        std::string l;
        label(l, "dev", row.place);
        label(l, "kind", row.kind());
        if (row.type == StatRow::Type::Filter) {
          label(l, "name", row.label());
        } else {
          label(l, row.type == StatRow::Type::Qdisc ? "handle" : "classid", row.id());
        }
        label(l, "parent", row.parent());
        if (r.with_files) label(l, "declared", rows == &r.declared ? "true" : "false");
        rows_.push_back({&row, std::move(l)});
      }
    buf_.reserve(kChunk + 4096);
  }
  ~Exposition() { flush(); }

  // Samples of the rows of `type` for which pick(row) gives a value.
  template <typename Pick>
  void family(StatRow::Type type, const std::string& name, const char* kind, const char* help, Pick&& pick) {
    bool head = false;
    for (auto& pr : rows_) {
      if (pr.row->type != type) continue;
      std::optional<uint64_t> v = pick(*pr.row->stats);
      if (!v) continue;
      if (!head) header(name, kind, help), head = true;
      sample(name, pr.labels, {}, *v);
    }
  }
  // Samples of every action of every rule, by pick(action counters).
  template <typename Pick>
  void action_family(const std::string& name, const char* kind, const char* help, Pick&& pick) {
    bool head = false;
    for (auto& pr : rows_) {
      if (pr.row->type != StatRow::Type::Filter) continue;
      auto& acts = pr.row->stats->actions;
      for (size_t i = 0; i < acts.size(); ++i) {
        std::optional<uint64_t> v = pick(acts[i]);
        if (!v) continue;
        if (!head) header(name, kind, help), head = true;
        std::string al;
        label(al, "action", std::to_string(i + 1));
        label(al, "action_kind", pr.row->action_kind(i));
        sample(name, pr.labels, al, *v);
      }
    }
  }
  void single(const std::string& name, const char* kind, const char* help, uint64_t v) {
    header(name, kind, help);
    sample(name, {}, {}, v);
  }

 private:
  static constexpr size_t kChunk = 64 * 1024;
  struct Row {
    const StatRow* row;
    std::string labels;
  };
  void header(const std::string& name, const char* kind, const char* help) {
    buf_ += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + kind + "\n";
  }
  void sample(const std::string& name, const std::string& labels, const std::string& more, uint64_t v) {
    buf_ += name;
    buf_ += '{';
    buf_ += labels;
    if (!more.empty()) {
      if (!labels.empty()) buf_ += ',';
      buf_ += more;
    }
    buf_ += "} ";
    buf_ += std::to_string(v);
    buf_ += '\n';
    if (buf_.size() >= kChunk) flush();
  }
  void flush() {
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }
  static void label(std::string& s, const char* k, std::string_view v) {
    if (!s.empty()) s += ",";
    s += k;
    s += "=\"";
    s += prometheus_escape(v);
    s += "\"";
  }
  std::ostream& out_;
  std::vector<Row> rows_;
  std::string buf_;
};

using Count = std::optional<uint64_t>;  // a counter the kernel may not report

// The counters of Counters, as families named PREFIX_*; `queues`: a qdisc's
// or class's (an action's queue nest holds only drops and overlimits).
template <typename Emit>
void counter_families(const std::string& pre, bool queues, Emit&& emit) {
  auto basic = [](auto f) { return [f](const Counters& c) { return c.basic ? Count(f(c)) : Count(); }; };
  auto hw = [](auto f) { return [f](const Counters& c) { return c.hw ? Count(f(c)) : Count(); }; };
  auto queue = [](auto f) { return [f](const Counters& c) { return c.queue ? Count(f(c)) : Count(); }; };
  auto rate = [](auto f) { return [f](const Counters& c) { return c.rate ? Count(f(c)) : Count(); }; };
  emit(pre + "_bytes_total", "counter", "Bytes sent (tc -s: Sent N bytes).",
       basic([](const Counters& c) { return c.bytes; }));
  emit(pre + "_packets_total", "counter", "Packets sent (tc -s: N pkt).",
       basic([](const Counters& c) { return c.packets; }));
  emit(pre + "_hw_bytes_total", "counter", "Of the bytes, those offloaded hardware counted.",
       hw([](const Counters& c) { return c.hw_bytes; }));
  emit(pre + "_hw_packets_total", "counter", "Of the packets, those offloaded hardware counted.",
       hw([](const Counters& c) { return c.hw_packets; }));
  emit(pre + "_drops_total", "counter", "Packets dropped.", queue([](const Counters& c) { return uint64_t{c.drops}; }));
  emit(pre + "_overlimits_total", "counter", "Overlimit events (throttled, or a policer's exceed).",
       queue([](const Counters& c) { return uint64_t{c.overlimits}; }));
  if (queues) {
    emit(pre + "_requeues_total", "counter", "Packets requeued.",
         queue([](const Counters& c) { return uint64_t{c.requeues}; }));
    emit(pre + "_backlog_bytes", "gauge", "Bytes queued now.",
         queue([](const Counters& c) { return uint64_t{c.backlog}; }));
    emit(pre + "_queue_packets", "gauge", "Packets queued now (qlen).",
         queue([](const Counters& c) { return uint64_t{c.qlen}; }));
  }
  emit(pre + "_rate_estimate_bytes_per_second", "gauge", "The kernel's rate estimator: bytes per second.",
       rate([](const Counters& c) { return c.bps; }));
  emit(pre + "_rate_estimate_packets_per_second", "gauge", "The kernel's rate estimator: packets per second.",
       rate([](const Counters& c) { return c.pps; }));
}

// ---- dot ----------------------------------------------------------------

std::string dot_escape(std::string_view v) {
  std::string s;
  for (char c : v) {
    if (c == '"' || c == '\\') s += '\\';
    if (c == '\n') {
      s += "\\n";
      continue;
    }
    s += c;
  }
  return s;
}

std::string human(uint64_t n) {
  const char* u[] = {"", "k", "M", "G", "T", "P"};
  double v = static_cast<double>(n);
  int i = 0;
  while (v >= 1000 && i < 5) v /= 1000, ++i;
  std::ostringstream o;
  o.precision(i ? 3 : 0);
  o << std::fixed << (i ? v : static_cast<double>(n)) << u[i];
  std::string s = o.str();
  return s;
}

std::string counters_line(const StatRow& r) {
  if (!r.live) return "not in the kernel";
  if (!r.stats) return "";
  std::string s;
  if (r.type == StatRow::Type::Filter) {
    if (auto p = r.stats->filter_packets()) s += human(*p) + " pkt";
    if (auto b = r.stats->filter_bytes()) s += " " + human(*b) + "B";
    return s;
  }
  const Counters& c = r.stats->c;
  if (c.basic) s += human(c.packets) + " pkt " + human(c.bytes) + "B";
  if (c.queue && c.drops) s += " drop " + human(c.drops);
  if (c.rate) s += " " + human(c.bps * 8) + "bit/s";
  return s;
}

uint64_t busy(const StatRow& r) {
  if (!r.stats) return 0;
  if (r.type == StatRow::Type::Filter) return r.stats->filter_packets().value_or(0);
  return r.stats->c.packets;
}

}  // namespace

std::string prometheus_escape(std::string_view v) {
  std::string s;
  s.reserve(v.size());
  for (char c : v) {
    if (c == '\\')
      s += "\\\\";
    else if (c == '"')
      s += "\\\"";
    else if (c == '\n')
      s += "\\n";
    else
      s += c;
  }
  return s;
}

StatsReport join_stats(const State* desired, const State& live, const StatsTable& table) {
  StatsReport out;
  out.with_files = desired != nullptr;
  std::set<std::string> seen;
  auto both = [&](const std::vector<Device>& want, const std::vector<Device>& have) {
    for (auto& w : want) {
      seen.insert(w.name);
      const Device* h = nullptr;
      for (auto& d : have)
        if (d.name == w.name) h = &d;
      join_place(&w, h, table, out);
    }
  };
  if (desired) {
    both(desired->devices, live.devices);
    both(desired->blocks, live.blocks);
  }
  // Live places the files do not declare (blocks their devices bind, or
  // every place without files).
  for (const auto* places : {&live.devices, &live.blocks})
    for (auto& h : *places)
      if (!seen.count(h.name)) join_place(nullptr, &h, table, out);
  return out;
}

void write_stats_text(const StatsReport& r, std::ostream& out) {
  if (r.with_files) {
    rows_text(r.declared, out);
    if (!r.undeclared.empty()) {
      out << "\nnot in the files:\n";
      rows_text(r.undeclared, out);
    }
    if (size_t m = r.missing()) out << "\n" << m << " declared object(s) not in the kernel\n";
  } else {
    rows_text(r.undeclared, out);
  }
}

void write_stats_json(const StatsReport& r, std::ostream& out) {
  std::string s = "{\"format\": \"tcsync-stats\", \"version\": 1, \"declared\": [";
  auto rows = [&](const std::vector<StatRow>& v) {
    for (size_t i = 0; i < v.size(); ++i) {
      s += i ? ",\n  " : "\n  ";
      row_json(v[i], s);
    }
  };
  rows(r.declared);
  s += "],\n\"undeclared\": [";
  rows(r.undeclared);
  s += "],\n\"missing\": " + std::to_string(r.missing()) + "}\n";
  out << s;
}

void write_stats_prometheus(const StatsReport& r, std::ostream& out) {
  Exposition e(r, out);
  for (auto type : {StatRow::Type::Qdisc, StatRow::Type::Class})
    counter_families(std::string("tcsync_") + type_name(type), true,
                     [&](const std::string& name, const char* kind, const char* help, auto pick) {
                       e.family(type, name, kind, help, [&](const ObjStats& s) { return pick(s.c); });
                     });
  auto htb = [&](const char* name, const char* help, auto f) {
    e.family(StatRow::Type::Class, name, "counter", help,
             [&](const ObjStats& s) { return s.kind_xstats.htb ? Count(f(*s.kind_xstats.htb)) : Count(); });
  };
  htb("tcsync_class_lends_total", "htb: packets the class sent within its own rate.",
      [](const HtbXstats& h) { return uint64_t{h.lends}; });
  htb("tcsync_class_borrows_total", "htb: packets the class sent on tokens borrowed from its parent.",
      [](const HtbXstats& h) { return uint64_t{h.borrows}; });
  htb("tcsync_class_giants_total", "htb: packets larger than the class's mtu.",
      [](const HtbXstats& h) { return uint64_t{h.giants}; });
  e.family(StatRow::Type::Filter, "tcsync_filter_packets_total", "counter",
           "Packets the rule matched (its own hit count, else its first action's).",
           [](const ObjStats& s) { return s.filter_packets(); });
  e.family(StatRow::Type::Filter, "tcsync_filter_bytes_total", "counter",
           "Bytes the rule matched (its first action's).", [](const ObjStats& s) { return s.filter_bytes(); });
  e.family(StatRow::Type::Filter, "tcsync_filter_lookups_total", "counter",
           "u32: packets the rule was tried on (CONFIG_CLS_U32_PERF).", [](const ObjStats& s) { return s.lookups; });
  counter_families("tcsync_action", false, [&](const std::string& name, const char* kind, const char* help, auto pick) {
    e.action_family(name, kind, help, pick);
  });
  if (r.with_files)
    e.single("tcsync_declared_missing", "gauge", "Objects the files declare that the kernel does not hold.",
             r.missing());
}

void write_stats_dot(const StatsReport& r, std::ostream& out, size_t leaf_limit) {
  std::vector<const StatRow*> rows;
  for (auto& x : r.declared) rows.push_back(&x);
  for (auto& x : r.undeclared)
    if (x.live) rows.push_back(&x);
  std::vector<std::string_view> places;
  for (auto* x : rows)
    if (std::find(places.begin(), places.end(), x->place) == places.end()) places.push_back(x->place);
  out << "digraph tcsync {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n"
         "  edge [arrowsize=0.6];\n";
  size_t place_no = 0;
  for (auto& place : places) {
    std::string p = "p" + std::to_string(place_no++);
    // Node ids: qdisc/class by handle within the place; filters by position.
    auto node = [&](uint32_t h) { return p + "_h" + std::to_string(h); };
    std::map<uint32_t, std::vector<const StatRow*>> children;  // class parent -> classes
    std::set<uint32_t> has_children;
    std::vector<const StatRow*> qdiscs, filters;
    std::map<uint32_t, std::string> drawn;  // handle -> the node that stands for it (a folded leaf: its "more" node)
    for (auto* x : rows) {
      if (x->place != place) continue;
      if (x->type == StatRow::Type::Qdisc)
        qdiscs.push_back(x);
      else if (x->type == StatRow::Type::Class)
        children[x->parent_handle].push_back(x), has_children.insert(x->parent_handle);
      else
        filters.push_back(x);
    }
    out << "  subgraph cluster_" << p << " {\n    label=\"" << dot_escape(place) << "\";\n    style=rounded;\n";
    auto box = [&](const StatRow& x, const std::string& id) {
      std::string l = std::string(x.kind()) + " " + x.id();
      if (std::string rate = x.rate(); !rate.empty()) l += "\n" + rate;
      std::string c = counters_line(x);
      if (!c.empty()) l += "\n" + c;
      if (std::string w = x.where(); !w.empty()) l += "\n" + w;
      out << "    " << id << " [label=\"" << dot_escape(l) << "\"" << (x.live ? "" : ", style=dashed")
          << (x.type == StatRow::Type::Qdisc ? ", shape=box3d" : "") << "];\n";
    };
    for (auto* q : qdiscs) box(*q, node(q->handle)), drawn[q->handle] = node(q->handle);
    // Classes: each parent's children in a cluster of their own; leaves
    // past the limit (the least busy) fold into one node.
    for (auto& [parent, kids] : children) {
      out << "    subgraph cluster_" << p << "_c" << parent << " {\n    label=\"\";\n    style=dotted;\n";
      std::vector<const StatRow*> leaves, inner;
      for (auto* k : kids) (has_children.count(k->handle) ? inner : leaves).push_back(k);
      std::stable_sort(leaves.begin(), leaves.end(), [](auto* a, auto* b) { return busy(*a) > busy(*b); });
      size_t shown = std::min(leaves.size(), leaf_limit);
      for (auto* k : inner) box(*k, node(k->handle)), drawn[k->handle] = node(k->handle);
      for (size_t i = 0; i < shown; ++i)
        box(*leaves[i], node(leaves[i]->handle)), drawn[leaves[i]->handle] = node(leaves[i]->handle);
      for (size_t i = shown; i < leaves.size(); ++i) drawn[leaves[i]->handle] = p + "_more" + std::to_string(parent);
      if (leaves.size() > shown) {
        uint64_t pk = 0;
        for (size_t i = shown; i < leaves.size(); ++i) pk += busy(*leaves[i]);
        out << "    " << p << "_more" << parent << " [label=\"" << (leaves.size() - shown) << " more leaf classes\\n"
            << human(pk) << " pkt\", shape=folder];\n";
      }
      out << "    }\n";
    }
    // Edges once every node is drawn: the parent's node is a class, or the
    // qdisc whose handle it is (one the files name but the kernel lacks: none).
    auto edge = [&](uint32_t from, const std::string& to, const char* style) {
      auto it = drawn.find(from);
      if (it != drawn.end()) out << "    " << it->second << " -> " << to << style << ";\n";
    };
    for (auto& [parent, kids] : children) {
      std::set<std::string> done;
      for (auto* k : kids)
        if (done.insert(drawn[k->handle]).second) edge(parent, drawn[k->handle], "");
    }
    // A child qdisc hangs under the class that is its parent.
    for (auto* q : qdiscs)
      if (q->parent_handle != kHandleRoot && q->parent_handle != kHandleIngress && handle_minor(q->parent_handle))
        edge(q->parent_handle, node(q->handle), "");
    size_t fi = 0;
    for (auto* f : filters) {
      std::string id = p + "_f" + std::to_string(fi++);
      std::string l = f->label() + "\n" + std::string(f->kind());
      for (auto& a : f->filter->actions) l += " " + a.kind;
      std::string c = counters_line(*f);
      if (!c.empty()) l += "\n" + c;
      if (std::string w = f->where(); !w.empty()) l += "\n" + w;
      out << "    " << id << " [label=\"" << dot_escape(l) << "\", shape=note" << (f->live ? "" : ", style=dashed")
          << "];\n";
      // Fed from the qdisc/class it hangs at, feeding the class it names.
      uint32_t at = f->parent_handle;
      bool hook = at == kHandleClsactIngress || at == kHandleClsactEgress || at == kHandleIngress;
      edge(hook ? 0xFFFF0000u : at, id, " [style=dashed]");
      // A class's id is its classid formatted as the target is: compared as numbers.
      if (f->filter->classid)
        for (auto* k : rows)
          if (k->place == place && k->type == StatRow::Type::Class && k->handle == *f->filter->classid &&
              drawn.count(k->handle))
            out << "    " << id << " -> " << drawn[k->handle] << " [color=blue];\n";
    }
    out << "  }\n";
  }
  out << "}\n";
}

namespace {
struct Totals {
  uint64_t packets = 0, bytes = 0;
};
Totals totals(const StatRow& r) {
  if (!r.stats) return {};
  if (r.type == StatRow::Type::Filter)
    return {r.stats->filter_packets().value_or(0), r.stats->filter_bytes().value_or(0)};
  return {r.stats->c.packets, r.stats->c.bytes};
}
std::string row_key(const StatRow& r) {
  return std::string(r.place) + "\n" + type_name(r.type) + "\n" + r.id();
}
}  // namespace

void write_stats_watch(const StatsReport& now, const StatsReport* before, double secs, std::ostream& out) {
  std::map<std::string, Totals> old;
  if (before)
    for (const auto* rows : {&before->declared, &before->undeclared})
      for (auto& r : *rows) old[row_key(r)] = totals(r);
  struct Line {
    const StatRow* row;
    Totals t;
    double pps, bps;
  };
  std::vector<Line> lines;
  for (const auto* rows : {&now.declared, &now.undeclared})
    for (auto& r : *rows) {
      if (!r.stats) continue;
      Totals t = totals(r);
      double pps = 0, bps = 0;
      if (auto it = old.find(row_key(r)); it != old.end() && secs > 0) {
        pps = static_cast<double>(t.packets - std::min(t.packets, it->second.packets)) / secs;
        bps = static_cast<double>(t.bytes - std::min(t.bytes, it->second.bytes)) * 8 / secs;
      }
      lines.push_back({&r, t, pps, bps});
    }
  std::stable_sort(lines.begin(), lines.end(), [](const Line& a, const Line& b) {
    return a.bps != b.bps ? a.bps > b.bps : a.pps != b.pps ? a.pps > b.pps : a.t.bytes > b.t.bytes;
  });
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-10s %-7s %-34s %12s %12s %14s %14s\n", "DEVICE", "OBJECT", "NAME", "PKT/S", "BIT/S",
                "PACKETS", "BYTES");
  out << buf;
  // Rates below 1000 with a decimal: a ping a second is 1.0, not 0.
  auto rate = [](double v) {
    char b[32];
    if (v < 1000)
      std::snprintf(b, sizeof b, "%.1f", v);
    else
      return human(static_cast<uint64_t>(v));
    return std::string(b);
  };
  for (auto& l : lines) {
    // A rule the kernel keeps no counter for (u32 without an action): "-".
    bool counted = l.row->type != StatRow::Type::Filter || l.row->stats->filter_packets();
    std::string name = std::string(l.row->kind()) + " " + l.row->label();
    if (name.size() > 34) name = name.substr(0, 33) + "~";
    std::string pps = before && counted ? rate(l.pps) : "-", bps = before && counted ? rate(l.bps) : "-";
    std::string pk = counted ? std::to_string(l.t.packets) : "-", by = counted ? std::to_string(l.t.bytes) : "-";
    std::snprintf(buf, sizeof buf, "%-10s %-7s %-34s %12s %12s %14s %14s", std::string(l.row->place).c_str(),
                  type_name(l.row->type), name.c_str(), pps.c_str(), bps.c_str(), pk.c_str(), by.c_str());
    out << buf;
    if (std::string w = l.row->where(); !w.empty()) out << "  " << w;
    out << "\n";
  }
}

}  // namespace tcsync
