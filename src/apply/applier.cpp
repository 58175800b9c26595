#include "apply/applier.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <thread>

#include <linux/rtnetlink.h>

#include "apply/refused_field.h"
#include "plan/action_table.h"
#include "codec/tc_codec.h"

namespace tcsync {

bool encode_plan(const Plan& plan, const LinkNames& links, MessageBatch& batch, Diagnostics& d, const BpfPrograms* programs) {
  MsgWriter w(batch.buf);
  size_t errors = d.error_count();
  for (auto& st : plan.steps) {
    if (st.action) {  // the action table belongs to no device
      batch.offsets.push_back(encode_action(w, st.op, *st.action, &links, d));
      continue;
    }
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

// A rule's actions are unbound after an RCU grace period, not when the
// kernel acknowledges the rule's delete (u32, flower... free them through
// tcf_queue_work): deleting an action the plan has just unbound may be
// refused with EPERM for some milliseconds. Action deletes come last in a
// plan, so from the first one refused that way, the rest are sent again
// after a pause, until they pass or the pauses add up to about 2 s.
void retry_unbinding(Kernel& k, const Plan& plan, MessageBatch& batch, std::vector<AckResult>& results,
                     const ApplyOptions& o, bool stop_on_error) {
  for (int attempt = 1; attempt <= 20; ++attempt) {
    size_t first = 0;
    while (first < results.size() && results[first].status == AckResult::Status::Ok) ++first;
    if (first == results.size()) return;
    const Step& st = plan.steps[first];
    if (!(st.action && st.op == Op::Delete && results[first].status == AckResult::Status::Failed &&
          results[first].error == EPERM))
      return;
    if (o.interrupt && o.interrupt->load()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10 * attempt));
    MessageBatch rest;
    std::vector<size_t> which;
    for (size_t i = first; i < batch.size(); ++i) {
      if (results[i].status == AckResult::Status::Ok) continue;
      size_t from = batch.offsets[i], to = i + 1 < batch.size() ? batch.offsets[i + 1] : batch.buf.size();
      rest.offsets.push_back(rest.buf.size());
      rest.buf.insert(rest.buf.end(), batch.buf.begin() + static_cast<long>(from), batch.buf.begin() + static_cast<long>(to));
      which.push_back(i);
    }
    auto got = k.send(rest, SendOptions{stop_on_error});
    for (size_t j = 0; j < got.size() && j < which.size(); ++j) results[which[j]] = got[j];
  }
}

std::span<const uint8_t> message(const MessageBatch& b, size_t i) {
  size_t from = b.offsets[i], to = i + 1 < b.size() ? b.offsets[i + 1] : b.buf.size();
  return std::span<const uint8_t>(b.buf).subspan(from, to - from);
}

std::string kernel_error_text(const AckResult& r) {
  if (r.status == AckResult::Status::Unacked) return "no answer from the kernel" + (r.ext_msg.empty() ? "" : " (" + r.ext_msg + ")");
  return (r.ext_msg.empty() ? std::string() : r.ext_msg + " ") + "(" + std::strerror(r.error) + ")";
}

}  // namespace

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
  if (!rep.interrupted_by) retry_unbinding(k, plan, batch, rep.results, o, o.on_error != OnError::Continue);
  for (size_t i = 0; i < rep.results.size(); ++i) {
    auto& r = rep.results[i];
    auto& st = plan.steps[i];
    switch (r.status) {
      case AckResult::Status::Ok: ++rep.ok; break;
      case AckResult::Status::NotSent: ++rep.unsent; break;
      default: {
        ++rep.failed;
        std::string text = "kernel rejected " + std::string(op_name(st.op)) + " of " + st.device + " " + st.what() + ": ";
        RefusedField field;
        if (r.bad_attr_off) field = refused_field(st, message(batch, i), r.bad_attr_off);
        if (field.key.empty()) {
          d.error(st.loc, text + kernel_error_text(r));
        } else {
          // A value the loader derived has no place of its own: the object's.
          d.error(field.loc.known() ? field.loc : st.loc, text + std::string(field.key) + ": " + kernel_error_text(r));
          d.note(st.loc, "in this object");
        }
        if (st.op != Op::Delete && st.qdisc && r.status == AckResult::Status::Failed)
          if (const KindOps* k = st.qdisc->ops; k && k->reject_hint)
            if (auto hint = k->reject_hint(st.qdisc->opts, r.error); !hint.empty()) d.note(st.loc, hint);
      }
    }
  }

  if (rep.succeeded()) {
    if (!o.verify) return rep;
    // Verify: someone else may have changed tc meanwhile (filter dumps
    // never say they were interrupted), and the kernel may have taken a
    // request yet store something else than asked.
    Diagnostics dd;
    if (!dump_state(k, device_names(desired), desired.actions.present, rep.after, dd)) {
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
  // The state before, minus the kernel's numbers of actions only one rule
  // used (action_table.h desired_form): the apply being undone freed some
  // and handed them to its new actions, so the old number would bind a
  // restored rule to another rule's new action (seen in the lab: a rollback
  // that "restored" nothing). Shared and table actions keep theirs.
  rep.rollback_to = desired_form(before);
  const State& target = rep.rollback_to;
  State& now = rep.rollback_from;
  Diagnostics dd;
  const bool table = before.actions.present || desired.actions.present;
  if (!dump_state(k, device_names(before), table, now, dd)) {
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
  retry_unbinding(k, rep.rollback_plan, back, rep.rollback_results, ro, false);
  for (size_t i = 0; i < rep.rollback_results.size(); ++i) {
    auto& r = rep.rollback_results[i];
    if (r.status != AckResult::Status::Ok)
      d.error({}, "rollback: kernel rejected " + std::string(op_name(rep.rollback_plan.steps[i].op)) + " of " +
                      rep.rollback_plan.steps[i].device + " " + rep.rollback_plan.steps[i].what() + ": " +
                      kernel_error_text(r));
  }
  rep.after = State{};
  if (!dump_state(k, device_names(before), table, rep.after, dd)) return rep;
  rep.remaining = make_plan(target, rep.after);
  rep.rollback_ok = rep.remaining.empty();
  return rep;
}

}  // namespace tcsync
