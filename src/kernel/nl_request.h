// One request and its replies over an NlSocket: a dump (NLM_F_DUMP) or a
// get (NLM_F_ACK), read chunk by chunk (chunk_reader.h) until its DONE or
// ACK. The dumper reads tc state with it, links.cpp the link list.
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "kernel/nl_socket.h"
#include "kernel/rx_buffer.h"

namespace tcsync {

struct DumpOutcome {
  int error = 0;             // positive errno from NLMSG_ERROR / NLMSG_DONE / the socket
  std::string message;       // what went wrong, with the kernel's extack text
  bool interrupted = false;  // NLM_F_DUMP_INTR: the object list changed mid-dump
};

// Runs one dump: `request` holds one message at offset 0 (its nlmsg_seq and
// flags are set here); each reply message goes to on_msg, whole, header
// included. `rx` is the caller's receive buffer (reused across dumps).
bool run_dump(NlSocket& sock, std::vector<uint8_t>& request, RxBuffer& rx,
              const std::function<void(std::span<const uint8_t>)>& on_msg, DumpOutcome& out);
// The same for a request with NLM_F_ACK instead of NLM_F_DUMP (a get):
// its answer, then the ACK.
bool run_get(NlSocket& sock, std::vector<uint8_t>& request, RxBuffer& rx,
             const std::function<void(std::span<const uint8_t>)>& on_msg, DumpOutcome& out);

// An interrupted dump (DumpOutcome::interrupted) is read again from a clean
// slate, at most this many times in all; then it is an error. (6.18 flags
// the link dump when links come or go during it; tc's dumps carry no such
// flag, so a filter added mid-dump shows only in apply's verify.)
constexpr int kDumpTries = 5;
// How many dumps were read again, over the process (for -v and the tests).
void note_dump_read_again();
size_t dumps_read_again();

}  // namespace tcsync
