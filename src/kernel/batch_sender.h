// Sends a batch of requests the way the kernel can take it fastest: many
// messages per sendmsg, one sequence number each, ACKs read while sending and
// matched by sequence number, never more in flight than the receive buffer
// holds ACKs for (so no ACK is ever dropped with ENOBUFS).
//
//   sendmsg: [nlmsg seq=b+0][nlmsg seq=b+1]...[nlmsg seq=b+k-1]   (<= sndbuf-32 bytes, <= window msgs)
//   kernel:  processes each in order, queues one NLMSG_ERROR per message
//   recvmmsg(MSG_DONTWAIT): ACKs -> results[seq - b]
#pragma once
#include <cstddef>
#include <vector>

#include "apply/kernel.h"
#include "kernel/nl_socket.h"

namespace tcsync {

// Receive-buffer budget per request in flight. The kernel charges each ACK
// skb its truesize against sk_rcvbuf: measured 832 bytes on 6.18 for plain
// and extack ACKs (a 512-byte small-head skb); an ACK whose payload outgrows
// that head (policy nests) takes a 1 KiB kmalloc head, about 1280. Budget the
// larger: extack text is bounded (NL_SET_ERR_MSG literals, 80-char formats).
constexpr size_t kAckBudget = 1280;

// How many requests may be unacknowledged at once for a receive buffer of
// `rcvbuf` bytes (the effective sk_rcvbuf). Always at least 1: an empty
// receive queue accepts one skb whatever its size.
size_t ack_window(size_t rcvbuf);

struct BatchStats {
  size_t datagrams = 0;      // successful sendmsg calls
  size_t recv_calls = 0;     // recvmmsg calls that returned data
  size_t max_in_flight = 0;  // peak unacknowledged requests
  size_t window = 0;         // the bound used
  bool acks_lost = false;    // the kernel reported ENOBUFS (a bug in our budget)
};

// results[i] belongs to the message at batch.offsets[i]. The batch buffer is
// patched in place: nlmsg_seq, and NLM_F_REQUEST | NLM_F_ACK in nlmsg_flags.
std::vector<AckResult> send_batch(NlSocket& sock, MessageBatch& batch, const SendOptions& opts,
                                  BatchStats* stats = nullptr);

}  // namespace tcsync
