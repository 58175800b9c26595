// The kernel edge's side of bpf filters (bpf_program.h): opens the programs
// files name and keeps them open while tcsync runs.
//
//   pinned  bpf(2) BPF_OBJ_GET on the path
//   object  libbpf: the section's program, loaded as BPF_PROG_TYPE_SCHED_CLS
//           (the other programs of the object are not loaded)
//   id      bpf(2) BPF_PROG_GET_FD_BY_ID
// A reference may give several: they are tried in that order, and the first
// that opens is the program. Its tag is read with BPF_OBJ_GET_INFO_BY_FD.
#pragma once
#include <map>
#include <vector>

#include "base/diag.h"
#include "kinds/filter/bpf_program.h"
#include "model/model.h"

namespace tcsync {

class BpfLoader final : public BpfPrograms {
 public:
  BpfLoader() = default;
  BpfLoader(const BpfLoader&) = delete;
  BpfLoader& operator=(const BpfLoader&) = delete;
  ~BpfLoader() override;

  // Live bpf filters: their programs are opened by id and held, so that a
  // rollback can put back a rule the apply deleted or replaced (the kernel
  // frees a program with its last filter).
  void hold_live(const State& live);
  // Desired bpf filters: each program is opened (loaded once per object and
  // section) and its tag recorded in the filter's options, for the differ.
  // A reference that cannot be opened is an error here when the file gives
  // no tag (nothing to compare); with a tag (dumps) it is an error only if
  // the rule must be sent, reported by encode. A program whose tag differs
  // from the one the file declares is always an error.
  bool resolve(State& desired, Diagnostics& d);

  const BpfProgram* find(const BpfRef& ref) const override;

 private:
  BpfProgram open(const BpfRef& ref);
  std::map<BpfRef, BpfProgram> by_ref_;  // as declared, and with the tag recorded
  std::vector<int> fds_;                 // owned
};

}  // namespace tcsync
