// The vlan, csum, nat, sample, connmark, skbmod, mpls and tunnel_key actions: tc's
// bytes, round trips and errors.
//
// Golden bodies: the TCA_ACT_OPTIONS payloads tc (iproute2 6.1) sent for
// `tc filter add ... matchall action WORDS` in the kernel lab (strace -e
// sendmsg -x); the YAML of each is what `tcsync import` reads from WORDS.
#include <catch2/catch.hpp>

#include <linux/tc_act/tc_tunnel_key.h>

#include "action_test_util.h"
#include "kinds/registry.h"

using namespace tcsync;
using namespace tcsync::test;

using namespace tcsync::test::actions;

TEST_CASE("vlan, csum, nat, sample, connmark, skbmod, mpls, tunnel_key: TCA_ACT_OPTIONS bodies are tc's bytes") {
  struct Case {
    const char* yaml;
    const char* tc;
    const char* bytes;
  } cases[] = {
      {R"({vlan: {action: pop}})", "vlan pop", "1c000200000000000000000003000000000000000000000001000000"},
      {R"({vlan: {action: push, id: 10}})", "vlan push id 10",
       "1c000200000000000000000003000000000000000000000002000000060003000a000000"},
      {R"({vlan: {action: push, id: 20, protocol: "802.1ad", priority: 3}})",
       "vlan push id 20 protocol 802.1ad priority 3",
       "1c00020000000000000000000300000000000000000000000200000006000300140000000600040088a800000500060003000000"},
      {R"({vlan: {action: modify, id: 30, priority: 2, control: pipe}})", "vlan modify id 30 priority 2 pipe",
       "1c000200000000000000000003000000000000000000000003000000060003001e0000000500060002000000"},
      {R"({vlan: {action: pop_eth}})", "vlan pop_eth", "1c000200000000000000000003000000000000000000000004000000"},
      {R"({vlan: {action: push_eth, dst_mac: "02:00:00:00:00:01", src_mac: "02:00:00:00:00:02"}})",
       "vlan push_eth dst_mac 02:00:00:00:00:01 src_mac 02:00:00:00:00:02",
       "1c0002000000000000000000030000000000000000000000050000000a00070002000000000100000a0008000200000000020000"},
      {R"({csum: {ip4h: true}})", "csum ip4h", "1c000100000000000000000000000000000000000000000001000000"},
      {R"({csum: {ip4h: true, tcp: true, udp: true}})", "csum ip4h tcp udp",
       "1c000100000000000000000000000000000000000000000019000000"},
      {R"({csum: {icmp: true, igmp: true, sctp: true, udplite: true}})", "csum icmp igmp sctp udplite",
       "1c000100000000000000000000000000000000000000000066000000"},
      {R"({csum: {ip4h: true, udp: true, control: drop}})", "csum and ip4h and udp drop",
       "1c000100000000000000000002000000000000000000000011000000"},
      {R"({nat: {direction: ingress, old: "10.0.0.1", new: "192.168.0.1"}})", "nat ingress 10.0.0.1 192.168.0.1",
       "2800010000000000000000000000000000000000000000000a000001c0a80001ffffffff00000000"},
      {R"({nat: {direction: egress, old: 10.0.0.0/24, new: "192.168.1.0"}})", "nat egress 10.0.0.0/24 192.168.1.0",
       "2800010000000000000000000000000000000000000000000a000000c0a80100ffffff0001000000"},
      {R"({nat: {direction: ingress, old: "0.0.0.0", new: "1.2.3.4", control: pipe}})", "nat ingress any 1.2.3.4 pipe",
       "2800010000000000000000000300000000000000000000000000000001020304ffffffff00000000"},
      {R"({sample: {rate: 100, group: 5}})", "sample rate 100 group 5",
       "18000200000000000000000003000000000000000000000008000300640000000800050005000000"},
      {R"({sample: {rate: 10, group: 1, trunc: 128}})", "sample rate 10 group 1 trunc 128",
       "180002000000000000000000030000000000000000000000080003000a00000008000500010000000800040080000000"},
      {R"({sample: {rate: 1000, group: 2, control: drop}})", "sample rate 1000 group 2 drop",
       "18000200000000000000000002000000000000000000000008000300e80300000800050002000000"},
      {R"({connmark: {}})", "connmark", "1c000100000000000000000003000000000000000000000000000000"},
      {R"({connmark: {zone: 5}})", "connmark zone 5", "1c000100000000000000000003000000000000000000000005000000"},
      {R"({connmark: {zone: 7, control: pipe}})", "connmark zone 7 pipe",
       "1c000100000000000000000003000000000000000000000007000000"},
      {R"({skbmod: {dmac: "02:00:00:00:00:01"}})", "skbmod set dmac 02:00:00:00:00:01",
       "2400020000000000000000000300000000000000000000000000000001000000000000000a0003000200000000010000"},
      {R"({skbmod: {smac: "02:00:00:00:00:02", etype: "0x0800"}})",
       "skbmod set smac 02:00:00:00:00:02 set etype 0x0800",
       "24000200000000000000000003000000000000000000000000000000060000000000000006000500000800000a000400020000000002000"
       "0"},
      {R"({skbmod: {swap_mac: true}})", "skbmod swap mac",
       "240002000000000000000000030000000000000000000000000000000800000000000000"},
      // m_skbmod.c: `ecn` sets SKBMOD_F_ECN (0x10) alone (tdc fe09).
      {R"({skbmod: {ecn: true}})", "skbmod ecn",
       "240002000000000000000000030000000000000000000000000000001000000000000000"},
      {R"({skbmod: {dmac: "02:00:00:00:00:01", smac: "02:00:00:00:00:02", etype: "0x86dd", control: drop}})",
       "skbmod set dmac 02:00:00:00:00:01 set smac 02:00:00:00:00:02 set etype 0x86dd drop",
       "2400020000000000000000000200000000000000000000000000000007000000000000000a000300020000000001000006000500dd86000"
       "00a0004000200000000020000"},
      {R"({mpls: {action: pop, protocol: ipv4}})", "mpls pop protocol ipv4",
       "1c0002000000000000000000030000000000000000000000010000000600040008000000"},
      {R"({mpls: {action: push, label: 100}})", "mpls push label 100",
       "1c0002000000000000000000030000000000000000000000020000000800050064000000"},
      {R"({mpls: {action: push, protocol: mpls_mc, label: 200, tc: 3, ttl: 64, bos: 1}})",
       "mpls push protocol mpls_mc label 200 tc 3 ttl 64 bos 1",
       "1c00020000000000000000000300000000000000000000000200000008000500c8000000060004008848000005000600030000000500070"
       "0400000000500080001000000"},
      {R"({mpls: {action: modify, label: 300, tc: 2}})", "mpls modify label 300 tc 2",
       "1c000200000000000000000003000000000000000000000003000000080005002c0100000500060002000000"},
      {R"({mpls: {action: modify, ttl: 10}})", "mpls modify ttl 10",
       "1c000200000000000000000003000000000000000000000003000000050007000a000000"},
      {R"({mpls: {action: dec_ttl}})", "mpls dec_ttl", "1c000200000000000000000003000000000000000000000004000000"},
      {R"({mpls: {action: mac_push, label: 50}})", "mpls mac_push label 50",
       "1c0002000000000000000000030000000000000000000000050000000800050032000000"},
      {R"({mpls: {action: dec_ttl, control: pipe}})", "mpls dec_ttl pipe",
       "1c000200000000000000000003000000000000000000000004000000"},
      // tunnel_key: tc sends NO_CSUM always and PARMS last.
      {R"({tunnel_key: {action: unset}})", "tunnel_key unset",
       "05000a00000000001c000200000000000000000003000000000000000000000002000000"},
      {R"({tunnel_key: {action: set, src_ip: 10.0.0.1, dst_ip: 10.0.0.2, id: 100}})",
       "tunnel_key set src_ip 10.0.0.1 dst_ip 10.0.0.2 id 100",
       "080003000a000001080004000a000002080007000000006405000a00000000001c000200000000000000000003000000000000000000000"
       "001000000"},
      {R"({tunnel_key: {action: set, src_ip: '2001:db8::1', dst_ip: '2001:db8::2', id: 7, dst_port: 4789, tos: 0x10, ttl: 64}})",
       "tunnel_key set src_ip 2001:db8::1 dst_ip 2001:db8::2 id 7 dst_port 4789 tos 0x10 ttl 64",
       "1400050020010db80000000000000000000000011400060020010db800000000000000000000000208000700000000070600090012b5000"
       "005000c001000000005000d004000000005000a00000000001c000200000000000000000003000000000000000000000001000000"},
      {R"({tunnel_key: {action: set, src_ip: 10.0.0.1, dst_ip: 10.0.0.2, id: 2, csum: false}})",
       "tunnel_key set src_ip 10.0.0.1 dst_ip 10.0.0.2 id 2 csum nocsum pipe",
       "080003000a000001080004000a000002080007000000000205000a00010000001c000200000000000000000003000000000000000000000"
       "001000000"},
      {R"({tunnel_key: {action: set, src_ip: 10.0.0.1, dst_ip: 10.0.0.2, dst_port: 6081, ttl: 10, control: drop}})",
       "tunnel_key set src_ip 10.0.0.1 dst_ip 10.0.0.2 dst_port 6081 ttl 10 drop",
       "080003000a000001080004000a0000020600090017c1000005000d000a00000005000a00000000001c00020000000000000000000200000"
       "0000000000000000001000000"},
      {R"({tunnel_key: {action: unset, control: goto chain 4}})", "tunnel_key unset goto chain 4",
       "05000a00000000001c000200000000000000000004000020000000000000000002000000"},  // tunnel_key options: geneve
                                                                                     // nested without NLA_F_NESTED,
                                                                                     // vxlan with it
      // (tc 6.1); vxlan_opts is read base 0 (0x4020c4: don't learn, id 0x20c4).
      {R"({tunnel_key: {action: set, src_ip: 1.1.1.1, dst_ip: 2.2.2.2, id: 42, dst_port: 6081, geneve_opts: "0102:80:00880022,0408:42:0000000000000000"}, index: 1})",
       "tunnel_key set src_ip 1.1.1.1 dst_ip 2.2.2.2 id 42 dst_port 6081 geneve_opts "
       "0102:80:00880022,0408:42:0000000000000000 index 1",
       "08000300010101010800040002020202080007000000002a0600090017c1000040000b001c0001000600010001020000050002008000000"
       "0080003000088002220000100060001000408000005000200420000000c000300000000000000000005000a00000000001c000200010000"
       "000000000003000000000000000000000001000000"},
      {R"({tunnel_key: {action: set, src_ip: 1.1.1.1, dst_ip: 2.2.2.2, id: 42, dst_port: 4789, vxlan_gbp: 0x4020c4}, index: 1})",
       "tunnel_key set src_ip 1.1.1.1 dst_ip 2.2.2.2 id 42 dst_port 4789 vxlan_opts 0x4020c4 index 1",
       "08000300010101010800040002020202080007000000002a0600090012b5000010000b800c00028008000100c420400005000a000000000"
       "01c000200010000000000000003000000000000000000000001000000"},
  };
  for (auto& c : cases) {
    INFO(c.tc);
    check_golden(std::string("[") + c.yaml + "]", c.bytes);
  }
}

TEST_CASE("tunnel_key: erspan options carry what the kernel keeps, and geneve options read back in tc's form") {
  // tc ... erspan_opts 2:123:1:2 sends VER, INDEX, DIR, HWID; the kernel
  // keeps INDEX only for version 1 (tunnel_key_copy_erspan_opt), so tcsync
  // sends and compares VER, DIR and HWID: tc's bytes but the INDEX attribute.
  auto acts = load_actions(
      R"([{tunnel_key: {action: set, src_ip: 1.1.1.1, dst_ip: 2.2.2.2, id: 42, erspan_ver: 2, erspan_dir: 1, erspan_hwid: 2}, index: 1}])");
  std::string tc =
      "08000300010101010800040002020202080007000000002a28000b80240003800500010002000000080002000000007b0500030001000000"
      "050004000200000005000a00000000001c000200010000000000000003000000000000000000000001000000";
  std::string index_attr = "080002000000007b";
  REQUIRE(tc.find(index_attr) != std::string::npos);
  tc.erase(tc.find(index_attr), index_attr.size());
  tc.replace(tc.find("28000b8024000380"), 16, "20000b801c000380");  // the nests' lengths, 8 bytes less
  CHECK(hex(body(acts[0], acts[0].opts)) == tc);
  Options back;
  acts[0].ops->decode(body(acts[0], acts[0].opts), KindCtx{}, back);
  CHECK(back == acts[0].opts);
  // Upper-case and short hex read as tc prints it.
  CHECK(*first_opts(R"([{tunnel_key: {action: set, src_ip: 1.1.1.1, dst_ip: 2.2.2.2, geneve_opts: "102:8:0088002A"}}])")
             .str(kActionTunnelKey.field_index("geneve_opts")) == "0102:08:0088002a");
  // tc's `vxlan_opts 01020304` is octal 0x420c4: the kernel keeps 0x20c4.
  CHECK(load_errors(file_with(R"([{tunnel_key: {action: set, src_ip: 1.1.1.1, dst_ip: 2.2.2.2, vxlan_gbp: 270532}}])"))
            .find("warning: vxlan_gbp 270532 has bits the kernel drops: it keeps 8388") != std::string::npos);
  // The kernel dumps the geneve options in one nest, one after another.
  std::vector<uint8_t> dump;
  {
    MsgWriter w(dump);
    size_t opts = w.nest_begin(TCA_TUNNEL_KEY_ENC_OPTS);
    size_t one = w.nest_begin(TCA_TUNNEL_KEY_ENC_OPTS_GENEVE);
    const uint8_t d1[] = {0, 0x88, 0, 0x22}, d2[] = {0, 0, 0, 0, 0, 0, 0, 1};
    w.attr_be16(TCA_TUNNEL_KEY_ENC_OPT_GENEVE_CLASS, 0x102);
    w.attr_u8(TCA_TUNNEL_KEY_ENC_OPT_GENEVE_TYPE, 0x80);
    w.attr(TCA_TUNNEL_KEY_ENC_OPT_GENEVE_DATA, d1, sizeof d1);
    w.attr_be16(TCA_TUNNEL_KEY_ENC_OPT_GENEVE_CLASS, 0x408);
    w.attr_u8(TCA_TUNNEL_KEY_ENC_OPT_GENEVE_TYPE, 0x42);
    w.attr(TCA_TUNNEL_KEY_ENC_OPT_GENEVE_DATA, d2, sizeof d2);
    w.nest_end(one);
    w.nest_end(opts);
  }
  Options kernel;
  kActionTunnelKey.decode(dump, KindCtx{}, kernel);
  CHECK(*kernel.str(kActionTunnelKey.field_index("geneve_opts")) == "0102:80:00880022,0408:42:0000000000000001");
  CHECK(error_of(R"([{tunnel_key: {action: set, src_ip: 1.1.1.1, dst_ip: 2.2.2.2, geneve_opts: "0102:80:0088"}}])")
            .find("expected geneve options") == 0);
}

TEST_CASE("vlan, mpls: the values Linux 6.1 dumps by itself read as absent") {
  // vlan push without priority: the kernel dumps PUSH_VLAN_PROTOCOL 802.1Q
  // and PUSH_VLAN_PRIORITY 0 besides the id; for a modify it dumps the
  // priority only when given, 0 included (tdc ba5b, checked in the lab).
  auto vlan_push = [](bool prio) {
    std::vector<uint8_t> vlan;
    {
      MsgWriter w(vlan);
      uint8_t parms[24] = {};
      parms[8] = 3;   // pipe
      parms[20] = 2;  // push
      w.attr(2, parms, sizeof parms);
      w.attr_u16(3, 10);
      w.attr_be16(4, 0x8100);
      if (prio) w.attr_u8(6, 0);
    }
    return vlan;
  };
  Options o;
  read_options(kActionVlan, vlan_push(false), KindCtx{}, o);
  CHECK(o == first_opts("[{vlan: {action: push, id: 10}}]"));
  Options o0;  // push: the kernel keeps and dumps 0 whether given or not
  read_options(kActionVlan, vlan_push(true), KindCtx{}, o0);
  CHECK(o0 == first_opts("[{vlan: {action: push, id: 10}}]"));
  // A file's push priority 0 is that default too (read as given, it was a
  // difference from the dump that no apply could end); a modify's 0 stays.
  CHECK(first_opts("[{vlan: {action: push, id: 10, priority: 0}}]") == o0);
  CHECK(first_opts("[{vlan: {action: modify, id: 10, priority: 0}}]").num(kActionVlan.field_index("priority")) == 0u);
  // mpls push label 100: the kernel dumps TTL 255 and PROTO mpls_uc.
  std::vector<uint8_t> mpls;
  {
    MsgWriter w(mpls);
    uint8_t parms[24] = {};
    parms[8] = 3;
    parms[20] = 2;
    w.attr(2, parms, sizeof parms);
    w.attr_u32(5, 100);
    w.attr_u8(7, 255);
    w.attr_be16(4, 0x8847);
  }
  Options m;
  read_options(kActionMpls, mpls, KindCtx{}, m);
  CHECK(m == first_opts("[{mpls: {action: push, label: 100, ttl: 255, protocol: mpls_uc}}]"));
  // mpls modify ttl 10: the kernel dumps PROTO mpls_uc for it too (lab, 6.1).
  std::vector<uint8_t> modify;
  {
    MsgWriter w(modify);
    uint8_t parms[24] = {};
    parms[8] = 3;
    parms[20] = 3;
    w.attr(2, parms, sizeof parms);
    w.attr_u8(7, 10);
    w.attr_be16(4, 0x8847);
  }
  Options mm;
  read_options(kActionMpls, modify, KindCtx{}, mm);
  CHECK(mm == first_opts("[{mpls: {action: modify, ttl: 10}}]"));
}

TEST_CASE("vlan, csum, nat, sample, connmark, skbmod, mpls: errors") {
  CHECK(error_of("[{vlan: {action: push}}]") == "vlan push and modify need 'id'");
  CHECK(error_of("[{vlan: {action: pop, id: 3}}]") == "vlan 'id' is for push and modify only");
  CHECK(error_of("[{vlan: {action: pop, priority: 0}}]") ==
        "vlan 'priority' is for push and modify only");  // not a push's default
  CHECK(error_of("[{vlan: {action: push, id: 3, protocol: ip}}]") == "vlan 'protocol' must be 802.1q or 802.1ad");
  CHECK(error_of("[{vlan: {action: push_eth, dst_mac: '02:00:00:00:00:01'}}]") ==
        "vlan push_eth needs 'dst_mac' and 'src_mac'");
  CHECK(error_of("[{vlan: {action: push, id: 4096}}]") == "'id' is 4096, more than its maximum 4095");
  CHECK(error_of("[{csum: {}}]") == "csum needs a header to update: ip4h, icmp, igmp, tcp, udp, udplite or sctp");
  CHECK(error_of("[{nat: {direction: ingress, old: 10.0.0.0/33, new: 1.2.3.4}}]") ==
        "expected an IPv4 address or prefix such as 10.0.0.1 or 10.0.0.0/24 (or any), not '10.0.0.0/33'");
  CHECK(error_of("[{nat: {direction: ingress, old: any, new: '2001:db8::1'}}]") == "nat 'new' must be an IPv4 address");
  CHECK(error_of("[{sample: {rate: 0, group: 1}}]") == "sample 'rate' must be 1 or more");
  CHECK(error_of("[{sample: {rate: 10}}]") == "sample action needs 'group'");
  CHECK(error_of("[{connmark: {zone: 65536}}]") == "'zone' is 65536, more than its maximum 65535");
  // States the kernel takes are warnings: the file loads (a dump of them
  // applies back), and the warning says what is odd.
  using Catch::Matchers::EndsWith;
  CHECK_THAT(
      first_line(load_errors(file_with("[{skbmod: {}}]"))),
      EndsWith(
          ": warning: skbmod with nothing to do (no dmac, smac, etype, swap_mac or ecn): it passes packets unchanged"));
  CHECK_THAT(first_line(load_errors(file_with("[{skbmod: {swap_mac: true, dmac: '02:00:00:00:00:01'}}]"))),
             EndsWith(": warning: skbmod 'swap_mac' goes alone: the kernel ignores dmac, smac and etype with it"));
  CHECK(error_of("[{skbmod: {dmac: '02:00:00:00:00'}}]") ==
        "expected a MAC address such as 02:00:00:00:00:01, not '02:00:00:00:00'");
  CHECK(error_of("[{mpls: {action: pop}}]") == "mpls pop needs 'protocol' (of the header that follows, such as ip)");
  CHECK(error_of("[{mpls: {action: pop, protocol: ip, label: 5}}]") == "mpls 'label' is not for pop");
  CHECK(error_of("[{mpls: {action: push}}]") == "mpls push and mac_push need 'label'");
  CHECK(error_of("[{mpls: {action: modify, ttl: 0}}]") == "mpls 'ttl' must be from 1 to 255");
  CHECK(error_of("[{mpls: {action: dec_ttl, tc: 1}}]") == "mpls 'tc' is not for dec_ttl");
  CHECK(error_of("[{tunnel_key: {action: set, dst_ip: 10.0.0.2}}]") == "tunnel_key set needs 'src_ip' and 'dst_ip'");
  CHECK(error_of("[{tunnel_key: {action: set, src_ip: 10.0.0.1, dst_ip: '2001:db8::2'}}]") ==
        "tunnel_key 'src_ip' and 'dst_ip' must be both IPv4 or both IPv6");
  CHECK(error_of("[{tunnel_key: {action: unset, id: 5}}]") == "tunnel_key 'id' is for set only");
}
