// Sends a batch of requests the way the kernel can take it fastest: many
// messages per sendmsg, one sequence number each, ACKs read while sending and
// matched by sequence number, never more in flight than the receive buffer
// holds ACKs (and echoes) for (so none is ever dropped with ENOBUFS).
//
//   sendmsg: [nlmsg seq=b+0][nlmsg seq=b+1]...[nlmsg seq=b+k-1]   (<= sndbuf-32 bytes, <= window)
//   kernel:  processes each in order, queues [its echo, if asked] then one
//            NLMSG_ERROR per message
//   recvmmsg(MSG_DONTWAIT): echoes -> on_echo(seq - b), ACKs -> results[seq - b]
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

// The same for the echo of a request sent with NLM_F_ECHO (SendOptions::
// on_echo). The kernel builds it in an skb of NLMSG_GOODSIZE (a 4 KiB head:
// truesize 4352 on x86-64) and netlink_trim shrinks that to the message
// before queueing it, unless the shrink's GFP_NORETRY allocation fails: so
// budget the untrimmed size. An echo is the request's object as a dump
// shows it, counters included (u32: TCA_U32_PCNT, 8 bytes a key; each
// action's stats, about 150 bytes): at most about 1.5 times the request
// plus 1 KiB, and beyond NLMSG_GOODSIZE the kernel allocates the next
// power of two: 4 times the request plus 1 KiB covers both.
// Measured on 6.18 (50 u32 rules with a mirred action, 124-byte requests,
// sent with NLM_F_ECHO and not read; sk_rmem_alloc from /proc/net/netlink):
// 2112 bytes a request, 832 of them the ACK, so 1280 the trimmed echo.
constexpr size_t kEchoBudget = 4608;
size_t echo_budget(size_t request_len);

// How many requests may be unacknowledged at once for a receive buffer of
// `rcvbuf` bytes (the effective sk_rcvbuf). Always at least 1: an empty
// receive queue accepts one skb whatever its size.
size_t ack_window(size_t rcvbuf);

struct BatchStats {
  size_t datagrams = 0;      // successful sendmsg calls
  size_t recv_calls = 0;     // recvmmsg calls that returned data
  size_t max_in_flight = 0;  // peak unacknowledged requests
  size_t window = 0;         // the bound used (requests, without echoes)
  size_t echoes = 0;         // echoed messages handed to on_echo
  size_t echoes_cut = 0;     // echoes longer than a receive slot (not handed on)
  bool acks_lost = false;    // the kernel reported ENOBUFS (a bug in our budget)
};

// results[i] belongs to the message at batch.offsets[i]. The batch buffer is
// patched in place: nlmsg_seq, and NLM_F_REQUEST | NLM_F_ACK in nlmsg_flags
// (NLM_F_ECHO too on RTM_NEW* requests when opts.on_echo is set).
std::vector<AckResult> send_batch(NlSocket& sock, MessageBatch& batch, const SendOptions& opts,
                                  BatchStats* stats = nullptr);

}  // namespace tcsync
