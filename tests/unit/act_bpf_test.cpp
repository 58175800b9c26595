// The bpf action: tc's bytes for classic programs (bytecode), the kernel's
// dump of them and of an eBPF program, errors and tc's words.
//
// Golden bodies: the TCA_ACT_OPTIONS payloads tc (iproute2 6.1) sent for
// `tc filter add ... matchall action bpf bytecode '...'` (strace -e sendmsg -x).
#include <linux/pkt_cls.h>
#include <linux/tc_act/tc_bpf.h>

#include <catch2/catch.hpp>

#include "action_test_util.h"
#include "kinds/registry.h"
#include "netlink/wire.h"
#include "test_util.h"

using namespace tcsync;
using namespace tcsync::test::actions;

TEST_CASE("act bpf: TCA_ACT_OPTIONS bodies are tc's bytes") {
  check_golden("[{bpf: {bytecode: '4,40 0 0 12,21 0 1 2048,6 0 0 262144,6 0 0 0'}, index: 100}]",
               "060003000400000024000400280000000c000000150000010008000006000000000004000600000000000000180002006400000"
               "000000000030000000000000000000000");
  check_golden("[{bpf: {bytecode: '1,6 0 0 4294967295', control: drop}}]",
               "06000300010000000c00040006000000ffffffff180002000000000000000000020000000000000000000000");
}

TEST_CASE("act bpf: the kernel's dumps") {
  // Classic: PARMS, OPS_LEN, OPS, TM, as sent.
  Options o;
  kActionBpf.decode(
      tcsync::test::unhex("18000200640000000100000003000000000000000000000006000300010000000c00040006000000ffffffff"),
      KindCtx{}, o);
  CHECK(o == first_opts("[{bpf: {bytecode: '1,6 0 0 4294967295'}}]"));
  // eBPF: NAME, ID and TAG are read (not unread bytes), and cannot be sent.
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  tc_act_bpf p{};
  p.action = TC_ACT_PIPE;
  w.attr(TCA_ACT_BPF_PARMS, &p, sizeof p);
  w.attr_str(TCA_ACT_BPF_NAME, "action.o:[action-ok]");
  w.attr_u32(TCA_ACT_BPF_ID, 42);
  const uint8_t tag[8] = {0xde, 0xad, 0xbe, 0xef, 0, 1, 2, 3};
  w.attr(TCA_ACT_BPF_TAG, tag, 8);
  Options e;
  kActionBpf.decode(buf, KindCtx{}, e);
  CHECK(*e.str(1) == "action.o:[action-ok]");
  CHECK(e.num(2) == 42u);
  CHECK(*e.str(3) == "deadbeef00010203");
  Diagnostics d;
  KindCtx ctx;
  ctx.diags = &d;
  std::vector<uint8_t> out;
  MsgWriter w2(out);
  kActionBpf.encode(e, ctx, w2);
  CHECK(d.has_errors());
}

TEST_CASE("act bpf: errors") {
  CHECK(error_of("[{bpf: {bytecode: '2,6 0 0 0'}}]").find("'bytecode' is a classic BPF program") == 0);
  CHECK(error_of("[{bpf: {}}]").find("a bpf action needs its program") == 0);
}

TEST_CASE("act bpf: tc's words") {
  std::string diags;
  std::string y = imported(
      "qdisc add dev v0 clsact\nfilter add dev v0 ingress pref 1 matchall action bpf bytecode '4,40 0 0 12,21 0 1 "
      "2054,6 0 0 262144,6 0 0 0' drop index 555\n",
      diags);
  INFO(diags);
  INFO(y);
  CHECK(y.find("bytecode: \"4,40 0 0 12,21 0 1 2054,6 0 0 262144,6 0 0 0\", control: drop") != std::string::npos);
  diags.clear();
  CHECK(imported("qdisc add dev v0 clsact\nfilter add dev v0 ingress pref 1 matchall action bpf object-file action.o "
                 "section action-ok\n",
                 diags)
            .empty());
  CHECK(diags.find("has no tcsync spelling") != std::string::npos);
}
