// A batch of netlink requests and what came back for each: the currency
// between the applier, which packs requests, and the kernel edge, which
// sends them many to a datagram and reads the ACKs asynchronously.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace tcsync {

// The outcome of one request in a batch.
struct AckResult {
  enum class Status : uint8_t { NotSent, Ok, Failed, Unacked };
  Status status = Status::NotSent;
  int error = 0;              // positive errno when Failed
  std::string ext_msg;        // NLMSGERR_ATTR_MSG, the kernel's own words
  uint32_t bad_attr_off = 0;  // NLMSGERR_ATTR_OFFS: byte offset in our message, 0 = none
};

// Messages packed back to back in one buffer; offsets[i] is where message i
// starts. The sender numbers them (nlmsg_seq) itself.
struct MessageBatch {
  std::vector<uint8_t> buf;
  std::vector<size_t> offsets;
  size_t size() const { return offsets.size(); }
};

struct SendOptions {
  // After a failure, send nothing more (requests already in flight still
  // land: the kernel goes on after an error within one datagram).
  bool stop_on_error = true;
  // Set: every request that creates or changes (RTM_NEW*) asks for
  // NLM_F_ECHO, and each message the kernel echoes back is handed here with
  // its request's index, before that request's ACK is read. (Deletes are
  // never echoed: their ACK is the proof.) The span lives only for the call.
  std::function<void(size_t index, std::span<const uint8_t> msg)> on_echo;
  // With on_echo: a nonzero byte at a request's index sends it without
  // NLM_F_ECHO (the applier reads such a device back with one dump
  // instead: apply/verify_by_dump.h). Shorter than the batch: the rest echo.
  std::span<const uint8_t> unechoed;
};

}  // namespace tcsync
