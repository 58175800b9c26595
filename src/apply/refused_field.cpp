#include "apply/refused_field.h"

#include <cstddef>
#include <cstring>

#include <linux/netlink.h>
#include <linux/pkt_cls.h>
#include <linux/rtnetlink.h>

#include "kinds/registry.h"
#include "model/kind.h"
#include "netlink/wire.h"

namespace tcsync {
namespace {

// The field of `ops` carried by attribute `type` that `opts` declares.
RefusedField field_of(const KindOps* ops, const Options& opts, uint16_t type) {
  if (!ops || type == 0) return {};  // attr 0: a field that names no attribute
  for (auto& o : opts.items())
    if (ops->fields[o.field].attr == type) return {ops->fields[o.field].key, o.loc};
  return {};
}

// path below an action's nest: [TCA_ACT_KIND | TCA_ACT_OPTIONS, T, ...].
RefusedField in_action(const Action& a, std::span<const uint16_t> path) {
  if (path.size() >= 2 && path[0] == TCA_ACT_OPTIONS)
    if (auto f = field_of(a.ops, a.opts, path[1]); !f.key.empty()) return f;
  return {};
}

}  // namespace

RefusedField refused_field(const Step& st, std::span<const uint8_t> msg, uint32_t off) {
  if (msg.size() < sizeof(nlmsghdr) || st.op == Op::Delete) return {};
  uint16_t type;
  std::memcpy(&type, msg.data() + offsetof(nlmsghdr, nlmsg_type), sizeof type);
  size_t attrs =
      NLMSG_HDRLEN + nl_align(type >= RTM_NEWACTION && type <= RTM_GETACTION ? sizeof(tcamsg) : sizeof(tcmsg));
  if (off < attrs || attrs > msg.size()) return {};
  auto path = attr_path(msg.subspan(attrs), off - attrs);
  std::span<const uint16_t> p(path);
  if (st.action) {  // [TCA_ACT_TAB, 1, TCA_ACT_OPTIONS, T]
    if (p.size() >= 3 && p[0] == TCA_ACT_TAB) return in_action(*st.action, p.subspan(2));
    return {};
  }
  if (p.size() < 2 || p[0] != TCA_OPTIONS) return {};
  if (st.qdisc) return field_of(st.qdisc->ops, st.qdisc->opts, p[1]);
  if (st.cls) return field_of(st.cls->ops, st.cls->opts, p[1]);
  if (st.chain) return field_of(st.chain->ops, st.chain->opts, p[1]);
  if (st.filter && st.filter->ops) {
    const Filter& f = *st.filter;
    // [TCA_OPTIONS, actions attr, N (the N-th action, from 1), TCA_ACT_OPTIONS, T]
    const FilterOps& fo = filter_ops(*f.ops);
    if (fo.actions_attr && p[1] == fo.actions_attr) {
      if (p.size() >= 4 && p[2] >= 1 && p[2] <= f.actions.size()) return in_action(f.actions[p[2] - 1], p.subspan(3));
      return {};
    }
    // [TCA_OPTIONS, the filter's own police (old_police_attr), T]: a field
    // of it that names the attribute, else the police as a whole.
    if (fo.old_police_attr && p[1] == fo.old_police_attr && f.police) {
      if (p.size() >= 3)
        if (auto r = field_of(&kActionPolice, f.police->opts, p[2]); !r.key.empty()) return r;
      return {"police", f.police->loc};
    }
    return field_of(f.ops, f.opts, p[1]);
  }
  return {};
}

}  // namespace tcsync
