#include "applier.h"

#include <map>

#include <cstring>

#include <linux/rtnetlink.h>

#include "reject_hint.h"
#include "tc_codec.h"

namespace tcsync {

bool encode_plan(const Plan& plan, const LinkNames& links, MessageBatch& batch, Diagnostics& d, const BpfPrograms* programs) {
  MsgWriter w(batch.buf);
  size_t errors = d.error_count();
  for (auto& st : plan.steps) {
    // A shared block's filters: tcm_ifindex says "block", and tcm_parent
    // (the filters' key.parent) holds the block index.
    uint32_t ifindex = st.block ? TCM_IFINDEX_MAGIC_BLOCK : links.index_of(st.device).value_or(0);
    if (!ifindex) d.error(st.loc, "device '" + st.device + "' does not exist");
    size_t off;
    if (st.chain) off = encode_chain(w, st.op, *st.chain, ifindex, &links, d);
    else if (st.qdisc) off = encode_qdisc(w, st.op, *st.qdisc, ifindex, &links, d);
    else if (st.cls) off = encode_class(w, st.op, *st.cls, ifindex, &links, d);
    else if (st.filter_group) off = encode_filter_group_delete(w, st.filter->key, st.filter->kind, ifindex);
    else off = encode_filter(w, st.op, *st.filter, ifindex, &links, d, st.live_filter, programs);
    batch.offsets.push_back(off);
  }
  return d.error_count() == errors;
}

namespace {

std::vector<std::string> device_names(const State& s) {
  std::vector<std::string> out;
  for (auto& dev : s.devices) out.push_back(dev.name);
  return out;
}

// Sends the batch chunk by chunk; stops after a chunk with a failure (unless
// continuing) or when interrupted. Results for unsent messages stay NotSent.
std::vector<AckResult> send_chunked(Kernel& k, MessageBatch& batch, const ApplyOptions& o, bool stop_on_error,
                                    int* interrupted) {
  std::vector<AckResult> results(batch.size());
  for (size_t first = 0; first < batch.size(); first += o.chunk) {
    if (o.interrupt && o.interrupt->load()) {
      *interrupted = o.interrupt->load();
      break;
    }
    size_t last = std::min(batch.size(), first + o.chunk);
    MessageBatch part;
    size_t from = batch.offsets[first];
    size_t to = last < batch.size() ? batch.offsets[last] : batch.buf.size();
    part.buf.assign(batch.buf.begin() + static_cast<long>(from), batch.buf.begin() + static_cast<long>(to));
    for (size_t i = first; i < last; ++i) part.offsets.push_back(batch.offsets[i] - from);
    auto got = k.send(part, SendOptions{stop_on_error});
    if (o.progress) o.progress(last, batch.size());
    bool failed = false;
    for (size_t i = 0; i < got.size(); ++i) {
      results[first + i] = got[i];
      if (got[i].status == AckResult::Status::Failed || got[i].status == AckResult::Status::Unacked) failed = true;
    }
    if (failed && stop_on_error) break;
  }
  return results;
}

std::string kernel_error_text(const AckResult& r) {
  if (r.status == AckResult::Status::Unacked) return "no answer from the kernel" + (r.ext_msg.empty() ? "" : " (" + r.ext_msg + ")");
  return (r.ext_msg.empty() ? std::string() : r.ext_msg + " ") + "(" + std::strerror(r.error) + ")";
}

}  // namespace

// The state to roll back to, without the indexes the kernel gave actions
// that only one filter uses. Those numbers are the kernel's bookkeeping: the
// apply being undone freed some of them and handed them to its new actions,
// so sending the old number would bind a restored rule to another rule's
// new action (seen in the lab: a rollback that "restored" nothing). An
// index several filters share is kept: it is the sharing itself.
static State without_private_indexes(const State& s) {
  std::map<std::pair<std::string, uint32_t>, int> uses;
  for (auto* list : {&s.devices, &s.blocks})
    for (auto& dev : *list)
      for (auto& f : dev.filters)
        for (auto& a : f.actions)
          if (a.index) ++uses[{a.kind, *a.index}];
  State out = s;
  for (auto* list : {&out.devices, &out.blocks})
    for (auto& dev : *list)
      for (auto& f : dev.filters)
        for (auto& a : f.actions)
          if (a.index && uses[{a.kind, *a.index}] == 1) a.index.reset();
  return out;
}

ApplyReport apply_plan(Kernel& k, const State& desired, const State& before, const Plan& plan,
                       const ApplyOptions& o, Diagnostics& d) {
  ApplyReport rep;
  MessageBatch batch;
  if (!encode_plan(plan, k.links(), batch, d, k.programs())) {
    rep.results.resize(plan.steps.size());
    rep.unsent = plan.steps.size();
    return rep;
  }
  rep.results = send_chunked(k, batch, o, o.on_error != OnError::Continue, &rep.interrupted_by);
  for (size_t i = 0; i < rep.results.size(); ++i) {
    auto& r = rep.results[i];
    auto& st = plan.steps[i];
    switch (r.status) {
      case AckResult::Status::Ok: ++rep.ok; break;
      case AckResult::Status::NotSent: ++rep.unsent; break;
      default:
        ++rep.failed;
        d.error(st.loc, "kernel rejected " + std::string(op_name(st.op)) + " of " + st.device + " " + st.what() + ": " +
                            kernel_error_text(r));
        if (st.op != Op::Delete && st.qdisc && r.status == AckResult::Status::Failed)
          if (auto hint = qdisc_reject_hint(*st.qdisc, r.error); !hint.empty()) d.note(st.loc, hint);
    }
  }

  if (rep.succeeded()) {
    if (!o.verify) return rep;
    // Verify: someone else may have changed tc meanwhile (filter dumps
    // never say they were interrupted), and the kernel may have taken a
    // request yet store something else than asked.
    Diagnostics dd;
    if (!k.dump(device_names(desired), rep.after, dd)) {
      for (auto& x : dd.all()) d.add(x.severity, x.loc, "verify: " + x.message);
      return rep;
    }
    rep.remaining = make_plan(desired, rep.after);
    rep.verified = rep.remaining.empty();
    return rep;
  }
  if (o.on_error != OnError::Rollback) return rep;

  // Roll back: plan from what the kernel holds now to what it held before.
  rep.rolled_back = true;
  rep.rollback_to = without_private_indexes(before);
  const State& target = rep.rollback_to;
  State& now = rep.rollback_from;
  Diagnostics dd;
  if (!k.dump(device_names(before), now, dd)) {
    for (auto& x : dd.all()) d.add(x.severity, x.loc, "rollback: " + x.message);
    return rep;
  }
  rep.rollback_plan = make_plan(target, now);
  MessageBatch back;
  Diagnostics de;
  if (!encode_plan(rep.rollback_plan, k.links(), back, de, k.programs())) {
    for (auto& x : de.all()) d.add(x.severity, x.loc, "rollback: " + x.message);
    return rep;
  }
  // Undo as much as possible: a failing undo step does not stop the others.
  ApplyOptions ro = o;
  ro.interrupt = nullptr;
  int ignored = 0;
  rep.rollback_results = send_chunked(k, back, ro, false, &ignored);
  for (size_t i = 0; i < rep.rollback_results.size(); ++i) {
    auto& r = rep.rollback_results[i];
    if (r.status != AckResult::Status::Ok)
      d.error({}, "rollback: kernel rejected " + std::string(op_name(rep.rollback_plan.steps[i].op)) + " of " +
                      rep.rollback_plan.steps[i].device + " " + rep.rollback_plan.steps[i].what() + ": " +
                      kernel_error_text(r));
  }
  rep.after = State{};
  if (!k.dump(device_names(before), rep.after, dd)) return rep;
  rep.remaining = make_plan(target, rep.after);
  rep.rollback_ok = rep.remaining.empty();
  return rep;
}

}  // namespace tcsync
