// A value kept on the heap, or none: one pointer in the object that holds
// it. For members most objects lack (a filter's own police, the attributes
// no kind table reads), which a std::optional would make every object pay
// for in full: 1M flower rules pay 8 bytes each instead of 32 or 48.
// Copies are deep, so the holder copies as it did with the value inline.
#pragma once
#include <memory>
#include <utility>

namespace tcsync {

template <class T>
class Boxed {
 public:
  Boxed() = default;
  Boxed(const Boxed& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;

  explicit operator bool() const { return p_ != nullptr; }
  T& operator*() { return *p_; }
  const T& operator*() const { return *p_; }
  T* operator->() { return p_.get(); }
  const T* operator->() const { return p_.get(); }
  const T* get() const { return p_.get(); }
  template <class... A>
  T& emplace(A&&... a) {
    p_ = std::make_unique<T>(std::forward<A>(a)...);
    return *p_;
  }
  void reset() { p_.reset(); }
  // Equal when both hold none, or both hold equal values.
  bool operator==(const Boxed& o) const { return p_ && o.p_ ? *p_ == *o.p_ : !p_ && !o.p_; }

 private:
  std::unique_ptr<T> p_;
};

}  // namespace tcsync
