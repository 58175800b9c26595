// The ife action: tc's bytes, the kernel's defaults, round trips and tc's words.
//
// Golden bodies: the TCA_ACT_OPTIONS payloads tc (iproute2 6.1) sent for
// `tc filter add ... matchall action ife ...` (strace -e sendmsg -x).
#include <linux/if_ether.h>
#include <linux/ife.h>
#include <linux/pkt_cls.h>
#include <linux/tc_act/tc_ife.h>

#include <catch2/catch.hpp>

#include "action_test_util.h"
#include "kinds/registry.h"
#include "netlink/wire.h"
#include "test_util.h"

using namespace tcsync;
using namespace tcsync::test::actions;

TEST_CASE("ife: TCA_ACT_OPTIONS bodies are tc's bytes") {
  struct Case {
    const char* yaml;
    const char* tc;
    const char* bytes;
  } cases[] = {
      {"[{ife: {mode: encode, mark: allow, control: pass}, index: 2}]", "encode allow mark pass index 2",
       "1c0001000200000000000000000000000000000000000000010000000800060004000100"},
      {"[{ife: {mode: encode, mark: 10, prio: allow, tcindex: 111}}]",
       "encode use mark 10 allow prio use tcindex 111 pipe",
       "1c00010000000000000000000300000000000000000000000100000018000600080001000a00000004000300060005006f000000"},
      {"[{ife: {mode: encode, tcindex: allow, src: '00:aa:bb:cc:dd:ee', dst: '00:11:22:33:44:55', type: 0xabcd, "
       "control: pass}}]",
       "encode allow tcindex src 00:aa:bb:cc:dd:ee dst 00:11:22:33:44:55 type 0xabcd pass",
       "1c0001000000000000000000000000000000000000000000010000000a000300001122334455000006000500cdab00000a00040000aabbc"
       "cddee00000800060004000500"},
      {"[{ife: {mode: decode, control: drop}}]", "decode drop",
       "1c000100000000000000000002000000000000000000000000000000"},
  };
  for (auto& c : cases) {
    INFO(c.tc);
    check_golden(c.yaml, c.bytes);
  }
}

TEST_CASE("ife: the kernel's default type reads as absent, a decode's list is kept") {
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  tc_ife p{};
  p.index = 2, p.action = TC_ACT_PIPE, p.flags = IFE_ENCODE;
  w.attr(TCA_IFE_PARMS, &p, sizeof p);
  w.attr_u16(TCA_IFE_TYPE, ETH_P_IFE);
  size_t ml = w.nest_begin(TCA_IFE_METALST);
  w.attr(IFE_META_SKBMARK, nullptr, 0);
  w.nest_end(ml);
  Options o;
  kActionIfe.decode(buf, KindCtx{}, o);
  CHECK(o == first_opts("[{ife: {mode: encode, mark: allow}}]"));

  // A decode the kernel gave every loaded metadatum: sent back as a list.
  Options d = first_opts("[{ife: {mode: decode, mark: allow, prio: allow}}]");
  std::vector<uint8_t> out;
  MsgWriter w2(out);
  KindCtx ctx;
  kActionIfe.encode(d, ctx, w2);
  CHECK(tcsync::test::hex(out) ==
        "1c000100000000000000000003000000000000000000000000000000"
        "0c0006000400010004000300");
}

TEST_CASE("ife: errors and warnings") {
  CHECK(error_of("[{ife: {mark: allow}}]").find("mode") != std::string::npos);
  CHECK(error_of("[{ife: {mode: encode, tcindex: 65536}}]") ==
        "expected 'allow' (the packet's own value) or a value from 1 to 65535 to send instead");
}

TEST_CASE("ife: tc's words") {
  std::string diags;
  std::string y = imported(
      "qdisc add dev v0 clsact\nfilter add dev v0 ingress pref 1 matchall action ife encode use mark 789 allow prio "
      "dst 02:00:00:00:00:01 drop index 2\n",
      diags);
  INFO(diags);
  INFO(y);
  CHECK(y.find("mode: encode") != std::string::npos);
  CHECK(y.find("mark: 789") != std::string::npos);
  CHECK(y.find("prio: allow") != std::string::npos);
}
