// Shared filter blocks (blocks:, ingress_block/egress_block): loading,
// plan order, and the bytes tc (iproute2 6.1) sends for the same words.
#include <linux/rtnetlink.h>

#include <catch2/catch.hpp>

#include "apply/applier.h"
#include "codec/tc_codec.h"
#include "plan/differ.h"
#include "plan/plan_print.h"
#include "test_util.h"

using namespace tcsync;
using tcsync::test::hex;
using tcsync::test::load_errors;
using tcsync::test::load_ok;

namespace {

const char* kShared = R"(version: 1
devices:
  v0:
    qdiscs:
      - {kind: clsact, ingress_block: 22, egress_block: 23}
  v1:
    qdiscs:
      - {kind: ingress, ingress_block: 22}
blocks:
  22:
    filters:
      - {pref: 10, protocol: ip, u32: {match: [{ip: {dst: 10.0.0.1/32}}]}, actions: [{mirred: {action: redirect, dev: v1}}]}
      - {pref: 20, chain: 3, protocol: ip, u32: {match: [{ip: {src: 10.0.0.0/8}}]}}
  23:
    filters:
      - {pref: 5, protocol: all, u32: {match: [{u32: {value: 0, mask: 0, at: 0}}]}}
)";

std::string edit(std::string s, const std::string& from, const std::string& to) {
  auto at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

// The plan from `have` to `want`, one line a step; `binders` is what the
// dump would report: the devices whose qdiscs bind each live block.
std::string plan_of(const std::string& want, const std::string& have,
                    std::map<uint32_t, std::vector<std::string>> binders = {}) {
  static std::vector<State> keep;  // steps point into the states
  keep.push_back(load_ok(want));
  keep.push_back(load_ok(have));
  keep.back().block_binders = std::move(binders);
  Plan p = make_plan(keep[keep.size() - 2], keep.back());
  for (auto& s : p.steps) s.loc = {};
  return plan_text(p, PrintOptions{});
}

const char* kEmpty = "version: 1\ndevices:\n  v0: {}\n  v1: {}\n";

}  // namespace

TEST_CASE("blocks: filters sit in the block, parent is the block index") {
  State s = load_ok(kShared);
  REQUIRE(s.blocks.size() == 2);
  CHECK(s.blocks[0].name == "block 22");
  REQUIRE(s.blocks[0].filters.size() == 2);
  CHECK(s.blocks[0].filters[0].key.parent == 22);
  CHECK(s.blocks[0].filters[1].key.chain == 3);
  CHECK(bound_blocks(s.devices[0].qdiscs[0]) == std::pair<uint32_t, uint32_t>{22, 23});
  CHECK(bound_blocks(s.devices[1].qdiscs[0]) == std::pair<uint32_t, uint32_t>{22, 0});
}

TEST_CASE("blocks: bad input is located") {
  CHECK(load_errors(edit(kShared, "{pref: 5,", "{parent: ingress, pref: 5,"))
            .find("t.yaml:16:10: error: a filter of block 23 has no 'parent': the block is its place (leave 'parent' "
                  "out)\n") == 0);
  // A block nobody binds: the kernel would refuse its filters.
  CHECK(load_errors(edit(kShared, "egress_block: 23", "egress_block: 24"))
            .find("t.yaml:14:3: error: block 23 is bound by no declared qdisc") == 0);
  // Filters of a side bound to a block belong to the block.
  CHECK(load_errors(edit(kShared, "      - {kind: ingress, ingress_block: 22}\n",
                         "      - {kind: ingress, ingress_block: 22}\n    filters:\n      - {parent: ingress, pref: 1, "
                         "u32: {match: [{u32: {value: 0, mask: 0, at: 0}}]}}\n"))
            .find("t.yaml:10:9: error: the ingress filters of v1 are those of shared block 22 (ingress at t.yaml:8:9): "
                  "declare this filter under 'blocks: 22:'") == 0);
  CHECK(load_errors(edit(kShared, "  23:\n", "  x23:\n")).find("block index must be a number") != std::string::npos);
  CHECK(load_errors(edit(kShared, "ingress_block: 22}", "ingress_block: 0}")).find("block index 0 means") !=
        std::string::npos);
  CHECK(load_errors(edit(kShared, "  23:\n    filters:", "  23:\n    filterz:")).find("(did you mean 'filters'?)") !=
        std::string::npos);
}

TEST_CASE("blocks: from nothing, the binding qdiscs come before the block's filters") {
  CHECK(plan_of(kShared, kEmpty) ==
        "+ v0: qdisc clsact ffff: ingress\n"
        "+ v1: qdisc ingress ffff: ingress\n"
        "+ block 22: filter u32 pref 10 protocol ip handle ::1\n"
        "+ block 22: filter u32 chain 3 pref 20 protocol ip handle ::1\n"
        "+ block 23: filter u32 pref 5 protocol all handle ::1\n");
}

TEST_CASE("blocks: a changed block filter is one step on the block, nothing else") {
  std::string want = edit(kShared, "dst: 10.0.0.1/32", "dst: 10.0.0.2/32");
  std::string plan = plan_of(want, kShared, {{22, {"v0", "v1"}}, {23, {"v0"}}});
  CHECK(plan.find("block 22: filter u32 pref 10 protocol ip handle ::1") != std::string::npos);
  CHECK(plan.find("qdisc") == std::string::npos);
  CHECK(plan.find("block 23") == std::string::npos);
  // A rule the file drops from a block is deleted there.
  CHECK(plan_of(
            edit(kShared, "      - {pref: 20, chain: 3, protocol: ip, u32: {match: [{ip: {src: 10.0.0.0/8}}]}}\n", ""),
            kShared, {{22, {"v0", "v1"}}, {23, {"v0"}}}) ==
        "- block 22: filters u32 chain 3 pref 20 protocol ip (all 1)  (not in the file)\n");
}

TEST_CASE("blocks: a new block index re-creates the qdisc, and a block that loses its last qdisc is filled again") {
  // v0's egress moves from block 23 to 24: the kernel cannot change a
  // binding in place, so clsact is deleted and added; block 23 loses its
  // only qdisc (the kernel destroys it with its filters), block 24 is new.
  std::string want = edit(edit(kShared, "egress_block: 23", "egress_block: 24"), "  23:\n", "  24:\n");
  CHECK(plan_of(want, kShared, {{22, {"v0", "v1"}}, {23, {"v0"}}}) ==
        "- v0: qdisc clsact ffff: ingress  (egress_block 23 -> 24)\n"
        "+ v0: qdisc clsact ffff: ingress  (egress_block 23 -> 24)\n"
        "+ block 24: filter u32 pref 5 protocol all handle ::1\n");
  // Block 22 is bound by v0 and v1: re-creating v0's clsact keeps it, but
  // when v1 goes too (ingress -> clsact), it dies and its filters come back.
  std::string both = edit(edit(kShared, "egress_block: 23", "egress_block: 24"), "  23:\n", "  24:\n");
  both = edit(both, "{kind: ingress, ingress_block: 22}", "{kind: clsact, ingress_block: 22}");
  std::string plan = plan_of(both, kShared, {{22, {"v0", "v1"}}, {23, {"v0"}}});
  CHECK(plan.find("+ block 22: filter u32 pref 10 protocol ip handle ::1") != std::string::npos);
  CHECK(plan.find("- block 22") == std::string::npos);
  CHECK(plan.find("+ v1: qdisc clsact") < plan.find("+ block 22"));
}

TEST_CASE("blocks: qdisc and filter bytes are tc's") {
  State s = load_ok(kShared);
  struct Links : LinkNames {
    std::optional<uint32_t> index_of(std::string_view n) const override {
      if (n == "v0") return 3;
      if (n == "v1") return 4;
      return std::nullopt;
    }
    std::string name_of(uint32_t i) const override { return i == 3 ? "v0" : "v1"; }
  } links;
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  Diagnostics d;
  // tc qdisc add dev v0 ingress_block 22 egress_block 23 clsact
  encode_qdisc(w, Op::Add, s.devices[0].qdiscs[0], 3, &links, d);
  CHECK(hex(std::span(buf).subspan(16)) ==
        "00000000030000000000fffff1ffffff00000000"
        "0b000100636c736163740000"
        "08000d0016000000"
        "08000e0017000000");
  // tc filter add block 22 protocol ip pref 10 u32 ...: tcm_ifindex
  // TCM_IFINDEX_MAGIC_BLOCK, tcm_parent (tcm_block_index) 22.
  Plan p = make_plan(s, State{});
  const Step* st = nullptr;
  for (auto& x : p.steps)
    if (x.block == 22 && !st) st = &x;
  REQUIRE(st);
  Plan one;
  one.steps.push_back(*st);
  MessageBatch batch;
  REQUIRE(encode_plan(one, links, batch, d));
  // (tc sent handle 0; tcsync always names the handle: ::1 here.)
  CHECK(hex(std::span(batch.buf).subspan(16, 20)) ==
        "00000000ffffffff"
        "01000000"
        "16000000"
        "08000a00");
  // Decoding gives the binding back, and no options bytes are sent or kept.
  Qdisc q;
  Decoded info;
  REQUIRE(decode_qdisc(std::span(buf).first(reinterpret_cast<nlmsghdr*>(buf.data())->nlmsg_len), &links, q, info));
  CHECK(bound_blocks(q) == std::pair<uint32_t, uint32_t>{22, 23});
}
