// The flow classifier: tc's bytes, round trips, the kernel's in-place change
// rule and tc's words (and/or/xor folded into mask and xor as f_flow.c does).
//
// Golden bodies: the TCA_OPTIONS payloads tc (iproute2 6.1) sent for
// `tc filter add dev v0 ingress handle 1 prio 1 protocol ip flow ...`
// (strace -e sendmsg -x), without TCA_FLOW_ACT (the generic codec's).
#include <catch2/catch.hpp>

#include "action_test_util.h"
#include "filter_test_util.h"

using namespace tcsync;
using namespace tcsync::test::filters;
using tcsync::test::load_ok;

TEST_CASE("flow: TCA_OPTIONS bodies are tc's bytes") {
  struct Case {
    const char* yaml;
    const char* tc;
    const char* bytes;
  } cases[] = {
      {"flow: {keys: [dst], mask: 0xff}", "map key dst and 0xff",
       "0800010002000000080002000000000008000600ff0000000800070000000000"},
      {"flow: {keys: [dst], rshift: 0x1f}", "map key dst rshift 0x1f",
       "0800010002000000080004001f0000000800020000000000"},
      {"flow: {keys: [src], addend: 0xff}", "map key src addend 0xff",
       "080001000100000008000500ff0000000800020000000000"},
      {"flow: {keys: [dst], addend: 0xffffffff}", "map key dst addend -1",
       "080001000200000008000500ffffffff0800020000000000"},
      {"flow: {keys: [dst], mask: 0xffffff00, xor: 0xfc}", "map key dst or 0xff xor 3",
       "080001000200000008000200000000000800060000ffffff08000700fc000000"},
      {"flow: {mode: hash, keys: [src, dst, proto], divisor: 2, perturb: 10}, actions: [{gact: {control: drop}}]",
       "hash keys src,dst,proto divisor 2 perturb 10 action drop",
       "0800010007000000080008000200000008000c000a0000000800020001000000"},
      {"flow: {mode: hash, keys: src, divisor: 1024, baseclass: '1:1', match: 'cmp(u8 at 0 layer link mask 0xff gt "
       "10)'}",
       "hash keys src divisor 1024 baseclass 1:1 match 'cmp(u8 at 0 layer link mask 0xff gt 10)' action drop",
       "08000100010000000800080000040000080003000100010028000b0008000100010000001c0002001800010000000100000000000a00000"
       "0ff000000000001100800020001000000"},
  };
  for (auto& c : cases) {
    INFO(c.tc);
    check_golden(std::string("pref: 1, handle: 1, ") + c.yaml, c.bytes);
  }
}

TEST_CASE("flow: dropping what a change would keep is delete + add") {
  State a = load_ok(file_with("pref: 1, handle: 1, flow: {keys: [dst], rshift: 3}"));
  State b = load_ok(file_with("pref: 1, handle: 1, flow: {keys: [dst]}"));
  State c = load_ok(file_with("pref: 1, handle: 1, flow: {keys: [src], rshift: 4}"));
  const Filter& fa = a.devices[0].filters[0];
  CHECK(filter_ops(fa.ops).needs_recreate(b.devices[0].filters[0], fa));
  CHECK_FALSE(filter_ops(fa.ops).needs_recreate(c.devices[0].filters[0], fa));
}

TEST_CASE("flow: errors") {
  CHECK(error_of("pref: 1, handle: 1, flow: {keys: [src, dst]}") ==
        "flow: map mode takes one key; several need 'mode: hash'");
  CHECK(error_of("pref: 1, handle: 1, flow: {keys: [srcx]}").find("'srcx' is no flow key") == 0);
  CHECK(error_of("pref: 1, handle: 1, flow: {keys: [src], perturb: 3}") == "flow: 'perturb' needs 'mode: hash'");
}

TEST_CASE("flow: tc's words") {
  std::string diags;
  std::string y = tcsync::test::actions::imported(
      "qdisc add dev v0 ingress\n"
      "filter add dev v0 parent ffff: handle 1 prio 1 protocol ip flow map key dst or 0xff xor 3\n"
      "filter add dev v0 parent ffff: handle 2 prio 2 protocol ip flow hash keys src,dst divisor 1024 baseclass 1:1 "
      "perturb 5 "
      "match 'cmp(u8 at 0 layer link mask 0xff gt 10)' action drop\n",
      diags);
  INFO(diags);
  INFO(y);
  CHECK(y.find("flow: {mode: map, keys: [dst], mask: 4294967040, xor: 252}") != std::string::npos);
  CHECK(y.find("mode: hash") != std::string::npos);
}
