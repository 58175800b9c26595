// Words: a short list of 32-bit words, the value of a structured field
// (value/mask pairs, ports, MACs, addresses, u32 selector keys).
//
// Nearly all hold six words or fewer, and those live inline: a million
// flower rules' MACs and ports cost no allocation and no pointer chase.
// Longer lists (u32 selectors, IPv6 prefixes) go to the heap. 32 bytes,
// the size of a std::string, so a Value is no larger than it was as a
// std::vector. The interface is the part of std::vector tcsync uses.
#pragma once
#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <stdexcept>

namespace tcsync {

class Words {
 public:
  using value_type = uint32_t;
  using size_type = size_t;
  using iterator = uint32_t*;
  using const_iterator = const uint32_t*;
  static constexpr uint32_t kInline = 6;

  Words() noexcept : inline_{} {}
  explicit Words(size_t n, uint32_t v = 0) : Words() { resize(n, v); }
  Words(std::initializer_list<uint32_t> l) : Words() { append(l.begin(), l.size()); }
  template <std::input_iterator It>
  requires std::convertible_to<std::iter_value_t<It>, uint32_t> Words(It first, It last) : Words() {
    for (; first != last; ++first) push_back(static_cast<uint32_t>(*first));
  }
  Words(const Words& o) : Words() { append(o.data(), o.size_); }
  Words(Words&& o) noexcept : Words() { steal(o); }
  Words& operator=(const Words& o) {
    if (this != &o) {
      size_ = 0;
      append(o.data(), o.size_);
    }
    return *this;
  }
  Words& operator=(Words&& o) noexcept {
    if (this != &o) {
      release();
      steal(o);
    }
    return *this;
  }
  ~Words() { release(); }

  uint32_t* data() noexcept { return on_heap() ? heap_ : inline_; }
  const uint32_t* data() const noexcept { return on_heap() ? heap_ : inline_; }
  size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  size_t capacity() const noexcept { return cap_; }
  uint32_t& operator[](size_t i) noexcept { return data()[i]; }
  const uint32_t& operator[](size_t i) const noexcept { return data()[i]; }
  const uint32_t& at(size_t i) const {
    if (i >= size_) throw std::out_of_range("Words::at");
    return data()[i];
  }
  iterator begin() noexcept { return data(); }
  iterator end() noexcept { return data() + size_; }
  const_iterator begin() const noexcept { return data(); }
  const_iterator end() const noexcept { return data() + size_; }

  void reserve(size_t n) {
    if (n <= cap_) return;
    auto* p = new uint32_t[n];
    std::memcpy(p, data(), size_ * sizeof(uint32_t));
    release();
    heap_ = p;
    cap_ = static_cast<uint32_t>(n);
  }
  void resize(size_t n, uint32_t v = 0) {
    reserve(n);
    if (n > size_) std::fill(data() + size_, data() + n, v);
    size_ = static_cast<uint32_t>(n);
  }
  void clear() noexcept { size_ = 0; }
  void push_back(uint32_t v) {
    if (size_ == cap_) reserve(size_t{cap_} * 2);
    data()[size_++] = v;
  }
  // Inserts [first, last), which must not be this list's own words, before
  // pos (appending, as tcsync does, moves nothing).
  iterator insert(const_iterator pos, const uint32_t* first, const uint32_t* last) {
    size_t at = static_cast<size_t>(pos - data()), n = static_cast<size_t>(last - first);
    reserve(size_ + n);
    uint32_t* d = data();
    std::memmove(d + at + n, d + at, (size_ - at) * sizeof(uint32_t));
    if (n) std::memcpy(d + at, first, n * sizeof(uint32_t));
    size_ += static_cast<uint32_t>(n);
    return d + at;
  }
  iterator insert(const_iterator pos, std::initializer_list<uint32_t> l) { return insert(pos, l.begin(), l.end()); }

  friend bool operator==(const Words& a, const Words& b) noexcept {
    return a.size_ == b.size_ && std::memcmp(a.data(), b.data(), a.size_ * sizeof(uint32_t)) == 0;
  }

 private:
  bool on_heap() const noexcept { return cap_ > kInline; }
  void append(const uint32_t* p, size_t n) {
    reserve(size_ + n);
    if (n) std::memcpy(data() + size_, p, n * sizeof(uint32_t));
    size_ += static_cast<uint32_t>(n);
  }
  void release() noexcept {
    if (on_heap()) delete[] heap_;
    cap_ = kInline;
  }
  // Takes o's words (its heap block, or a copy of its inline ones) and
  // leaves o empty; this must hold nothing on the heap.
  void steal(Words& o) noexcept {
    size_ = o.size_;
    cap_ = o.cap_;
    if (o.on_heap())
      heap_ = o.heap_;
    else
      std::memcpy(inline_, o.inline_, sizeof inline_);
    o.size_ = 0;
    o.cap_ = kInline;
  }

  uint32_t size_ = 0;
  uint32_t cap_ = kInline;
  union {
    uint32_t inline_[kInline];
    uint32_t* heap_;
  };
};

static_assert(sizeof(Words) == 32);

}  // namespace tcsync
