// The kernel, behind one small interface. The real implementation talks
// rtnetlink (kernel/rtnl_kernel.cpp); tests of the planner use none at all.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/diag.h"
#include "kinds/filter/bpf_program.h"
#include "model/kind.h"
#include "model/model.h"
#include "netlink/batch.h"

namespace tcsync {

struct TerseCheck;
struct StatsTable;

// Verify's sieve (apply/verify_by_dump.h VerifySieve): a dumped rule it
// takes equals the file's rule of its key and is not kept in the live
// state, so reading a device back costs its rules' time but not their
// memory. Asked for each rule of a network device's own blocks as it is
// decoded; never for shared blocks.
struct FilterSieve {
  virtual ~FilterSieve() = default;
  virtual bool take(const std::string& device, const Filter& f) = 0;
};

// Which part of the state a dump reads: the devices' qdiscs, classes,
// filters and chains; the shared blocks bound by the devices `live` holds,
// and those it lists already (a declared block is read if bound); or both.
enum class DumpPart { All, Devices, Blocks };

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual const LinkNames& links() const = 0;
  // Reads qdiscs, classes and filters of the named devices (all if empty)
  // into `live`. Devices that do not exist are reported as errors.
  virtual bool dump(const std::vector<std::string>& devices, State& live, Diagnostics& diags) = 0;
  // The same in parts (commands.cpp reads the devices while the files are
  // still loading, the blocks after). Test fakes read everything at once.
  virtual bool dump_part(const std::vector<std::string>& devices, State& live, Diagnostics& diags, DumpPart part) {
    return part == DumpPart::Blocks || dump(devices, live, diags);
  }
  // Settles the terse reads of the dumps so far against the files' rules
  // (dumper.h TerseCheck); a kernel without the check has none.
  virtual bool settle_terse(const State& /*desired*/, State& /*live*/, Diagnostics& /*diags*/) { return true; }
  // Reads the action table (every action kind) into `out`; false on error.
  // `bound`: a state just dumped whose filters' actions may stand for the
  // table's (dumper.h dump_action_table). A kernel without the table (test
  // fakes) leaves `out` as it is.
  virtual bool dump_actions(ActionTable& out, Diagnostics& diags, const State* bound = nullptr) {
    (void)out, (void)diags, (void)bound;
    return true;
  }
  // The fast no-op check for the dumps that follow (dumper.h); null: off.
  virtual void set_terse_check(TerseCheck*) {}
  // Counters (stats/stats.h) of the objects the dumps that follow read go
  // to this table too; null (the default): none is decoded.
  virtual void set_stats(StatsTable*) {}
  // The sieve (above) for the dumps that follow; null (the default): every
  // rule is kept. A kernel without it (test fakes) keeps every rule.
  virtual void set_sieve(FilterSieve*) {}
  // Sends the batch; results has one entry per message.
  virtual std::vector<AckResult> send(MessageBatch& batch, const SendOptions& opts) = 0;
  // bpf filters (bpf_program.h): holds the programs of the live rules, and
  // opens those the desired rules name, recording their tags for the
  // differ. Kernels without programs (test fakes) leave the state as is.
  virtual bool resolve_programs(State& /*desired*/, const State& /*live*/, Diagnostics& /*d*/) { return true; }
  virtual const BpfPrograms* programs() const { return nullptr; }
};

// dump() of the devices, and of the action table too when `table` is set.
inline bool dump_state(Kernel& k, const std::vector<std::string>& devices, bool table, State& live, Diagnostics& d) {
  return k.dump(devices, live, d) && (!table || k.dump_actions(live.actions, d));
}

// Opens rtnetlink in the current network namespace, or in `netns` (a name
// from `ip netns`, i.e. /run/netns/NAME) when given.
std::unique_ptr<Kernel> open_kernel(const std::optional<std::string>& netns, Diagnostics& diags);

}  // namespace tcsync
