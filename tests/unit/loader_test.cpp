#include <catch2/catch.hpp>

#include <unistd.h>
#include "base/handle.h"

#include "test_util.h"

using namespace tcsync;
using tcsync::test::load_errors;
using tcsync::test::load_ok;

TEST_CASE("a whole file loads into the model") {
  State s = load_ok(R"(version: 1
devices:
  eth0:
    qdiscs:
      - {kind: htb, handle: "1:", default: "1:30"}
    classes:
      - {classid: "1:10", rate: 300mbit, ceil: 900mbit, prio: 1}
      - {classid: "1:30", rate: 10mbit}
    filters:
      - {parent: "1:", pref: 5, protocol: ip, u32: {match: [{u32: {value: 0, mask: 0, at: 0}}]}, classid: "1:10"}
  eth1:
    qdiscs: [{kind: clsact}]
)");
  REQUIRE(s.devices.size() == 2);
  auto& e0 = s.devices[0];
  CHECK(e0.name == "eth0");
  REQUIRE(e0.qdiscs.size() == 1);
  CHECK(e0.qdiscs[0].kind == "htb");
  CHECK(e0.qdiscs[0].parent == kHandleRoot);
  CHECK(e0.qdiscs[0].handle == 0x10000u);
  CHECK(e0.qdiscs[0].opts.num(0) == 0x10030u);  // default, the qdisc's major + minor
  REQUIRE(e0.classes.size() == 2);
  CHECK(e0.classes[0].kind == "htb");  // from its qdisc
  CHECK(e0.classes[0].parent == 0x10000u);
  CHECK(e0.classes[0].opts.num(0) == 37500000u);  // rate in bytes/s
  CHECK(e0.classes[1].opts.num(1) == 1250000u);   // ceil defaults to rate
  REQUIRE(e0.filters.size() == 1);
  auto& f = e0.filters[0];
  CHECK(f.key.parent == 0x10000u);
  CHECK(f.key.pref == 5);
  CHECK(f.key.protocol == 0x0800);
  CHECK(f.key.handle == 1u);  // derived: first node of the root table
  CHECK(f.classid == 0x10010u);
  CHECK(f.loc.line == 10);
  CHECK(f.loc.col == 9);
  auto& e1 = s.devices[1];
  REQUIRE(e1.qdiscs.size() == 1);
  CHECK(e1.qdiscs[0].parent == kHandleIngress);
  CHECK(e1.qdiscs[0].handle == kHandleIngressQdisc);
}

TEST_CASE("scalars are read by the schema, never by YAML's implicit typing") {
  // 1:10 would be sexagesimal 70 in YAML 1.1; 0x10 an int; here they are what tc means.
  State s = load_ok(R"(version: 1
devices:
  eth0:
    qdiscs:
      - kind: htb
        handle: "1:"
        default: 1:10
        r2q: 0x10
    classes:
      - {classid: 1:10, rate: 1mbit}
)");
  CHECK(s.devices[0].qdiscs[0].opts.num(0) == 0x10010u);
  CHECK(s.devices[0].qdiscs[0].opts.num(1) == 16u);
  CHECK(s.devices[0].classes[0].classid == 0x10010u);
}

TEST_CASE("unknown keys are errors with 'did you mean'") {
  CHECK(load_errors(R"(version: 1
devices:
  eth0:
    qdiscs:
      - {kind: htb, handle: "1:", defualt: "1:10"}
)") == R"(t.yaml:5:35: error: unknown key 'defualt' in htb qdisc (did you mean 'default'?)
        - {kind: htb, handle: "1:", defualt: "1:10"}
                                    ^
)");
}

TEST_CASE("every error in a file is reported, not only the first") {
  std::string errs = load_errors(R"(version: 1
devices:
  eth0:
    qdiscs:
      - {kind: htb, handle: "1:"}
    classes:
      - {classid: "1:10", rate: fast}
      - {classid: "1:20", rate: 1mbit, prio: 9}
      - {classid: "1:30"}
)");
  CHECK(errs == R"(t.yaml:7:33: error: 'rate' must be a rate such as 100mbit, not 'fast'
        - {classid: "1:10", rate: fast}
                                  ^
t.yaml:8:46: error: 'prio' is 9, more than its maximum 7
        - {classid: "1:20", rate: 1mbit, prio: 9}
                                               ^
t.yaml:9:9: error: htb class needs 'rate'
        - {classid: "1:30"}
          ^
)");
}

TEST_CASE("broken YAML is located") {
  // At the end of the input, past the last newline: where the last line
  // stops, so the line and a caret show.
  CHECK(load_errors("version: 1\ndevices:\n  eth0: {qdiscs: [\n") ==
        "t.yaml:3:19: error: malformed YAML: while parsing a flow node: did not find expected node content\n"
        "    eth0: {qdiscs: [\n"
        "                    ^\n");
}

TEST_CASE("a directory given as a file is said to be one") {
  State s;
  Diagnostics d;
  CHECK_FALSE(load_files({"/tmp"}, s, d));
  CHECK(test::formatted(d) == "/tmp: error: cannot read file: Is a directory\n");
}

TEST_CASE("a number past 64 bits is past the maximum, not no number") {
  std::string errs = load_errors(
      "version: 1\ndevices:\n  eth0:\n    qdiscs: [{kind: htb, handle: \"1:\"}]\n    filters:\n"
      "      - {parent: \"1:\", pref: 99999999999999999999, protocol: ip, u32: {}}\n");
  CHECK(errs.find("t.yaml:6:30: error: 'pref' is 99999999999999999999, more than its maximum 65535\n") == 0);
  errs = load_errors(
      "version: 1\ndevices:\n  eth0:\n    qdiscs: [{kind: bfifo, handle: \"1:\", limit: 99999999999999999999999}]\n");
  CHECK(errs.find("t.yaml:4:49: error: 'limit' is 99999999999999999999999, past the most the kernel holds: "
                  "4294967295b (u32)\n") == 0);
}

TEST_CASE("an empty file is an error") {
  CHECK(load_errors("") == "t.yaml:1:1: error: empty file: expected 'version: 1' and 'devices:'\n");
  CHECK(load_errors("# only a comment\n") ==
        "t.yaml:1:1: error: empty file: expected 'version: 1' and 'devices:'\n  # only a comment\n  ^\n");
}

TEST_CASE("duplicate keys are errors") {
  CHECK(load_errors(R"(version: 1
devices:
  eth0:
    qdiscs:
      - {kind: htb, handle: "1:", handle: "2:"}
)") == R"(t.yaml:5:35: error: duplicate key 'handle'
        - {kind: htb, handle: "1:", handle: "2:"}
                                    ^
)");
  CHECK(load_errors("version: 1\ndevices:\n  eth0: {}\n  eth0: {}\n") ==
        "t.yaml:4:3: error: duplicate key 'eth0'\n    eth0: {}\n    ^\n");
}

TEST_CASE("duplicate filter identities are errors") {
  CHECK(
      load_errors(R"(version: 1
devices:
  eth0:
    qdiscs: [{kind: clsact}]
    filters:
      - {parent: ingress, pref: 1, protocol: ip, handle: "::5", u32: {match: [{u32: {value: 0, mask: 0, at: 0}}]}}
      - {parent: ingress, pref: 1, protocol: ip, handle: "::5", u32: {match: [{u32: {value: 1, mask: 1, at: 0}}]}}
)") ==
      R"(t.yaml:7:9: error: duplicate filter: filter u32 ingress pref 1 protocol ip handle ::5 is already declared at t.yaml:6:9
        - {parent: ingress, pref: 1, protocol: ip, handle: "::5", u32: {match: [{u32: {value: 1, mask: 1, at: 0}}]}}
          ^
)");
}

TEST_CASE("a duplicate after keys in order is found (the index starts at the first key out of order)") {
  // 1, 3 in order; 2 out of order starts the index from 1 and 3; the
  // second 3 repeats a filter checked before the index existed.
  CHECK(
      load_errors(R"(version: 1
devices:
  eth0:
    qdiscs: [{kind: clsact}]
    filters:
      - {parent: ingress, pref: 1, protocol: ip, handle: 1, flower: {}}
      - {parent: ingress, pref: 1, protocol: ip, handle: 3, flower: {}}
      - {parent: ingress, pref: 1, protocol: ip, handle: 2, flower: {}}
      - {parent: ingress, pref: 1, protocol: ip, handle: 3, flower: {}}
)") ==
      R"(t.yaml:9:9: error: duplicate filter: filter flower ingress pref 1 protocol ip handle 0x3 is already declared at t.yaml:7:9
        - {parent: ingress, pref: 1, protocol: ip, handle: 3, flower: {}}
          ^
)");
}

TEST_CASE("dangling references are errors") {
  std::string errs = load_errors(R"(version: 1
devices:
  eth0:
    qdiscs:
      - {kind: htb, handle: "1:"}
    classes:
      - {classid: "2:10", kind: htb, rate: 1mbit}
    filters:
      - {parent: ingress, u32: {match: [{u32: {value: 0, mask: 0, at: 0}}]}}
      - {parent: "1:99", u32: {match: [{u32: {value: 0, mask: 0, at: 0}}]}}
)");
  CHECK(errs.find("t.yaml:7:9: error: class 2:10: no qdisc 2: is declared on eth0") != std::string::npos);
  CHECK(errs.find("t.yaml:9:9: error: filter parent ingress needs a clsact (or ingress) qdisc declared on eth0") !=
        std::string::npos);
  CHECK(errs.find("t.yaml:10:9: error: filter parent 1:99 is not a qdisc or class declared on eth0") !=
        std::string::npos);
}

TEST_CASE("qdiscs need explicit handles: the kernel never picks one") {
  CHECK(load_errors(
            "version: 1\ndevices:\n  eth0:\n    qdiscs: [{kind: tbf, rate: 1mbit, burst: 10kb, limit: 10kb}]\n") ==
        "t.yaml:4:14: error: qdisc tbf needs a 'handle', such as \"1:\"\n"
        "      qdiscs: [{kind: tbf, rate: 1mbit, burst: 10kb, limit: 10kb}]\n"
        "               ^\n");
}

TEST_CASE("unknown kinds name what tcsync knows") {
  std::string errs = load_errors("version: 1\ndevices:\n  eth0:\n    qdiscs: [{kind: htbb, handle: \"1:\"}]\n");
  CHECK(errs.find(
            "t.yaml:4:21: error: unknown qdisc kind 'htbb' (tcsync knows clsact, ingress, pfifo, bfifo, htb, tbf, red, "
            "prio, drr, hfsc, mq, mqprio, fq_codel, netem, sfq, fq, cake, ets, cbs, etf, qfq, gred, taprio, codel, "
            "pie, fq_pie, choke, sfb, hhf, pfifo_head_drop, skbprio, multiq, plug, pfifo_fast); did you mean 'htb'?") ==
        0);
}

TEST_CASE("aliases are refused (no alias bombs)") {
  std::string errs = load_errors("version: 1\ndevices:\n  eth0: &a {}\n  eth1: *a\n");
  CHECK(errs.rfind("t.yaml:3:9: error: YAML anchors and aliases are not supported", 0) == 0);
}

TEST_CASE("filters without handles get stable ones in file order") {
  State s = load_ok(R"(version: 1
devices:
  eth0:
    qdiscs: [{kind: clsact}]
    filters:
      - {parent: ingress, pref: 1, protocol: ip, u32: {match: [{u32: {value: 1, mask: 1, at: 0}}]}}
      - {parent: ingress, pref: 1, protocol: ip, handle: "::7", u32: {match: [{u32: {value: 2, mask: 2, at: 0}}]}}
      - {parent: ingress, pref: 1, protocol: ip, u32: {match: [{u32: {value: 3, mask: 3, at: 0}}]}}
      - {parent: ingress, pref: 2, protocol: ip, u32: {match: [{u32: {value: 4, mask: 4, at: 0}}]}}
)");
  auto& f = s.devices[0].filters;
  CHECK(f[0].key.handle == 1u);
  CHECK(f[1].key.handle == 7u);
  CHECK(f[2].key.handle == 8u);  // continues after the explicit one
  CHECK(f[3].key.handle == 1u);  // another pref, another numbering
  CHECK(f[3].key.pref == 2);
}

TEST_CASE("a device belongs to one file") {
  State s;
  Diagnostics d;
  // Two in-memory files with the same device cannot be loaded through
  // load_text separately, so use the file API on temp files.
  char a[] = "/tmp/tcsync-a-XXXXXX", b[] = "/tmp/tcsync-b-XXXXXX";
  int fa = mkstemp(a), fb = mkstemp(b);
  std::string text = "version: 1\ndevices:\n  eth0: {}\n";
  REQUIRE(write(fa, text.data(), text.size()) == (ssize_t)text.size());
  REQUIRE(write(fb, text.data(), text.size()) == (ssize_t)text.size());
  close(fa);
  close(fb);
  CHECK_FALSE(load_files({a, b}, s, d));
  REQUIRE(d.all().size() == 1);
  CHECK(d.all()[0].message == std::string("device 'eth0' is already declared at ") + a +
                                  ":3:3 (a device belongs to one file; files add devices, they never override)");
  unlink(a);
  unlink(b);
}

TEST_CASE("an unreadable file is an error") {
  State s;
  Diagnostics d;
  CHECK_FALSE(load_files({"/nonexistent/site.yaml"}, s, d));
  REQUIRE(d.all().size() == 1);
  CHECK(format_diagnostic(d.all()[0]) ==
        "/nonexistent/site.yaml: error: cannot read file: No such file or directory\n");
}

TEST_CASE("tbf latency becomes limit as tc computes it") {
  State s = load_ok(
      "version: 1\ndevices:\n  eth0:\n    qdiscs: [{kind: tbf, handle: \"1:\", rate: 1mbit, burst: 10kb, latency: "
      "50ms}]\n");
  auto& q = s.devices[0].qdiscs[0];
  // 125000 B/s * 0.05 s + 10240 = 16490
  CHECK(q.opts.num(2) == 16490u);
  CHECK_FALSE(q.opts.has(3));
}

TEST_CASE("non-UTF-8 input is an error") {
  std::string errs = load_errors(std::string("version: 1\ndevices:\n  eth\xff: {}\n"));
  CHECK(errs.rfind("t.yaml:3:6: error: malformed YAML: invalid UTF-8", 0) == 0);
}
