#include "stats/stats.h"

#include <linux/gen_stats.h>
#include <linux/netlink.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include <cstring>

#include "netlink/wire.h"

namespace tcsync {

std::optional<uint64_t> ObjStats::filter_packets() const {
  if (hits) return hits;
  if (!actions.empty() && actions[0].basic) return actions[0].packets;
  return std::nullopt;
}

std::optional<uint64_t> ObjStats::filter_bytes() const {
  if (!actions.empty() && actions[0].basic) return actions[0].bytes;
  return std::nullopt;
}

namespace {
template <typename Map, typename Key>
const ObjStats* find_in(const StatsTable& t, const std::string& place, Map PlaceStats::*m, const Key& k) {
  auto p = t.places.find(place);
  if (p == t.places.end()) return nullptr;
  auto it = (p->second.*m).find(k);
  return it == (p->second.*m).end() ? nullptr : &it->second;
}

// The attributes after nlmsghdr + tcmsg; empty when the message is short.
std::span<const uint8_t> tc_attrs(std::span<const uint8_t> msg) {
  size_t hdr = NLMSG_ALIGN(sizeof(nlmsghdr)) + NLMSG_ALIGN(sizeof(tcmsg));
  if (msg.size() < hdr) return {};
  uint32_t len;
  std::memcpy(&len, msg.data(), 4);
  if (len > msg.size() || len < hdr) return {};
  return msg.subspan(hdr, len - hdr);
}
}  // namespace

const ObjStats* StatsTable::qdisc(const std::string& place, uint32_t parent) const {
  return find_in(*this, place, &PlaceStats::qdiscs, parent);
}
const ObjStats* StatsTable::cls(const std::string& place, uint32_t classid) const {
  return find_in(*this, place, &PlaceStats::classes, classid);
}
const ObjStats* StatsTable::filter(const std::string& place, const FilterKey& k) const {
  return find_in(*this, place, &PlaceStats::filters, k);
}

void read_stats2(std::span<const uint8_t> nest, Counters& c) {
  // Attributes walked once, no table: this runs for every rule of a
  // 100k-rule stats dump. PKT64 follows the basic nest whose packet count
  // did not fit 32 bits (gen_stats.c), hardware's or the total.
  AttrIter it(nest);
  Attr a;
  bool last_hw = false;
  while (it.next(a)) {
    switch (a.type) {
      case TCA_STATS_BASIC: {
        auto b = a.as<gnet_stats_basic>();
        c.basic = true, c.bytes = b.bytes, c.packets = b.packets, last_hw = false;
        break;
      }
      case TCA_STATS_BASIC_HW: {
        auto b = a.as<gnet_stats_basic>();
        c.hw = true, c.hw_bytes = b.bytes, c.hw_packets = b.packets, last_hw = true;
        break;
      }
      case TCA_STATS_PKT64:
        (last_hw ? c.hw_packets : c.packets) = a.u64();
        break;
      case TCA_STATS_QUEUE: {
        auto q = a.as<gnet_stats_queue>();
        c.queue = true, c.qlen = q.qlen, c.backlog = q.backlog, c.drops = q.drops, c.requeues = q.requeues,
        c.overlimits = q.overlimits;
        break;
      }
      case TCA_STATS_RATE_EST:
        if (!c.rate) {  // RATE_EST64, when present, is the exact one
          auto r = a.as<gnet_stats_rate_est>();
          c.rate = true, c.bps = r.bps, c.pps = r.pps;
        }
        break;
      case TCA_STATS_RATE_EST64: {
        auto r = a.as<gnet_stats_rate_est64>();
        c.rate = true, c.bps = r.bps, c.pps = r.pps;
        break;
      }
      default:
        break;
    }
  }
  // A kernel sends an estimator's nest even when none runs: all zeros.
}

bool read_object_stats(std::span<const uint8_t> msg, ObjStats& out, const KindOps* cls) {
  auto attrs = tc_attrs(msg);
  AttrIter it(attrs);
  Attr a;
  bool any = false, stats2 = false;
  std::span<const uint8_t> old;
  while (it.next(a)) {
    if (a.type == TCA_STATS2)
      read_stats2(a.data, out.c), stats2 = any = true;
    else if (a.type == TCA_STATS)
      old = a.data;
    else if (a.type == TCA_XSTATS)
      out.xstats.assign(a.data.begin(), a.data.end()), any = true;
  }
  if (!stats2 && !old.empty()) {
    // The old struct only: a kernel before gnet_stats (2.6.x), or a kind
    // that answers by hand.
    auto s = Attr{TCA_STATS, old}.as<tc_stats>();
    Counters& c = out.c;
    c.basic = true, c.bytes = s.bytes, c.packets = s.packets;
    c.queue = true, c.drops = s.drops, c.overlimits = s.overlimits, c.qlen = s.qlen, c.backlog = s.backlog;
    if (s.bps || s.pps) c.rate = true, c.bps = s.bps, c.pps = s.pps;
    any = true;
  }
  if (auto* read = class_ops(cls).read_xstats; read && !out.xstats.empty()) read(out.xstats, out.kind_xstats);
  return any;
}

bool read_filter_stats(std::span<const uint8_t> msg, const Filter& f, ObjStats& out) {
  auto attrs = tc_attrs(msg);
  AttrIter it(attrs);
  Attr a;
  std::span<const uint8_t> options;
  while (it.next(a))
    if (a.type == TCA_OPTIONS) options = a.data;
  if (options.empty()) return false;
  const FilterOps& fo = filter_ops(f.ops);
  uint16_t acts = fo.actions_attr;
  bool any = false;
  AttrIter ot(options);
  while (ot.next(a)) {
    if (acts && a.type == acts) {
      // Entries are nested by order (1, 2, ...), as decode_actions reads them.
      AttrIter ai(a.data);
      Attr one;
      while (ai.next(one)) {
        Counters c;
        AttrIter fi(one.data);
        Attr x;
        while (fi.next(x))
          if (x.type == TCA_ACT_STATS) read_stats2(x.data, c);
        out.actions.push_back(c);
        any = true;
      }
    } else if (fo.read_counters && a.type == fo.counters_attr) {
      fo.read_counters(a.data, out.lookups, out.hits);
      any = any || out.hits;
    }
  }
  return any;
}

}  // namespace tcsync
