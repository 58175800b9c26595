// The flower classifier kind: tc's words to TCA_OPTIONS bodies, decoding the
// kernel's dumps, what a replace can change, and errors.
//
// Golden bodies are tc's own (iproute2 6.1): `tc filter add dev v0 ingress
// prio 3 handle 1 protocol P flower KEYS...` captured with
// `strace -f -e trace=sendmsg -x -s 10000` on this host (its kernel lacks
// flower and refuses, but tc has sent its request by then), the keys given
// in tcsync's field order; TCA_FLOWER_CLASSID and TCA_FLOWER_ACT removed
// (the generic codec writes those). Kernel dumps were read in the kernel
// lab (Debian 6.1) with a raw RTM_GETTFILTER dump.
#include <linux/pkt_cls.h>

#include <catch2/catch.hpp>

#include "base/diag.h"
#include "file/yaml_writer.h"
#include "kinds/registry.h"
#include "model/kind.h"
#include "model/model.h"
#include "netlink/wire.h"
#include "test_util.h"

namespace tcsync {
bool flower_needs_recreate(const Options& want, const Options& have);  // kind_flower.cpp
}

using namespace tcsync;
using tcsync::test::load_errors;
using tcsync::test::load_ok;

namespace {

using tcsync::test::hex;
using tcsync::test::unhex;

const KindOps& flower = kFilterFlower;

// One filter line loaded as a whole file (device v0 with clsact).
Filter load_filter(const std::string& line) {
  State s = load_ok("version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: clsact}]\n    filters:\n      - " + line + "\n");
  REQUIRE(s.devices.size() == 1);
  REQUIRE(s.devices[0].filters.size() == 1);
  return s.devices[0].filters[0];
}

std::string errors_of(const std::string& line) {
  return load_errors("version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: clsact}]\n    filters:\n      - " + line + "\n");
}

std::vector<uint8_t> body(const Filter& f, const Options& o) {
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  flower.encode(o, KindCtx{f.key.handle, 0, nullptr, nullptr, {}, &f}, w);
  return buf;
}
std::vector<uint8_t> body(const Filter& f) {
  return body(f, f.opts);
}

std::string emit(const Options& o) {
  std::string out;
  YamlOut y(out);
  y.map_begin();
  write_options(flower, o, y);
  y.map_end();
  std::erase(out, '"');  // quoting is the writer's business
  return out;
}

struct Golden {
  const char* yaml;
  const char* tc;
};

// tc's bodies, byte for byte (classid/actions removed as said above).
const Golden kGolden[] = {
    // protocol ip flower dst_mac 02:00:00:00:00:00/24 src_mac 02:00:00:00:00:01 ip_proto udp ip_tos 0x10/0xfc ip_ttl 64
    //   dst_ip 10.1.2.3/8 src_ip 192.168.1.1 dst_port 53 src_port 1000-2000 ip_flags frag/nofirstfrag skip_sw classid
    //   1:10 action gact drop
    {"{parent: ingress, pref: 3, protocol: ip, flower: {dst_mac: 02:00:00:00:00:00/24, src_mac: 02:00:00:00:00:01, "
     "ip_proto: udp, "
     "ip_tos: 0x10/0xfc, ip_ttl: 64, dst_ip: 10.1.2.3/8, src_ip: 192.168.1.1, dst_port: 53, src_port: 1000-2000, "
     "ip_flags: frag/nofirstfrag, skip_sw: true}, classid: \"1:10\", actions: [{gact: {control: drop}}]}",
     "0a00040002000000000000000a000500ffffff00000000000a00060002000000000100000a000700ffffffffffff00000500090011000000"
     "050049001000000005004a00fc00000005004b004000000005004c00ff00000008000c000a01020308000d00ff00000008000a00c0a80101"
     "08000b00ffffffff06001500003500000600570003e800000600580007d000000800160002000000080"
     "02f000000000108003000000000030600080008000000"},
    // protocol ipv6 flower ip_proto icmpv6 dst_ip 2001:db8::2 src_ip 2001:db8::1/64 type 128 code 0 skip_hw
    {"{parent: ingress, pref: 3, protocol: ipv6, flower: {ip_proto: icmpv6, dst_ip: \"2001:db8::2\", src_ip: "
     "\"2001:db8::1/64\", type: 128, code: 0, skip_hw: true}}",
     "050009003a0000001400100020010db800000000000000000000000214001100ffffffffffffffffffffffffffffffff14000e0020010db8"
     "00000000000000000000000114000f00ffffffffffffffff0000000000000000050037008000000005003800ff00000005003500000000000"
     "5"
     "003600ff00000008001600010000000600080086dd0000"},
    // protocol ip flower ip_proto tcp dst_port 80 src_port 1024 tcp_flags 0x12/0x3f
    {"{parent: ingress, pref: 3, protocol: ip, flower: {ip_proto: tcp, dst_port: 80, src_port: 1024, tcp_flags: "
     "0x12/0x3f}}",
     "050009000600000006001300005000000600120004000000060047000012000006004800003f00000800160000000000060008000800000"
     "0"},
    // protocol ip flower ct_state +trk+est-new ct_zone 5 ct_mark 0x10/0xff ct_label
    // 0102..10/ffffffffffffffff0000000000000000
    {"{parent: ingress, pref: 3, protocol: ip, flower: {ct_state: +trk+est-new, ct_zone: 5, ct_mark: 0x10/0xff, "
     "ct_label: 0102030405060708090a0b0c0d0e0f10/ffffffffffffffff0000000000000000}}",
     "06005b000a00000006005c000b00000006005d000500000006005e00ffff000008005f001000000008006000ff00000014006100010203040"
     "5"
     "060708090a0b0c0d0e0f1014006200ffffffffffffffff000000000000000008001600000000000600080008000000"},
    // protocol ip flower enc_key_id 100 enc_dst_ip 10.0.0.2 enc_src_ip 10.0.0.1 enc_dst_port 4789
    {"{parent: ingress, pref: 3, protocol: ip, flower: {enc_key_id: 100, enc_dst_ip: 10.0.0.2, enc_src_ip: 10.0.0.1, "
     "enc_dst_port: 4789}}",
     "08001a000000006408001d000a00000208001e00ffffffff08001b000a00000108001c00ffffffff06002d0012b5000008001600000000000"
     "600"
     "080008000000"},
    // protocol 802.1q flower vlan_id 10 vlan_prio 3 vlan_ethtype 802.1ad cvlan_id 20 cvlan_prio 1 cvlan_ethtype ip
    // ip_proto tcp
    {"{parent: ingress, pref: 3, protocol: 802.1q, flower: {vlan_id: 10, vlan_prio: 3, vlan_ethtype: 802.1ad, "
     "cvlan_id: 20, "
     "cvlan_prio: 1, cvlan_ethtype: ip, ip_proto: tcp}}",
     "060017000a00000005001800030000000600190088a8000006004d001400000005004e000100000006004f000800000005000900060000000"
     "8"
     "001600000000000600080081000000"},
    // protocol ip flower indev v1 ip_proto sctp dst_port 1-65535 src_port 5000/0xff00
    {"{parent: ingress, pref: 3, protocol: ip, flower: {indev: v1, ip_proto: sctp, dst_port: 1-65535, src_port: "
     "5000/0xff00}}",
     "07000200763100000500090084000000060059000001000006005a00ffff0000060029001388000006002700ff00000008001600000000000"
     "60008"
     "0008000000"},
    // protocol all flower
    {"{parent: ingress, pref: 3, protocol: all, flower: {}}", "0800160000000000"},
    // protocol ip flower ip_proto icmp type 8/240 code 3
    {"{parent: ingress, pref: 3, protocol: ip, flower: {ip_proto: icmp, type: 8/0xf0, code: 3}}",
     "0500090001000000050033000800000005003400f0000000050031000300000005003200ff0000000800160000000000060008000800000"
     "0"},
};

}  // namespace

TEST_CASE("flower: TCA_OPTIONS bodies are tc's bytes") {
  for (auto& g : kGolden) {
    INFO(g.yaml);
    Filter f = load_filter(g.yaml);
    CHECK(hex(body(f)) == g.tc);
  }
}

TEST_CASE("flower: decode(encode(x)) gives x, and the same bytes again") {
  for (auto& g : kGolden) {
    INFO(g.yaml);
    Filter f = load_filter(g.yaml);
    auto bytes = body(f);
    Options back;
    flower.decode(bytes, KindCtx{f.key.handle}, back);
    CHECK(back == f.opts);
    CHECK(hex(body(f, back)) == hex(bytes));
  }
}

TEST_CASE("flower: kernel dumps decode to what the file says") {
  // tc filter add ... protocol ip flower ip_proto tcp dst_port 80 src_port 1000-2000 dst_ip 10.0.0.0/8
  //   tcp_flags 0x12/0x3f ip_flags frag classid 1:10, dumped by Linux 6.1: CLASSID, ETH_TYPE, the
  // keys with masks (TCP_DST_MASK too), FLAGS not_in_hw, IN_HW_COUNT.
  auto dump = unhex(
      "08000100100001000600080008000000050009000600000008000c000a00000008000d00ff000000060013000050000006002400ffff0000"
      "06"
      "0047000012000006004800003f00000600570003e800000600580007d0000008002f00000000010800300000000001080016000800000008"
      "00"
      "560000000000");
  Options o;
  flower.decode(dump, KindCtx{1}, o);
  Filter f = load_filter(
      "{parent: ingress, pref: 1, protocol: ip, flower: {ip_proto: tcp, dst_port: 80, src_port: 1000-2000, dst_ip: "
      "10.0.0.0/8, "
      "tcp_flags: 0x12/0x3f, ip_flags: frag}, classid: \"1:10\"}");
  CHECK(o == f.opts);

  // protocol 802.1q flower vlan_id 10 vlan_prio 3 vlan_ethtype 802.1ad cvlan_id 20 cvlan_ethtype ipv6
  //   ip_proto icmpv6 type 128 enc_key_id 5 enc_dst_port 4789 ct_state +trk+est: the kernel reports
  // ETH_TYPE as the innermost type (86dd), ENC_UDP_DST_PORT with its mask.
  dump = unhex(
      "0600080086dd0000060017000a000000050018000300000006004d00140000000600190088a8000006004f0086dd0000050009003a000000"
      "050037"
      "008000000005003800ff00000008001a000000000506002d0012b5000006002e00ffff000006005b000a00000006005c000a000000080016"
      "000800"
      "00000800560000000000");
  Options o2;
  flower.decode(dump, KindCtx{1}, o2);
  Filter g = load_filter(
      "{parent: ingress, pref: 2, protocol: 802.1q, flower: {vlan_id: 10, vlan_prio: 3, vlan_ethtype: 802.1ad, "
      "cvlan_id: 20, "
      "cvlan_ethtype: ipv6, ip_proto: icmpv6, type: 128, enc_key_id: 5, enc_dst_port: 4789, ct_state: +trk+est}}");
  CHECK(o2 == g.opts);
}

TEST_CASE("flower: dump prints tc's words, which read back") {
  Filter f = load_filter(kGolden[0].yaml);
  std::string text = emit(f.opts);
  CHECK(text ==
        "{dst_mac: 02:00:00:00:00:00/24, src_mac: 02:00:00:00:00:01, ip_proto: udp, ip_tos: 0x10/0xfc, ip_ttl: 64, "
        "dst_ip: 10.1.2.3/8, src_ip: 192.168.1.1, dst_port: 53, src_port: 1000-2000, ip_flags: frag/nofirstfrag, "
        "skip_sw: true}");
  Filter g = load_filter(kGolden[3].yaml);
  CHECK(emit(g.opts) ==
        "{ct_state: +trk-new+est, ct_zone: 5, ct_mark: 0x10/0xff, ct_label: "
        "0102030405060708090a0b0c0d0e0f10/ffffffffffffffff0000000000000000}");
  // Odd masks print in full; zero masks match everything and are dropped.
  Filter h = load_filter(
      "{parent: ingress, pref: 3, protocol: ip, flower: {dst_mac: 02:00:00:00:00:01/ff:00:ff:00:00:00, dst_ip: "
      "10.0.0.1/255.0.255.0, "
      "src_ip: 10.0.0.0/0, ip_tos: 4/0, ip_flags: nofrag}}");
  CHECK(emit(h.opts) ==
        "{dst_mac: 02:00:00:00:00:01/ff:00:ff:00:00:00, dst_ip: 10.0.0.1/255.0.255.0, ip_flags: nofrag}");
  // Every printed form reads back to the same options.
  for (const Filter* x : {&f, &g, &h}) {
    Filter back = load_filter("{parent: ingress, pref: 3, protocol: ip, flower: " + emit(x->opts) + "}");
    CHECK(back.opts == x->opts);
  }
}

TEST_CASE("flower: a replace keeps the mask, and other changes are delete + add") {
  auto opts = [](const std::string& keys) {
    return load_filter("{parent: ingress, pref: 1, protocol: ip, flower: " + keys + "}").opts;
  };
  // Linux 6.1 in the lab: replacing dst_ip 10.0.0.1 tcp 80 by 10.0.0.2 udp 81 works ...
  CHECK_FALSE(flower_needs_recreate(opts("{dst_ip: 10.0.0.1, ip_proto: tcp, dst_port: 80}"),
                                    opts("{dst_ip: 10.0.0.2, ip_proto: udp, dst_port: 81}")));
  CHECK_FALSE(flower_needs_recreate(opts("{dst_port: 1000-2000, ip_proto: tcp}"),
                                    opts("{dst_port: 3000-4000, ip_proto: tcp}")));
  CHECK_FALSE(
      flower_needs_recreate(opts("{ip_proto: tcp, skip_hw: true}"), opts("{ip_proto: udp}")));  // flags are no key
  // ... while a new prefix, a key fewer or a port turned range is refused (EINVAL).
  CHECK(flower_needs_recreate(opts("{dst_ip: 10.0.0.0/8}"), opts("{dst_ip: 10.0.0.1}")));
  CHECK(flower_needs_recreate(opts("{dst_ip: 10.0.0.2, ip_proto: udp}"),
                              opts("{dst_ip: 10.0.0.2, ip_proto: udp, dst_port: 81}")));
  CHECK(flower_needs_recreate(opts("{ip_proto: udp, dst_port: 80-90}"), opts("{ip_proto: udp, dst_port: 82}")));
  CHECK(flower_needs_recreate(opts("{ip_proto: udp, dst_port: 80/0xff00}"), opts("{ip_proto: udp, dst_port: 82}")));
  CHECK_FALSE(
      flower_needs_recreate(opts("{ct_state: +trk+est}"), opts("{ct_state: +trk-est}")));  // same mask: trk, est
  CHECK(flower_needs_recreate(opts("{ct_state: +trk+est}"), opts("{ct_state: +trk}")));
}

TEST_CASE("flower: errors name the key and what the kernel needs") {
  const std::string pre = "t.yaml:6:";
  CHECK(errors_of("{parent: ingress, pref: 1, protocol: all, flower: {dst_ip: 10.0.0.0/8}}") ==
        "t.yaml:6:68: error: flower 'dst_ip' needs protocol ip or ipv6, not all (the kernel ignores IP keys of other "
        "packets)\n"
        "        - {parent: ingress, pref: 1, protocol: all, flower: {dst_ip: 10.0.0.0/8}}\n"
        "                                                                     ^\n");
  auto first_line = [](const std::string& s) { return s.substr(0, s.find('\n')); };
  CHECK(first_line(errors_of("{parent: ingress, pref: 1, protocol: ip, flower: {dst_ip: \"2001:db8::1\"}}")) ==
        pre + "67: error: flower 'dst_ip' is an IPv6 address but protocol is ip");
  CHECK(first_line(errors_of("{parent: ingress, pref: 1, protocol: ip, flower: {dst_port: 80}}")) ==
        pre + "69: error: flower 'dst_port' needs ip_proto tcp, udp or sctp");
  CHECK(first_line(errors_of("{parent: ingress, pref: 1, protocol: ip, flower: {ip_proto: udp, tcp_flags: 2}}")) ==
        pre + "85: error: flower 'tcp_flags' needs ip_proto tcp");
  CHECK(first_line(errors_of("{parent: ingress, pref: 1, protocol: ipv6, flower: {ip_proto: icmp, type: 8}}")) ==
        pre + "83: error: flower 'type' needs ip_proto icmp with protocol ip, or icmpv6 with ipv6");
  CHECK(first_line(errors_of("{parent: ingress, pref: 1, protocol: ip, flower: {vlan_id: 5}}")) ==
        pre + "68: error: flower 'vlan_id' needs protocol 802.1q or 802.1ad, not ip");
  CHECK(
      first_line(errors_of("{parent: ingress, pref: 1, protocol: 802.1q, flower: {vlan_ethtype: ip, cvlan_id: 5}}")) ==
      pre + "91: error: flower 'cvlan_id' needs vlan_ethtype 802.1q or 802.1ad (an inner VLAN tag)");
  CHECK(first_line(errors_of("{parent: ingress, pref: 1, protocol: 802.1q, flower: {ip_proto: tcp}}")) ==
        pre +
            "73: error: flower 'ip_proto' needs vlan_ethtype ip or ipv6, not 802.1q (the kernel ignores IP keys of "
            "other packets)");
  CHECK(first_line(errors_of("{parent: ingress, pref: 1, protocol: ip, flower: {ip_proto: tpc}}")) ==
        pre +
            "69: error: 'ip_proto' must be tcp, udp, sctp, icmp, icmpv6 (or another protocol name) or a number from 0 "
            "to 255, not 'tpc' (did you mean 'tcp'?)");
  CHECK(first_line(errors_of("{parent: ingress, pref: 1, protocol: ip, flower: {ip_proto: tcp, dst_port: 90-80}}")) ==
        pre + "84: error: port range '90-80' must go from a lower to a higher port");
  CHECK(first_line(errors_of("{parent: ingress, pref: 1, protocol: ip, flower: {ct_state: +est}}")) ==
        pre + "69: error: 'ct_state' +est: any other flag needs +trk");
  CHECK(first_line(errors_of("{parent: ingress, pref: 1, protocol: ip, flower: {ct_state: +trk+new+est}}")) ==
        pre + "69: error: 'ct_state' +trk+new+est: +new and +est exclude each other");
  CHECK(first_line(errors_of("{parent: ingress, pref: 1, protocol: ip, flower: {ct_state: +trk+ready}}")) ==
        pre +
            "69: error: 'ct_state' must be flags with + or - such as +trk+est or +trk-new (flags: trk, new, est, rel, "
            "inv, rpl), not '+trk+ready'");
  CHECK(first_line(errors_of("{parent: ingress, pref: 1, protocol: ip, flower: {dst_mac: 02:00:00:00:01}}")) ==
        pre +
            "68: error: expected a MAC address such as 02:00:00:00:00:01, optionally with /BITS or /MASK, not "
            "'02:00:00:00:01'");
  CHECK(first_line(errors_of("{parent: ingress, pref: 1, protocol: ip, flower: {ip_tos: 0x100}}")) ==
        pre + "67: error: 'ip_tos' must be a number up to 0xff, optionally with /MASK, not '0x100'");
  CHECK(first_line(errors_of("{parent: ingress, pref: 1, protocol: ip, flower: {ip_flags: frag/tail}}")) ==
        pre +
            "69: error: 'ip_flags' must be frag, nofrag, firstfrag or nofirstfrag, joined by / (frag/nofirstfrag), not "
            "'frag/tail'");
  CHECK(first_line(errors_of("{parent: ingress, pref: 1, protocol: ip, flower: {skip_hw: true, skip_sw: true}}")) ==
        pre + "83: error: skip_hw and skip_sw exclude each other");
  CHECK(first_line(errors_of("{parent: ingress, pref: 1, protocol: ip, flower: {dst_prt: 80}}")) ==
        pre + "59: error: unknown key 'dst_prt' in flower filter (did you mean 'dst_port'?)");
}

TEST_CASE("flower: handles count 1, 2, 3 in file order") {
  State s = load_ok(R"(version: 1
devices:
  v0:
    qdiscs: [{kind: clsact}]
    filters:
      - {parent: ingress, pref: 1, protocol: ip, flower: {dst_ip: 10.0.0.1}}
      - {parent: ingress, pref: 1, protocol: ip, flower: {dst_ip: 10.0.0.2}}
      - {parent: ingress, pref: 1, protocol: ip, handle: "0x10", flower: {dst_ip: 10.0.0.3}}
      - {parent: ingress, pref: 1, protocol: ip, flower: {dst_ip: 10.0.0.4}}
)");
  auto& fs = s.devices[0].filters;
  REQUIRE(fs.size() == 4);
  CHECK(fs[0].key.handle == 1u);
  CHECK(fs[1].key.handle == 2u);
  CHECK(fs[2].key.handle == 0x10u);
  CHECK(fs[3].key.handle == 0x11u);
}
