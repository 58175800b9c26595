// tcsync stats: counters read from the kernel's messages (stats.h), joined
// to the files' names (report.h), printed as text, JSON, Prometheus, dot.
#include <catch2/catch.hpp>

#include <linux/gen_stats.h>
#include <linux/netlink.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <linux/tc_act/tc_mirred.h>

#include <sstream>

#include "base/handle.h"
#include "codec/tc_codec.h"
#include "netlink/wire.h"
#include "stats/report.h"
#include "stats/stats.h"
#include "test_util.h"

using namespace tcsync;
using tcsync::test::unhex;

namespace {

// A message as a dump delivers it: nlmsghdr, tcmsg, then what `body` adds.
template <typename Body>
std::vector<uint8_t> tc_message(uint16_t type, uint32_t handle, uint32_t parent, Body&& body) {
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  size_t m = w.begin_message(type, NLM_F_MULTI, 0);
  tcmsg t{};
  t.tcm_family = 0;  // AF_UNSPEC
  t.tcm_ifindex = 3;
  t.tcm_handle = handle;
  t.tcm_parent = parent;
  w.put_struct(t);
  body(w);
  w.end_message(m);
  return buf;
}

void put_stats2(MsgWriter& w, uint16_t nest_type) {
  size_t s = w.nest_begin(nest_type);
  gnet_stats_basic b{};
  b.bytes = 123456789012ull, b.packets = 0xFFFFFFFFu;  // clamped: the real count follows in PKT64
  w.attr(TCA_STATS_BASIC, &b, sizeof b);
  uint64_t pkt64 = 5000000000ull;
  w.attr(TCA_STATS_PKT64, &pkt64, sizeof pkt64);
  gnet_stats_basic hw{};
  hw.bytes = 1000, hw.packets = 10;
  w.attr(TCA_STATS_BASIC_HW, &hw, sizeof hw);
  gnet_stats_rate_est r{};
  r.bps = 7, r.pps = 8;
  w.attr(TCA_STATS_RATE_EST, &r, sizeof r);
  gnet_stats_rate_est64 r64{};
  r64.bps = 10000000000ull, r64.pps = 30;
  w.attr(TCA_STATS_RATE_EST64, &r64, sizeof r64);
  gnet_stats_queue q{1, 2, 3, 4, 5};
  w.attr(TCA_STATS_QUEUE, &q, sizeof q);
  w.nest_end(s);
}

}  // namespace

TEST_CASE("stats: a class's TCA_STATS2 and htb xstats are read field by field") {
  auto msg = tc_message(RTM_NEWTCLASS, 0x10010, 0x10001, [](MsgWriter& w) {
    w.attr_str(TCA_KIND, "htb");
    put_stats2(w, TCA_STATS2);
    tc_htb_xstats x{};
    x.lends = 11, x.borrows = 12, x.giants = 13, x.tokens = -14, x.ctokens = 15;
    w.attr(TCA_XSTATS, &x, sizeof x);
  });
  ObjStats s;
  REQUIRE(read_object_stats(msg, s, find_kind(ObjType::Class, "htb")));
  const Counters& c = s.c;
  CHECK(c.basic);
  CHECK(c.bytes == 123456789012ull);
  CHECK(c.packets == 5000000000ull);  // PKT64 beats the clamped 32-bit count
  CHECK(c.hw);
  CHECK(c.hw_bytes == 1000);
  CHECK(c.hw_packets == 10);
  CHECK(c.rate);
  CHECK(c.bps == 10000000000ull);  // RATE_EST64 beats RATE_EST
  CHECK(c.pps == 30);
  CHECK(c.queue);
  CHECK(c.qlen == 1);
  CHECK(c.backlog == 2);
  CHECK(c.drops == 3);
  CHECK(c.requeues == 4);
  CHECK(c.overlimits == 5);
  REQUIRE(s.kind_xstats.htb);
  CHECK(*s.kind_xstats.htb == HtbXstats{11, 12, 13, -14, 15});
}

TEST_CASE("stats: xstats are read by the class's kind, kept as bytes by one that reads none") {
  // The same bytes under a kind without ClassOps::read_xstats (drr), and
  // as a qdisc's (no class kind): kept, never read as htb's.
  tc_htb_xstats x{};
  x.lends = 7;
  auto msg = tc_message(RTM_NEWTCLASS, 0x10010, 0x10001, [&](MsgWriter& w) {
    w.attr_str(TCA_KIND, "drr");
    w.attr(TCA_XSTATS, &x, sizeof x);
  });
  const KindOps* drr = find_kind(ObjType::Class, "drr");
  REQUIRE(drr);
  CHECK(!class_ops(drr).read_xstats);
  ObjStats s;
  REQUIRE(read_object_stats(msg, s, drr));
  CHECK(s.xstats.size() == sizeof x);
  CHECK(s.kind_xstats == ClassXstats{});
  ObjStats q;
  REQUIRE(read_object_stats(msg, q));
  CHECK(q.kind_xstats == ClassXstats{});
  // htb's reader wants its whole struct: a short one stays bytes.
  auto short_msg = tc_message(RTM_NEWTCLASS, 0x10010, 0x10001, [&](MsgWriter& w) {
    w.attr_str(TCA_KIND, "htb");
    w.attr(TCA_XSTATS, &x, sizeof x - 1);
  });
  ObjStats h;
  REQUIRE(read_object_stats(short_msg, h, find_kind(ObjType::Class, "htb")));
  CHECK(!h.kind_xstats.htb);
  REQUIRE(read_object_stats(msg, h, find_kind(ObjType::Class, "htb")));
  REQUIRE(h.kind_xstats.htb);
  CHECK(h.kind_xstats.htb->lends == 7);
}

TEST_CASE("stats: the old TCA_STATS struct is read when there is no TCA_STATS2") {
  auto msg = tc_message(RTM_NEWQDISC, 0x10000, TC_H_ROOT, [](MsgWriter& w) {
    w.attr_str(TCA_KIND, "tbf");
    tc_stats old{};
    old.bytes = 999, old.packets = 9, old.drops = 2, old.overlimits = 3, old.bps = 100, old.pps = 1, old.qlen = 4,
    old.backlog = 5;
    w.attr(TCA_STATS, &old, sizeof old);
  });
  ObjStats s;
  REQUIRE(read_object_stats(msg, s));
  CHECK(s.c.bytes == 999);
  CHECK(s.c.packets == 9);
  CHECK(s.c.drops == 2);
  CHECK(s.c.overlimits == 3);
  CHECK(s.c.qlen == 4);
  CHECK(s.c.backlog == 5);
  CHECK(s.c.rate);
  CHECK(s.c.bps == 100);
  CHECK(!s.kind_xstats.htb);

  ObjStats none;
  CHECK_FALSE(read_object_stats(
      tc_message(RTM_NEWQDISC, 0x10000, TC_H_ROOT, [](MsgWriter& w) { w.attr_str(TCA_KIND, "tbf"); }), none));
}

TEST_CASE("stats: a u32 rule's mirred counters, from the kernel's own message") {
  // `tc -s filter show dev v0 ingress` of `u32 match ip dport 53 0xffff
  // action mirred egress mirror dev v1` (Linux 6.18, recvmsg under strace):
  // TCA_U32_ACT > 1 > TCA_ACT_STATS {BASIC, BASIC_HW, QUEUE}.
  auto msg = unhex(
      "140100002c0002000000000000000000000000000300000000080080f2ffffff08000500080001007533320008000b00"
      "00000000e000020024000500010001000000000000000000000000000000ffff00000035140000000000000008000200"
      "0000008008000b0008000000a8000700a40001000b0001006d6972726564000044000400140001000000000000000000"
      "000000000000000014000700000000000000000000000000000000001800030000000000000000000000000000000000"
      "0000000008000a0000000000480002002000020001000000000000000300000001000000010000000200000002000000"
      "240001002000000000000000200000000000000000000000000000000000000000000000");
  test::FakeLinks links;
  Filter f;
  Decoded info;
  REQUIRE(decode_filter(msg, &links, f, info));
  REQUIRE(f.actions.size() == 1);
  ObjStats s;
  REQUIRE(read_filter_stats(msg, f, s));
  REQUIRE(s.actions.size() == 1);
  CHECK(s.actions[0].basic);
  CHECK(s.actions[0].hw);
  CHECK(s.actions[0].queue);
  CHECK(!s.hits);  // no TCA_U32_PCNT: a kernel without CONFIG_CLS_U32_PERF
  REQUIRE(s.filter_packets());
  CHECK(*s.filter_packets() == 0);
}

TEST_CASE("stats: a rule's own hit count (u32 PCNT) and each action's counters") {
  auto msg = tc_message(RTM_NEWTFILTER, 0x80000800, 0xFFFFFFF2, [](MsgWriter& w) {
    w.attr_str(TCA_KIND, "u32");
    size_t o = w.nest_begin(TCA_OPTIONS);
    w.attr_u32(TCA_U32_CLASSID, 0x10010);
    uint64_t pcnt[3] = {40, 17, 17};  // rcnt, rhit, one key's hits
    w.attr(TCA_U32_PCNT, pcnt, sizeof pcnt);
    size_t list = w.nest_begin(TCA_U32_ACT);
    for (uint16_t i = 1; i <= 2; ++i) {
      size_t one = w.nest_begin(i);
      w.attr_str(TCA_ACT_KIND, "mirred");
      size_t st = w.nest_begin(TCA_ACT_STATS);
      gnet_stats_basic b{};
      b.bytes = 1000u * i, b.packets = 10u * i;
      w.attr(TCA_STATS_BASIC, &b, sizeof b);
      w.nest_end(st);
      w.nest_end(one);
    }
    w.nest_end(list);
    w.nest_end(o);
  });
  test::FakeLinks links;
  Filter f;
  Decoded info;
  decode_filter(msg, &links, f, info);
  ObjStats s;
  REQUIRE(read_filter_stats(msg, f, s));
  CHECK(s.hits == 17u);
  CHECK(s.lookups == 40u);
  CHECK(s.filter_packets() == 17u);  // its own hits before its first action's
  CHECK(s.filter_bytes() == 1000u);
  REQUIRE(s.actions.size() == 2);
  CHECK(s.actions[0].packets == 10);
  CHECK(s.actions[1].packets == 20);
  CHECK(s.actions[1].bytes == 2000);
}

namespace {

const char* kFile = R"(version: 1
devices:
  v0:
    qdiscs:
      - {kind: htb, handle: "1:", default: "1:30"}
    classes:
      - {classid: "1:1", rate: 1gbit}
      - {classid: "1:10", parent: "1:1", rate: 300mbit, ceil: 900mbit}
      - {classid: "1:30", parent: "1:1", rate: 100mbit}
    filters:
      - name: "we\"b\\n"
        parent: "1:"
        pref: 20
        protocol: ip
        handle: "::1"
        u32: {match: [{ip: {protocol: 6, dport: 443}}]}
        classid: "1:10"
        actions:
          - mirred: {direction: egress, action: mirror, dev: v1}
)";

// The live side: the file's objects (what apply made), less class 1:30,
// plus a class 1:99 nobody declared; counters for each.
struct Fixture {
  State desired = test::load_ok(kFile);
  State live = desired;
  StatsTable table;
  Fixture() {
    Device& v0 = live.devices[0];
    std::erase_if(v0.classes, [](const Class& c) { return c.classid == 0x10030; });
    Class extra = v0.classes[0];
    extra.classid = 0x10099;
    extra.parent = 0x10001;
    v0.classes.push_back(extra);
    PlaceStats& p = table.places["v0"];
    auto counted = [](uint64_t pk) {
      ObjStats s;
      s.c.basic = true, s.c.packets = pk, s.c.bytes = pk * 100;
      s.c.queue = true, s.c.qlen = 2, s.c.backlog = 300;
      return s;
    };
    p.qdiscs[kHandleRoot] = counted(50);
    p.classes[0x10001] = counted(40);
    p.classes[0x10010] = counted(30);
    p.classes[0x10099] = counted(5);
    ObjStats f;
    Counters a;
    a.basic = true, a.packets = 7, a.bytes = 700;
    f.actions.push_back(a);
    p.filters[v0.filters[0].key] = f;
  }
};

}  // namespace

TEST_CASE("stats: counters are named by the file's names and lines, the rest listed apart") {
  Fixture fx;
  StatsReport r = join_stats(&fx.desired, fx.live, fx.table);
  REQUIRE(r.declared.size() == 5);  // qdisc, three classes, the rule
  CHECK(r.declared[0].where() == "t.yaml:5");
  CHECK(r.declared[0].stats->c.packets == 50);
  CHECK(r.declared[2].id() == "1:10");
  CHECK(r.declared[2].where() == "t.yaml:8");
  CHECK(r.declared[2].rate() == "300mbit/900mbit");
  CHECK(r.declared[2].stats->c.packets == 30);
  CHECK(r.declared[3].id() == "1:30");
  CHECK_FALSE(r.declared[3].live);  // declared, not in the kernel
  CHECK(r.missing() == 1);
  CHECK(r.declared[4].name() == "we\"b\\n");
  CHECK(r.declared[4].where() == "t.yaml:11");
  CHECK(r.declared[4].stats->filter_packets() == 7u);
  REQUIRE(r.undeclared.size() == 1);
  CHECK(r.undeclared[0].id() == "1:99");
  CHECK(r.undeclared[0].stats->c.packets == 5);

  std::ostringstream text;
  write_stats_text(r, text);
  CHECK_THAT(text.str(), Catch::Contains("class htb 1:10 parent 1:1  (t.yaml:8)"));
  CHECK_THAT(text.str(), Catch::Contains("not in the files:\nv0:\n  class htb 1:99"));
  CHECK_THAT(text.str(), Catch::Contains("1 declared object(s) not in the kernel"));

  // Without files: every live object, named by the kernel's identities.
  StatsReport all = join_stats(nullptr, fx.live, fx.table);
  CHECK(all.declared.empty());
  CHECK(all.undeclared.size() == 5);
}

TEST_CASE("stats: Prometheus exposition, families grouped, labels escaped") {
  Fixture fx;
  std::ostringstream out;
  write_stats_prometheus(join_stats(&fx.desired, fx.live, fx.table), out);
  std::string p = out.str();
  CHECK_THAT(p,
             Catch::Contains("# TYPE tcsync_filter_packets_total counter\n"
                             "tcsync_filter_packets_total{dev=\"v0\",kind=\"u32\",name=\"we\\\"b\\\\n\",parent=\"1:\","
                             "declared=\"true\"} 7\n"));
  CHECK_THAT(p, Catch::Contains("tcsync_class_packets_total{dev=\"v0\",kind=\"htb\",classid=\"1:99\",parent=\"1:1\","
                                "declared=\"false\"} 5\n"));
  CHECK_THAT(p, Catch::Contains("# TYPE tcsync_class_backlog_bytes gauge\n"));
  CHECK_THAT(p, Catch::Contains("tcsync_declared_missing{} 1\n"));
  // One HELP/TYPE per family, its samples together.
  size_t at = 0, types = 0;
  while ((at = p.find("# TYPE tcsync_class_packets_total ", at)) != std::string::npos) ++types, ++at;
  CHECK(types == 1);
  CHECK(prometheus_escape("a\\b\"c\nd") == "a\\\\b\\\"c\\nd");
}

TEST_CASE("stats: dot draws the tree and folds leaves past the limit") {
  State live = test::load_ok(R"(version: 1
devices:
  v0:
    qdiscs:
      - {kind: htb, handle: "1:"}
    classes:
      - {classid: "1:1", rate: 1gbit}
)");
  StatsTable t;
  for (uint32_t i = 1; i <= 20; ++i) {
    Class c = live.devices[0].classes[0];
    c.classid = 0x10100 + i;
    c.parent = 0x10001;
    live.devices[0].classes.push_back(c);
    ObjStats s;
    s.c.basic = true, s.c.packets = i;  // 1:10f .. 1:114 (i = 15..20) are the busiest
    t.places["v0"].classes[c.classid] = s;
  }
  std::ostringstream out;
  write_stats_dot(join_stats(nullptr, live, t), out, 6);
  std::string d = out.str();
  CHECK_THAT(d, Catch::StartsWith("digraph tcsync {"));
  CHECK_THAT(d, Catch::Contains("subgraph cluster_p0 {\n    label=\"v0\";"));
  CHECK_THAT(d, Catch::Contains("htb 1:114\\n"));
  CHECK_THAT(d, Catch::Contains("htb 1:10f\\n"));
  CHECK_THAT(d, !Catch::Contains("htb 1:10e\\n"));
  CHECK_THAT(d, Catch::Contains("14 more leaf classes\\n105 pkt"));  // 1+..+14
  CHECK_THAT(d, Catch::Contains("p0_h65537 -> p0_more65537;"));
}
