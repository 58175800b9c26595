// Words (words.h): six words inline, more on the heap, and the behaviour of
// the std::vector it replaced across that boundary.
#include <catch2/catch.hpp>

#include <utility>
#include <vector>

#include "base/words.h"

using tcsync::Words;

namespace {

std::vector<uint32_t> as_vector(const Words& w) {
  return {w.begin(), w.end()};
}

// 0, 1, ..., n-1
Words count(uint32_t n) {
  Words w;
  for (uint32_t i = 0; i < n; ++i) w.push_back(i);
  return w;
}

}  // namespace

TEST_CASE("Words hold six words inline and grow onto the heap keeping them") {
  Words w = count(6);
  CHECK(w.capacity() == Words::kInline);
  const uint32_t* inline_data = w.data();
  w.push_back(6);
  CHECK(w.capacity() > Words::kInline);
  CHECK(w.data() != inline_data);
  CHECK(as_vector(w) == std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6});
  for (uint32_t i = 7; i < 100; ++i) w.push_back(i);
  REQUIRE(w.size() == 100);
  for (uint32_t i = 0; i < 100; ++i) CHECK(w[i] == i);
  w.resize(3);
  CHECK(as_vector(w) == std::vector<uint32_t>{0, 1, 2});
  w.resize(5, 9);
  CHECK(as_vector(w) == std::vector<uint32_t>{0, 1, 2, 9, 9});
  CHECK(Words(8, 7) == Words{7, 7, 7, 7, 7, 7, 7, 7});
  CHECK(Words(2).size() == 2);
}

TEST_CASE("Words copy and move inline and heap lists alike") {
  for (uint32_t n : {0u, 3u, 6u, 7u, 40u}) {
    INFO("size " << n);
    Words a = count(n);
    Words b = a;
    CHECK(b == a);
    CHECK(as_vector(b) == as_vector(count(n)));
    if (n) {
      b[0] = 99;
      CHECK(a[0] == 0);
    }
    Words c = std::move(b);
    CHECK(c.size() == n);
    CHECK(b.empty());
    b = c;  // a moved-from list is usable
    CHECK(b == c);
    Words big = count(50), small = count(2);
    big = a;  // heap to whatever a is, and the other way round
    small = a;
    CHECK(big == a);
    CHECK(small == a);
    Words moved_into = count(30);
    moved_into = std::move(big);
    CHECK(moved_into == a);
    Words& self = moved_into;
    moved_into = self;
    CHECK(moved_into == a);
  }
}

TEST_CASE("Words insert and compare as std::vector does") {
  Words w{1, 2};
  w.insert(w.end(), {3, 4, 5, 6, 7, 8});
  CHECK(as_vector(w) == std::vector<uint32_t>{1, 2, 3, 4, 5, 6, 7, 8});
  w.insert(w.begin() + 1, {10});
  CHECK(as_vector(w) == std::vector<uint32_t>{1, 10, 2, 3, 4, 5, 6, 7, 8});
  CHECK(w.at(8) == 8);
  CHECK_THROWS_AS(w.at(9), std::out_of_range);
  std::vector<uint32_t> src{9, 8, 7, 6, 5, 4, 3};
  CHECK(as_vector(Words(src.begin(), src.end())) == src);

  CHECK(Words{1, 2} != Words{1, 2, 0});
  CHECK(Words{1, 3} != Words{1, 2});
  CHECK(Words{} == Words{});
  CHECK(count(7) == count(7));
}
