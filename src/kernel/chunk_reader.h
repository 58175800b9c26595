// Reads the replies of one netlink dump, chunk by chunk, with the kernel's
// work and the caller's decoding on two cores.
//
// The kernel builds a dump's next chunk inside recvmsg (netlink_recvmsg
// calls netlink_dump once it has dequeued a chunk), so a reader that calls
// recvmsg only after decoding the last chunk leaves one core idle while the
// kernel works and the other idle while it decodes. Once a dump proves
// longer than one chunk, a second thread takes over the recvmsg calls and
// runs up to kAhead chunks ahead; the caller decodes meanwhile. One-chunk
// dumps (most of them: one device's classes, an empty block) never start a
// thread.
#pragma once
#include <sys/types.h>

#include <array>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "kernel/nl_socket.h"
#include "kernel/rx_buffer.h"

namespace tcsync {

// True when `chunk` holds the message that ends dump `seq` (NLMSG_DONE or
// NLMSG_ERROR with that sequence number): nothing of the dump follows it.
bool chunk_ends_dump(std::span<const uint8_t> chunk, uint32_t seq);

class ChunkReader {
 public:
  static constexpr size_t kAhead = 4;

  // `first` is the caller's buffer (sized for a chunk); the first chunk is
  // read into it on the caller's thread.
  ChunkReader(NlSocket& sock, uint32_t seq, RxBuffer& first) : sock_(sock), seq_(seq), first_(first) {}
  ~ChunkReader();
  ChunkReader(const ChunkReader&) = delete;
  ChunkReader& operator=(const ChunkReader&) = delete;

  // The next chunk, valid until the next call: its size (>= 0) or -errno
  // from recvmsg; `truncated` when it did not fit the buffer. After a chunk
  // that ends the dump (chunk_ends_dump), an error or a truncation, the
  // caller must not ask again.
  ssize_t next(std::span<const uint8_t>& out, bool& truncated);

 private:
  struct Filled {
    size_t buf;
    ssize_t n;
    bool truncated;
  };
  void run();

  NlSocket& sock_;
  const uint32_t seq_;
  RxBuffer& first_;
  bool started_ = false;  // the first chunk was read
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<RxBuffer> bufs_;
  // Guarded by mu_. Fixed rings: handing a chunk over allocates nothing.
  std::vector<size_t> free_;             // reserved for kAhead before the thread starts
  std::array<Filled, kAhead> filled_{};  // filled_count_ entries from filled_head_
  size_t filled_head_ = 0, filled_count_ = 0;
  bool stop_ = false;           // guarded by mu_: the caller went away early
  std::optional<size_t> held_;  // the buffer the caller holds (returned by next)
};

}  // namespace tcsync
