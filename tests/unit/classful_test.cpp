// The classful qdiscs prio, drr, hfsc, mq and mqprio: tc's bytes, decode ->
// encode round trips, implicit classes, loader errors.
//
// Golden messages: what tc (iproute2 6.1) sent in the kernel lab for the
// command quoted above each one (strace -e sendmsg -x): the tcmsg's handle
// and parent, then TCA_KIND and TCA_OPTIONS byte for byte.
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include <catch2/catch.hpp>
#include <cstring>

#include "base/handle.h"
#include "codec/tc_codec.h"
#include "kinds/registry.h"
#include "model/kind.h"
#include "model/model.h"
#include "netlink/wire.h"
#include "plan/differ.h"
#include "test_util.h"

using namespace tcsync;
using tcsync::test::hex;
using tcsync::test::load_errors;
using tcsync::test::load_ok;

namespace {

const char* kFile = R"(version: 1
devices:
  v0:
    qdiscs:
      - {kind: prio, handle: "1:"}
      - {kind: pfifo, parent: "1:2", handle: "10:", limit: 100}
    filters:
      - {parent: "1:", pref: 1, protocol: ip, u32: {match: [{ip: {dst: 10.0.0.1/32}}]}, flowid: "1:2"}
  v1:
    qdiscs:
      - {kind: prio, handle: "1:", bands: 4, priomap: [3, 2, 1, 0, 3, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1]}
  v2:
    qdiscs:
      - {kind: drr, handle: "2:"}
      - {kind: bfifo, parent: "2:1", handle: "21:", limit: 10000}
    classes:
      - {classid: "2:1", quantum: 1500}
      - {classid: "2:2"}
  v3:
    qdiscs:
      - {kind: hfsc, handle: "3:", default: "3:20"}
    classes:
      - {classid: "3:1", sc: 10mbit, ul: 20mbit}
      - {classid: "3:10", parent: "3:1", rt: {m1: 2mbit, d: 10ms, m2: 1mbit}, ls: 5mbit}
      - {classid: "3:20", parent: "3:1", ls: {m2: 1mbit}}
  v4:
    qdiscs:
      - {kind: hfsc, handle: "3:"}
  v5:
    qdiscs:
      - {kind: mq, handle: "4:"}
      - {kind: pfifo, parent: "4:1", handle: "41:", limit: 50}
  v6:
    qdiscs:
      - {kind: mqprio, handle: "5:", num_tc: 2, map: [0, 0, 0, 0, 1, 1, 1, 1], queues: ["2@0", "2@2"], hw: 0}
  v7:
    qdiscs:
      - {kind: mqprio, handle: "5:"}
  v8:
    qdiscs:
      - {kind: mqprio, handle: "5:", num_tc: 3, map: [0, 1, 2], queues: ["1@0", "1@1", "2@2"], hw: 0}
)";

struct Msg {
  uint32_t handle = 0, parent = 0;
  std::string attrs;  // hex of everything after the tcmsg
};

Msg split(const std::vector<uint8_t>& buf) {
  tcmsg t;
  std::memcpy(&t, buf.data() + sizeof(nlmsghdr), sizeof t);
  std::vector<uint8_t> rest(buf.begin() + sizeof(nlmsghdr) + sizeof(tcmsg), buf.end());
  return {t.tcm_handle, t.tcm_parent, hex(rest)};
}

Msg qmsg(const Qdisc& q) {
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  Diagnostics d;
  encode_qdisc(w, Op::Add, q, 3, nullptr, d);
  REQUIRE_FALSE(d.has_errors());
  return split(buf);
}

Msg cmsg(const Class& c) {
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  Diagnostics d;
  encode_class(w, Op::Add, c, 3, nullptr, d);
  REQUIRE_FALSE(d.has_errors());
  return split(buf);
}

// TCA_KIND attributes as tc pads them.
const std::string kPrio =
    "090001007072696f"
    "00000000";
const std::string kDrr = "0800010064727200";
const std::string kHfsc =
    "0900010068667363"
    "00000000";
const std::string kMq = "070001006d710000";
const std::string kMqprio =
    "0b0001006d717072"
    "696f0000";

// Decoding what was encoded gives the same options back (the dump side).
template <typename T>
void round_trip(const T& obj, ObjType type) {
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  Diagnostics d;
  if constexpr (std::is_same_v<T, Qdisc>)
    encode_qdisc(w, Op::Add, obj, 3, nullptr, d);
  else
    encode_class(w, Op::Add, obj, 3, nullptr, d);
  Decoded info;
  T back;
  bool kept;
  if constexpr (std::is_same_v<T, Qdisc>)
    kept = decode_qdisc(buf, nullptr, back, info);
  else
    kept = decode_class(buf, nullptr, back, info);
  REQUIRE(kept);
  CHECK(back.ops == obj.ops);
  // Compared as the differ compares (fields at their defaults may be absent
  // on one side), and nothing to change.
  bool recreate = false;
  CHECK(diff_options(*obj.ops, obj.opts, back.opts, recreate).empty());
  (void)type;
}

}  // namespace

TEST_CASE("prio: tc's bytes, defaults as absent, and round trips") {
  State s = load_ok(kFile);
  // tc qdisc add dev v0 root handle 1: prio
  Msg m = qmsg(s.devices[0].qdiscs[0]);
  CHECK(m.handle == 0x10000u);
  CHECK(m.parent == TC_H_ROOT);
  CHECK(m.attrs == kPrio +
                       "1c000200"
                       "030000000102020201020000010101010101010104000200");
  CHECK(s.devices[0].qdiscs[0].opts.empty());  // tc's default bands and map are "absent"
  // tc qdisc add dev v0 root handle 1: prio bands 4 priomap 3 2 1 0 3 2 1 0 0 0 0 0 0 0 0 1
  m = qmsg(s.devices[1].qdiscs[0]);
  CHECK(m.attrs == kPrio +
                       "1c000200"
                       "040000000302010003020100000000000000000104000200");
  // tc qdisc add dev v0 parent 1:2 handle 10: pfifo limit 100
  m = qmsg(s.devices[0].qdiscs[1]);
  CHECK(m.handle == 0x100000u);
  CHECK(m.parent == 0x10002u);
  CHECK(m.attrs ==
        "0a00010070666966"
        "6f000000"
        "0800020064000000");
  round_trip(s.devices[0].qdiscs[0], ObjType::Qdisc);
  round_trip(s.devices[1].qdiscs[0], ObjType::Qdisc);
}

TEST_CASE("prio: a shorter priomap keeps tc's default tail, entries must fit the bands") {
  State s = load_ok(
      "version: 1\ndevices:\n  v0:\n    qdiscs:\n      - {kind: prio, handle: \"1:\", bands: 4, priomap: [3, 3]}\n");
  auto* w = s.devices[0].qdiscs[0].opts.words(1);
  REQUIRE(w);
  CHECK(*w == Words{3, 3, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1});
  CHECK(load_errors("version: 1\ndevices:\n  v0:\n    qdiscs:\n      - {kind: prio, handle: \"1:\", bands: 2}\n")
            .find("t.yaml:5:43: error: priomap entry 1 is band 2, but there are only 2 bands (0 to 1)") == 0);
  CHECK(load_errors(
            "version: 1\ndevices:\n  v0:\n    qdiscs:\n      - {kind: prio, handle: \"1:\", bands: 1, priomap: [0]}\n")
            .find("prio needs 2 to 16 bands") != std::string::npos);
}

TEST_CASE("tbf, netem, cbs: any minor of their one class holds the inner qdisc, once") {
  // sqm-scripts' simplest_tbf: `qdisc add ... parent 1: handle 110: fq_codel` under a tbf 1:.
  const std::string head =
      "version: 1\ndevices:\n  v0:\n    qdiscs:\n      - {kind: tbf, handle: \"1:\", rate: 1mbit, burst: 10k, limit: "
      "10k}\n";
  CHECK(load_errors(head + "      - {kind: pfifo, parent: \"1:\", handle: \"10:\"}\n") == "");
  CHECK(load_errors(head + "      - {kind: pfifo, parent: \"1:5\", handle: \"10:\"}\n") == "");
  CHECK(load_errors(head + "      - {kind: pfifo, parent: \"1:\", handle: \"10:\"}\n      - {kind: pfifo, parent: "
                           "\"1:1\", handle: \"11:\"}\n")
            .find("t.yaml:7:9: error: parent 1:1 is the one class of tbf 1:, which already holds the qdisc at "
                  "t.yaml:6:9") == 0);
  CHECK(load_errors("version: 1\ndevices:\n  v0:\n    qdiscs:\n      - {kind: netem, handle: \"1:\"}\n      - {kind: "
                    "pfifo, parent: \"1:\", handle: \"10:\"}\n") == "");
}

TEST_CASE("red: any minor of its one class holds the child, as red_find answers") {
  // mininet's ecn/red links: `qdisc add ... parent 6: handle 10: netem` under a red 6:.
  const std::string head =
      "version: 1\ndevices:\n  v0:\n    qdiscs:\n      - {kind: red, handle: \"6:\", limit: 60000, avpkt: 1000}\n";
  CHECK(load_errors(head + "      - {kind: netem, parent: \"6:\", handle: \"10:\"}\n") == "");
  CHECK(load_errors(head + "      - {kind: netem, parent: \"6:1\", handle: \"10:\"}\n") == "");
  CHECK(load_errors(head + "      - {kind: pfifo, parent: \"6:\", handle: \"10:\"}\n      - {kind: pfifo, parent: "
                           "\"6:1\", handle: \"11:\"}\n")
            .find("is the one class of red 6:, which already holds the qdisc") != std::string::npos);
}

TEST_CASE("red: a qevent block binds a shared block, which may then hold filters") {
  const std::string file =
      "version: 1\ndevices:\n  v0:\n    qdiscs:\n      - {kind: red, handle: \"1:\", limit: 60000, avpkt: 1000, "
      "early_drop_block: 10}\nblocks:\n  10:\n    filters:\n      - {pref: 1, u32: {match: [{u32: {value: 0, mask: "
      "0, at: 0}}]}}\n";
  CHECK(load_errors(file) == "");
  State s = load_ok(file);
  REQUIRE(s.devices.size() == 1);
  CHECK(all_bound_blocks(s.devices[0].qdiscs[0]) == std::vector<uint32_t>{10});
}

TEST_CASE("a root prio with handle ffff: owns parent \"ffff:\": its chains are not the ingress hook's") {
  // What the dump writes for `qdisc add dev v0 root handle ffff: prio` with a filter at parent ffff:.
  State s = load_ok(
      "version: 1\ndevices:\n  v0:\n    qdiscs:\n      - {kind: prio, parent: root, handle: \"ffff:\"}\n    "
      "chains:\n      - {parent: \"ffff:\", chain: 0}\n    filters:\n      - {parent: \"ffff:\", pref: 1, u32: {match: "
      "[{u32: {value: 0, mask: 0, at: 0}}]}}\n");
  REQUIRE(s.devices[0].chains.size() == 1);
  CHECK(s.devices[0].chains[0].parent == kHandleIngressQdisc);
}

TEST_CASE("prio: its bands are implicit classes for child qdiscs and filters") {
  // 1:1..1:3 exist without a declaration; 1:4 does not (the kernel: "Specified class not found.").
  const std::string head = "version: 1\ndevices:\n  v0:\n    qdiscs:\n      - {kind: prio, handle: \"1:\"}\n";
  CHECK(load_errors(head + "      - {kind: pfifo, parent: \"1:3\", handle: \"30:\"}\n") == "");
  CHECK(load_errors(head + "      - {kind: pfifo, parent: \"1:4\", handle: \"40:\"}\n")
            .find("t.yaml:6:9: error: parent class 1:4 is not declared on v0 and is not one of the classes prio 1: "
                  "makes itself") == 0);
  CHECK(load_errors(
            head +
            "    filters:\n      - {parent: \"1:2\", pref: 1, u32: {match: [{u32: {value: 0, mask: 0, at: 0}}]}}\n") ==
        "");
  // The prio's band classes, as the kernel dumps them (kind prio), are not objects.
  State s = load_ok(head);
  Class band;
  band.classid = 0x10001;
  band.parent = TC_H_ROOT;
  band.kind = "prio";
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  Diagnostics d;
  encode_class(w, Op::Add, band, 3, nullptr, d);
  Class back;
  Decoded info;
  CHECK_FALSE(decode_class(buf, nullptr, back, info));
}

TEST_CASE("prio: a child under a band is added after the prio") {
  State want = load_ok(kFile);
  State live;
  Plan p = make_plan(want, live);
  int prio_at = -1, child_at = -1;
  for (size_t i = 0; i < p.steps.size(); ++i) {
    auto& st = p.steps[i];
    if (st.device != "v0" || !st.qdisc) continue;
    if (st.qdisc->kind == "prio") prio_at = static_cast<int>(i);
    if (st.qdisc->kind == "pfifo") child_at = static_cast<int>(i);
  }
  REQUIRE(prio_at >= 0);
  CHECK(child_at > prio_at);
}

TEST_CASE("drr: tc's bytes, and quantum is the kernel's when absent") {
  State s = load_ok(kFile);
  auto& dev = s.devices[2];
  // tc qdisc add dev v1 root handle 2: drr (no TCA_OPTIONS)
  Msg m = qmsg(dev.qdiscs[0]);
  CHECK(m.attrs == kDrr);
  // tc class add dev v1 parent 2: classid 2:1 drr quantum 1500
  m = cmsg(dev.classes[0]);
  CHECK(m.handle == 0x20001u);
  CHECK(m.parent == 0x20000u);
  CHECK(m.attrs == kDrr +
                       "0c000200"
                       "08000100dc050000");
  // tc class add dev v1 parent 2: classid 2:2 drr (an empty TCA_OPTIONS)
  m = cmsg(dev.classes[1]);
  CHECK(m.attrs == kDrr + "04000200");
  round_trip(dev.classes[0], ObjType::Class);
  CHECK(load_errors("version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: drr, handle: \"2:\"}]\n    classes: [{classid: "
                    "\"2:1\"}, {classid: \"2:3\", parent: \"2:1\"}]\n")
            .find("drr classes are flat: class 2:3 sits right under qdisc 2:, not under 2:1") != std::string::npos);
  CHECK(load_errors("version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: drr, handle: \"2:\"}]\n    classes: [{classid: "
                    "\"2:1\", quantum: 0}]\n")
            .find("drr quantum must be more than 0") != std::string::npos);
}

TEST_CASE("hfsc: tc's bytes for the qdisc and for rt, ls, ul and sc curves") {
  State s = load_ok(kFile);
  auto& dev = s.devices[3];
  // tc qdisc add dev v2 root handle 3: hfsc default 20 (a 2-byte struct: length 6)
  Msg m = qmsg(dev.qdiscs[0]);
  CHECK(m.attrs == kHfsc +
                       "06000200"
                       "20000000");
  // tc qdisc add dev v3 root handle 3: hfsc
  CHECK(qmsg(s.devices[4].qdiscs[0]).attrs == kHfsc +
                                                  "06000200"
                                                  "00000000");
  // tc class add dev v2 parent 3: classid 3:1 hfsc sc rate 10mbit ul rate 20mbit
  m = cmsg(dev.classes[0]);
  CHECK(m.handle == 0x30001u);
  CHECK(m.attrs ==
        kHfsc +
            "34000200"
            "100001000000000000000000d0121300100002000000000000000000d0121300100003000000000000000000a0252600");
  // tc class add dev v2 parent 3:1 classid 3:10 hfsc rt m1 2mbit d 10ms m2 1mbit ls rate 5mbit
  m = cmsg(dev.classes[1]);
  CHECK(m.parent == 0x30001u);
  CHECK(m.attrs == kHfsc +
                       "24000200"
                       "1000010090d003001027000048e8010010000200000000000000000068890900");
  // tc class add dev v2 parent 3:1 classid 3:20 hfsc ls m2 1mbit
  CHECK(cmsg(dev.classes[2]).attrs == kHfsc +
                                          "14000200"
                                          "10000200000000000000000048e80100");
  round_trip(dev.qdiscs[0], ObjType::Qdisc);
  for (auto& c : dev.classes) round_trip(c, ObjType::Class);
  // rt and ls that are equal are one sc, whichever way they were written.
  State t = load_ok(
      "version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: hfsc, handle: \"3:\"}]\n"
      "    classes: [{classid: \"3:1\", rt: 10mbit, ls: 10mbit}]\n");
  CHECK(t.devices[0].classes[0].opts.has(3));
  CHECK_FALSE(t.devices[0].classes[0].opts.has(0));
}

TEST_CASE("hfsc: curves are kept in bytes/s and us, as tc sends them") {
  // 777777bit is 97222 bytes/s (tc rounds down too); the kernel dumps the
  // same numbers back (lab: test_lab_classful.sh, class 3:30).
  State s = load_ok(
      "version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: hfsc, handle: \"3:\"}]\n"
      "    classes: [{classid: \"3:1\", rt: {m1: 1001kbit, d: 333us, m2: 777777bit}}]\n");
  auto* c = s.devices[0].classes[0].opts.words(0);
  REQUIRE(c);
  CHECK((*c)[0] == 125125u);
  CHECK((*c)[1] == 333u);
  CHECK((*c)[2] == 97222u);
}

TEST_CASE("hfsc: errors as tc gives them, and removing a curve re-creates the class") {
  const std::string head = "version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: hfsc, handle: \"3:\"}]\n    classes:\n";
  CHECK(load_errors(head + "      - {classid: \"3:1\", ul: 1mbit}\n").find("hfsc class needs 'rt', 'ls' or 'sc'") !=
        std::string::npos);
  CHECK(load_errors(head + "      - {classid: \"3:1\", rt: 1mbit, ul: 1mbit}\n").find("'ul' needs 'ls' or 'sc'") !=
        std::string::npos);
  CHECK(load_errors(head + "      - {classid: \"3:1\", sc: 1mbit, rt: 1mbit}\n")
            .find("give 'sc' or 'rt' and 'ls', not both") != std::string::npos);
  CHECK(load_errors(head + "      - {classid: \"3:1\", sc: {m1: 0, d: 0, m2: 0}}\n")
            .find("a service curve needs a slope") != std::string::npos);
  CHECK(load_errors(head + "      - {classid: \"3:1\", sc: {m2: 1mbit, dd: 1ms}}\n").find("did you mean d?") !=
        std::string::npos);
  CHECK(load_errors(head +
                    "      - {classid: \"3:1\", rt: 1mbit}\n      - {classid: \"3:2\", parent: \"3:1\", ls: 1mbit}\n")
            .find("hfsc class 3:1 has child classes, so it needs 'ls' or 'sc'") != std::string::npos);

  State have = load_ok(head + "      - {classid: \"3:1\", ls: 1mbit, ul: 2mbit}\n");
  State changed = load_ok(head + "      - {classid: \"3:1\", ls: 3mbit, ul: 2mbit}\n");
  State dropped = load_ok(head + "      - {classid: \"3:1\", ls: 1mbit}\n");
  Plan p = make_plan(changed, have);
  REQUIRE(p.steps.size() == 1);
  CHECK(p.steps[0].op == Op::Change);
  p = make_plan(dropped, have);
  REQUIRE(p.steps.size() == 2);
  CHECK(p.steps[0].op == Op::Delete);
  CHECK(p.steps[1].op == Op::Add);
}

TEST_CASE("hfsc: the root class (minor 0) is the qdisc's own, not an object") {
  Class root;
  root.classid = 0x30000;
  root.parent = TC_H_ROOT;
  root.kind = "hfsc";
  root.ops = &kClassHfsc;
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  Diagnostics d;
  encode_class(w, Op::Add, root, 3, nullptr, d);
  Class back;
  Decoded info;
  CHECK_FALSE(decode_class(buf, nullptr, back, info));
}

TEST_CASE("mq: no options, and its queues take children") {
  State s = load_ok(kFile);
  // tc qdisc add dev v4 root handle 4: mq
  CHECK(qmsg(s.devices[5].qdiscs[0]).attrs == kMq);
  // tc qdisc add dev v4 parent 4:1 handle 41: pfifo limit 50
  Msg m = qmsg(s.devices[5].qdiscs[1]);
  CHECK(m.parent == 0x40001u);
  CHECK(m.attrs ==
        "0a00010070666966"
        "6f000000"
        "0800020032000000");
}

TEST_CASE("mqprio: tc's bytes, defaults, checks") {
  State s = load_ok(kFile);
  // tc qdisc add dev v6 root handle 5: mqprio num_tc 2 map 0 0 0 0 1 1 1 1 queues 2@0 2@2 hw 0
  CHECK(qmsg(s.devices[6].qdiscs[0]).attrs ==
        kMqprio +
            "58000200"
            "0200000000010101010000000000000000000200020000000000000000000000000000000000000000000000000000000000000002"
            "00000000000000000000000000000000000000000000000000000000000000");
  // tc qdisc add dev v6 root handle 5: mqprio (tc's defaults: 8 classes, hw 1)
  CHECK(qmsg(s.devices[7].qdiscs[0]).attrs ==
        kMqprio +
            "58000200"
            "0800010203040506070001010103030303010000000000000000000000000000000000000000000000000000000000000000000000"
            "00000000000000000000000000000000000000000000000000000000000000");
  // tc qdisc add dev v6 root handle 5: mqprio num_tc 3 map 0 1 2 queues 1@0 1@1 2@2 hw 0
  CHECK(qmsg(s.devices[8].qdiscs[0]).attrs ==
        kMqprio +
            "58000200"
            "0300010200000000000000000000000000000100010002000000000000000000000000000000000000000000000000000000000001"
            "00020000000000000000000000000000000000000000000000000000000000");
  for (int i : {6, 7, 8}) round_trip(s.devices[i].qdiscs[0], ObjType::Qdisc);
  const std::string head = "version: 1\ndevices:\n  v0:\n    qdiscs:\n";
  CHECK(
      load_errors(head +
                  "      - {kind: mqprio, handle: \"5:\", num_tc: 2, map: [0, 2], queues: [\"1@0\", \"1@1\"], hw: 0}\n")
          .find("map entry 1 is traffic class 2, but num_tc is 2") != std::string::npos);
  CHECK(load_errors(head + "      - {kind: mqprio, handle: \"5:\", num_tc: 2, map: [0, 1], queues: [\"1@0\"], hw: 0}\n")
            .find("'queues' needs one range per traffic class: 2") != std::string::npos);
  // Queue classes take children; the traffic-class classes (ffe0..) do not.
  const std::string mq =
      head + "      - {kind: mqprio, handle: \"5:\", num_tc: 2, map: [0, 1], queues: [\"1@0\", \"2@1\"], hw: 0}\n";
  CHECK(load_errors(mq + "      - {kind: pfifo, parent: \"5:3\", handle: \"53:\"}\n") == "");
  CHECK(load_errors(mq + "      - {kind: pfifo, parent: \"5:4\", handle: \"54:\"}\n").find("parent class 5:4") !=
        std::string::npos);
  CHECK(load_errors(mq + "      - {kind: pfifo, parent: \"5:ffe0\", handle: \"54:\"}\n").find("parent class 5:ffe0") !=
        std::string::npos);
}

TEST_CASE("mqprio: any change re-creates it (no ->change in Linux 6.1)") {
  const std::string head = "version: 1\ndevices:\n  v0:\n    qdiscs:\n";
  const std::string child = "      - {kind: pfifo, parent: \"5:1\", handle: \"51:\", limit: 7}\n";
  State have = load_ok(
      head + "      - {kind: mqprio, handle: \"5:\", num_tc: 2, map: [0, 1], queues: [\"2@0\", \"2@2\"], hw: 0}\n" +
      child);
  State want = load_ok(
      head + "      - {kind: mqprio, handle: \"5:\", num_tc: 2, map: [1, 0], queues: [\"2@0\", \"2@2\"], hw: 0}\n" +
      child);
  Plan p = make_plan(want, have);
  // The unchanged child goes with its parent, so it is added again after it.
  REQUIRE(p.steps.size() == 3);
  CHECK(p.steps[0].op == Op::Delete);
  CHECK(p.steps[0].qdisc->kind == "mqprio");
  CHECK(p.steps[1].op == Op::Add);
  CHECK(p.steps[1].qdisc->kind == "mqprio");
  CHECK(p.steps[2].op == Op::Add);
  CHECK(p.steps[2].qdisc->kind == "pfifo");
  CHECK(p.steps[2].reason == "re-created with its parent");
}

TEST_CASE("prio: multiqueue is sent as tc sends it and never compared") {
  // tc qdisc add dev v0 root handle 1: prio bands 3 multiqueue (tc's bytes:
  // the nested TCA_OPTIONS carries the TCA_PRIO_MQ flag)
  State s =
      load_ok("version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: prio, handle: \"1:\", bands: 3, multiqueue: true}]\n");
  const Qdisc& q = s.devices[0].qdiscs[0];
  CHECK(qmsg(q).attrs == kPrio +
                             "20000200"
                             "03000000010202020102000001010101010101010800020004000100");
  // tc qdisc add dev v0 root handle 1: prio bands 5 priomap 0 1 2 3 4 0 1 2 3 4 0 1 2 3 4 0 multiqueue
  State t = load_ok(
      "version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: prio, handle: \"1:\", bands: 5, "
      "priomap: [0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0], multiqueue: true}]\n");
  CHECK(qmsg(t.devices[0].qdiscs[0]).attrs == kPrio +
                                                  "20000200"
                                                  "05000000000102030400010203040001020304000800020004000100");
  // The kernel dumps the bare struct: what it reports equals the file.
  std::vector<uint8_t> dumped = test::unhex("030000000102020201020000010101010101010104000200");
  Options live;
  q.ops->decode(dumped, KindCtx{}, live);
  bool recreate = false;
  CHECK(diff_options(*q.ops, q.opts, live, recreate).empty());
}
