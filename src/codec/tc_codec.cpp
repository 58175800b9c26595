#include "codec/tc_codec.h"

#include <linux/netlink.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>

#include "base/handle.h"
#include "codec/stab.h"
#include "kinds/registry.h"
#include "model/fingerprint.h"
#include "model/name_cookie.h"

namespace tcsync {

const char* op_name(Op op) {
  switch (op) {
    case Op::Add:
      return "add";
    case Op::Replace:
      return "replace";
    case Op::Change:
      return "change";
    case Op::Delete:
      return "delete";
  }
  return "?";
}

namespace {

uint16_t op_flags(Op op) {
  switch (op) {
    case Op::Add:
      return NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
    case Op::Replace:
      return NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE;
    case Op::Change:
      return NLM_F_REQUEST | NLM_F_ACK;
    case Op::Delete:
      return NLM_F_REQUEST | NLM_F_ACK;
  }
  return NLM_F_REQUEST | NLM_F_ACK;
}

size_t begin_tc(MsgWriter& w, uint16_t type, uint16_t flags, uint32_t ifindex, uint32_t handle, uint32_t parent,
                uint32_t info) {
  size_t off = w.begin_message(type, flags, 0);
  tcmsg t{};
  t.tcm_family = AF_UNSPEC;
  t.tcm_ifindex = static_cast<int>(ifindex);
  t.tcm_handle = handle;
  t.tcm_parent = parent;
  t.tcm_info = info;
  w.put_struct(t);
  return off;
}

// An object's TCA_OPTIONS: its table's attributes and then what the table
// did not read when it was dumped (model.h Raw); for a kind without a
// table, the dumped payload as it was.
// Options that are all raw bytes (a kind without a table, or a table with
// no fields yet), sent as dumped: kernels report TCA_OPTIONS, empty or not,
// and some kinds need it even empty (ets' class change: "options are
// required"). The dump does not say whether the kernel wants NLA_F_NESTED
// (ets parses strictly and does); bytes that are whole attributes get it,
// which lenient parsers ignore, and a bare struct (multiq) goes without.
void write_raw_options(MsgWriter& w, const Opaque& raw) {
  bool nested = whole_attrs(raw);  // an empty nest too
  w.attr(TCA_OPTIONS | (nested ? NLA_F_NESTED : 0), raw.data(), raw.size());
}

void write_options(MsgWriter& w, const KindOps* kind, const Options& o, const KindCtx& ctx, const Opaque& unread) {
  if (!kind) {
    write_raw_options(w, unread);
    return;
  }
  if (!kind->encode) {  // a table with nothing to send (mq), unless the kernel had more
    if (!unread.empty()) write_raw_options(w, unread);
    return;
  }
  const KindOps& ops = *kind;
  if (qdisc_ops(ops).options_top_level) {
    ops.encode(o, ctx, w);
    // A TCA_OPTIONS the kernel reported with content (decode_kind keeps it).
    if (!unread.empty()) write_raw_options(w, unread);
    return;
  }
  if (ops.options_raw) {
    // A bare struct: the header without NLA_F_NESTED, as tc sends it.
    size_t at = w.size();
    w.attr(TCA_OPTIONS, nullptr, 0);
    ops.encode(o, ctx, w);
    if (w.size() == at + 4) {
      w.buffer().resize(at);  // nothing to say: no attribute (fifo_init rejects an empty one)
      return;
    }
    uint16_t len = static_cast<uint16_t>(w.size() - at);
    std::memcpy(w.buffer().data() + at, &len, 2);
    w.buffer().resize(at + nl_align(len));  // pads what put_unpadded left (zero-filled)
    return;
  }
  size_t nest = w.nest_begin(TCA_OPTIONS | (ops.options_nested ? NLA_F_NESTED : 0));
  ops.encode(o, ctx, w);
  w.put_raw(unread.data(), unread.size());
  w.nest_end(nest);
}

// One entry of an action list: { KIND, OPTIONS {...}, COOKIE?, FLAGS? }.
void write_one_action(MsgWriter& w, uint16_t prio, const Action& a, const LinkNames* links, Diagnostics& d,
                      std::span<const uint8_t> cookie) {
  size_t one = w.nest_begin(prio);
  w.attr_str(TCA_ACT_KIND, a.kind);
  if (a.ref) {
    // A reference binds the table's action: the index alone says which.
    size_t opts = w.nest_begin(TCA_ACT_OPTIONS | NLA_F_NESTED);
    const ActionOps& ao = action_ops(a.ops);
    std::vector<uint8_t> parms(std::max<size_t>(ao.parms_size, sizeof(uint32_t)));
    uint32_t index = a.index.value_or(0);
    std::memcpy(parms.data(), &index, sizeof index);
    if (ao.parms_attr) w.attr(ao.parms_attr, parms.data(), parms.size());
    w.nest_end(opts);
    w.nest_end(one);
    return;
  }
  KindCtx ctx;
  ctx.action_index = a.index.value_or(0);
  ctx.links = links;
  ctx.diags = &d;
  ctx.loc = a.loc;
  if (a.ops && a.ops->encode) {
    size_t opts = w.nest_begin(TCA_ACT_OPTIONS | NLA_F_NESTED);
    a.ops->encode(a.opts, ctx, w);
    w.put_raw(a.raw.options().data(), a.raw.options().size());
    w.nest_end(opts);
  } else if (!a.ops || !a.ops->encode) {
    size_t opts = w.nest_begin(TCA_ACT_OPTIONS | NLA_F_NESTED);
    size_t at = w.size();
    w.put_raw(a.raw.options().data(), a.raw.options().size());
    // The index the model holds goes into the raw parameter struct, where
    // the kind reads it (keep_parms took the dumped one out).
    if (uint16_t parms = action_ops(a.ops).parms_attr; a.index && parms) {
      std::span<const uint8_t> body(w.buffer().data() + at, w.size() - at);
      AttrIter it(body);
      Attr p;
      while (it.next(p))
        if (p.type == parms && p.data.size() >= sizeof(uint32_t))
          std::memcpy(w.buffer().data() + (p.data.data() - w.buffer().data()), &*a.index, sizeof(uint32_t));
    }
    w.nest_end(opts);
  }
  if (!cookie.empty()) w.attr(TCA_ACT_COOKIE, cookie.data(), cookie.size());
  if (!a.percpu_stats.value_or(false)) {
    // What tc sends for `no_percpu`, after the cookie as tc places it.
    nla_bitfield32 flags{TCA_ACT_FLAGS_NO_PERCPU_STATS, TCA_ACT_FLAGS_NO_PERCPU_STATS};
    w.attr(TCA_ACT_FLAGS, &flags, sizeof flags);
  }
  w.put_raw(a.raw.attrs().data(), a.raw.attrs().size());
  w.nest_end(one);
}

// The action list of a filter:
//   [filter's ACT attr] { [1] { KIND, OPTIONS {...}, COOKIE? }, [2] {...} }
// tcsync's own cookies go where the user's are not: the fingerprint
// (fingerprint.h) in the first action's, the name in name_action's
// (name_cookie.h).
void write_actions(MsgWriter& w, uint16_t attr, const Filter& f, const LinkNames* links, Diagnostics& d) {
  int named = name_action(f);
  NameCookie name = named >= 0 ? name_cookie(f.name) : NameCookie{};
  size_t list = w.nest_begin(attr);
  for (size_t i = 0; i < f.actions.size(); ++i) {
    const Action& a = f.actions[i];
    std::span<const uint8_t> cookie = a.cookie;
    if (static_cast<int>(i) == named)
      cookie = name.view();
    else if (i == 0 && a.cookie.empty() && !a.ref)
      cookie = f.fingerprint;
    write_one_action(w, static_cast<uint16_t>(i + 1), a, links, d, cookie);
  }
  w.nest_end(list);
}

size_t begin_tca(MsgWriter& w, uint16_t type, uint16_t flags) {
  size_t off = w.begin_message(type, flags, 0);
  tcamsg t{};
  t.tca_family = AF_UNSPEC;
  w.put_struct(t);
  return off;
}

}  // namespace

size_t encode_qdisc(MsgWriter& w, Op op, const Qdisc& q, uint32_t ifindex, const LinkNames* links, Diagnostics& d,
                    uint16_t part) {
  uint16_t type = op == Op::Delete ? RTM_DELQDISC : RTM_NEWQDISC;
  size_t off = begin_tc(w, type, op_flags(op), ifindex, q.handle, q.parent, 0);
  w.attr_str(TCA_KIND, q.kind);
  if (op != Op::Delete) {
    KindCtx ctx{q.handle, 0, links, &d, q.loc};
    ctx.change = op == Op::Change;
    ctx.part = part;
    // The unread bytes go with the qdisc's own message, not its follow-ups.
    static const Opaque kNone;
    write_options(w, q.ops, q.opts, ctx, part ? kNone : q.raw.options());
    if (!part && !q.raw.attrs().empty()) {
      auto attrs = with_stab_table(q.raw.attrs());
      w.put_raw(attrs.data(), attrs.size());
    }
  }
  w.end_message(off);
  return off;
}

size_t encode_class(MsgWriter& w, Op op, const Class& c, uint32_t ifindex, const LinkNames* links, Diagnostics& d) {
  uint16_t type = op == Op::Delete ? RTM_DELTCLASS : RTM_NEWTCLASS;
  // A class of a kind without a table may be one its qdisc made itself (ets
  // makes a class per band): tcsync cannot tell, so an add may also change
  // an existing one, as `tc class replace` does.
  if (op == Op::Add && !c.ops) op = Op::Replace;
  size_t off = begin_tc(w, type, op_flags(op), ifindex, c.classid, c.parent, 0);
  w.attr_str(TCA_KIND, c.kind);
  if (op != Op::Delete) {
    KindCtx ctx{c.classid, 0, links, &d, c.loc};
    write_options(w, c.ops, c.opts, ctx, c.raw.options());
    w.put_raw(c.raw.attrs().data(), c.raw.attrs().size());
  }
  w.end_message(off);
  return off;
}

// A filter's own police (FilterOps::old_police_attr), as tc's parse_police
// writes it: the police action's attributes straight inside the kind's
// attribute (no TCA_ACT_OPTIONS, no NLA_F_NESTED), by the police table's
// own encoder. Index 0: the kernel picks one for the filter.
static void write_old_police(MsgWriter& w, uint16_t attr, const Options& police, const LinkNames* links, Diagnostics& d,
                             SourceLoc loc) {
  size_t nest = w.nest_begin(attr);
  KindCtx ctx{0, 0, links, &d, loc};
  kActionPolice.encode(police, ctx, w);
  w.nest_end(nest);
}

static uint32_t filter_info(const FilterKey& k) {
  // tcm_info: priority in the high half, protocol (network order) in the low.
  return (static_cast<uint32_t>(k.pref) << 16) | __builtin_bswap16(k.protocol);
}

size_t encode_filter(MsgWriter& w, Op op, const Filter& f, uint32_t ifindex, const LinkNames* links, Diagnostics& d,
                     const Filter* live, const BpfPrograms* programs) {
  uint16_t type = op == Op::Delete ? RTM_DELTFILTER : RTM_NEWTFILTER;
  uint32_t handle = f.key.handle;
  // An empty list's wire_handle is its root table (model/shared_tables.h),
  // never sent: the list is made and deleted with handle 0.
  if (f.empty_list)
    handle = 0;
  else if (live && live->wire_handle)
    handle = live->wire_handle;
  else if (op == Op::Delete && f.wire_handle)
    handle = f.wire_handle;
  size_t off = begin_tc(w, type, op_flags(op), ifindex, handle, f.key.parent, filter_info(f.key));
  // TCA_KIND always: on deletes it lets the kernel skip looking the kind up
  // and is required for flower's unlocked (no RTNL) path.
  w.attr_str(TCA_KIND, f.kind);
  if (f.key.chain) w.attr_u32(TCA_CHAIN, f.key.chain);
  if (op != Op::Delete && f.empty_list) {
    // No TCA_OPTIONS: the kernel makes the list (u32: with its root table)
    // and nothing in it.
  } else if (op != Op::Delete && f.ops) {
    size_t nest = w.nest_begin(TCA_OPTIONS);
    KindCtx ctx{handle, 0, links, &d, f.loc, &f};
    ctx.programs = programs;
    if (f.ops->encode) f.ops->encode(f.opts, ctx, w);
    const FilterOps& fo = filter_ops(*f.ops);
    if (f.classid && fo.classid_attr) w.attr_u32(fo.classid_attr, *f.classid);
    if (f.police && fo.old_police_attr)
      write_old_police(w, fo.old_police_attr, f.police->opts, links, d, f.police->loc);
    if (!f.actions.empty() && fo.actions_attr) write_actions(w, fo.actions_attr, f, links, d);
    w.put_raw(f.raw.options().data(), f.raw.options().size());
    w.nest_end(nest);
  } else if (op != Op::Delete) {
    write_raw_options(w, f.raw.options());
  }
  if (op != Op::Delete) w.put_raw(f.raw.attrs().data(), f.raw.attrs().size());
  w.end_message(off);
  return off;
}

size_t encode_filter_get(MsgWriter& w, const FilterKey& k, std::string_view kind, uint32_t ifindex, uint32_t handle) {
  size_t off = begin_tc(w, RTM_GETTFILTER, NLM_F_REQUEST | NLM_F_ACK, ifindex, handle, k.parent, filter_info(k));
  w.attr_str(TCA_KIND, kind);
  if (k.chain) w.attr_u32(TCA_CHAIN, k.chain);
  w.end_message(off);
  return off;
}

size_t encode_filter_group_delete(MsgWriter& w, const FilterKey& k, std::string_view kind, uint32_t ifindex) {
  size_t off = begin_tc(w, RTM_DELTFILTER, op_flags(Op::Delete), ifindex, 0, k.parent, filter_info(k));
  w.attr_str(TCA_KIND, kind);
  if (k.chain) w.attr_u32(TCA_CHAIN, k.chain);
  w.end_message(off);
  return off;
}

size_t encode_chain(MsgWriter& w, Op op, const Chain& c, uint32_t ifindex, const LinkNames* links, Diagnostics& d) {
  uint16_t type = op == Op::Delete ? RTM_DELCHAIN : RTM_NEWCHAIN;
  FilterKey k;
  k.protocol = c.protocol;
  size_t off = begin_tc(w, type, op_flags(op), ifindex, 0, c.parent, c.kind.empty() ? 0 : filter_info(k));
  w.attr_u32(TCA_CHAIN, c.index);
  if (op != Op::Delete && c.ops) {
    w.attr_str(TCA_KIND, c.kind);
    // The kind's encoder sees the template as a filter of the chain's protocol.
    Filter shape;
    shape.key.protocol = c.protocol;
    shape.key.chain = c.index;
    shape.kind = c.kind;
    shape.ops = c.ops;
    size_t nest = w.nest_begin(TCA_OPTIONS);
    KindCtx ctx{0, 0, links, &d, c.loc, &shape};
    if (c.ops->encode) c.ops->encode(c.opts, ctx, w);
    w.put_raw(c.raw.options().data(), c.raw.options().size());
    w.nest_end(nest);
  } else if (op != Op::Delete && !c.kind.empty()) {
    w.attr_str(TCA_KIND, c.kind);
    write_raw_options(w, c.raw.options());
  }
  if (op != Op::Delete) w.put_raw(c.raw.attrs().data(), c.raw.attrs().size());
  w.end_message(off);
  return off;
}

size_t encode_action(MsgWriter& w, Op op, const Action& a, const LinkNames* links, Diagnostics& d) {
  uint16_t type = op == Op::Delete ? RTM_DELACTION : RTM_NEWACTION;
  size_t off = begin_tca(w, type, op_flags(op == Op::Change ? Op::Replace : op));
  size_t tab = w.nest_begin(TCA_ACT_TAB);
  if (op == Op::Delete) {
    size_t one = w.nest_begin(1);
    w.attr_str(TCA_ACT_KIND, a.kind);
    w.attr_u32(TCA_ACT_INDEX, a.index.value_or(0));
    w.nest_end(one);
  } else {
    Action plain = a;
    plain.ref = false;
    write_one_action(w, 1, plain, links, d, a.cookie);
  }
  w.nest_end(tab);
  w.end_message(off);
  return off;
}

size_t encode_action_dump_request(MsgWriter& w, std::string_view kind, bool terse) {
  size_t off = begin_tca(w, RTM_GETACTION, NLM_F_REQUEST | NLM_F_DUMP);
  size_t tab = w.nest_begin(TCA_ACT_TAB);
  size_t one = w.nest_begin(1);
  w.attr_str(TCA_ACT_KIND, kind);
  w.nest_end(one);
  w.nest_end(tab);
  // More than TCA_ACT_MAX_PRIO (32) actions a message: fewer round trips.
  uint32_t bits = TCA_ACT_FLAG_LARGE_DUMP_ON | (terse ? TCA_ACT_FLAG_TERSE_DUMP : 0);
  nla_bitfield32 flags{bits, bits};
  w.attr(TCA_ROOT_FLAGS, &flags, sizeof flags);
  w.end_message(off);
  return off;
}

size_t encode_dump_request(MsgWriter& w, uint16_t rtm_type, uint32_t ifindex, uint32_t parent, bool terse) {
  size_t off = begin_tc(w, rtm_type, NLM_F_REQUEST | NLM_F_DUMP, ifindex, 0, parent, 0);
  if (terse) {
    nla_bitfield32 flags{TCA_DUMP_FLAGS_TERSE, TCA_DUMP_FLAGS_TERSE};
    w.attr(TCA_DUMP_FLAGS, &flags, sizeof flags);
  }
  w.end_message(off);
  return off;
}

// ---- decoding -------------------------------------------------------------------

namespace {

struct TcView {
  tcmsg t{};
  std::span<const uint8_t> attrs;
};

bool split(std::span<const uint8_t> msg, TcView& v) {
  size_t hdr = NLMSG_ALIGN(sizeof(nlmsghdr)) + NLMSG_ALIGN(sizeof(tcmsg));
  if (msg.size() < hdr) return false;
  std::memcpy(&v.t, msg.data() + NLMSG_ALIGN(sizeof(nlmsghdr)), sizeof v.t);
  uint32_t len;
  std::memcpy(&len, msg.data(), 4);
  if (len > msg.size() || len < hdr) return false;
  v.attrs = msg.subspan(hdr, len - hdr);
  return true;
}

// Options the table cannot account for (a required field missing: a newer
// or odd kernel, a malformed message) are kept as raw bytes instead, so an
// object is never rewritten from a partial reading.
bool complete(const KindOps& ops, const Options& o) {
  for (size_t i = 0; i < ops.fields.size(); ++i)
    if ((ops.fields[i].flags & (kRequired | kInputOnly)) == kRequired && !o.has(static_cast<uint16_t>(i))) return false;
  return true;
}

bool reported_only(const KindOps& ops, uint16_t type) {
  return std::find(ops.reported_only.begin(), ops.reported_only.end(), type) != ops.reported_only.end();
}

// The attributes of a kind's TCA_OPTIONS that its decoder never asked for
// (`log` was open over `raw` while it and the generic readers ran).
Opaque unread_options(std::span<const uint8_t> raw, const AttrReadLog& log, const KindOps& ops) {
  return select_attrs(raw, [&](uint16_t t) { return !log.asked(t) && !reported_only(ops, t); });
}

// Reads TCA_OPTIONS through the kind's table. What the table leaves unread
// is kept in out.raw.options(): everything when the kind has no table or the
// table cannot account for it (a required field missing: a newer or odd
// kernel, a malformed message), so an object is never rewritten from a
// partial reading; else the attributes the decoder never asked for. `more`
// runs while the log is still open (a filter's classid and actions).
// A kind's decoder sets its fields into one reused Options (its capacity
// kept from object to object), which the object then takes in one
// allocation of the right size. A decoder that decodes another object
// inside (a filter's own police) finds it busy and decodes in place.
struct ScratchOptions {
  Options opts;
  bool busy = false;
};
void decode_kind_options(const KindOps& ops, std::span<const uint8_t> raw, const KindCtx& ctx, Options& out) {
  thread_local ScratchOptions scratch;
  if (scratch.busy || !out.empty()) {
    read_options(ops, raw, ctx, out);
    return;
  }
  scratch.busy = true;
  read_options(ops, raw, ctx, scratch.opts);
  scratch.busy = false;
  out.take_exact(scratch.opts);
}

template <typename Obj, typename More>
void decode_options(std::span<const uint8_t> raw, Obj& out, const KindCtx& ctx, More&& more) {
  if (out.ops && out.ops->decode) {
    AttrReadLog log(raw);
    decode_kind_options(*out.ops, raw, ctx, out.opts);
    if (complete(*out.ops, out.opts)) {
      more();
      if (!out.ops->options_raw) out.raw.set_options(unread_options(raw, log, *out.ops));
      return;
    }
    out.ops = nullptr;
    out.opts = Options{};
  } else if (out.ops) {  // a table with no options to read (mq)
    AttrReadLog log(raw);
    more();
    if (!out.ops->options_reported_only) out.raw.set_options(unread_options(raw, log, *out.ops));
    return;
  }
  out.raw.set_options(Opaque(raw.begin(), raw.end()));
}
template <typename Obj>
void decode_options(std::span<const uint8_t> raw, Obj& out, const KindCtx& ctx) {
  decode_options(raw, out, ctx, [] {});
}

// Message attributes the kernel reports that are not configuration.
bool reported_only_tc(uint16_t type) {
  switch (type) {
    case TCA_STATS:
    case TCA_XSTATS:
    case TCA_STATS2:
    case TCA_FCNT:
    case TCA_PAD:
    case TCA_DUMP_INVISIBLE:
    case TCA_HW_OFFLOAD:
    case TCA_EXT_WARN_MSG:
      return true;
    default:
      return false;
  }
}
Opaque unread_tc_attrs(std::span<const uint8_t> attrs, const AttrReadLog& log) {
  return select_attrs(attrs, [&](uint16_t t) { return !log.asked(t) && !reported_only_tc(t); });
}

// A filter's own police (FilterOps::old_police_attr, looked at without
// marking it read), read by the police table's decoder (the kernel dumps
// it as it was sent: tcf_exts_dump, TCA_OLD_COMPAT). Read only when the
// table accounts for every attribute in it (the caller then marks the
// attribute read); else it stays whole in raw_options, never half read.
// The index and reference counts inside are the kernel's, not the file's.
std::optional<Options> read_old_police(const Attr* police) {
  if (!police) return std::nullopt;
  std::span<const uint8_t> body = police->data;
  Options o;
  AttrReadLog log(body);
  read_options(kActionPolice, body, KindCtx{}, o);
  if (o.empty() || !complete(kActionPolice, o) || !unread_options(body, log, kActionPolice).empty())
    return std::nullopt;
  return o;
}

// Kind + options: a known kind decodes through its table, an unknown one is
// kept as raw bytes (shown by dump, never rewritten).
template <typename Obj>
void decode_kind(const AttrTable& tb, std::span<const uint8_t> attrs, ObjType type, Obj& out, const KindCtx& ctx) {
  if (auto* k = tb.get(TCA_KIND)) out.kind = k->str();
  out.ops = find_kind(type, out.kind);
  auto* o = tb.get(TCA_OPTIONS);
  bool top_level = qdisc_ops(out.ops).options_top_level;
  if (top_level && out.ops->decode)
    read_options(*out.ops, attrs, ctx, out.opts);
  else if (o)
    decode_options(o->data, out, ctx);
  else if (out.ops && !complete(*out.ops, out.opts))
    out.ops = nullptr;
  // A top-level kind (clsact) reports an empty TCA_OPTIONS; any other
  // content is unread.
  if (top_level && out.ops && o && o->data.size()) out.raw.set_options(Opaque(o->data.begin(), o->data.end()));
}

// The head every action's parameter struct starts with (uapi's tc_gen
// macro: index, capab, action, refcnt, bindcnt).
struct TcGen {
  uint32_t index;
  uint32_t capab;
  int32_t action;
  int32_t refcnt;
  int32_t bindcnt;
};

// A kind whose table has no fields keeps its parameter struct raw, the
// verdict and the kind's own flags with it; the index and the reference
// counts are the kernel's and go (the model holds the index, when one was
// asked for), so the bytes are the same wherever and however often it is bound.
void keep_parms(std::span<const uint8_t> options, uint16_t parms_attr, Raw& raw) {
  Opaque p = select_attrs(options, [&](uint16_t t) { return t == parms_attr; });
  if (p.size() < 4 + sizeof(TcGen)) return;
  std::memset(p.data() + 4 + offsetof(TcGen, index), 0, sizeof(uint32_t));
  std::memset(p.data() + 4 + offsetof(TcGen, refcnt), 0, 2 * sizeof(int32_t));
  p.insert(p.end(), raw.options().begin(), raw.options().end());
  raw.set_options(std::move(p));
}

// in_filter: the list of a filter, whose offload flags the kernel copies
// to every action it binds (and refuses a mismatch): there they say nothing
// of their own, so only a table action keeps skip_hw/skip_sw.
void decode_actions(std::span<const uint8_t> list, const LinkNames* links, std::vector<Action>& out, bool in_filter) {
  // Entries are nested by order (1, 2, ...); keep the kernel's order.
  AttrIter it(list);
  Attr one;
  while (it.next(one)) {
    AttrReadLog log(one.data);
    AttrTable tb(one.data, TCA_ACT_MAX);
    Action a;
    KindCtx ctx;
    ctx.links = links;
    if (auto* k = tb.get(TCA_ACT_KIND)) a.kind = k->str();
    a.ops = find_kind(ObjType::Action, a.kind);
    if (auto* o = tb.get(TCA_ACT_OPTIONS)) {
      decode_options(o->data, a, ctx, [&] {
        if (const ActionOps& ao = action_ops(*a.ops); ao.parms_attr) {
          AttrTable ot(o->data, std::max(ao.parms_attr, ao.parms_attr_ex));
          auto* p = ot.get(ao.parms_attr);
          if (!p && ao.parms_attr_ex) p = ot.get(ao.parms_attr_ex);
          if (p) {
            a.index = p->as<TcGen>().index;
            int32_t counts[2] = {};  // refcnt, bindcnt
            if (size_t at = ao.counts_at; p->data.size() >= at + sizeof counts)
              std::memcpy(counts, p->data.data() + at, sizeof counts);
            a.refcnt = counts[0], a.bindcnt = counts[1];
          }
        }
      });
    }
    if (uint16_t parms = action_ops(a.ops).parms_attr; parms && !a.ops->decode)
      if (auto* o = tb.get(TCA_ACT_OPTIONS)) keep_parms(o->data, parms, a.raw);
    if (auto* c = tb.get(TCA_ACT_COOKIE)) a.cookie.assign(c->data.begin(), c->data.end());
    // The kernel reports TCA_ACT_FLAGS only when some flag is set.
    uint32_t flags = 0;
    auto* f = tb.get(TCA_ACT_FLAGS);
    if (f && f->data.size() >= sizeof(nla_bitfield32)) flags = f->as<nla_bitfield32>().value;
    a.percpu_stats = !(flags & TCA_ACT_FLAGS_NO_PERCPU_STATS);
    // Flags the model has no word for (skip_hw, skip_sw) travel as the
    // kernel's attribute; sent after tcsync's own, the kernel takes it.
    a.raw.set_attrs(select_attrs(one.data, [&](uint16_t t) {
      if (t == TCA_ACT_FLAGS) {
        uint32_t modelled = TCA_ACT_FLAGS_NO_PERCPU_STATS;
        if (in_filter) modelled |= TCA_ACT_FLAGS_SKIP_HW | TCA_ACT_FLAGS_SKIP_SW;
        return (flags & ~modelled) != 0;
      }
      return !log.asked(t) && t != TCA_ACT_INDEX && t != TCA_ACT_STATS && t != TCA_ACT_PAD &&
             t != TCA_ACT_USED_HW_STATS && t != TCA_ACT_IN_HW_COUNT;
    }));
    out.push_back(std::move(a));
  }
}

// The TCA_ACT_TAB payload of an action message (a table dump's answer).
std::optional<std::span<const uint8_t>> action_tab(std::span<const uint8_t> msg) {
  size_t hdr = NLMSG_ALIGN(sizeof(nlmsghdr)) + NLMSG_ALIGN(sizeof(tcamsg));
  if (msg.size() < hdr) return std::nullopt;
  uint32_t len;
  std::memcpy(&len, msg.data(), 4);
  if (len > msg.size() || len < hdr) return std::nullopt;
  AttrTable tb(msg.subspan(hdr, len - hdr), TCA_ROOT_MAX);
  auto* tab = tb.get(TCA_ACT_TAB);
  if (!tab) return std::nullopt;
  return tab->data;
}

}  // namespace

bool decode_action_msg(std::span<const uint8_t> msg, const LinkNames* links, std::vector<Action>& out) {
  auto tab = action_tab(msg);
  if (tab) decode_actions(*tab, links, out, false);
  return tab.has_value();
}

bool decode_action_indexes(std::span<const uint8_t> msg, std::vector<uint32_t>& out) {
  auto tab = action_tab(msg);
  if (!tab) return false;
  AttrIter it(*tab);
  Attr one;
  while (it.next(one)) {
    AttrTable a(one.data, TCA_ACT_MAX);
    if (auto* i = a.get(TCA_ACT_INDEX); i && i->data.size() >= 4) out.push_back(i->u32());
  }
  return true;
}

bool decode_qdisc(std::span<const uint8_t> msg, const LinkNames* links, Qdisc& out, Decoded& info) {
  TcView v;
  if (!split(msg, v)) return false;
  info.ifindex = static_cast<uint32_t>(v.t.tcm_ifindex);
  out.handle = v.t.tcm_handle;
  out.parent = v.t.tcm_parent;
  AttrReadLog log(v.attrs);
  AttrTable tb(v.attrs, TCA_MAX);
  KindCtx ctx;
  ctx.handle = out.handle;
  ctx.links = links;
  decode_kind(tb, v.attrs, ObjType::Qdisc, out, ctx);
  out.raw.set_attrs(unread_tc_attrs(v.attrs, log));
  // Handle 0 is the kernel's default qdisc (noqueue, pfifo_fast, mq and its
  // children): not configuration, and it cannot be deleted anyway.
  return out.handle != 0;
}

bool decode_class(std::span<const uint8_t> msg, const LinkNames* links, Class& out, Decoded& info) {
  TcView v;
  if (!split(msg, v)) return false;
  info.ifindex = static_cast<uint32_t>(v.t.tcm_ifindex);
  out.classid = v.t.tcm_handle;
  // A class right under its qdisc is reported with parent TC_H_ROOT; the
  // model names that parent by the qdisc's handle, as files do.
  out.parent = v.t.tcm_parent == kHandleRoot ? handle_major(out.classid) : v.t.tcm_parent;
  AttrReadLog log(v.attrs);
  AttrTable tb(v.attrs, TCA_MAX);
  KindCtx ctx;
  ctx.handle = out.classid;
  ctx.links = links;
  decode_kind(tb, v.attrs, ObjType::Class, out, ctx);
  out.raw.set_attrs(unread_tc_attrs(v.attrs, log));
  // Classless qdiscs with an inner qdisc (tbf's 1:1) and qdiscs whose
  // classes are implicit (prio's bands, mq's queues) report slots as classes
  // of a kind with no class table: not objects anyone declares. hfsc's root
  // class (minor 0) is the qdisc itself.
  if (!out.ops && find_kind(ObjType::Qdisc, out.kind)) return false;
  if (handle_minor(out.classid) == 0) return false;
  return true;
}

bool decode_chain(std::span<const uint8_t> msg, const LinkNames* links, Chain& out, Decoded& info) {
  TcView v;
  if (!split(msg, v)) return false;
  info.ifindex = static_cast<uint32_t>(v.t.tcm_ifindex);
  out.parent = v.t.tcm_parent;
  AttrReadLog log(v.attrs);
  AttrTable tb(v.attrs, TCA_MAX);
  auto* idx = tb.get(TCA_CHAIN);
  if (!idx || idx->data.size() < 4) return false;
  out.index = idx->u32();
  if (auto* k = tb.get(TCA_KIND)) out.kind = k->str();
  if (out.kind.empty()) return true;  // no template
  out.ops = find_kind(ObjType::Filter, out.kind);
  auto* o = tb.get(TCA_OPTIONS);
  out.raw.set_attrs(unread_tc_attrs(v.attrs, log));
  if (o) {
    KindCtx ctx;
    ctx.links = links;
    decode_options(o->data, out, ctx);
    // A flower template's protocol is its eth_type key; tc leaves the key
    // out only for `protocol all`.
    if (uint16_t pa = filter_ops(out.ops).template_protocol_attr) {
      out.protocol = 0x0003;
      AttrTable ot(o->data, pa);
      if (auto* e = ot.get(pa); e && e->data.size() >= 2) out.protocol = e->be16();
    }
  }
  return true;
}

bool decode_filter(std::span<const uint8_t> msg, const LinkNames* links, Filter& out, Decoded& info) {
  TcView v;
  if (!split(msg, v)) return false;
  info.ifindex = static_cast<uint32_t>(v.t.tcm_ifindex);
  out.key.handle = v.t.tcm_handle;
  out.key.parent = v.t.tcm_parent;
  out.key.pref = static_cast<uint16_t>(v.t.tcm_info >> 16);
  out.key.protocol = __builtin_bswap16(static_cast<uint16_t>(v.t.tcm_info & 0xFFFF));
  AttrReadLog log(v.attrs);
  AttrTable tb(v.attrs, TCA_MAX);
  if (auto* c = tb.get(TCA_CHAIN)) out.key.chain = c->u32();
  // The head of each (pref, protocol) list comes without options or handle:
  // no rule, but the list itself, which the dumper keeps when it stays empty.
  if (out.key.handle == 0 && !tb.get(TCA_OPTIONS)) {
    if (auto* k = tb.get(TCA_KIND)) out.kind = k->str();
    out.ops = find_kind(ObjType::Filter, out.kind);
    out.empty_list = true;
    info.list_head = true;
    return false;
  }
  if (auto* k = tb.get(TCA_KIND)) out.kind = k->str();
  out.ops = find_kind(ObjType::Filter, out.kind);
  auto* o = tb.get(TCA_OPTIONS);
  out.raw.set_attrs(unread_tc_attrs(v.attrs, log));
  if (o) {
    KindCtx ctx;
    ctx.handle = out.key.handle;
    ctx.links = links;
    decode_options(o->data, out, ctx, [&] {
      const FilterOps& fo = filter_ops(*out.ops);
      AttrTable ot(o->data, std::max({fo.classid_attr, fo.actions_attr, fo.old_police_attr}));
      if (fo.classid_attr)
        if (auto* c = ot.get(fo.classid_attr)) out.classid = c->u32();
      if (fo.actions_attr)
        if (auto* a = ot.get(fo.actions_attr)) decode_actions(a->data, links, out.actions, true);
      if (fo.old_police_attr)
        if (auto p = read_old_police(ot.peek(fo.old_police_attr))) {
          out.police.emplace(FilterPolice{std::move(*p), {}});
          ot.get(fo.old_police_attr);
        }
    });
    if (!out.ops) return true;
    // tcsync's own fingerprint and name are not the user's cookies
    // (fingerprint.h, name_cookie.h).
    if (!out.actions.empty() && is_fingerprint(out.actions[0].cookie)) {
      out.fingerprint = std::move(out.actions[0].cookie);
      out.actions[0].cookie.clear();
    }
    if (int named = name_action(out, true); named >= 0) {
      Opaque& held = out.actions[static_cast<size_t>(named)].cookie;
      out.name = name_of_cookie(held);
      Opaque().swap(held);
    }
  }
  if (auto* tables = shared_tables(out.ops)) {
    uint32_t wire = out.key.handle;
    if (!tables->canonical_key(out.key, out.opts)) return false;
    if (out.key.handle != wire) out.wire_handle = wire;
  }
  return true;
}

}  // namespace tcsync
