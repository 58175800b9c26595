// ets: golden option bodies, the whole message's NLA_F_NESTED, tc's
// defaults (bands from strict + quanta, the priomap's last band), and
// decode(encode(x)) == x.
//
// Golden bodies: the TCA_OPTIONS payloads tc (iproute2 6.1) sent for
// `tc qdisc add dev v0 root handle 1: ets ...` (strace -e sendmsg -x), as hex.
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include "codec/tc_codec.h"
#include "kinds/registry.h"
#include "plan/differ.h"
#include "qdisc_test_util.h"

using namespace tcsync;
using namespace tcsync::test;

namespace {
// A qdisc whose file draws the partial-quanta warning (and nothing else).
Qdisc load_warned(const std::string& opts) {
  State s;
  std::string errs =
      load_errors("version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: ets, handle: \"1:\", " + opts + "}]\n", &s);
  CHECK(errs.find("warning: quanta gives") != std::string::npos);
  CHECK(errs.find("error") == std::string::npos);
  return s.devices[0].qdiscs[0];
}
}  // namespace

TEST_CASE("ets: options are tc's bytes") {
  // ets bands 2
  check_golden("ets", "bands: 2", "0500010002000000");
  // ets strict 3 quanta 1500 750
  check_golden("ets", "strict: 3, quanta: [1500, 750]",
               "050001000500000005000200030000001400038008000400dc05000008000400ee020000");
  // ets bands 4 strict 1 quanta 1000 500 priomap 0 1 2 3: tc sends 4 map
  // entries, tcsync the whole map (the kernel fills the rest with band 3 alike).
  CHECK(hex(body(load_warned(
            "bands: 4, strict: 1, quanta: [1000, 500], priomap: [0, 1, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 2]"))) ==
        "050001000400000005000200010000001400038008000400e803000008000400f4010000"
        "84000580"
        "0500060000000000"
        "0500060001000000"
        "0500060002000000"
        "0500060003000000"
        "0500060003000000"
        "0500060003000000"
        "0500060003000000"
        "0500060003000000"
        "0500060003000000"
        "0500060003000000"
        "0500060003000000"
        "0500060003000000"
        "0500060003000000"
        "0500060003000000"
        "0500060003000000"
        "0500060002000000");
  // ets bands 5 priomap 0 0 1 0 1 2 0 1 2 3 0 1 2 3 4 0
  check_golden(
      "ets", "bands: 5, priomap: [0, 0, 1, 0, 1, 2, 0, 1, 2, 3, 0, 1, 2, 3, 4, 0]",
      "0500010005000000840005800500060000000000050006000000000005000600010000000500060000000000050006000100000005000600"
      "0200000005000600000000000500060001000000050006000200000005000600030000000500060000000000050006000100000005000600"
      "02"
      "000000050006000300000005000600040000000500060000000000");
}

TEST_CASE("ets: TCA_OPTIONS carries NLA_F_NESTED, as tc sends it") {
  // ets_qdisc_change parses with nla_parse_nested: "NLA_F_NESTED is missing" without.
  Qdisc q = load_qdisc("ets", "bands: 2");
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  Diagnostics d;
  encode_qdisc(w, Op::Add, q, 3, nullptr, d);
  REQUIRE_FALSE(d.has_errors());
  // After the tcmsg: TCA_KIND "ets", then TCA_OPTIONS | NLA_F_NESTED (0x8002).
  std::vector<uint8_t> rest(buf.begin() + sizeof(nlmsghdr) + sizeof(tcmsg), buf.end());
  CHECK(hex(rest) ==
        "0800010065747300"
        "0c000280"
        "0500010002000000");
}

TEST_CASE("ets: tc's defaults and the kernel's form compare equal") {
  // bands defaults to strict + quanta, as tc.
  Qdisc q = load_qdisc("ets", "strict: 3, quanta: [1500, 750]");
  CHECK(q.opts.num(0) == 5u);
  // A priomap that sends every priority to the last band is the default: absent.
  CHECK_FALSE(load_qdisc("ets", "bands: 3, priomap: [2]").opts.has(3));
  // A shorter priomap is filled with the last band, as the kernel does.
  Qdisc short_map = load_qdisc("ets", "bands: 3, priomap: [0, 1]");  // kept: m points into it
  auto* m = short_map.opts.words(3);
  REQUIRE(m);
  CHECK(*m == Words{0, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2});
  // The kernel's dump of `ets bands 3`: every quantum (the MTU), the full map.
  Options live;
  std::vector<uint8_t> dump;
  MsgWriter w(dump);
  w.attr_u8(TCA_ETS_NBANDS, 3);
  size_t n = w.nest_begin(TCA_ETS_QUANTA);
  for (int i = 0; i < 3; ++i) w.attr_u32(TCA_ETS_QUANTA_BAND, 1514);
  w.nest_end(n);
  n = w.nest_begin(TCA_ETS_PRIOMAP);
  for (int i = 0; i < 16; ++i) w.attr_u8(TCA_ETS_PRIOMAP_BAND, 2);
  w.nest_end(n);
  kQdiscEts.decode(dump, KindCtx{}, live);
  CHECK(live.words(2)->size() == 3);
  CHECK_FALSE(live.has(3));
  bool recreate = false;
  CHECK(diff_options(kQdiscEts, load_qdisc("ets", "bands: 3").opts, live, recreate).empty());
  // A partial quanta list leaves the rest to the kernel: not compared (and warned).
  CHECK(diff_options(kQdiscEts, load_warned("bands: 3, quanta: [1514]").opts, live, recreate).empty());
  CHECK(diff_options(kQdiscEts, load_qdisc("ets", "quanta: [1514, 1514, 1000]").opts, live, recreate).size() == 1);
}

TEST_CASE("ets: quanta are clamped to 256..1048576 bytes, as the kernel keeps them") {
  State s;
  std::string errs = load_errors(
      "version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: ets, handle: \"1:\", quanta: [1, 2000, 2000000]}]\n", &s);
  CHECK(
      errs.find("warning: the kernel keeps each quantum between 256 and 1048576 bytes: quanta are 256 2000 1048576") !=
      std::string::npos);
  CHECK(*s.devices[0].qdiscs[0].opts.words(2) == Words{256, 2000, 1048576});
}

TEST_CASE("ets: what the kernel refuses is an error at its line") {
  const std::string head = "version: 1\ndevices:\n  v0:\n    qdiscs:\n      - {kind: ets, handle: \"1:\", ";
  CHECK(load_errors(head + "bands: 2, strict: 3}\n").find("strict 3 is more than the 2 bands") != std::string::npos);
  CHECK(load_errors(head + "bands: 2, quanta: [1, 2, 3]}\n")
            .find("3 quanta and 0 strict bands are more than the 2 bands") != std::string::npos);
  CHECK(load_errors(head + "bands: 2, priomap: [0, 1, 2]}\n")
            .find("priomap entry 2 is band 2, but there are only 2 bands") != std::string::npos);
  CHECK(load_errors(head + "quanta: [1000, 0]}\n").find("the kernel refuses 0") != std::string::npos);
  CHECK(load_errors(head + "bands: 0}\n").find("ets needs 1 to 16 bands") != std::string::npos);
  CHECK(load_errors(head + "bands: 3}\n      - {kind: pfifo, parent: \"1:3\", handle: \"30:\"}\n") == "");
  CHECK(load_errors(head + "bands: 3}\n      - {kind: pfifo, parent: \"1:4\", handle: \"40:\"}\n")
            .find("not one of the classes ets 1: makes itself") != std::string::npos);
}
