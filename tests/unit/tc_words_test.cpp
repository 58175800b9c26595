// tc's words as the kind tables declare them (model/tc_words.h), and the
// import of tc lines that use them. The first test is generated from the
// tables: every word a kind's descriptor knows gets a minimal tc line, and
// import must accept it; a word added without an example fails here.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "codec/tc_codec.h"
#include "file/loader.h"
#include "import/import_tc.h"
#include "model/kind.h"
#include "model/tc_words.h"
#include "tc_lines.h"
#include "test_util.h"

using namespace tcsync;
using tcsync::test::line_for;

namespace {

struct Result {
  bool ok = false;
  std::string yaml, diags;
};

Result import(const std::string& text) {
  Result r;
  Diagnostics d;
  r.ok = import_tc_text("w.tc", text, {}, r.yaml, d);
  for (auto& x : d.all()) r.diags += format_diagnostic(x);
  return r;
}

// The lines of the devices part (after "devices:").
std::string body(const Result& r) {
  auto pos = r.yaml.find("devices:\n");
  return pos == std::string::npos ? r.yaml : r.yaml.substr(pos + 9);
}

bool has_word(std::string_view example, std::string_view word) {
  size_t pos = 0;
  while ((pos = example.find(word, pos)) != std::string_view::npos) {
    bool start = pos == 0 || example[pos - 1] == ' ' || example[pos - 1] == '\n';
    bool end =
        pos + word.size() == example.size() || example[pos + word.size()] == ' ' || example[pos + word.size()] == '\n';
    if (start && end) return true;
    ++pos;
  }
  return false;
}

}  // namespace

TEST_CASE("tc words: every word a kind's descriptor knows imports, in a minimal tc line") {
  int kinds = 0, lines = 0;
  // bpf's `bytecode-file` examples read this file, as tc would (one
  // instruction a line, as tcpdump -ddd prints them).
  const char* prog = "/tmp/tcsync-tc-words-prog.bpf";
  {
    std::ofstream f(prog);
    f << "4\n40 0 0 12\n21 0 1 2048\n6 0 0 262144\n6 0 0 0\n";
  }
  struct Unlink {
    const char* p;
    ~Unlink() { std::remove(p); }
  } unlink_prog{prog};
  for (const KindOps* k : all_kinds()) {
    if (!k->tc_words) continue;
    ++kinds;
    const TcWords& tw = *k->tc_words;
    INFO(obj_type_name(k->obj) << " " << k->name);
    // Each alias and reader word has an example that uses it.
    std::vector<std::string_view> words;
    for (auto& a : tw.aliases) words.push_back(a.word);
    for (auto& r : tw.readers) words.push_back(r.word);
    for (auto& a : tw.value_aliases) words.push_back(a.word);
    for (auto w : words) {
      INFO("word " << w);
      CHECK(std::any_of(tw.examples.begin(), tw.examples.end(), [&](std::string_view e) { return has_word(e, w); }));
    }
    CHECK(!tw.examples.empty());
    for (auto e : tw.examples) {
      std::string text = line_for(*k, e);
      INFO(text);
      auto r = import(text);
      INFO(r.diags);
      // A word tc knows and tcsync cannot say (u32's order) has a reader
      // that says so: its example must be refused with that message.
      if (r.diags.find("has no tcsync spelling") != std::string::npos)
        CHECK_FALSE(r.ok);
      else
        CHECK(r.ok);
      ++lines;
    }
  }
  CHECK(kinds >= 20);
  CHECK(lines >= kinds);
}

TEST_CASE("tc words: a word the kind does not know is still refused") {
  auto r = import("qdisc add dev v0 root handle 1: fq_codel noecnx\n");
  CHECK_FALSE(r.ok);
  CHECK(r.diags.find("unknown word 'noecnx' for fq_codel qdisc (did you mean 'noecn'?)") != std::string::npos);
}

TEST_CASE("tc words: u32 ip6 icmp_type and icmp_code, as f_u32.c reads them") {
  auto r = import(
      "qdisc add dev v0 root handle 1: prio\n"
      "filter add dev v0 parent 1: protocol ipv6 prio 1 u32 match ip6 icmp_type 128 0xff match ip6 icmp_code 0 0xff "
      "flowid 1:1\n"
      "filter add dev v0 parent 1: protocol ipv6 prio 1 u32 match ip6 icmp_type 0x80 0xf0 flowid 1:2\n");
  INFO(r.diags);
  REQUIRE(r.ok);
  CHECK(body(r) == R"(  v0:
    qdiscs:
      - {kind: prio, handle: "1:"}
    filters:
      - {parent: "1:", pref: 1, protocol: ipv6, handle: "::800", u32: {match: [{ip6: {icmp_type: 128, icmp_code: 0}}]}, classid: "1:1"}
      - {parent: "1:", pref: 1, protocol: ipv6, handle: "::801", u32: {match: [{ip6: {icmp_type: {value: "0x80", mask: "0xf0"}}}]}, classid: "1:2"}
)");
}

TEST_CASE("tc words: fq_codel noecn and ecn") {
  auto r = import("qdisc add dev v0 root handle 1: fq_codel noecn\nqdisc add dev v1 root handle 1: fq_codel ecn\n");
  INFO(r.diags);
  REQUIRE(r.ok);
  CHECK(body(r) == R"(  v0:
    qdiscs:
      - {kind: fq_codel, handle: "1:", ecn: false}
  v1:
    qdiscs:
      - {kind: fq_codel, handle: "1:", ecn: true}
)");
}

TEST_CASE("tc words: prio priomap takes its 16 bands by position") {
  auto r = import(
      "qdisc add dev v0 root handle 1: prio priomap 1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1\n"
      "qdisc add dev v1 root handle 1: prio bands 4 priomap 3 3 multiqueue\n");
  INFO(r.diags);
  REQUIRE(r.ok);
  CHECK(body(r) == R"(  v0:
    qdiscs:
      - {kind: prio, handle: "1:", priomap: [1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1]}
  v1:
    qdiscs:
      - {kind: prio, handle: "1:", bands: 4, priomap: [3, 3], multiqueue: true}
)");
  auto twice = import("qdisc add dev v0 root handle 1: prio priomap 1 2 priomap 1\n");
  CHECK_FALSE(twice.ok);
  CHECK(twice.diags.find("'priomap' is given twice; tc refuses that too") != std::string::npos);
}

TEST_CASE("tc words: netem's positional jitter, correlations and rate overheads") {
  auto r = import(
      "qdisc add dev v0 root handle 1: netem delay 10ms 2ms 25%\n"
      "qdisc add dev v1 root handle 1: netem loss 1% 25% duplicate 2% 5% corrupt 0.1% 10%\n"
      "qdisc add dev v2 root handle 1: netem latency 20MS reorder 25% 50% gap 5 loss random 3%\n"
      "qdisc add dev v3 root handle 1: netem rate 1Mbit 20 1500 -4 limit 100\n");
  INFO(r.diags);
  REQUIRE(r.ok);
  CHECK(body(r) == R"(  v0:
    qdiscs:
      - {kind: netem, handle: "1:", delay: 10ms, jitter: 2ms, delay_correlation: "25%"}
  v1:
    qdiscs:
      - {kind: netem, handle: "1:", loss: "1%", loss_correlation: "25%", duplicate: "2%", duplicate_correlation: "5%", corrupt: "0.1%", corrupt_correlation: "10%"}
  v2:
    qdiscs:
      - {kind: netem, handle: "1:", delay: 20ms, reorder: "25%", reorder_correlation: "50%", gap: 5, loss: "3%"}
  v3:
    qdiscs:
      - {kind: netem, handle: "1:", rate: 1mbit, packet_overhead: 20, cell_size: 1500, cell_overhead: "-4", limit: 100}
)");
  auto twice = import("qdisc add dev v0 root handle 1: netem loss 1% loss 2%\n");
  CHECK_FALSE(twice.ok);
  CHECK(twice.diags.find("'loss' is given twice; tc refuses that too") != std::string::npos);
}

TEST_CASE("tc words: a key that is also its own value is a flag unless a value follows (cake atm)") {
  // sqm-scripts' layer_cake sends `atm overhead 44`; tc reads atm, ptm, noatm as flags (the last wins).
  auto r = import(
      "qdisc add dev v0 root handle 1: cake bandwidth 1000kbit atm overhead 44 mpu 0 diffserv3 nat\n"
      "qdisc add dev v1 root handle 1: cake atm\n"
      "qdisc add dev v2 root handle 1: cake atm ptm\n");
  INFO(r.diags);
  REQUIRE(r.ok);
  CHECK(body(r) == R"(  v0:
    qdiscs:
      - {kind: cake, handle: "1:", bandwidth: 1000kbit, atm: atm, overhead: 44, mpu: 0, diffserv: diffserv3, nat: true}
  v1:
    qdiscs:
      - {kind: cake, handle: "1:", atm: atm}
  v2:
    qdiscs:
      - {kind: cake, handle: "1:", atm: ptm}
)");
}

TEST_CASE("tc words: a repeated option: the last wins where tc lets it, an error where tc refuses") {
  auto r = import(
      "qdisc add dev v0 root handle 1: cake diffserv4 diffserv4 besteffort diffserv3\n"
      "qdisc add dev v1 root handle 1: htb\n"
      "filter add dev v1 parent 1: protocol ip prio 1 u32 match u32 0 0 classid 1:1 classid 1:2\n");
  INFO(r.diags);
  REQUIRE(r.ok);
  CHECK(body(r) == R"(  v0:
    qdiscs:
      - {kind: cake, handle: "1:", diffserv: diffserv3}
  v1:
    qdiscs:
      - {kind: htb, handle: "1:"}
    filters:
      - {parent: "1:", pref: 1, protocol: ip, handle: "::800", u32: {match: [{u32: {value: 0, mask: "0x0"}}]}, classid: "1:2"}
)");
  auto tbf = import("qdisc add dev v0 root handle 1: tbf rate 1mbit buffer 10k latency 50ms burst 20k\n");
  CHECK_FALSE(tbf.ok);
  CHECK(tbf.diags == R"(w.tc:1:72: error: 'burst' is given twice (first at w.tc:1:55); tc refuses that too
  qdisc add dev v0 root handle 1: tbf rate 1mbit buffer 10k latency 50ms burst 20k
                                                                         ^
)");
}

TEST_CASE("tc words: fw handle with a mask, ingress handle ffff:, a qdisc handle without its colon") {
  auto r = import(
      "qdisc add dev v0 root handle 1 htb\n"
      "filter add dev v0 parent 1: protocol ip prio 1 handle 1/0xff fw classid 1:1\n"
      "filter add dev v0 parent 1: protocol ip prio 2 handle 0x10 fw classid 1:2\n"
      "qdisc add dev v0 ingress handle ffff:\n");
  INFO(r.diags);
  REQUIRE(r.ok);
  CHECK(body(r) == R"(  v0:
    qdiscs:
      - {kind: htb, handle: "1:"}
      - {kind: ingress}
    filters:
      - {parent: "1:", pref: 1, protocol: ip, handle: 1, fw: {mask: "0xff"}, classid: "1:1"}
      - {parent: "1:", pref: 2, protocol: ip, handle: "0x10", fw: {}, classid: "1:2"}
)");
}

TEST_CASE("tc words: action KIND index N alone binds the action a filter above made") {
  auto r = import(
      "qdisc add dev v0 clsact\n"
      "filter add dev v0 ingress protocol ip prio 1 u32 match u32 0 0 action gact drop index 5\n"
      "filter add dev v0 ingress protocol ip prio 2 u32 match u32 0 0 action gact index 5\n");
  INFO(r.diags);
  REQUIRE(r.ok);
  CHECK(body(r) == R"(  v0:
    qdiscs:
      - {kind: clsact}
    filters:
      - {parent: ingress, pref: 1, protocol: ip, handle: "::800", u32: {match: [{u32: {value: 0, mask: "0x0"}}]}, actions: [{gact: {control: drop}, index: 5, percpu_stats: true}]}
      - {parent: ingress, pref: 2, protocol: ip, handle: "::800", u32: {match: [{u32: {value: 0, mask: "0x0"}}]}, actions: [{gact: {control: drop}, index: 5, percpu_stats: true}]}
)");
  auto none = import(
      "qdisc add dev v0 clsact\nfilter add dev v0 ingress protocol ip prio 1 u32 match u32 0 0 action gact index 5\n");
  CHECK_FALSE(none.ok);
  CHECK(none.diags.find("'action gact index 5' alone binds an existing action, and no line above makes gact 5") !=
        std::string::npos);
}

TEST_CASE("tc words: a qdisc under tbf's and netem's own class 1:1") {
  auto r = import(
      "qdisc add dev v0 root handle 1: tbf rate 1mbit burst 10k latency 50ms\n"
      "qdisc add dev v0 parent 1:1 handle 10: pfifo limit 50\n"
      "qdisc add dev v1 root handle 1: netem delay 10ms\n"
      "qdisc add dev v1 parent 1:1 handle 10: bfifo\n");
  INFO(r.diags);
  REQUIRE(r.ok);
  CHECK(body(r) == R"(  v0:
    qdiscs:
      - {kind: tbf, handle: "1:", rate: 1mbit, burst: 10k, latency: 50ms}
      - {kind: pfifo, parent: "1:1", handle: "10:", limit: 50}
  v1:
    qdiscs:
      - {kind: netem, handle: "1:", delay: 10ms}
      - {kind: bfifo, parent: "1:1", handle: "10:"}
)");
}

namespace {
// Every name is a device: mirred's targets in the examples.
struct AnyLinks : LinkNames {
  std::optional<uint32_t> index_of(std::string_view) const override { return 7; }
  std::string name_of(uint32_t) const override { return "eth1"; }
};
}  // namespace

// Never silent works only if a kind's decoder asks for every attribute its
// encoder sends (else tcsync's own rules would read back with "unread"
// bytes): each example of each kind, imported, loaded, encoded and decoded
// again, leaves nothing unread.
TEST_CASE("tc words: what a kind sends, its decoder reads: nothing unread in any example") {
  AnyLinks links;
  int objects = 0;
  for (const KindOps* k : all_kinds()) {
    if (!k->tc_words) continue;
    for (auto e : k->tc_words->examples) {
      auto r = import(line_for(*k, e));
      if (!r.ok) continue;
      State s;
      Diagnostics d;
      if (!load_text("w.yaml", r.yaml, s, d)) continue;
      INFO(r.yaml);
      for (const Device& dev : s.devices) {
        for (const Qdisc& q : dev.qdiscs) {
          std::vector<uint8_t> buf;
          MsgWriter w(buf);
          encode_qdisc(w, Op::Add, q, 7, &links, d);
          Qdisc back;
          Decoded info;
          if (!decode_qdisc(buf, &links, back, info)) continue;
          INFO("qdisc " << back.kind << " unread " << attr_types(back.raw.options()) << " / "
                        << attr_types(back.raw.attrs()));
          CHECK(back.raw.empty());
          ++objects;
        }
        for (const Class& c : dev.classes) {
          std::vector<uint8_t> buf;
          MsgWriter w(buf);
          encode_class(w, Op::Add, c, 7, &links, d);
          Class back;
          Decoded info;
          if (!decode_class(buf, &links, back, info)) continue;
          INFO("class " << back.kind << " unread " << attr_types(back.raw.options()));
          CHECK(back.raw.empty());
          ++objects;
        }
        for (const Filter& f : dev.filters) {
          std::vector<uint8_t> buf;
          MsgWriter w(buf);
          encode_filter(w, Op::Add, f, 7, &links, d);
          Filter back;
          Decoded info;
          if (!decode_filter(buf, &links, back, info)) continue;
          INFO("filter " << back.kind << " unread " << attr_types(back.raw.options()));
          CHECK(back.raw.empty());
          for (const Action& a : back.actions) {
            INFO("action " << a.kind << " unread " << attr_types(a.raw.options()) << " / "
                           << attr_types(a.raw.attrs()));
            CHECK(a.raw.empty());
          }
          ++objects;
        }
      }
    }
  }
  CHECK(objects >= 40);
}

TEST_CASE("tc words: an ets class change sets the qdisc's quantum of that band, as the kernel keeps it") {
  auto r = import(
      "qdisc add dev v0 root handle 1: ets bands 4 strict 1 quanta 1500 2500 3500 priomap 0 1 2 3\n"
      "class change dev v0 classid 1:3 ets quantum 5000\n"
      "qdisc add dev v1 root handle 2: ets bands 2 quanta 1000\n"
      "class replace dev v1 parent 2: classid 2:2 ets quantum 1500\n"
      "class change dev v1 classid 2:1 ets\n");
  INFO(r.diags);
  REQUIRE(r.ok);
  CHECK(body(r) == R"(  v0:
    qdiscs:
      - {kind: ets, handle: "1:", bands: 4, strict: 1, quanta: [1500, 5000, 3500], priomap: [0, 1, 2, 3]}
  v1:
    qdiscs:
      - {kind: ets, handle: "2:", bands: 2, quanta: [1000, 1500]}
)");
  // The kernel refuses a strict band's quantum and a band past the last;
  // a quantum after bands that keep the kernel's MTU has no place.
  for (auto [line, msg] : {std::pair{"class change dev v0 classid 1:1 ets quantum 500\n", "band 1 is strict"},
                           std::pair{"class change dev v0 classid 1:5 ets quantum 500\n", "ets has no band 5"},
                           std::pair{"class change dev v0 classid 1:2 ets quantum 0\n", "above 0"}}) {
    auto bad = import(std::string("qdisc add dev v0 root handle 1: ets bands 4 strict 1\n") + line);
    INFO(bad.diags);
    CHECK_FALSE(bad.ok);
    CHECK(bad.diags.find(msg) != std::string::npos);
  }
  auto gap = import("qdisc add dev v0 root handle 1: ets bands 4\nclass change dev v0 classid 1:3 ets quantum 500\n");
  CHECK_FALSE(gap.ok);
  CHECK(gap.diags.find("has no tcsync spelling") != std::string::npos);
}

TEST_CASE("tc words: tc-u32(8)'s hash table examples, rules without a prio in a table another list made") {
  // The kernel gives each line without a prio a new list (49152, 49151...)
  // and lists a rule put in table 1: under the list that made 1:; the line's
  // own list stays, empty.
  auto r = import(
      "qdisc add dev v1 root handle 1: htb\n"
      "filter add dev v1 parent 1:0 protocol ip handle 1: u32 divisor 1\n"
      "filter add dev v1 parent 1:0 protocol ip u32 ht 1: match tcp src 22 FFFF classid 1:2\n"
      "filter add dev v1 parent 1:0 protocol ip prio 7 u32 ht 1: match tcp src 23 FFFF classid 1:3\n");
  INFO(r.diags);
  REQUIRE(r.ok);
  CHECK(body(r) == R"(  v1:
    qdiscs:
      - {kind: htb, handle: "1:"}
    filters:
      - {parent: "1:", pref: 49152, protocol: ip, handle: "1:", root_table: "800:", u32: {divisor: 1}}
      - {parent: "1:", pref: 49151, protocol: ip, empty: u32, handle: "801:"}
      - {parent: "1:", pref: 49152, protocol: ip, handle: "1::800", u32: {ht: "1:", match: [{tcp: {src: 22}}]}, classid: "1:2"}
      - {parent: "1:", pref: 7, protocol: ip, empty: u32, handle: "802:"}
      - {parent: "1:", pref: 49152, protocol: ip, handle: "1::801", u32: {ht: "1:", match: [{tcp: {src: 23}}]}, classid: "1:3"}
)");
}
