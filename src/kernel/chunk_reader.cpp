#include "kernel/chunk_reader.h"

#include <linux/netlink.h>

#include <cstring>

namespace tcsync {

bool chunk_ends_dump(std::span<const uint8_t> chunk, uint32_t seq) {
  size_t pos = 0;
  while (pos + sizeof(nlmsghdr) <= chunk.size()) {
    nlmsghdr h;
    std::memcpy(&h, chunk.data() + pos, sizeof h);
    if (h.nlmsg_len < sizeof h || pos + h.nlmsg_len > chunk.size()) return false;
    if (h.nlmsg_seq == seq && (h.nlmsg_type == NLMSG_DONE || h.nlmsg_type == NLMSG_ERROR)) return true;
    pos += NLMSG_ALIGN(h.nlmsg_len);
  }
  return false;
}

ChunkReader::~ChunkReader() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  // The thread ends at the dump's end, an error, or (stop_) before its next
  // recvmsg; a recvmsg in progress returns, as a running dump always has a
  // next chunk.
  thread_.join();
}

ssize_t ChunkReader::next(std::span<const uint8_t>& out, bool& truncated) {
  if (!started_) {
    started_ = true;
    if (first_.size() < kDumpBuffer) first_.resize(kDumpBuffer);
    ssize_t n = sock_.recv(first_.data(), first_.size(), 0, &truncated);
    if (n < 0 || truncated) return n;
    out = std::span<const uint8_t>(first_.data(), static_cast<size_t>(n));
    if (!chunk_ends_dump(out, seq_)) {
      // Sized here, once, so that the thread only reads into them.
      bufs_.resize(kAhead);
      free_.reserve(kAhead);
      for (size_t i = 0; i < kAhead; ++i) bufs_[i].resize(kDumpBuffer), free_.push_back(i);
      thread_ = std::thread([this] { run(); });
    }
    return n;
  }
  std::unique_lock<std::mutex> g(mu_);
  if (held_) {
    free_.push_back(*held_);
    held_.reset();
    cv_.notify_all();
  }
  cv_.wait(g, [&] { return filled_count_ > 0; });
  Filled f = filled_[filled_head_];
  filled_head_ = (filled_head_ + 1) % kAhead, --filled_count_;
  held_ = f.buf;
  truncated = f.truncated;
  if (f.n >= 0) out = std::span<const uint8_t>(bufs_[f.buf].data(), static_cast<size_t>(f.n));
  return f.n;
}

void ChunkReader::run() {
  for (;;) {
    size_t b;
    {
      std::unique_lock<std::mutex> g(mu_);
      cv_.wait(g, [&] { return stop_ || !free_.empty(); });
      if (stop_) return;
      b = free_.back();
      free_.pop_back();
    }
    RxBuffer& buf = bufs_[b];
    bool truncated = false;
    ssize_t n = sock_.recv(buf.data(), buf.size(), 0, &truncated);
    bool last = n < 0 || truncated || chunk_ends_dump({buf.data(), static_cast<size_t>(n)}, seq_);
    {
      std::lock_guard<std::mutex> g(mu_);
      filled_[(filled_head_ + filled_count_++) % kAhead] = {b, n, truncated};
    }
    cv_.notify_all();
    if (last) return;
  }
}

}  // namespace tcsync
