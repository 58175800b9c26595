// htb classes: the rate specs carry tc's overhead, mpu and link layer, and
// tc's `mtu` sets the default bursts.
//
// Golden: TCA_HTB_PARMS (struct tc_htb_opt) as tc (iproute2 6.1) sent it
// on this host's kernel (strace -e sendmsg -xx). tc also sends the rate
// tables and their cell_log/cell_align, which the kernel ignores when the
// link layer is set; tcsync sends neither, so those bytes are zeroed.
#include <linux/pkt_sched.h>

#include <cstring>

#include "qdisc_test_util.h"

using namespace tcsync;
using namespace tcsync::test;

namespace {

Class load_class(const std::string& opts) {
  std::string text = "version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: htb, handle: \"1:\"}]\n"
                     "    classes: [{classid: \"1:1\", " + opts + "}]\n";
  return load_ok(text).devices[0].classes[0];
}

std::vector<uint8_t> class_body(const Class& c) {
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  c.ops->encode(c.opts, KindCtx{}, w);
  return buf;
}

tc_htb_opt tc_parms(const char* hex) {
  auto b = unhex(hex);
  tc_htb_opt o{};
  REQUIRE(b.size() == 4 + sizeof o);
  std::memcpy(&o, b.data() + 4, sizeof o);
  for (tc_ratespec* r : {&o.rate, &o.ceil}) r->cell_log = 0, r->cell_align = 0;
  return o;
}

struct Golden {
  const char* yaml;
  const char* tc;
};

const Golden kGolden[] = {
    // tc class add dev v0 parent 1: classid 1:1 htb rate 1mbit ceil 2mbit linklayer atm overhead 10 mpu 64
    {"rate: 1mbit, ceil: 2mbit, linklayer: atm, overhead: 10, mpu: 64",
     "3000010003020a00ffff400048e8010003020a00ffff400090d00300400d0300a0860100000000000000000000000000"},
    // tc class add dev v0 parent 1: classid 1:2 htb rate 1mbit mtu 9000 (bursts rate/HZ + 9000)
    {"rate: 1mbit, mtu: 9000", "3000010006010000ffff000048e8010006010000ffff000048e80100882a1100882a1100000000000000000000000000"},
};

}  // namespace

TEST_CASE("htb class: overhead, mpu and linklayer go in both rate specs, mtu sets the default bursts") {
  for (auto& g : kGolden) {
    INFO(g.yaml);
    Class c = load_class(g.yaml);
    auto b = class_body(c);
    AttrTable tb(b, TCA_HTB_MAX);
    REQUIRE(tb.get(TCA_HTB_PARMS));
    tc_htb_opt ours = tb.get(TCA_HTB_PARMS)->as<tc_htb_opt>(), tc = tc_parms(g.tc);
    CHECK(std::memcmp(&ours, &tc, sizeof ours) == 0);
    // The kernel reports the specs as sent (psched_ratecfg_getrate keeps
    // overhead, mpu and link layer): decode gives the options back, but
    // mtu, which only tc's arithmetic saw.
    Options back;
    c.ops->decode(b, KindCtx{}, back);
    for (auto& o : c.opts.items()) {
      INFO("field " << c.ops->fields[o.field].key);
      if (c.ops->fields[o.field].flags & kInputOnly) {
        CHECK_FALSE(back.has(o.field));
        continue;
      }
      REQUIRE(back.get(o.field));
      CHECK(*back.get(o.field) == o.value);
    }
  }
}
