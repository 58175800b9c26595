// mqprio: maps packet priorities to traffic classes, and traffic classes to
// ranges of transmit queues. Its classes MAJOR:1..MAJOR:N are the queues
// (child qdiscs hang off them), MAJOR:ffe0.. the traffic classes.
#include <linux/pkt_sched.h>

#include <algorithm>
#include <cerrno>
#include <string>

#include "base/units.h"
#include "kinds/qdisc/traffic_classes.h"
#include "kinds/registry.h"
#include "model/field_rows.h"
#include "model/kind.h"
#include "yaml/yaml_out.h"
#include "yaml/yaml_reader.h"

namespace tcsync {
namespace {

enum { kNumTc, kMap, kQueues, kHw };

constexpr size_t kMapLen = TC_QOPT_BITMASK + 1;  // 16 priorities
// tc's map when none is given (with its default num_tc 8).
constexpr uint8_t kDefaultMap[kMapLen] = {0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 1, 1, 3, 3, 3, 3};
Words default_map() {
  return Words(kDefaultMap, kDefaultMap + kMapLen);
}

constexpr Field kFields[] = {
    {.key = "num_tc",
     .type = FieldType::Uint,
     .doc = "Number of traffic classes, 1 to 16.",
     .def = 8,
     .max = TC_QOPT_MAX_QUEUE},
    {.key = "map",
     .type = FieldType::Custom,
     .doc = "Traffic class of each packet priority 0..15 (default as tc: 0 1 2 3 4 5 6 7 0 1 1 1 3 3 3 3).",
     .custom = &kTcMapType},
    {.key = "queues",
     .type = FieldType::Custom,
     .flags = kAuto,
     .doc = "Queue range of each traffic class, COUNT@OFFSET (with hw 1 the driver may choose).",
     .custom = &kQueueRangesType},
    {.key = "hw",
     .type = FieldType::Uint,
     .doc = "1: the device offloads the mapping (as tc, the default); 0: software only (veth and other devices without "
            "offload).",
     .def = 1,
     .max = 0xFF},
};
static_assert(rows_named(kFields, {{kNumTc, "num_tc"}, {kMap, "map"}, {kQueues, "queues"}, {kHw, "hw"}}));

void encode(const Options& o, const KindCtx&, MsgWriter& w) {
  tc_mqprio_qopt q{};
  q.num_tc = static_cast<uint8_t>(o.num(kNumTc).value_or(8));
  Words map = o.words(kMap) ? *o.words(kMap) : default_map();
  for (size_t i = 0; i < kMapLen && i < map.size(); ++i) q.prio_tc_map[i] = static_cast<uint8_t>(map[i]);
  q.hw = static_cast<uint8_t>(o.num(kHw).value_or(1));
  if (auto* qs = o.words(kQueues))
    for (size_t i = 0; i * 2 + 1 < qs->size() && i < TC_QOPT_MAX_QUEUE; ++i) {
      q.count[i] = static_cast<uint16_t>((*qs)[2 * i]);
      q.offset[i] = static_cast<uint16_t>((*qs)[2 * i + 1]);
    }
  w.put_struct(q);  // 82 bytes, padded to 84: tc's attribute length counts the padding too
}

void decode(std::span<const uint8_t> p, const KindCtx&, Options& o) {
  if (p.size() < sizeof(tc_mqprio_qopt)) return;
  auto q = Attr{0, p}.as<tc_mqprio_qopt>();
  o.set(kNumTc, uint64_t{q.num_tc});
  Words map(q.prio_tc_map, q.prio_tc_map + kMapLen);
  if (map != default_map()) o.set(kMap, std::move(map));
  Words qs;
  for (size_t i = 0; i < q.num_tc && i < TC_QOPT_MAX_QUEUE; ++i) {
    qs.push_back(q.count[i]);
    qs.push_back(q.offset[i]);
  }
  if (!qs.empty()) o.set(kQueues, std::move(qs));
  o.set(kHw, uint64_t{q.hw});
}

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc loc) {
  uint64_t num_tc = o.num(kNumTc).value_or(8);
  if (num_tc == 0) d.error(o.opt(kNumTc)->loc, "num_tc must be 1 to 16");
  Words map = o.words(kMap) ? *o.words(kMap) : default_map();
  for (size_t i = 0; i < map.size(); ++i)
    if (map[i] >= num_tc) {
      SourceLoc at = o.opt(kMap) ? o.opt(kMap)->loc : o.opt(kNumTc) ? o.opt(kNumTc)->loc : loc;
      d.error(at, "map entry " + std::to_string(i) + " is traffic class " + std::to_string(map[i]) +
                      ", but num_tc is " + std::to_string(num_tc));
      break;
    }
  if (auto* qs = o.opt(kQueues); qs && std::get<Words>(qs->value).size() != 2 * num_tc)
    d.error(qs->loc, "'queues' needs one range per traffic class: " + std::to_string(num_tc) + " (num_tc), not " +
                         std::to_string(std::get<Words>(qs->value).size() / 2));
  if (!o.has(kQueues) && o.num(kHw).value_or(1) == 0)
    d.error(loc, "mqprio with hw 0 needs 'queues' (the kernel refuses empty ranges: EINVAL)");
  if (o.words(kMap) && *o.words(kMap) == default_map()) o.erase(kMap);
}

// Queue classes 1..N (N: the last queue the ranges name; any when the driver
// chooses). The traffic-class classes (ffe0 and up) take no child qdisc:
// "No device queue given."
bool implicit_class(const Options& o, uint32_t minor) {
  uint32_t last = 0xFFDF;
  if (auto* qs = o.words(kQueues)) {
    last = 0;
    for (size_t i = 0; i + 1 < qs->size(); i += 2) last = std::max(last, (*qs)[i] + (*qs)[i + 1]);
  }
  return minor >= 1 && minor <= last;
}

// ---- tc's words (import) -----------------------------------------------------
// The channel mode's shaper and rates and the frame preemption classes
// (TCA_MQPRIO_* after the struct) are not in the model yet: refused by name
// rather than read as something else.
bool tc_unsaid(TcCursor& c, const TcWord& kw, Node&) {
  c.diags().error(kw.loc, "mqprio's '" + kw.text +
                              "' has no tcsync spelling yet (its attributes after tc_mqprio_qopt are not in the "
                              "model): give num_tc, map, queues and hw");
  return false;
}
const TcReader kTcReaders[] = {{"map", tc_read_map},  {"queues", tc_read_queues}, {"mode", tc_unsaid},
                               {"shaper", tc_unsaid}, {"min_rate", tc_unsaid},    {"max_rate", tc_unsaid},
                               {"fp", tc_unsaid}};
const std::string_view kTcExamples[] = {"num_tc 3 map 2 2 1 0 2 2 2 2 2 2 2 2 2 2 2 2 queues 1@0 1@1 2@2 hw 0",
                                        "num_tc 2 map 0 1 queues 1@0 1@1",
                                        "hw 1 mode channel",
                                        "hw 1 shaper dcb",
                                        "min_rate 1mbit",
                                        "max_rate 1mbit",
                                        "fp E P"};
const TcWords kTcWords{.readers = kTcReaders, .examples = kTcExamples};

}  // namespace

// mqprio_init with hw 1 asks the driver (ndo_setup_tc); a device without
// one (veth, dummy: checked in the lab, 6.1) gets a bare EINVAL.
static std::string reject_hint(const Options& o, int error) {
  if (error != EINVAL || o.num(kHw).value_or(1) == 0) return {};
  return "mqprio with hw 1 (the default, as in tc) needs a device that offloads mqprio; on veth, dummy and other "
         "software devices use hw: 0";
}

constexpr QdiscOps kQdiscMqprioOps{
    .can_change = false,  // 6.1: "Change operation not supported by specified qdisc."
    .multiqueue_root = true,
    .implicit_class = implicit_class,
    .reject_hint = reject_hint,
};

const KindOps kQdiscMqprio{
    .name = "mqprio",
    .obj = ObjType::Qdisc,
    .doc =
        "Priorities to traffic classes to transmit queue ranges (root only); its queue classes MAJOR:1..MAJOR:N take "
        "child qdiscs (declare none).",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .normalize = normalize,
    .options_raw = true,
    .tc_words = &kTcWords,
    .qdisc = &kQdiscMqprioOps,
};

}  // namespace tcsync
