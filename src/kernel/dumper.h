// Reads the kernel's tc state into the live model: one qdisc dump for all
// the devices, then per device one class dump and one filter dump per block
// (a qdisc's, a class's, a clsact/ingress side's), each reply decoded
// message by message straight into its Device, never held as a whole.
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "apply/kernel.h"
#include "base/diag.h"
#include "kernel/nl_request.h"
#include "kernel/nl_socket.h"
#include "kernel/rx_buffer.h"
#include "model/kind.h"
#include "model/model.h"
#include "stats/stats.h"

namespace tcsync {

// The fast no-op check (fingerprint.h), in two steps, so that the first can
// run while the files are still loading. While dumping, each filter block
// is first read with a terse dump (keys and action cookies only; only
// flower answers one in full, any other kind ends it early); a block that
// held only fingerprinted rules is kept in `pending` instead of read in
// full. settle_terse() then compares each pending block with the file's
// rules: exactly those keys with those fingerprints and names, and the
// file's rules stand for the live ones; anything else (a missing, extra,
// stale or renamed rule) and the block is read in full, as without the check.
struct TerseCheck {
  struct Block {
    std::string device;
    uint32_t ifindex = 0, parent = 0;
    // Sorted by key; each rule's first action's cookie (the fingerprint),
    // then, when a later action's cookie holds a name (name_cookie.h), that
    // action's position (a byte) and cookie.
    std::vector<std::pair<FilterKey, Opaque>> rules;
  };
  std::vector<Block> pending;
  size_t blocks = 0, filters = 0;  // proven unchanged by fingerprint
  size_t fallbacks = 0;            // blocks tried, then read in full
};

// Dumps the named devices (all links when empty) into `live`. A device that
// does not exist, or a dump the kernel refuses, is an error in diags.
// `stats` (tcsync stats): every object's counters also go there, by its
// identity; null (every other command): no counter is decoded. `sieve`
// (apply's verify): the devices' rules it takes are not kept.
bool dump_devices(NlSocket& sock, const LinkNames& links, const std::vector<std::string>& devices, State& live,
                  Diagnostics& diags, TerseCheck* terse = nullptr, DumpPart part = DumpPart::All,
                  StatsTable* stats = nullptr, FilterSieve* sieve = nullptr);

// The second step of the terse check: settles terse->pending against the
// file's rules (`desired`), reading in full what it cannot prove.
bool settle_terse(NlSocket& sock, const LinkNames& links, TerseCheck& terse, const State& desired, State& live,
                  Diagnostics& diags);

// Reads the action table (ActionTable): one RTM_GETACTION dump per action
// kind tcsync knows (a kind the kernel lacks dumps nothing). Sets present.
// With `bound` (a state just dumped), each kind is first listed tersely:
// an action its filters bind is taken from there (the filter dump reports
// it in full, counts included), and the kind is read in full only when it
// holds some action none of them binds. `out` then holds the table actions
// (refcnt > bindcnt) of such kinds, not also the rules' own ones (as dump
// prints the table: action_table.h desired_form). For 100k u32 rules with mirred,
// the table read then costs half (the kernel re-walks the table from its
// start for every chunk of a dump, and terse chunks hold twice the actions).
bool dump_action_table(NlSocket& sock, const LinkNames& links, ActionTable& out, Diagnostics& diags,
                       const State* bound = nullptr);

}  // namespace tcsync
