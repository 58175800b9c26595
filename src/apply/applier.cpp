#include "apply/applier.h"

#include <cassert>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <set>
#include <thread>

#include <linux/rtnetlink.h>

#include "apply/refused_field.h"
#include "apply/verify_by_dump.h"
#include "base/handle.h"
#include "codec/tc_codec.h"
#include "plan/action_table.h"

namespace tcsync {

bool encode_plan(const Plan& plan, const LinkNames& links, MessageBatch& batch, Diagnostics& d,
                 const BpfPrograms* programs) {
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
    if (st.chain)
      off = encode_chain(w, st.op, *st.chain, ifindex, &links, d);
    else if (st.qdisc)
      off = encode_qdisc(w, st.op, *st.qdisc, ifindex, &links, d, st.part);
    else if (st.cls)
      off = encode_class(w, st.op, *st.cls, ifindex, &links, d);
    else if (st.filter_group)
      off = encode_filter_group_delete(w, st.filter->key, st.filter->kind, ifindex);
    else
      off = encode_filter(w, st.op, *st.filter, ifindex, &links, d, st.live_filter, programs);
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

// What the echoes said about each step (EchoCheck).
enum class Echo : uint8_t { None, Same, Differs, Stale };

// Verification from the kernel's echoes: each echoed message decoded as a
// dump's would be, and compared with the object its step sent.
class EchoCheck {
 public:
  EchoCheck(const Plan& plan, const LinkNames& links) : plan_(plan), links_(links), seen_(plan.steps.size()) {}

  // The steps of these devices go without NLM_F_ECHO: the devices are read
  // back whole after the apply (verify_by_dump.h).
  void read_whole(const std::set<std::string>& devices) {
    if (devices.empty()) return;
    unechoed.assign(plan_.steps.size(), 0);
    for (size_t i = 0; i < plan_.steps.size(); ++i)
      if (!plan_.steps[i].block && devices.count(plan_.steps[i].device)) unechoed[i] = 1;
  }
  std::vector<uint8_t> unechoed;  // per step; empty: all echo

  // `reread`: the message answers a get sent after the apply (read_back),
  // not the request's own echo.
  void on_echo(size_t i, std::span<const uint8_t> msg, bool reread = false) {
    if (i >= plan_.steps.size() || msg.size() < sizeof(nlmsghdr)) return;
    const Step& st = plan_.steps[i];
    if (st.op == Op::Delete) return;
    uint16_t type;
    std::memcpy(&type, msg.data() + 4, 2);
    std::vector<std::string> why;
    bool recreate = false;
    Decoded info;
    if (st.qdisc) {
      // A message a follow-up of the same qdisc comes after (gred: its
      // setup, then one virtual queue a message) is echoed half made: the
      // last one's echo shows the whole object and is the one compared.
      if (i + 1 < plan_.steps.size() && plan_.steps[i + 1].part && plan_.steps[i + 1].qdisc == st.qdisc) {
        if (type == RTM_NEWQDISC) seen_[i] = Echo::Same;
        return;
      }
      // A qdisc that replaces another is echoed as the old one's
      // RTM_DELQDISC, then the new one's RTM_NEWQDISC, in one datagram.
      if (type != RTM_NEWQDISC) return;
      Qdisc q;
      if (!decode_qdisc(msg, &links_, q, info)) return;
      if (q.parent != st.qdisc->parent)
        why.push_back("parent " + format_handle(st.qdisc->parent) + " -> " + format_handle(q.parent));
      else
        why = qdisc_differences(*st.qdisc, q, recreate);
    } else if (st.cls) {
      if (type != RTM_NEWTCLASS) return;
      Class c;
      if (!decode_class(msg, &links_, c, info)) return;
      if (c.classid != st.cls->classid)
        why.push_back("classid " + format_handle(st.cls->classid) + " -> " + format_handle(c.classid));
      else
        why = class_differences(*st.cls, c, recreate);
    } else if (st.filter && !st.filter_group) {
      if (type != RTM_NEWTFILTER) return;
      Filter f;
      if (!decode_filter(msg, &links_, f, info)) {
        // A list head (no handle, no options) for a rule: the classifier
        // left *arg, what tfilter_notify reports, empty (6.1's matchall
        // sets it to the old head, NULL for a new rule). Read it back.
        if (info.list_head && !reread && !st.filter->empty_list) seen_[i] = Echo::Stale;
        return;
      }
      if (f.key != st.filter->key) {
        why.push_back("filter " + describe(*st.filter) + " is " + describe(f));
      } else {
        why = filter_differences(*st.filter, f, recreate);
        // A replace echoed as the rule was before it cannot tell: u32
        // answers a replace with its old node (u32_change builds a new
        // knode but leaves *arg, the handle tfilter_notify reports, on the
        // old one). Such rules are read back (read_back).
        bool recreate_old = false;
        if (!why.empty() && !reread && st.op == Op::Replace && st.live_filter &&
            filter_differences(*st.live_filter, f, recreate_old).empty()) {
          seen_[i] = Echo::Stale;
          return;
        }
      }
    } else if (st.action) {
      if (type != RTM_NEWACTION) return;
      std::vector<Action> got;
      if (!decode_action_msg(msg, &links_, got) || got.size() != 1) return;
      why = action_differences(*st.action, got[0]);
    } else {
      return;
    }
    if (why.empty()) {
      seen_[i] = Echo::Same;
      return;
    }
    seen_[i] = Echo::Differs;
    std::string reason;
    for (auto& x : why) reason += (reason.empty() ? "" : ", ") + x;
    why_.emplace_back(i, std::move(reason));
  }

  // Reads back the rules whose echo showed them as before their replace,
  // or showed no rule at all (one RTM_GETTFILTER each, its answer handled
  // as an echo): the cost stays that of the changes.
  void read_back(Kernel& k) {
    MessageBatch gets;
    MsgWriter w(gets.buf);
    std::vector<size_t> which;
    for (size_t i = 0; i < seen_.size(); ++i) {
      if (seen_[i] != Echo::Stale) continue;
      const Step& st = plan_.steps[i];
      seen_[i] = Echo::None;  // until the answer comes
      uint32_t ifindex = st.block ? TCM_IFINDEX_MAGIC_BLOCK : links_.index_of(st.device).value_or(0);
      const Filter& by = st.live_filter ? *st.live_filter : *st.filter;  // the kernel's handle, when known
      uint32_t handle = by.wire_handle ? by.wire_handle : by.key.handle;
      gets.offsets.push_back(encode_filter_get(w, st.filter->key, st.filter->kind, ifindex, handle));
      which.push_back(i);
    }
    if (which.empty()) return;
    rereads = which.size();
    SendOptions so{false, {}};
    so.on_echo = [&](size_t j, std::span<const uint8_t> m) {
      if (j < which.size()) on_echo(which[j], m, true);
    };
    k.send(gets, so);
  }

  size_t rereads = 0;

  // After the sends: the steps the echoes prove wrong go to `remaining`
  // (as a fresh plan would name them: the kernel's value, then the file's); the
  // result says whether every acknowledged step was proven either way.
  // `unproven`: the devices of the steps no echo told about; `whole`: one
  // of them was a shared block's or the action table's (those are read
  // with everything).
  bool settle(const std::vector<AckResult>& results, ApplyReport& rep, std::set<std::string>& unproven,
              bool& whole) const {
    for (size_t i = 0; i < results.size() && i < seen_.size(); ++i) {
      if (results[i].status != AckResult::Status::Ok) continue;
      if (plan_.steps[i].op == Op::Delete) {
        // The ACK proves the delete, but not what the kernel did beside it:
        // a chain not made explicitly goes with its last filter, and the
        // file may declare that chain (the plan kept it: no step). Such a
        // device is read again.
        const Step& st = plan_.steps[i];
        if (st.filter && st.filter->key.chain != 0) {
          if (st.block)
            whole = true;
          else
            unproven.insert(st.device);
        }
        continue;
      }
      if (seen_[i] == Echo::None && i < unechoed.size() && unechoed[i]) {
        ++rep.dump_checked;
        unproven.insert(plan_.steps[i].device);
      } else if (seen_[i] == Echo::None) {
        if (++rep.echo_missing <= 5) rep.echo_missing_steps.push_back(i);
        const Step& st = plan_.steps[i];
        if (st.block || st.action)
          whole = true;
        else
          unproven.insert(st.device);
      } else
        ++rep.echo_checked;
    }
    for (auto& [i, reason] : why_) {
      if (results[i].status != AckResult::Status::Ok) continue;
      Step s = plan_.steps[i];
      s.op = s.filter || s.action ? Op::Replace : s.op == Op::Add ? Op::Change : s.op;
      s.reason = reason;  // as a fresh plan would say it: the kernel's value, then the file's
      rep.remaining.steps.push_back(std::move(s));
    }
    rep.read_back = rereads;
    return rep.echo_missing == 0 && unproven.empty() && !whole;
  }

 private:
  const Plan& plan_;
  const LinkNames& links_;
  std::vector<Echo> seen_;
  std::vector<std::pair<size_t, std::string>> why_;
};

// The sieve is the kernel's for one read-back only, also when it throws.
class SieveInUse {
 public:
  SieveInUse(Kernel& k, FilterSieve& s) : k_(k) { k_.set_sieve(&s); }
  ~SieveInUse() { k_.set_sieve(nullptr); }
  SieveInUse(const SieveInUse&) = delete;
  SieveInUse& operator=(const SieveInUse&) = delete;

 private:
  Kernel& k_;
};

// Sends the batch chunk by chunk; stops after a chunk with a failure (unless
// continuing) or when interrupted. Results for unsent messages stay NotSent.
// `echo`: the requests go with NLM_F_ECHO and their echoes to it.
std::vector<AckResult> send_chunked(Kernel& k, MessageBatch& batch, const ApplyOptions& o, bool stop_on_error,
                                    int* interrupted, EchoCheck* echo = nullptr) {
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
    SendOptions so{stop_on_error, {}};
    if (echo) so.on_echo = [echo, first](size_t i, std::span<const uint8_t> m) { echo->on_echo(first + i, m); };
    if (echo && !echo->unechoed.empty())
      so.unechoed = std::span<const uint8_t>(echo->unechoed).subspan(first, last - first);
    auto got = k.send(part, so);
    if (o.progress) o.progress(last, batch.size());
    // One result a message (Kernel::send): more would land on the next
    // chunk's steps, or past the last.
    assert(got.size() <= last - first);
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
      rest.buf.insert(rest.buf.end(), batch.buf.begin() + static_cast<long>(from),
                      batch.buf.begin() + static_cast<long>(to));
      which.push_back(i);
    }
    auto got = k.send(rest, SendOptions{stop_on_error, {}});
    for (size_t j = 0; j < got.size() && j < which.size(); ++j) results[which[j]] = got[j];
  }
}

std::span<const uint8_t> message(const MessageBatch& b, size_t i) {
  size_t from = b.offsets[i], to = i + 1 < b.size() ? b.offsets[i + 1] : b.buf.size();
  return std::span<const uint8_t>(b.buf).subspan(from, to - from);
}

std::string kernel_error_text(const AckResult& r) {
  if (r.status == AckResult::Status::Unacked)
    return "no answer from the kernel" + (r.ext_msg.empty() ? "" : " (" + r.ext_msg + ")");
  return (r.ext_msg.empty() ? std::string() : r.ext_msg + " ") + "(" + std::strerror(r.error) + ")";
}

}  // namespace

ApplyReport apply_plan(Kernel& k, const State& desired, const State& before, const Plan& plan, const ApplyOptions& o,
                       Diagnostics& d) {
  ApplyReport rep;
  MessageBatch batch;
  if (!encode_plan(plan, k.links(), batch, d, k.programs())) {
    rep.results.resize(plan.steps.size());
    rep.unsent = plan.steps.size();
    return rep;
  }
  EchoCheck echo(plan, k.links());
  if (o.verify) echo.read_whole(devices_verified_by_dump(plan, desired, before));
  rep.results =
      send_chunked(k, batch, o, o.on_error != OnError::Continue, &rep.interrupted_by, o.verify ? &echo : nullptr);
  if (!rep.interrupted_by) retry_unbinding(k, plan, batch, rep.results, o, o.on_error != OnError::Continue);
  for (size_t i = 0; i < rep.results.size(); ++i) {
    auto& r = rep.results[i];
    auto& st = plan.steps[i];
    switch (r.status) {
      case AckResult::Status::Ok:
        ++rep.ok;
        break;
      case AckResult::Status::NotSent:
        ++rep.unsent;
        break;
      default: {
        ++rep.failed;
        std::string text =
            "kernel rejected " + std::string(op_name(st.op)) + " of " + st.device + " " + st.what() + ": ";
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
          if (auto* reject_hint = qdisc_ops(st.qdisc->ops).reject_hint)
            if (auto hint = reject_hint(st.qdisc->opts, r.error); !hint.empty()) d.note(st.loc, hint);
      }
    }
  }

  if (rep.succeeded()) {
    if (!o.verify) return rep;
    // The requests are sent and answered: their bytes (some 25 MB for 100k
    // flower rules) go back to the heap, where the verify's decoding reuses
    // them instead of new pages the kernel must clear.
    batch = MessageBatch{};
    // Verify: the kernel may have taken a request yet store something else
    // than asked. The echoes tell for each object sent (applier.h); where
    // one could not, the devices are read again and planned against.
    echo.read_back(k);
    std::set<std::string> unproven;
    bool whole = false;
    if (echo.settle(rep.results, rep, unproven, whole)) {
      rep.verified = rep.remaining.empty();
      return rep;
    }
    // Read again what no echo told about: the devices of those steps (the
    // echoes' findings elsewhere stand), or everything when a shared block
    // or the action table is among them.
    rep.redumped = true;
    std::vector<std::string> names;
    Diagnostics dd;
    bool read = false;
    Plan again;
    if (!whole) {
      std::vector<const Device*> check;
      for (auto& dev : desired.devices)
        if (unproven.count(dev.name)) check.push_back(&dev), names.push_back(dev.name);
      std::erase_if(rep.remaining.steps, [&](const Step& st) { return unproven.count(st.device) > 0; });
      // Those devices only, each rule compared as it is read (the sieve,
      // verify_by_dump.h): an equal pair is never held. The sieve proves
      // that nothing differs; where something does, the pairs it took may
      // belong in the report (a re-created qdisc adds its rules again), so
      // the devices are then read again whole and planned as without it.
      VerifySieve sieve(check);
      {
        SieveInUse in_use(k, sieve);
        read = dump_state(k, names, false, rep.after, dd);
      }
      if (read && !sieve.spoiled()) {
        rep.verify_desired = sieve.rest();
        again = make_plan(rep.verify_desired, rep.after);
        rep.sieved = sieve.taken();
      }
      if (read && (sieve.spoiled() || (!again.empty() && rep.sieved))) {
        again = Plan{};
        rep.sieved = 0;
        rep.after = State{};
        rep.verify_desired = State{};
        for (const Device* dev : check) rep.verify_desired.devices.push_back(*dev);
        read = dump_state(k, names, false, rep.after, dd);
        if (read) again = make_plan(rep.verify_desired, rep.after);
      }
    } else {
      rep.remaining = Plan{};
      names = device_names(desired);
      read = dump_state(k, names, desired.actions.present, rep.after, dd);
      if (read) again = make_plan(desired, rep.after);
    }
    if (!read) {
      for (auto& x : dd.all()) d.add(x.severity, x.loc, "verify: " + x.message);
      return rep;
    }
    for (auto& st : again.steps) rep.remaining.steps.push_back(std::move(st));
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
  // A scoped device is rolled back inside its scope only (model/scope.h):
  // what others changed meanwhile outside it stays theirs.
  for (auto& dev : desired.devices)
    if (Device* t = dev.scoped ? rep.rollback_to.find(dev.name) : nullptr)
      t->scoped = true, t->own = dev.own, t->own_loc = dev.own_loc;
  for (auto& b : desired.blocks)
    if (Device* t = b.scoped ? rep.rollback_to.find_block(b.block) : nullptr)
      t->scoped = true, t->own = b.own, t->own_loc = b.own_loc;
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
