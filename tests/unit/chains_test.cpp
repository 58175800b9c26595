// Chains created explicitly (chains:), with flower templates: loading, the
// plan's order (chains before their filters, template change = delete and
// add with the filters again), and the bytes of RTM_NEWCHAIN.
#include <linux/rtnetlink.h>

#include <catch2/catch.hpp>

#include "codec/tc_codec.h"
#include "plan/differ.h"
#include "plan/plan_print.h"
#include "test_util.h"

using namespace tcsync;
using tcsync::test::hex;
using tcsync::test::load_errors;
using tcsync::test::load_ok;

namespace {

const char* kChains = R"(version: 1
devices:
  v0:
    qdiscs: [{kind: clsact}]
    chains:
      - {parent: ingress, chain: 5, protocol: ip, template: {flower: {dst_ip: 0.0.0.0/16}}}
      - {parent: egress, chain: 7}
    filters:
      - {parent: ingress, pref: 1, protocol: ip, flower: {dst_ip: 10.0.0.0/8}, actions: [{gact: {control: goto chain 5}}]}
      - {parent: ingress, chain: 5, pref: 3, protocol: ip, flower: {dst_ip: 10.1.0.0/16}, actions: [{gact: {control: drop}}]}
)";

std::string edit(std::string s, const std::string& from, const std::string& to) {
  auto at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

std::string plan_of(const std::string& want, const std::string& have) {
  static std::vector<State> keep;
  keep.push_back(load_ok(want));
  keep.push_back(load_ok(have));
  Plan p = make_plan(keep[keep.size() - 2], keep.back());
  for (auto& s : p.steps) s.loc = {};
  return plan_text(p, PrintOptions{});
}

}  // namespace

TEST_CASE("chains: loaded with their templates") {
  State s = load_ok(kChains);
  REQUIRE(s.devices[0].chains.size() == 2);
  const Chain& c = s.devices[0].chains[0];
  CHECK(c.index == 5);
  CHECK(c.kind == "flower");
  CHECK(c.protocol == 0x0800);
  CHECK(describe(c) == "chain 5 ingress (template flower protocol ip)");
  CHECK(describe(s.devices[0].chains[1]) == "chain 7 egress");
}

TEST_CASE("chains: bad input is located") {
  // One error, not a second one about the protocol of the refused template.
  CHECK(load_errors(edit(kChains, "template: {flower:", "template: {u32:")).find("belongs to its template") ==
        std::string::npos);
  CHECK(load_errors(edit(kChains, "template: {flower:", "template: {u32:"))
            .find("t.yaml:6:62: error: chain templates exist for flower only (the kernel has no 'u32' templates)") ==
        0);
  CHECK(load_errors(edit(kChains, "{parent: egress, chain: 7}", "{parent: egress, chain: 5, protocol: ip}"))
            .find("a chain's 'protocol' belongs to its template") != std::string::npos);
  CHECK(load_errors(edit(kChains, "{parent: egress, chain: 7}", "{parent: ingress, chain: 5}"))
            .find("chain 5 is already declared at t.yaml:6:9") != std::string::npos);
  CHECK(load_errors(edit(kChains, "chain: 5, pref: 3, protocol: ip, flower: {dst_ip: 10.1.0.0/16}",
                         "chain: 5, pref: 3, protocol: ip, u32: {match: [{ip: {dst: 10.1.0.0/16}}]}"))
            .find("chain 5 has a flower template (at t.yaml:6:9): its filters are flower filters") !=
        std::string::npos);
  CHECK(load_errors(edit(kChains, "{parent: egress, chain: 7}", "{parent: egress}")).find("chain needs 'chain'") !=
        std::string::npos);
}

TEST_CASE("chains: from nothing, the chain comes after its qdisc and before its filters") {
  CHECK(plan_of(kChains, "version: 1\ndevices:\n  v0: {}\n") ==
        "+ v0: qdisc clsact ffff: ingress\n"
        "+ v0: chain 5 ingress (template flower protocol ip)\n"
        "+ v0: chain 7 egress\n"
        "+ v0: filter flower ingress pref 1 protocol ip handle 0x1\n"
        "+ v0: filter flower ingress chain 5 pref 3 protocol ip handle 0x1\n");
}

TEST_CASE("chains: a template change re-creates the chain and its filters") {
  std::string want = edit(kChains, "dst_ip: 0.0.0.0/16}}}", "dst_ip: 0.0.0.0/8}}}");
  want = edit(want, "dst_ip: 10.1.0.0/16}", "dst_ip: 10.0.0.0/8}");
  CHECK(plan_of(want, kChains) ==
        "- v0: chain 5 ingress (template flower protocol ip)  (dst_ip 0.0.0.0/16 -> 0.0.0.0/8; a template cannot "
        "change: the chain and its filters are re-created)\n"
        "+ v0: chain 5 ingress (template flower protocol ip)  (dst_ip 0.0.0.0/16 -> 0.0.0.0/8)\n"
        "+ v0: filter flower ingress chain 5 pref 3 protocol ip handle 0x1\n");
}

TEST_CASE("chains: undeclared explicit chains go, the kernel's own stay") {
  // Chain 7 (empty) is not in the file: deleted. Chain 5 loses its
  // declaration but keeps its template in the kernel: deleted too (with its
  // filter, which is then added back into the chain the kernel makes for it).
  std::string want = edit(kChains,
                          "      - {parent: ingress, chain: 5, protocol: ip, template: {flower: {dst_ip: "
                          "0.0.0.0/16}}}\n      - {parent: egress, chain: 7}\n",
                          "");
  CHECK(plan_of(want, kChains) ==
        "- v0: chain 5 ingress (template flower protocol ip)  (not in the file)\n"
        "- v0: chain 7 egress  (not in the file)\n"
        "+ v0: filter flower ingress chain 5 pref 3 protocol ip handle 0x1\n");
  // A chain without template that holds filters is the kernel's: left.
  std::string have = edit(want, "", "");
  CHECK(plan_of(want, have).empty());
}

TEST_CASE("chains: RTM_NEWCHAIN carries the index, kind and template keys") {
  State s = load_ok(kChains);
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  Diagnostics d;
  encode_chain(w, Op::Add, s.devices[0].chains[1], 5, nullptr, d);
  // tc chain add dev v0 egress chain 7 (tc 6.1, host strace of chain 5 ingress: same shape)
  CHECK(hex(std::span(buf).subspan(16)) ==
        "000000000500000000000000f3ffffff00000000"
        "08000b0007000000");
  CHECK(reinterpret_cast<nlmsghdr*>(buf.data())->nlmsg_type == RTM_NEWCHAIN);
  // tc chain add dev v0 ingress protocol ip chain 5 flower dst_ip 0.0.0.0/16
  // (tc 6.1 in the lab): the protocol in tcm_info and as eth_type.
  buf.clear();
  encode_chain(w, Op::Add, s.devices[0].chains[0], 3, nullptr, d);
  CHECK(hex(std::span(buf).subspan(16)) ==
        "000000000300000000000000f2ffffff08000000"
        "08000b0005000000"
        "0b000100666c6f7765720000"
        "24000200"
        "08000c0000000000"
        "08000d00ffff0000"
        "0800160000000000"
        "0600080008000000");
  // Without a protocol tc sends tcm_info 0 and eth_type 0.
  State t = load_ok(edit(kChains, "protocol: ip, template: {flower: {dst_ip: 0.0.0.0/16}}",
                         "template: {flower: {dst_mac: 00:00:00:00:00:00/ff:ff:ff:ff:ff:ff}}"));
  buf.clear();
  encode_chain(w, Op::Add, t.devices[0].chains[0], 3, nullptr, d);
  CHECK(hex(std::span(buf).subspan(16)) ==
        "000000000300000000000000f2ffffff00000000"
        "08000b0005000000"
        "0b000100666c6f7765720000"
        "2c000200"
        "0a0004000000000000000000"
        "0a000500ffffffffffff0000"
        "0800160000000000"
        "0600080000000000");
  CHECK(d.error_count() == 0);
  // Decoding gives the same chain back.
  Chain back;
  Decoded info;
  REQUIRE(decode_chain(std::span(buf).first(reinterpret_cast<nlmsghdr*>(buf.data())->nlmsg_len), nullptr, back, info));
  CHECK(back.index == 5);
  CHECK(back.kind == "flower");
  CHECK(back.protocol == 0);
  CHECK(back.opts == t.devices[0].chains[0].opts);
}
