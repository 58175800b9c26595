// `tcsync import`: tc batch files and scripts -> tcsync YAML. Whole outputs
// and whole error texts are compared. That the YAML makes the same kernel
// state as `tc -b` is tests/kernel/test_import.sh's job.
#include <catch2/catch.hpp>

#include "import/import_tc.h"
#include "test_util.h"

using namespace tcsync;

namespace {

struct Result {
  bool ok = false;
  std::string yaml, diags;
};

Result import(const std::string& text, ImportOptions o = {}) {
  Result r;
  Diagnostics d;
  r.ok = import_tc_text("b.tc", text, o, r.yaml, d);
  for (auto& x : d.all()) r.diags += format_diagnostic(x);
  return r;
}

// Diagnostics with their wrapping undone: each run of blanks one space.
std::string flat(const std::string& s) {
  std::string out;
  for (char c : s)
    if (c != ' ' && c != '\n')
      out += c;
    else if (!out.empty() && out.back() != ' ')
      out += ' ';
  return out;
}

// The devices part of the output (after the header lines).
std::string body(const Result& r) {
  auto pos = r.yaml.find("devices:\n");
  return pos == std::string::npos ? r.yaml : r.yaml.substr(pos + 9);
}

}  // namespace

TEST_CASE("import: an htb tree with u32 rules, as tc -b reads it") {
  auto r = import(R"(# comment
qdisc add dev eth0 root handle 1: htb default 30
class add dev eth0 parent 1: classid 1:1 htb rate 1Gbit
class add dev eth0 parent 1:1 classid 1:10 htb rate 300Mbit ceil 900mbit prio 1 buffer 15k
qdisc add dev eth0 parent 1:10 handle 10: pfifo limit 010
filter add dev eth0 parent 1: protocol ip prio 10 u32 match ip protocol 6 0xff match ip dport 22 0xffff flowid 1:10
filter add dev eth0 parent 1: protocol ip prio 10 u32 match ip dst 10.0.0.0/8 match ip sport 1024 fc00 classid 1:10
filter add dev eth0 parent 1: protocol ip u32 match u32 0x0a000000 0xff000000 at 16 flowid 1:10
filter add dev eth0 parent 1: protocol ip u32 match u32 0 0 flowid 1:10
)");
  INFO(r.diags);
  REQUIRE(r.ok);
  CHECK(r.diags.empty());
  CHECK(r.yaml.starts_with("# Imported by `tcsync import` from b.tc.\nversion: 1\ndevices:\n"));
  // tc's units ignore case; its aliases (buffer) are the table's keys; an
  // octal number becomes decimal; masks equal to the field's own are left
  // out; prefs and u32 handles are the ones the kernel would pick. The
  // kernel made pref 49152's list before 49151's, and numbered their root
  // tables so (801:, 802:): tcsync would make them by pref, so import
  // writes the roots (model/shared_tables.h).
  CHECK(body(r) == R"(  eth0:
    qdiscs:
      - {kind: htb, handle: "1:", default: "1:30"}
      - {kind: pfifo, parent: "1:10", handle: "10:", limit: 8}
    classes:
      - {classid: "1:1", rate: 1gbit}
      - {classid: "1:10", parent: "1:1", rate: 300mbit, ceil: 900mbit, prio: 1, burst: 15k}
    filters:
      - {parent: "1:", pref: 10, protocol: ip, handle: "800::800", u32: {match: [{ip: {protocol: 6, dport: 22}}]}, classid: "1:10"}
      - {parent: "1:", pref: 10, protocol: ip, handle: "800::801", u32: {match: [{ip: {dst: 10.0.0.0/8, sport: {value: 1024, mask: "0xfc00"}}}]}, classid: "1:10"}
      - {parent: "1:", pref: 49152, protocol: ip, handle: "801::800", u32: {match: [{u32: {value: "0x0a000000", mask: "0xff000000", at: 16}}]}, classid: "1:10"}
      - {parent: "1:", pref: 49151, protocol: ip, handle: "802::800", u32: {match: [{u32: {value: 0, mask: "0x0"}}]}, classid: "1:10"}
)");
  // What import writes, the loader takes.
  State s = test::load_ok(r.yaml);
  REQUIRE(s.devices.size() == 1);
  CHECK(s.devices[0].filters.size() == 4);
}

TEST_CASE("import: clsact, mirred actions, hash tables and root tables by their kernel names") {
  auto r = import(R"(qdisc add dev v1 clsact
filter add dev v1 ingress protocol ip prio 10 u32 match ip src 10.0.0.0/8 action mirred egress redirect dev v0
filter add dev v1 egress protocol ip prio 5 handle 801::7 u32 match ip tos 0x10 ff action mirred egress mirror dev v2 ok action mirred ingress redirect dev v3 index 4 no_percpu
qdisc add dev v0 root handle 1: htb
filter add dev v0 parent 1: prio 10 protocol ip u32 match ip dst 192.168.0.0/16 flowid 1:1
filter add dev v0 parent 1: prio 40 handle 2: protocol ip u32 divisor 256
filter add dev v0 parent 1: prio 40 protocol ip u32 ht 800:: match ip dst 10.1.0.0/16 hashkey mask ff at 16 link 2:
filter add dev v0 parent 1: prio 40 protocol ip u32 ht 2: sample ip dst 10.1.0.10 match ip dst 10.1.0.10 flowid 1:1
)");
  INFO(r.diags);
  REQUIRE(r.ok);
  // `ht 800::` is the root table of pref 10 (made first): the rule is listed
  // there by the kernel, so tcsync names it by pref 10 and no table. A
  // clsact's two sides number their roots together: egress pref 5's is 801:.
  CHECK(body(r) == R"(  v1:
    qdiscs:
      - {kind: clsact}
    filters:
      - {parent: ingress, pref: 10, protocol: ip, handle: "::800", u32: {match: [{ip: {src: 10.0.0.0/8}}]}, actions: [{mirred: {direction: egress, action: redirect, dev: v0}, percpu_stats: true}]}
      - {parent: egress, pref: 5, protocol: ip, handle: "::7", u32: {match: [{ip: {tos: "0x10"}}]}, actions: [{mirred: {direction: egress, action: mirror, dev: v2, control: pass}, percpu_stats: true}, {mirred: {direction: ingress, action: redirect, dev: v3}, index: 4}]}
  v0:
    qdiscs:
      - {kind: htb, handle: "1:"}
    filters:
      - {parent: "1:", pref: 10, protocol: ip, handle: "::800", u32: {match: [{ip: {dst: 192.168.0.0/16}}]}, classid: "1:1"}
      - {parent: "1:", pref: 40, protocol: ip, handle: "2:", u32: {divisor: 256}}
      - {parent: "1:", pref: 10, protocol: ip, handle: "::801", u32: {match: [{ip: {dst: 10.1.0.0/16}}], hashkey: {mask: "0xff", at: 16}, link: "2:"}}
      - {parent: "1:", pref: 40, protocol: ip, handle: "2:a:800", u32: {ht: "2:", sample: {ip: {dst: "10.1.0.10"}}, match: [{ip: {dst: "10.1.0.10"}}]}, classid: "1:1"}
)");
}

TEST_CASE("import: shell scripts: tc lines are read, the rest is skipped with a warning") {
  auto r = import(R"(#!/bin/sh
set -e
TC=/sbin/tc
tc qdisc del dev eth0 root 2>/dev/null || true
$TC qdisc add dev eth0 root handle 1: htb default 10
sudo /sbin/tc class add dev eth0 parent 1: classid 1:10 htb \
    rate "10mbit" ceil 20mbit   # the only class
tc -s class show dev eth0 | grep -q rate && echo ok
tc qdisc add dev eth1 root tbf rate 1mbit burst 10kb latency 50ms; tc qdisc show
)");
  INFO(r.diags);
  REQUIRE(r.ok);
  CHECK(body(r) == R"(  eth0:
    qdiscs:
      - {kind: htb, handle: "1:", default: "1:10"}
    classes:
      - {classid: "1:10", rate: 10mbit, ceil: 20mbit}
  eth1:
    qdiscs:
      - {kind: tbf, handle: "8001:", rate: 1mbit, burst: 10kb, latency: 50ms}
)");
  CHECK(r.diags == R"(b.tc:2:1: warning: not a tc command: skipped
  set -e
  ^
b.tc:3:1: warning: not a tc command: skipped
  TC=/sbin/tc
  ^
b.tc:4:4: note: deletes nothing an earlier line added: skipped (tcsync deletes what its file does not list)
  tc qdisc del dev eth0 root 2>/dev/null || true
     ^
b.tc:8:27: warning: tc piped into another command reads state, it does not make any: skipped
  tc -s class show dev eth0 | grep -q rate && echo ok
                            ^
b.tc:8:45: warning: not a tc command: skipped
  tc -s class show dev eth0 | grep -q rate && echo ok
                                              ^
b.tc:9:28: warning: qdisc tbf without a handle: the kernel picks one (8001: and up, from one counter for the whole kernel: different on every host); tcsync needs a fixed one and uses the first a fresh kernel would pick, 8001:
  tc qdisc add dev eth1 root tbf rate 1mbit burst 10kb latency 50ms; tc qdisc show
                             ^
b.tc:9:77: warning: tc qdisc show changes nothing: skipped
  tc qdisc add dev eth1 root tbf rate 1mbit burst 10kb latency 50ms; tc qdisc show
                                                                              ^
)");
}

TEST_CASE("import: delete, replace and change act on what earlier lines added") {
  auto r = import(R"(qdisc add dev eth0 root handle 1: htb default 10
class add dev eth0 parent 1: classid 1:10 htb rate 10mbit
class add dev eth0 parent 1: classid 1:20 htb rate 10mbit
filter add dev eth0 parent 1: prio 3 protocol ip u32 match ip dport 80 0xffff flowid 1:20
class change dev eth0 parent 1: classid 1:10 htb rate 20mbit ceil 30mbit
filter del dev eth0 parent 1: prio 3
class del dev eth0 classid 1:20
qdisc add dev eth0 parent 1:10 handle 10: pfifo limit 5
qdisc replace dev eth0 parent 1:10 handle 10: pfifo limit 7
qdisc add dev eth1 root handle 1: htb
qdisc del dev eth1 root
)");
  INFO(r.diags);
  REQUIRE(r.ok);
  CHECK(body(r) == R"(  eth0:
    qdiscs:
      - {kind: htb, handle: "1:", default: "1:10"}
      - {kind: pfifo, parent: "1:10", handle: "10:", limit: 7}
    classes:
      - {classid: "1:10", rate: 20mbit, ceil: 30mbit}
)");
  // tc fails at a replace that keeps htb's handle: the kernel changes the
  // qdisc in place, and htb has no change.
  auto in_place =
      import("qdisc add dev eth0 root handle 1: htb\nqdisc replace dev eth0 root handle 1: htb default 20\n");
  CHECK_FALSE(in_place.ok);
  CHECK(flat(in_place.diags)
            .find("b.tc:2:39: error: tc qdisc replace keeping handle 1: changes the htb qdisc in place") !=
        std::string::npos);
}

TEST_CASE("import: a script's loops, conditionals, functions and variables are refused, or skipped when told") {
  const std::string script = R"(#!/bin/sh
TC=/sbin/tc
DEV=$(ip route | awk '/default/ {print $5}')
shape() {
  tc qdisc add dev eth0 root handle 1: htb
}
for i in 1 2; do
  tc class add dev eth0 parent 1: classid 1:10 htb rate 1mbit
done
if [ -n "$X" ]; then tc qdisc add dev eth1 root handle 2: htb; fi
echo done
)";
  auto r = import(script);
  CHECK_FALSE(r.ok);
  CHECK(r.yaml.empty());
  // Each construct is named at its line; `TC=` and `echo` are not constructs.
  for (const char* at : {"b.tc:3:1: error: 'DEV=$(ip': a shell variable or a command's output",
                         "b.tc:4:1: error: 'shape()': a shell function", "b.tc:6:1: error: '}': a shell function",
                         "b.tc:7:1: error: 'for': a shell loop", "b.tc:7:15: error: 'do': a shell loop",
                         "b.tc:9:1: error: 'done': a shell loop", "b.tc:10:1: error: 'if': a shell conditional",
                         "b.tc:10:17: error: 'then': a shell conditional", "b.tc:10:64: error: 'fi'"}) {
    INFO(at);
    INFO(r.diags);
    CHECK(flat(r.diags).find(at) != std::string::npos);
  }
  // `TC=` is tc's own indirection, and the tc lines inside are read as tc lines.
  for (const char* line : {"b.tc:2:1: error", "b.tc:5:", "b.tc:8:"}) CHECK(r.diags.find(line) == std::string::npos);
  CHECK(r.diags.find("b.tc:11:1: warning: not a tc command: skipped") != std::string::npos);
  CHECK(flat(r.diags).find("--skip-shell skips such lines") != std::string::npos);

  ImportOptions skip;
  skip.skip_shell = true;
  auto s = import(script, skip);
  INFO(s.diags);
  REQUIRE(s.ok);
  CHECK(s.diags.find("error") == std::string::npos);
  CHECK(flat(s.diags).find("b.tc:7:1: warning: 'for': a shell loop, which runs the tc lines in it any number of "
                           "times: skipped (--skip-shell)") != std::string::npos);
  // What the skipped lines ran is not in the file: that is what --skip-shell says.
  CHECK(body(s) == R"(  eth0:
    qdiscs:
      - {kind: htb, handle: "1:"}
    classes:
      - {classid: "1:10", rate: 1mbit}
)");
}

TEST_CASE("import: a delete of nothing fails as tc does, unless the line may fail") {
  auto r = import(
      "class del dev eth0 classid 1:20\n"
      "tc qdisc del dev eth0 ingress 2>/dev/null\n"
      "tc filter del dev eth0 parent 1: || true\n"
      "qdisc del dev eth0 root\n");
  CHECK_FALSE(r.ok);
  CHECK(flat(r.diags).find("b.tc:1:1: error: deletes nothing an earlier line added: tc fails here") !=
        std::string::npos);
  for (const char* line :
       {"b.tc:2:4: note: deletes nothing", "b.tc:3:4: note: deletes nothing", "b.tc:4:1: note: deletes nothing"}) {
    INFO(line);
    INFO(r.diags);
    CHECK(flat(r.diags).find(line) != std::string::npos);
  }
}

TEST_CASE("import: errors point at the tc word, all of them") {
  auto r = import(R"(qdisc add dev eth0 root handle 1: htb default 30
class add dev eth0 parent 1: classid 1:20 htb rate 10mbit cbust 10k
filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dts 10.0.0.1 flowid 1:10
filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dst 10.0.0.300 flowid 1:10
qdisc add dev eth0 parent 1:10 handle 10: htbb
tc qdisc add dev $DEV root handle 1: htb
)");
  CHECK_FALSE(r.ok);
  CHECK(r.yaml.empty());
  std::string kinds;
  for (auto k : kind_names(ObjType::Qdisc)) kinds += (kinds.empty() ? "" : ", ") + std::string(k);
  CHECK(r.diags == R"(b.tc:2:59: error: unknown word 'cbust' for htb class (did you mean 'cburst'?)
  class add dev eth0 parent 1: classid 1:20 htb rate 10mbit cbust 10k
                                                            ^
b.tc:3:63: error: unknown 'ip' match 'dts': expected one of src, dst, protocol, tos, dsfield, precedence, ihl, dport, sport, icmp_type, icmp_code, nofrag, firstfrag, df, mf (did you mean 'dst'?)
  filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dts 10.0.0.1 flowid 1:10
                                                                ^
b.tc:4:67: error: 'ip dst' must be an IPv4 address or prefix such as 10.0.0.0/8, not '10.0.0.300'
  filter add dev eth0 parent 1: protocol ip prio 1 u32 match ip dst 10.0.0.300 flowid 1:10
                                                                    ^
b.tc:5:43: error: unknown qdisc kind 'htbb' (tcsync knows )" +
                       kinds + R"(); did you mean 'htb'?
  qdisc add dev eth0 parent 1:10 handle 10: htbb
                                            ^
b.tc:6:18: error: shell expansion '$DEV': import reads the script's text, it does not run it (expand first, e.g. run the script with TC="echo tc" and import its output)
  tc qdisc add dev $DEV root handle 1: htb
                   ^
)");
}

TEST_CASE("import: what one line cannot see is checked by the loader, at the tc line") {
  auto r = import(R"(qdisc add dev eth0 root handle 1: htb
class add dev eth0 parent 1: classid 1:10 htb rate 10mbit ceil 5mbit
class add dev eth0 parent 2: classid 2:10 htb rate 10mbit
)");
  CHECK_FALSE(r.ok);
  CHECK(r.diags ==
        R"(b.tc:2:1: warning: ceil 5mbit is below rate 10mbit: the class never borrows, and sends at most ceil
  class add dev eth0 parent 1: classid 1:10 htb rate 10mbit ceil 5mbit
  ^
b.tc:3:1: error: class 2:10: no qdisc 2: is declared on eth0
  class add dev eth0 parent 2: classid 2:10 htb rate 10mbit
  ^
)");
}

TEST_CASE("import: one namespace per file, --netns picks one") {
  std::string text = R"(tc -n a qdisc add dev v0 root handle 1: htb
tc -n b qdisc add dev v0 root handle 2: htb
ip netns exec b tc qdisc add dev v1 clsact
)";
  auto mixed = import(text);
  CHECK_FALSE(mixed.ok);
  CHECK(mixed.diags.find(
            "b.tc:2:7: error: this line is for namespace 'b', earlier lines (b.tc:1:7) for namespace 'a'") == 0);
  auto b = import(text, ImportOptions{"b"});
  INFO(b.diags);
  REQUIRE(b.ok);
  CHECK(body(b) == R"(  v0:
    qdiscs:
      - {kind: htb, handle: "2:"}
  v1:
    qdiscs:
      - {kind: clsact}
)");
}

TEST_CASE("import: a file with nothing to import is an empty tcsync file") {
  auto r = import("# nothing\n\nqdisc show dev eth0\n");
  REQUIRE(r.ok);
  CHECK(body(r) == "  {}\n");
  test::load_ok(r.yaml);
}

TEST_CASE("import: kinds whose words are their keys need no import code (flower, gact, police)") {
  if (!find_kind(ObjType::Filter, "flower") || !find_kind(ObjType::Action, "gact") ||
      !find_kind(ObjType::Action, "police")) {
    WARN("flower, gact or police not compiled in");
    return;
  }
  auto r = import(R"(qdisc add dev eth0 clsact
filter add dev eth0 ingress protocol ip prio 1 flower dst_ip 10.0.0.0/8 ip_proto tcp dst_port 1000-2000 skip_hw action drop
filter add dev eth0 ingress protocol ip prio 2 u32 match ip dst 10.1.0.0/16 action police rate 1mbit burst 10k conform-exceed drop/ok action goto chain 5
)");
  INFO(r.diags);
  REQUIRE(r.ok);
  CHECK(body(r) == R"(  eth0:
    qdiscs:
      - {kind: clsact}
    filters:
      - {parent: ingress, pref: 1, protocol: ip, flower: {dst_ip: 10.0.0.0/8, ip_proto: tcp, dst_port: "1000-2000", skip_hw: true}, actions: [{gact: {control: drop}, percpu_stats: true}]}
      - {parent: ingress, pref: 2, protocol: ip, handle: "::800", u32: {match: [{ip: {dst: 10.1.0.0/16}}]}, actions: [{police: {rate: 1mbit, burst: 10k, exceed: drop, conform: pass}, percpu_stats: true}, {gact: {control: "goto chain 5"}, percpu_stats: true}]}
)");
  auto bad = import("filter add dev eth0 ingress prio 1 flower dst_ip 10.0.0.300 action drop\n");
  CHECK_FALSE(bad.ok);
  CHECK(bad.diags.find("b.tc:1:50: error: ") == 0);  // at the address, read by flower's own parser
}

TEST_CASE("import: skbedit, vlan, csum, nat, sample, connmark, skbmod and mpls words") {
  auto r = import(R"(qdisc add dev v0 clsact
filter add dev v0 ingress prio 1 protocol all matchall action skbedit mark 0x10/0xff priority 1:10 pipe action skbedit ptype host inheritdsfield
filter add dev v0 ingress prio 2 protocol all matchall action vlan push id 20 protocol 802.1ad priority 3 action vlan pop_eth drop
filter add dev v0 ingress prio 3 protocol all matchall action csum iph and tcp and udp goto chain 2
filter add dev v0 ingress prio 4 protocol all matchall action nat egress 10.0.0.0/24 192.168.1.0 action nat ingress any 1.2.3.4 pipe
filter add dev v0 ingress prio 5 protocol all matchall action sample rate 10 group 1 trunc 128 action connmark zone 7
filter add dev v0 ingress prio 6 protocol all matchall action skbmod set dmac 02:00:00:00:00:01 set etype 0x86dd action skbmod swap mac
filter add dev v0 ingress prio 7 protocol all matchall action mpls push protocol mpls_mc label 200 tc 3 ttl 64 bos 1 action mpls dec_ttl
)");
  INFO(r.diags);
  REQUIRE(r.ok);
  CHECK(r.diags.empty());
  // tc's 'any' for nat is 0.0.0.0/32: kept as tc sends it.
  CHECK(body(r) == R"(  v0:
    qdiscs:
      - {kind: clsact}
    filters:
      - {parent: ingress, pref: 1, protocol: all, matchall: {}, actions: [{skbedit: {mark: "0x10", mask: "0xff", priority: "1:10", control: pipe}, percpu_stats: true}, {skbedit: {ptype: host, inheritdsfield: true}, percpu_stats: true}]}
      - {parent: ingress, pref: 2, protocol: all, matchall: {}, actions: [{vlan: {action: push, id: 20, protocol: "802.1ad", priority: 3}, percpu_stats: true}, {vlan: {action: pop_eth, control: drop}, percpu_stats: true}]}
      - {parent: ingress, pref: 3, protocol: all, matchall: {}, actions: [{csum: {ip4h: true, tcp: true, udp: true, control: "goto chain 2"}, percpu_stats: true}]}
      - {parent: ingress, pref: 4, protocol: all, matchall: {}, actions: [{nat: {direction: egress, old: 10.0.0.0/24, new: "192.168.1.0"}, percpu_stats: true}, {nat: {direction: ingress, old: "0.0.0.0", new: "1.2.3.4", control: pipe}, percpu_stats: true}]}
      - {parent: ingress, pref: 5, protocol: all, matchall: {}, actions: [{sample: {rate: 10, group: 1, trunc: 128}, percpu_stats: true}, {connmark: {zone: 7}, percpu_stats: true}]}
      - {parent: ingress, pref: 6, protocol: all, matchall: {}, actions: [{skbmod: {dmac: "02:00:00:00:00:01", etype: "0x86dd"}, percpu_stats: true}, {skbmod: {swap_mac: true}, percpu_stats: true}]}
      - {parent: ingress, pref: 7, protocol: all, matchall: {}, actions: [{mpls: {action: push, protocol: mpls_mc, label: 200, tc: 3, ttl: 64, bos: 1}, percpu_stats: true}, {mpls: {action: dec_ttl}, percpu_stats: true}]}
)");
  auto bad = import("filter add dev v0 ingress prio 1 protocol all matchall action skbmod set mac 02:00:00:00:00:01\n");
  CHECK_FALSE(bad.ok);
  CHECK(bad.diags.find("b.tc:1:74: error: skbmod 'set' takes dmac, smac or etype, not 'mac'") == 0);
}

TEST_CASE("import: basic's match takes the words up to classid or action, quoted or not") {
  auto r = import(R"(qdisc add dev eth0 clsact
filter add dev eth0 ingress prio 1 protocol all basic match 'cmp(u16 at 0 layer link mask 0xffff eq 0x800) and not meta(nf_mark eq 5)' classid 1:1
filter add dev eth0 ingress prio 2 protocol all basic match u32(u8 6 0xff at 9) or meta(priority gt 3) action drop
filter add dev eth0 ingress prio 3 protocol all basic classid 1:2
)");
  INFO(r.diags);
  REQUIRE(r.ok);
  CHECK(body(r) == R"Y(  eth0:
    qdiscs:
      - {kind: clsact}
    filters:
      - {parent: ingress, pref: 1, protocol: all, basic: {match: "cmp(u16 at 0 layer link mask 0xffff eq 0x800) and not meta(nf_mark eq 5)"}, classid: "1:1"}
      - {parent: ingress, pref: 2, protocol: all, basic: {match: "u32(u8 6 0xff at 9) or meta(priority gt 3)"}, actions: [{gact: {control: drop}, percpu_stats: true}]}
      - {parent: ingress, pref: 3, protocol: all, basic: {}, classid: "1:2"}
)Y");
  auto bad = import("filter add dev eth0 ingress prio 1 basic match 'cmp(u8 at 0 layer ip eq 1)' classid 1:1\n");
  CHECK_FALSE(bad.ok);
  CHECK(bad.diags.find("b.tc:1:48: error: match: cmp: layer must be") == 0);
}

TEST_CASE(
    "import: a u32 or fw filter with no options is an empty list, and a rule moved to another pref's table leaves "
    "one") {
  auto r = import(R"(qdisc add dev v0 clsact
filter add dev v0 ingress protocol ip prio 5 u32
filter add dev v0 ingress protocol ip prio 5 u32
filter add dev v0 ingress protocol ip prio 6 u32
filter add dev v0 ingress protocol ip prio 6 u32 match ip dst 10.0.0.1/32 classid 1:1
filter add dev v0 ingress protocol ip prio 7 u32 ht 800:: match ip dst 10.0.0.2/32 classid 1:2
filter add dev v0 egress prio 9 fw
)");
  INFO(r.diags);
  REQUIRE(r.ok);
  // pref 5: one list (a second add with no options adds nothing), which
  // pref 7's rule then fills: it went into pref 5's root table (800:), and
  // the list the request made at pref 7 stays, empty. pref 6's empty list
  // now holds a rule.
  CHECK(body(r) == R"(  v0:
    qdiscs:
      - {kind: clsact}
    filters:
      - {parent: ingress, pref: 6, protocol: ip, handle: "::800", u32: {match: [{ip: {dst: 10.0.0.1/32}}]}, classid: "1:1"}
      - {parent: ingress, pref: 7, protocol: ip, empty: u32}
      - {parent: ingress, pref: 5, protocol: ip, handle: "::800", u32: {match: [{ip: {dst: 10.0.0.2/32}}]}, classid: "1:2"}
      - {parent: egress, pref: 9, empty: fw}
)");
}

TEST_CASE("import: a rate spec's linklayer is tc's word (a prefix of ethernet, atm or adsl), and unaware is none") {
  auto r = import(
      "qdisc add dev eth0 root handle 1: htb\n"
      "class add dev eth0 parent 1: classid 1:1 htb rate 1mbit linklayer ads\n"
      "qdisc add dev eth1 root handle 2: tbf rate 1mbit burst 10k limit 20k linklayer eth\n");
  CHECK(r.ok);
  CHECK(body(r).find("linklayer: atm") != std::string::npos);
  CHECK(body(r).find("linklayer: ethernet") != std::string::npos);
  auto bad = import("qdisc add dev eth0 root handle 2: tbf rate 1mbit burst 10k limit 20k linklayer unaware\n");
  CHECK_FALSE(bad.ok);
  CHECK(bad.diags.rfind("b.tc:1:80: error: linklayer 'unaware': tc takes ethernet, atm or adsl (tcsync's 'unaware', "
                        "the kernel's link layer 0, has no tc word)",
                        0) == 0);
}
