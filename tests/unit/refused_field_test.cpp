// A kernel refusal that names an attribute (NLMSGERR_ATTR_OFFS) is turned
// back into the field of the file that made it: attr_path walks the request
// to the attribute, refused_field maps it to the field's place. The kernel
// side (the offset the kernel really sends) is tests/kernel/test_kernel_reject.sh.
#include <linux/pkt_cls.h>
#include <linux/rtnetlink.h>
#include <linux/tc_act/tc_connmark.h>

#include <catch2/catch.hpp>

#include "apply/refused_field.h"
#include "codec/tc_codec.h"
#include "netlink/wire.h"
#include "plan/differ.h"
#include "test_util.h"

using namespace tcsync;
using tcsync::test::load_ok;

namespace {

// The offset of the attribute reached by `path` in a request of `hdr` bytes
// of fixed header: found by walking the bytes, independently of attr_path.
size_t offset_of(std::span<const uint8_t> msg, size_t hdr, std::vector<uint16_t> path) {
  size_t base = NLMSG_HDRLEN + hdr;
  std::span<const uint8_t> run = msg.subspan(base);
  for (size_t depth = 0; depth < path.size(); ++depth) {
    AttrIter it(run);
    Attr a;
    bool found = false;
    while (it.next(a)) {
      if (a.type != path[depth]) continue;
      size_t start = base + static_cast<size_t>(a.data.data() - run.data()) - 4;
      if (depth + 1 == path.size()) return start;
      base = start + 4;
      run = a.data;
      found = true;
      break;
    }
    if (!found) return 0;
  }
  return 0;
}

// One rule on v0's ingress; the filter's kind and actions follow.
const std::string kIngressRule =
    "version: 1\n"
    "devices:\n"
    "  v0:\n"
    "    qdiscs: [{kind: clsact}]\n"
    "    filters:\n"
    "      - parent: ingress\n"
    "        pref: 1\n"
    "        protocol: ip\n";
const std::string kFile = kIngressRule +
                          "        flower:\n"
                          "          ip_proto: tcp\n"
                          "          ct_state: +trk+est\n"
                          "        actions:\n"
                          "          - gact: {control: drop}\n";

// The request that adds the file's first filter, and its step.
std::vector<uint8_t> add_request(const Filter& f, Step& st) {
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  Diagnostics d;
  test::FakeLinks links;
  encode_filter(w, Op::Add, f, 2, &links, d);
  REQUIRE(d.error_count() == 0);
  st.op = Op::Add;
  st.filter = &f;
  return buf;
}

}  // namespace

TEST_CASE("refused field: the attribute the kernel names points at its field") {
  State s = load_ok(kFile);
  const Filter& f = s.devices[0].filters[0];
  Step st;
  std::vector<uint8_t> buf = add_request(f, st);

  size_t off = offset_of(buf, sizeof(tcmsg), {TCA_OPTIONS, TCA_FLOWER_KEY_CT_STATE});
  REQUIRE(off != 0);
  CHECK(attr_path(std::span<const uint8_t>(buf).subspan(NLMSG_HDRLEN + sizeof(tcmsg)),
                  off - NLMSG_HDRLEN - sizeof(tcmsg)) == std::vector<uint16_t>{TCA_OPTIONS, TCA_FLOWER_KEY_CT_STATE});
  auto r = refused_field(st, buf, static_cast<uint32_t>(off));
  CHECK(r.key == "ct_state");
  CHECK(r.loc.line == 11);
  CHECK(r.loc.col == 21);  // the value, where the loader reads the field

  // An attribute no single field carries (the mask): no field, the object's place.
  off = offset_of(buf, sizeof(tcmsg), {TCA_OPTIONS, TCA_FLOWER_KEY_CT_STATE_MASK});
  REQUIRE(off != 0);
  CHECK(refused_field(st, buf, static_cast<uint32_t>(off)).key.empty());

  // Inside the first action's options: gact's parameters (a struct of several fields).
  off = offset_of(buf, sizeof(tcmsg), {TCA_OPTIONS, TCA_FLOWER_ACT, 1, TCA_ACT_OPTIONS});
  REQUIRE(off != 0);
  CHECK(attr_path(std::span<const uint8_t>(buf).subspan(NLMSG_HDRLEN + sizeof(tcmsg)),
                  off - NLMSG_HDRLEN - sizeof(tcmsg)) ==
        std::vector<uint16_t>{TCA_OPTIONS, TCA_FLOWER_ACT, 1, TCA_ACT_OPTIONS});

  // An offset in the middle of an attribute names nothing; nor does a delete.
  CHECK(refused_field(st, buf, static_cast<uint32_t>(off + 1)).key.empty());
  st.op = Op::Delete;
  CHECK(refused_field(st, buf,
                      static_cast<uint32_t>(offset_of(buf, sizeof(tcmsg), {TCA_OPTIONS, TCA_FLOWER_KEY_CT_STATE})))
            .key.empty());
}

TEST_CASE("refused field: a struct shared by several fields names none of them") {
  // connmark's zone and verdict are both members of TCA_CONNMARK_PARMS: a
  // refusal of that attribute is the action's, not the zone's.
  State s = load_ok(kIngressRule +
                    "        matchall: {}\n"
                    "        actions:\n"
                    "          - connmark: {zone: 3, control: drop}\n");
  Step st;
  std::vector<uint8_t> buf = add_request(s.devices[0].filters[0], st);
  size_t off = offset_of(buf, sizeof(tcmsg), {TCA_OPTIONS, TCA_MATCHALL_ACT, 1, TCA_ACT_OPTIONS, TCA_CONNMARK_PARMS});
  REQUIRE(off != 0);
  CHECK(refused_field(st, buf, static_cast<uint32_t>(off)).key.empty());
}

TEST_CASE("refused field: a flags attribute points at the flag the file sets") {
  // matchall's skip_sw is a bit of TCA_MATCHALL_FLAGS (Field::bit): a
  // refusal of that attribute (no offload on the device) is the flag's.
  State s = load_ok(kIngressRule +
                    "        matchall:\n"
                    "          skip_sw: true\n");
  Step st;
  std::vector<uint8_t> buf = add_request(s.devices[0].filters[0], st);
  size_t off = offset_of(buf, sizeof(tcmsg), {TCA_OPTIONS, TCA_MATCHALL_FLAGS});
  REQUIRE(off != 0);
  auto r = refused_field(st, buf, static_cast<uint32_t>(off));
  CHECK(r.key == "skip_sw");
  CHECK(r.loc.line == 10);
}
