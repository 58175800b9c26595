// sfq: stochastic fairness queueing (tc-sfq(8)), without its RED mode.
#include <linux/pkt_sched.h>

#include "kinds/registry.h"
#include "model/kind.h"

namespace tcsync {
namespace {

enum { kQuantum, kPerturb, kLimit, kDivisor, kFlows, kDepth, kHeaddrop };
constexpr uint32_t kDefaultLimit = 127;  // SFQ_MAX_DEPTH

// sch_sfq has no ->change ("Change operation not supported by specified
// qdisc"): every option is set at creation, so can_change is false below.
const Field kFields[] = {
    {.key = "quantum", .type = FieldType::Size, .flags = kAuto, .doc = "Bytes a flow may send per round (default: the device's MTU plus header).", .max = 0xFFFFFFFF},
    {.key = "perturb", .type = FieldType::Uint, .doc = "Seconds between changes of the hash function; 0: never.", .def = 0, .max = 0xFFFFFFFF},
    {.key = "limit", .type = FieldType::Uint, .flags = kAuto, .doc = "Most packets the queue holds (default 127; at most depth times flows).", .max = 0xFFFFFFFF},
    {.key = "divisor", .type = FieldType::Uint, .doc = "Size of the hash table, a power of two.", .def = 1024, .max = 65536},
    {.key = "flows", .type = FieldType::Uint, .flags = kAuto, .doc = "Most active flows (default 128; at most divisor and limit).", .max = 65408},
    {.key = "depth", .type = FieldType::Uint, .flags = kAuto, .doc = "Most packets per flow (default 127).", .max = 127},
    {.key = "headdrop", .type = FieldType::Bool, .doc = "Drop from the head of a full flow instead of the tail.", .def = 0},
};

// TCA_OPTIONS is a bare struct tc_sfq_qopt_v1; zero means "the default",
// which is how tc fills what the command line leaves out. No options at
// all: no TCA_OPTIONS.
void encode(const Options& o, const KindCtx&, MsgWriter& w) {
  if (o.empty()) return;
  auto v = [&](int f) { return static_cast<uint32_t>(o.num(f).value_or(0)); };
  tc_sfq_qopt_v1 q{};
  q.v0.quantum = v(kQuantum);
  q.v0.perturb_period = v(kPerturb);
  // A sent limit also caps flows (sfq_change: "q->maxflows = min(q->maxflows,
  // q->limit)"), which the default limit of 127 does not: the default state
  // (limit 127, flows 128) is reached only by leaving limit 127 out.
  q.v0.limit = v(kLimit) == kDefaultLimit ? 0 : v(kLimit);
  q.v0.divisor = v(kDivisor);
  q.v0.flows = v(kFlows);
  q.depth = v(kDepth);
  q.headdrop = v(kHeaddrop);
  w.put_struct(q);
}

void decode(std::span<const uint8_t> p, const KindCtx&, Options& o) {
  if (p.size() < sizeof(tc_sfq_qopt)) return;
  auto q = Attr{0, p}.as<tc_sfq_qopt_v1>();
  o.set(kQuantum, uint64_t{q.v0.quantum});
  if (q.v0.perturb_period) o.set(kPerturb, uint64_t{static_cast<uint32_t>(q.v0.perturb_period)});
  o.set(kLimit, uint64_t{q.v0.limit});
  o.set(kDivisor, uint64_t{q.v0.divisor});
  o.set(kFlows, uint64_t{q.v0.flows});
  if (p.size() >= sizeof q) {
    o.set(kDepth, uint64_t{q.depth});
    if (q.headdrop) o.set(kHeaddrop, uint64_t{1});
  }
}

void normalize(Options& o, const KindCtx&, Diagnostics& d, SourceLoc) {
  if (auto* opt = o.opt(kDivisor)) {
    uint64_t n = std::get<uint64_t>(opt->value);
    if (n == 0 || (n & (n - 1))) d.error(opt->loc, "divisor must be a power of two up to 65536");
  }
}

}  // namespace

const KindOps kQdiscSfq{
    .name = "sfq",
    .obj = ObjType::Qdisc,
    .doc = "Stochastic fairness queueing: round robin over hashed flows.",
    .fields = kFields,
    .encode = encode,
    .decode = decode,
    .normalize = normalize,
    .can_change = false,
    .options_raw = true,
};

}  // namespace tcsync
