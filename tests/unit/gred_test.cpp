// gred: golden option bodies (the setup, and each virtual queue's change
// message), the kernel's arrays read back as the vq list, the plan's
// follow-up messages, and import of tc's setup and change lines.
//
// Golden bodies: the TCA_OPTIONS payloads tc (iproute2 6.1) sent for the
// command quoted above each (strace -e sendmsg -x), as hex.
#include <linux/pkt_sched.h>

#include <cstring>

#include "import/import_tc.h"
#include "kinds/registry.h"
#include "plan/differ.h"
#include "plan/plan_print.h"
#include "qdisc_test_util.h"

using namespace tcsync;
using namespace tcsync::test;

namespace {

constexpr uint16_t kVqField = 8;  // gred's `vq`

std::vector<uint8_t> part(const Qdisc& q, uint16_t n) {
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  KindCtx ctx;
  ctx.handle = q.handle;
  ctx.change = true;
  ctx.part = n;
  q.ops->encode(q.opts, ctx, w);
  return buf;
}

// What the kernel (gred_dump) reports for the VQs a desired gred sends:
// the table, MAX_P and PARMS as arrays of 16, then the VQ list with each
// VQ's flags and counters. Built from the messages' own bytes.
std::vector<uint8_t> kernel_dump(const Qdisc& q, uint32_t sch_limit) {
  std::vector<uint8_t> setup = body(q);
  AttrTable st(setup, TCA_GRED_MAX);
  tc_gred_sopt sopt = st.get(TCA_GRED_DPS)->as<tc_gred_sopt>();
  uint32_t max_p[MAX_DPs] = {};
  tc_gred_qopt parms[MAX_DPs] = {};
  uint32_t flags[MAX_DPs] = {};
  for (uint32_t i = 0; i < MAX_DPs; ++i) parms[i].DP = MAX_DPs + i;
  const Words* vq = q.opts.words(kVqField);
  for (uint16_t n = 1; vq && n <= vq->size() / 16; ++n) {  // 16 words a VQ (gred.cpp VqWord)
    auto msg = part(q, n);
    AttrTable t(msg, TCA_GRED_MAX);
    auto o = t.get(TCA_GRED_PARMS)->as<tc_gred_qopt>();
    o.limit = std::min(o.limit, sch_limit);
    // gred_change_vq: 8 without grio; with it a VQ without a prio takes
    // the default VQ's if that one is there yet, else 8.
    if (!sopt.grio)
      o.prio = 8;
    else if (!o.prio)
      o.prio = parms[sopt.def_DP].DP < MAX_DPs ? parms[sopt.def_DP].prio : 8;
    o.backlog = 7, o.packets = 9;  // counters, not configuration
    parms[o.DP] = o;
    max_p[o.DP] = t.get(TCA_GRED_MAX_P)->u32();
    AttrIter it(t.get(TCA_GRED_VQ_LIST)->data);
    Attr e;
    REQUIRE(it.next(e));
    AttrTable vt(e.data, TCA_GRED_VQ_MAX);
    flags[o.DP] = vt.get(TCA_GRED_VQ_FLAGS)->u32();
  }
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  w.attr(TCA_GRED_DPS, &sopt, sizeof sopt);
  w.attr(TCA_GRED_MAX_P, max_p, sizeof max_p);
  w.attr_u32(TCA_GRED_LIMIT, sch_limit);
  w.attr(TCA_GRED_PARMS, parms, sizeof parms);
  size_t list = w.nest_begin(TCA_GRED_VQ_LIST);
  for (uint32_t i = 0; i < MAX_DPs; ++i) {
    if (parms[i].DP >= MAX_DPs) continue;
    size_t e = w.nest_begin(TCA_GRED_VQ_ENTRY);
    w.attr_u32(TCA_GRED_VQ_DP, i);
    w.attr_u32(TCA_GRED_VQ_FLAGS, flags[i]);
    w.attr_u64(TCA_GRED_VQ_STAT_BYTES, 1234);
    w.attr_u32(TCA_GRED_VQ_STAT_PDROP, 5);
    w.nest_end(e);
  }
  w.nest_end(list);
  return buf;
}

// The live qdisc the kernel would report for `want`.
Qdisc live_of(const Qdisc& want, uint32_t sch_limit = 1500000) {
  Qdisc l = want;
  l.opts = Options{};
  auto dump = kernel_dump(want, sch_limit);
  AttrReadLog log(dump);
  want.ops->decode(dump, KindCtx{}, l.opts);
  for (uint16_t a : {TCA_GRED_DPS, TCA_GRED_MAX_P, TCA_GRED_LIMIT, TCA_GRED_PARMS, TCA_GRED_VQ_LIST})
    CHECK(log.asked(a));
  return l;
}

State device(std::vector<Qdisc> qs) {
  State s;
  s.devices.emplace_back();
  s.devices[0].name = "v0";
  s.devices[0].qdiscs = std::move(qs);
  return s;
}

const char* kVq763a =
    "vqs: 10, default: 1, vq: [{dp: 1, limit: 60kb, min: 15kb, max: 25kb, burst: 64, avpkt: 1500, bandwidth: 10mbit, "
    "probability: 0.1}]";

}  // namespace

TEST_CASE("gred: setup options are tc's bytes") {
  // gred setup vqs 10 default 1
  check_golden("gred", "vqs: 10, default: 1", "100003000a0000000100000000000000");
  // gred setup vqs 10 default 2 grio limit 1000 ecn harddrop
  check_golden("gred", "vqs: 10, default: 2, grio: true, limit: 1000, ecn: true, harddrop: true",
               "100003000a000000020000000103000008000500e8030000");
  CHECK(load_errors("version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: gred, handle: \"1:\", vqs: 2, default: 2}]\n")
            .find("default 2 must be less than vqs 2") != std::string::npos);
}

TEST_CASE("gred: a virtual queue's change message is tc's bytes") {
  // tc qdisc change ... gred limit 60KB min 15K max 25K burst 64 avpkt 1500 bandwidth 10Mbit DP 1 probability 0.1
  Qdisc q = load_qdisc("gred", kVq763a);
  CHECK(hex(body(q)) == "100003000a0000000100000000000000");  // the add: the setup alone
  CHECK(hex(part(q, 1)) ==
        "3800010000f00000003c0000006400000100000000000000000000000000000000000000000000000000000008111300"
        "000000000000000004010200000000000000000000000101010101010101010202020202020202020303030303030303"
        "030404040404040404040505050505050505050606060606060606060707070707070707070708080808080808080809"
        "09090909090909090a0a0a0a0a0a0a0a0a0b0b0b0b0b0b0b0b0b0c0c0c0c0c0c0c0c0c0d0d0d0d0d0d0d0d0d0e0e0e0e"
        "0e0e0e0e0e0e0f0f0f0f0f0f0f0f0f101010101010101010111111111111111111121212121212121212131313131313"
        "131313141414141414141414151515151515151515151616161616161616161717171717171717171818181818181818"
        "181919191919191919191a1a1a1a1a1a1a1a1a1b1b1b1b1b1b1b1b1f0800040099999919180006001400010008000200"
        "0100000008000c0000000000");
  // tc qdisc change ... gred limit 60KB min 15K max 25K avpkt 1500 DP 3 prio 2 ecn harddrop
  // (Wlog 2 from burst's default, Plog 19, Scell_log 12, prio 2, VQ flags 3)
  Qdisc g = load_qdisc("gred",
                       "vqs: 4, default: 0, grio: true, vq: [{dp: 3, limit: 60kb, min: 15kb, max: 25kb, avpkt: 1500, "
                       "prio: 2, ecn: true, harddrop: true}]");
  CHECK(hex(part(g, 1)) ==
        "3800010000f00000003c0000006400000300000000000000000000000000000000000000000000000000000002130c02"
        "000000000000000004010200000000000000000000000000000000000101010101010101010101010101010102020202"
        "020202020202020202020202030303030303030303030303030303030404040404040404040404040404040405050505"
        "050505050505050505050505060606060606060606060606060606060707070707070707070707070707070708080808"
        "080808080808080808080808090909090909090909090909090909090a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0b0b0b0b"
        "0b0b0b0b0b0b0b0b0b0b0b0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0e0e0e0e0e"
        "0e0e0e0e0e0e0e0e0e0e0e0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f1f0800040051b81e05180006001400010008000200"
        "0300000008000c0003000000");
}

TEST_CASE("gred: the kernel's arrays read back as the vq list, and a dump applies back") {
  Qdisc want = load_qdisc("gred", kVq763a);
  Qdisc live = live_of(want);
  bool recreate = false;
  CHECK(qdisc_differences(want, live, recreate).empty());
  CHECK(live.raw.options().empty());
  // The kernel's form (dump): ewma and scell_log, no avpkt; the same state,
  // and the same PARMS (the idle table is the middle one, never reported).
  std::string text = describe_field(want.ops->fields[kVqField], *live.opts.get(kVqField));
  CHECK(text == "[dp 1: limit 60kb min 15kb max 25kb probability 0.1 prio 8 ewma 8 scell_log 19]");
  Qdisc back = load_qdisc("gred",
                          "vqs: 10, default: 1, vq: [{dp: 1, limit: 61440, min: 15360, max: 25600, probability: 0.1, "
                          "prio: 8, ewma: 8, scell_log: 19}]");
  CHECK(qdisc_differences(back, live, recreate).empty());
  // The same PARMS up to the prio (sent as the kernel's 8, not left 0).
  CHECK(hex(part(back, 1)).substr(0, 94) == hex(part(want, 1)).substr(0, 94));
  // A VQ limit above the qdisc's is the qdisc's, as the kernel keeps it.
  Qdisc capped = load_qdisc(
      "gred", "vqs: 2, default: 0, limit: 30000, vq: [{dp: 0, limit: 60kb, min: 15kb, max: 25kb, avpkt: 1500}]");
  CHECK(qdisc_differences(capped, live_of(capped, 30000), recreate).empty());
}

TEST_CASE("gred: the plan adds the setup, then one change per virtual queue") {
  Qdisc want =
      load_qdisc("gred",
                 "vqs: 4, default: 2, grio: true, vq: [{dp: 0, limit: 60kb, min: 15kb, max: 25kb, avpkt: 1500}, "
                 "{dp: 2, limit: 60kb, min: 15kb, max: 25kb, avpkt: 1500, prio: 3}]");
  State desired = device({want});
  State empty = device({});
  Plan add = make_plan(desired, empty);
  REQUIRE(add.steps.size() == 3);
  CHECK(add.steps[0].op == Op::Add);
  CHECK(add.steps[0].part == 0);
  // In the file's order: dp 0, without a prio, comes before the default
  // VQ and gets 8 (as tc's lines in that order would).
  CHECK(add.steps[1].part == 1);
  CHECK(add.steps[1].reason == "vq 0 new: limit 60kb min 15kb max 25kb probability 0.02 prio 8 ewma 2 scell_log 12");
  CHECK(add.steps[2].part == 2);
  CHECK(add.steps[2].reason == "vq 2 new: limit 60kb min 15kb max 25kb probability 0.02 prio 3 ewma 2 scell_log 12");

  State live = device({live_of(want)});
  CHECK(make_plan(desired, live).empty());

  // One VQ's min: that VQ's message alone.
  Qdisc moved =
      load_qdisc("gred",
                 "vqs: 4, default: 2, grio: true, vq: [{dp: 0, limit: 60kb, min: 20kb, max: 25kb, avpkt: 1500}, "
                 "{dp: 2, limit: 60kb, min: 15kb, max: 25kb, avpkt: 1500, prio: 3}]");
  State moved_state = device({moved});
  Plan one = make_plan(moved_state, live);
  REQUIRE(one.steps.size() == 1);
  CHECK(one.steps[0].op == Op::Change);
  CHECK(one.steps[0].part == 1);
  CHECK(plan_text(one, {}) ==
        "~ v0: qdisc gred 1: root  (vq 0: limit 60kb min 15kb max 25kb probability 0.02 prio 8 ewma 2 "
        "scell_log 12 -> limit 60kb min 20kb max 25kb probability 0.02 prio 8 ewma 1 scell_log 11)  [t.yaml:4:14]\n");

  // The table: its own message alone.
  Qdisc table = want;
  table.opts.set(2, uint64_t{0});  // grio off: every VQ's prio becomes 8, so dp 2's is sent again
  Diagnostics d;
  table.ops->normalize(table.opts, KindCtx{}, d, {});
  State table_state = device({table});
  Plan t = make_plan(table_state, live);
  REQUIRE(t.steps.size() == 2);
  CHECK(t.steps[1].part == 2);
  CHECK(t.steps[0].part == 0);
  CHECK(t.steps[0].op == Op::Change);

  // A VQ taken away: only a new qdisc drops it.
  Qdisc fewer = load_qdisc(
      "gred", "vqs: 4, default: 2, grio: true, vq: [{dp: 2, limit: 60kb, min: 15kb, max: 25kb, avpkt: 1500, prio: 3}]");
  State fewer_state = device({fewer});
  Plan del = make_plan(fewer_state, live);
  REQUIRE(del.steps.size() == 3);
  CHECK(del.steps[0].op == Op::Delete);
  CHECK(del.steps[1].op == Op::Add);
  CHECK(del.steps[2].part == 1);
}

TEST_CASE("gred: vq errors") {
  auto err = [](const std::string& opts) {
    return load_errors("version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: gred, handle: \"1:\", " + opts + "}]\n");
  };
  CHECK(err("vqs: 2, default: 0, vq: [{dp: 2, limit: 1000, min: 100, max: 300, avpkt: 100}]")
            .find("vq dp 2 must be less than vqs 2") != std::string::npos);
  CHECK(err("vqs: 2, default: 0, vq: [{dp: 1, limit: 1000, min: 100, max: 300}]")
            .find("needs avpkt (tc's form) or ewma and scell_log") != std::string::npos);
  CHECK(err("vqs: 2, default: 0, ecn: true, vq: [{dp: 1, limit: 1000, min: 100, max: 300, avpkt: 100, harddrop: true}]")
            .find("must be the table's when the table sets any") != std::string::npos);
  CHECK(err("vqs: 2, default: 0, vq: [{dp: 1, limit: 1000, min: 100, max: 300, avpkt: 100, minn: 3}]")
            .find("unknown key 'minn' in a gred 'vq' entry; did you mean 'min'?") != std::string::npos);
  CHECK(err("vqs: 2, default: 0, vq: [{dp: 1, limit: 1000, min: 100, max: 300, avpkt: 100}, {dp: 1, limit: 1000, min: "
            "100, max: 300, avpkt: 100}]")
            .find("vq dp 1 is given twice") != std::string::npos);
  CHECK(err("vqs: 2, default: 0, vq: [{dp: 1, limit: 1000, min: 0, max: 300, avpkt: 100}]")
            .find("t.yaml:4:92: error: min must be more than 0") != std::string::npos);
  CHECK(err("vqs: 2, default: 0, vq: [{dp: 1, limit: 1000, min: 100, max: 300, burst: 3}]").find("burst needs avpkt") !=
        std::string::npos);
}

TEST_CASE("gred: import reads the setup and each change line's virtual queue") {
  std::string yaml;
  Diagnostics d;
  REQUIRE(import_tc_text("b.tc",
                         "qdisc add dev eth0 handle 1: root gred setup vqs 10 default 1\n"
                         "qdisc change dev eth0 handle 1: root gred limit 60KB min 15K max 25K burst 64 avpkt 1500 "
                         "bandwidth 10Mbit DP 1 probability 0.1\n"
                         "qdisc change dev eth0 handle 1: root gred limit 60KB min 15K max 25K avpkt 1500 vq 3\n"
                         "qdisc change dev eth0 handle 1: root gred limit 60KB min 10K max 25K avpkt 1500 vq 1\n",
                         {}, yaml, d));
  INFO(formatted(d));
  CHECK(yaml.find("{kind: gred, handle: \"1:\", vqs: 10, default: 1, vq: [{limit: 60kb, min: 10k, max: 25k, avpkt: "
                  "1500, dp: 1}, "
                  "{limit: 60kb, min: 15k, max: 25k, avpkt: 1500, dp: 3}]}") != std::string::npos);
}

TEST_CASE("gred: a virtual queue's Plog other than tc's is read, compared and sent back as held") {
  Qdisc tc_made = load_qdisc("gred", kVq763a);
  const std::string vq =
      "vq: [{dp: 1, limit: 60kb, min: 15kb, max: 25kb, burst: 64, avpkt: 1500, bandwidth: 10mbit, probability: 0.1";
  Qdisc held = load_qdisc("gred", "vqs: 10, default: 1, " + vq + ", plog: 3}]");
  // TCA_GRED_PARMS' Plog (byte 41 of tc_gred_qopt, after the attribute's
  // 4): tc's 17 (0x11) from min, max and probability; the field's 3.
  CHECK(hex(part(tc_made, 1)).substr(90, 2) == "11");
  CHECK(hex(part(held, 1)).substr(90, 2) == "03");
  Qdisc live = live_of(held);
  CHECK(describe_field(held.ops->fields[kVqField], *live.opts.get(kVqField)) ==
        "[dp 1: limit 60kb min 15kb max 25kb probability 0.1 prio 8 ewma 8 scell_log 19 plog 3]");
  bool recreate = false;
  CHECK(qdisc_differences(held, live, recreate).empty());
  CHECK_FALSE(qdisc_differences(tc_made, live, recreate).empty());
  CHECK_FALSE(qdisc_differences(held, live_of(tc_made), recreate).empty());
  // Sent back as read: the same PARMS.
  CHECK(hex(part(with_opts(held, live.opts), 1)).substr(0, 94) == hex(part(held, 1)).substr(0, 94));  // up to the prio
  // tc's own Plog spelled out is no field: the same entry as without it.
  Qdisc spelled = load_qdisc("gred", "vqs: 10, default: 1, " + vq + ", plog: 17}]");
  CHECK(*spelled.opts.get(kVqField) == *tc_made.opts.get(kVqField));
}
