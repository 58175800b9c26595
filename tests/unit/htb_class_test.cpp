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
  std::string text =
      "version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: htb, handle: \"1:\"}]\n"
      "    classes: [{classid: \"1:1\", " +
      opts + "}]\n";
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
    {"rate: 1mbit, mtu: 9000",
     "3000010006010000ffff000048e8010006010000ffff000048e80100882a1100882a1100000000000000000000000000"},
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

// The kernel keeps the ceil's spec as sent. tc sends the rate's overhead,
// mpu and link layer in both; this class had its ceil spec changed over raw
// netlink (tests/kernel/tc_struct.py: ceil linklayer atm, overhead 24, mpu
// 96) after `tc class add ... htb rate 10mbit ceil 20mbit overhead 10 mpu
// 64`, and this is TCA_HTB_PARMS as the kernel (6.18) then reported it.
const char* kKernelCeilApart =
    "00010a0000004000d01213000002180000006000a0252600204e00001027000048e801000000000000000000";

TEST_CASE("htb class: the ceil's own overhead, mpu and link layer are read, compared and sent back as held") {
  std::vector<uint8_t> dump;
  MsgWriter w(dump);
  auto parms = unhex(kKernelCeilApart);
  w.attr(TCA_HTB_PARMS, parms.data(), parms.size());
  Class c = load_class("rate: 10mbit, ceil: 20mbit, overhead: 10, mpu: 64");
  Options live;
  c.ops->decode(dump, KindCtx{}, live);
  auto num = [&](const Options& o, const char* key) { return o.num(c.ops->field_index(key)); };
  CHECK(num(live, "overhead") == 10u);
  CHECK(num(live, "mpu") == 64u);
  CHECK(num(live, "ceil_overhead") == 24u);
  CHECK(num(live, "ceil_mpu") == 96u);
  CHECK(num(live, "ceil_linklayer") == uint64_t{TC_LINKLAYER_ATM});
  // Sent back as read: the kernel's struct, byte for byte.
  std::vector<uint8_t> again;
  MsgWriter w2(again);
  c.ops->encode(live, KindCtx{}, w2);
  CHECK(hex(again) == hex(dump));
  // A file that says nothing of the ceil's spec does not compare equal.
  CHECK_FALSE(num(c.opts, "ceil_overhead"));
  // One that spells it out reads as the kernel's.
  Class apart = load_class(
      "rate: 10mbit, ceil: 20mbit, overhead: 10, mpu: 64, ceil_overhead: 24, ceil_mpu: 96, ceil_linklayer: atm");
  for (const char* key : {"ceil_overhead", "ceil_mpu", "ceil_linklayer"}) {
    INFO(key);
    CHECK(num(apart.opts, key) == num(live, key));
  }
  // The specs as held (the file leaves quantum to the kernel).
  auto apart_body = class_body(apart);
  AttrTable tb(apart_body, TCA_HTB_MAX);
  REQUIRE(tb.get(TCA_HTB_PARMS));
  auto sent = tb.get(TCA_HTB_PARMS)->as<tc_htb_opt>();
  CHECK(std::memcmp(&sent.rate, parms.data(), sizeof sent.rate) == 0);
  CHECK(std::memcmp(&sent.ceil, parms.data() + sizeof sent.rate, sizeof sent.ceil) == 0);
}

TEST_CASE("htb class: a ceil spec equal to the rate's is no field, as tc's classes read") {
  Class c = load_class(
      "rate: 1mbit, ceil: 2mbit, overhead: 10, mpu: 64, ceil_overhead: 10, ceil_mpu: 64, ceil_linklayer: ethernet");
  for (const char* key : {"ceil_overhead", "ceil_mpu", "ceil_linklayer"})
    CHECK_FALSE(c.opts.has(c.ops->field_index(key)));
  // The first golden above is tc's class with one set of words: no ceil_*.
  Options back;
  c.ops->decode(class_body(load_class(kGolden[0].yaml)), KindCtx{}, back);
  for (const char* key : {"ceil_overhead", "ceil_mpu", "ceil_linklayer"})
    CHECK_FALSE(back.has(c.ops->field_index(key)));
}

TEST_CASE("htb class: link layer 0 (unaware) is read, compared and sent back as 0, with no rate table") {
  Class c = load_class("rate: 10mbit, ceil: 20mbit");
  auto num = [&](const Options& o, const char* key) { return o.num(c.ops->field_index(key)); };
  auto sent = class_body(c);
  AttrTable ts(sent, TCA_HTB_MAX);
  auto held = ts.get(TCA_HTB_PARMS)->as<tc_htb_opt>();
  held.rate.linklayer = TC_LINKLAYER_UNAWARE;  // as another tool left it; the ceil's stays ethernet
  std::vector<uint8_t> dump;
  MsgWriter w(dump);
  w.attr(TCA_HTB_PARMS, &held, sizeof held);
  Options live;
  c.ops->decode(dump, KindCtx{}, live);
  CHECK(num(live, "linklayer") == uint64_t{TC_LINKLAYER_UNAWARE});
  CHECK(num(live, "ceil_linklayer") == uint64_t{TC_LINKLAYER_ETHERNET});
  CHECK_FALSE(num(c.opts, "linklayer"));  // ethernet: the default, not the kernel's 0
  std::vector<uint8_t> again;
  MsgWriter w2(again);
  c.ops->encode(live, KindCtx{}, w2);
  CHECK(hex(again) == hex(dump));
  AttrTable ta(again, TCA_HTB_MAX);
  CHECK(ta.get(TCA_HTB_RTAB) == nullptr);  // a table would make the kernel guess a link layer
  // The file's form: both unaware, one key.
  Class both = load_class("rate: 10mbit, ceil: 20mbit, linklayer: unaware, ceil_linklayer: unaware");
  CHECK(num(both.opts, "linklayer") == uint64_t{TC_LINKLAYER_UNAWARE});
  CHECK_FALSE(num(both.opts, "ceil_linklayer"));
}

TEST_CASE("htb class: a link layer no word names (the kernel keeps 4 bits) is read and sent back as its number") {
  Class c = load_class("rate: 10mbit, ceil: 20mbit");
  auto num = [&](const Options& o, const char* key) { return o.num(c.ops->field_index(key)); };
  auto sent = class_body(c);
  AttrTable ts(sent, TCA_HTB_MAX);
  auto held = ts.get(TCA_HTB_PARMS)->as<tc_htb_opt>();
  held.rate.linklayer = 5;
  std::vector<uint8_t> dump;
  MsgWriter w(dump);
  w.attr(TCA_HTB_PARMS, &held, sizeof held);
  Options live;
  c.ops->decode(dump, KindCtx{}, live);
  CHECK(num(live, "linklayer") == 5u);  // not ethernet, which the kernel charges it as
  std::vector<uint8_t> again;
  MsgWriter w2(again);
  c.ops->encode(live, KindCtx{}, w2);
  CHECK(hex(again) == hex(dump));
  // The file takes the number the dump writes, up to the 4 bits' 15.
  CHECK(num(load_class("rate: 10mbit, linklayer: 5").opts, "linklayer") == 5u);
  std::string errs = load_errors(
      "version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: htb, handle: \"1:\"}]\n"
      "    classes: [{classid: \"1:1\", rate: 10mbit, linklayer: 16}]\n");
  CHECK(errs.find("'linklayer' cannot be '16'") != std::string::npos);
}

TEST_CASE("htb class: a bucket held as ticks tc's arithmetic never gives is read, compared and sent back as held") {
  Class c = load_class("rate: 10mbit, ceil: 20mbit");
  auto num = [&](const Options& o, const char* key) { return o.num(c.ops->field_index(key)); };
  CHECK_FALSE(num(c.opts, "burst_ticks"));
  auto sent = class_body(c);
  AttrTable ts(sent, TCA_HTB_MAX);
  auto held = ts.get(TCA_HTB_PARMS)->as<tc_htb_opt>();
  // tc's 1600 bytes are 20000 ticks at 10mbit and 10000 at 20mbit; a byte
  // more is 12 or 6 ticks more (whole microseconds): one tick more is none.
  CHECK(held.buffer == 20000u);
  CHECK(held.cbuffer == 10000u);
  held.buffer += 1, held.cbuffer += 1;
  std::vector<uint8_t> dump;
  MsgWriter w(dump);
  w.attr(TCA_HTB_PARMS, &held, sizeof held);
  Options live;
  c.ops->decode(dump, KindCtx{}, live);
  CHECK(num(live, "burst_ticks") == 20001u);
  CHECK(num(live, "cburst_ticks") == 10001u);
  CHECK(num(live, "burst") == 1602u);  // the smallest size at or above
  std::vector<uint8_t> again;
  MsgWriter w2(again);
  c.ops->encode(live, KindCtx{}, w2);
  CHECK(hex(again) == hex(dump));
  // The dump's form loads as itself; ticks the burst gives are no field.
  Class dumped =
      load_class("rate: 10mbit, ceil: 20mbit, burst: 1602, cburst: 1603, burst_ticks: 20001, cburst_ticks: 10001");
  CHECK(num(dumped.opts, "burst_ticks") == 20001u);
  CHECK(num(dumped.opts, "cburst_ticks") == 10001u);
  Class spelled = load_class("rate: 10mbit, burst: 1600, burst_ticks: 20000");
  CHECK_FALSE(num(spelled.opts, "burst_ticks"));
}
