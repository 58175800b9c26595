// The applier: carries out a plan against a Kernel and leaves the kernel as
// it found it when a step fails (unless told otherwise).
//
//   encode every step ──▶ send in chunks ──▶ all ok? ──▶ verify: each echo as intended
//   (an encode error                 │ no                (a re-dump only where no echo tells)
//   (an encode error                 │ no
//    sends nothing)                  ▼
//                        on_error=rollback: dump, plan back to the state
//                        found before, apply that, dump, verify it is empty
//
// tc has no transactions (the kernel goes on after an error in a datagram
// and undoes nothing), so the way back is a second plan, computed from what
// the kernel holds after the failure rather than from what was sent: it is
// right whatever landed.
//
// Verification (docs/verify.md): every request that creates or changes an
// object goes with NLM_F_ECHO, and the kernel answers it with the object as
// it now holds it (the dump's own message, read by the dump's decoder),
// which is compared with the plan's object by the differ's own comparison
// (differences.h qdisc_differences...). The cost is that of the changes, not of
// the whole state. A delete is proven by its ACK. A filter echoed as it was
// before its replace (u32), or as no rule (6.1's matchall), is read back
// with one get. Only where no echo can
// tell is the state read again, as before, but only the devices of such
// steps (all of them, and the action table, when one is a shared block's
// or the table's):
//  - a chain add (the kernel notifies RTM_NEWCHAIN without the sender's
//    NLM_F_ECHO: tc_ctl_chain passes flags of its own);
//  - a request the kernel acknowledged without an echo we could read: a
//    qdisc its dumps hide (tc_qdisc_dump_ignore), an echo past the receive
//    slot (16 KiB), a message the decoder does not take as an object.
// Where a device's requests are most of it (an apply from empty), its
// requests go without NLM_F_ECHO and the device is read back with one dump
// instead, where the kernel's dump of it is linear (verify_by_dump.h).
// What echoes do not see: another writer changing other objects meanwhile
// (the netns lock keeps other tcsyncs out; `tcsync diff` looks at all).
#pragma once
#include <atomic>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "apply/kernel.h"
#include "model/model.h"
#include "plan/differ.h"

namespace tcsync {

enum class OnError : uint8_t { Rollback, Stop, Continue };

struct ApplyOptions {
  OnError on_error = OnError::Rollback;
  // Requests per send: a failure or a signal stops sending at the next
  // chunk, and the kernel has at most one chunk's worth to take back.
  size_t chunk = 4096;
  // Set asynchronously (by a signal handler) to stop at the next chunk; the
  // signal number, 0 while none.
  const std::atomic<int>* interrupt = nullptr;
  bool verify = true;
  // Called after each chunk with the steps sent so far (a progress bar).
  std::function<void(size_t done, size_t total)> progress;
};

struct ApplyReport {
  std::vector<AckResult> results;  // one per plan step
  size_t ok = 0, failed = 0, unsent = 0;
  int interrupted_by = 0;    // signal number, 0 if none
  bool rolled_back = false;  // a rollback was attempted
  bool rollback_ok = false;  // ... and the kernel is back where it was
  State rollback_from;       // the state the rollback planned from
  State rollback_to;         // the state before, minus the kernel's numbers of
                             // single-use actions (the plans point into it)
  Plan rollback_plan;        // what the rollback did
  std::vector<AckResult> rollback_results;
  State after;                             // the state the checks saw last (less the rules `sieved` counts)
  bool verified = false;                   // after success: every echo (or a fresh dump) as planned
  Plan remaining;                          // what the echoes (or a fresh dump) still differ in
  size_t echo_checked = 0;                 // steps verified by their echo
  size_t echo_missing = 0;                 // acknowledged steps an echo could not verify
  size_t dump_checked = 0;                 // steps sent without an echo, their device read back whole
  size_t sieved = 0;                       // rules of that read-back equal as read, never held (VerifySieve);
                                           // 0 when the devices were read again whole
  std::vector<size_t> echo_missing_steps;  // the first few of them (plan indexes), for -v
  size_t read_back = 0;                    // of echo_checked: replaced rules echoed as before, read back one by one
  bool redumped = false;                   // verify read devices again (echo_missing, or no echoes)
  State verify_desired;                    // ... only these of the files' devices (empty: all of them);
                                           // `remaining` may point into it
  bool succeeded() const { return failed == 0 && unsent == 0 && interrupted_by == 0; }
};

// Encodes each step into `batch` (one message per step). False, with errors
// in `d`, when any step cannot be encoded: nothing may be sent then.
// `programs`: the bpf filters' programs (Kernel::programs()).
bool encode_plan(const Plan& plan, const LinkNames& links, MessageBatch& batch, Diagnostics& d,
                 const BpfPrograms* programs = nullptr);

// `before` is the live state the plan was made from, holding every device
// the plan touches (empty ones too). Kernel errors and rollback failures are
// reported through `d`, located at the YAML that asked for the step.
ApplyReport apply_plan(Kernel& k, const State& desired, const State& before, const Plan& plan, const ApplyOptions& opts,
                       Diagnostics& d);

}  // namespace tcsync
