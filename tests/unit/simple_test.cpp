// The simple action: tc's bytes, round trips and errors.
//
// Golden bodies: the TCA_ACT_OPTIONS payloads tc (iproute2 6.1) sent for
// `tc filter add ... matchall action simple ...` (strace -e sendmsg -x).
// tc copies SIMP_MAX_DATA (32) bytes from its argument, so what follows the
// string's NUL is whatever follows it in tc's memory (the next argv word):
// tcsync sends zeros there; the kernel keeps the string up to the NUL.
#include <catch2/catch.hpp>

#include "action_test_util.h"
#include "kinds/registry.h"
#include "test_util.h"

using namespace tcsync;
using namespace tcsync::test::actions;

TEST_CASE("simple: TCA_ACT_OPTIONS bodies are tc's bytes") {
  // sdata hello index 3: tc's bytes after "hello\0" were "index\0" "3\0" ...
  check_golden("[{simple: {sdata: hello}, index: 3}]",
               "18000200030000000000000003000000000000000000000024000300"
               "68656c6c6f00"
               "0000000000000000000000000000000000000000000000000000");
  // sdata "hello world" drop
  check_golden("[{simple: {sdata: hello world, control: drop}}]",
               "18000200000000000000000002000000000000000000000024000300"
               "68656c6c6f20776f726c6400"
               "0000000000000000000000000000000000000000");
}

TEST_CASE("simple: the kernel's dump (strlen + 1) reads as the file's string") {
  Options o;
  kActionSimple.decode(tcsync::test::unhex("1800020003000000000000000300000001000000010000000a00030068656c6c6f000000"),
                       KindCtx{}, o);
  CHECK(o == first_opts("[{simple: {sdata: hello}}]"));
}

TEST_CASE("simple: errors") {
  CHECK(error_of("[{simple: {}}]") == "simple needs 'sdata', the string it logs (the kernel refuses it without)");
  CHECK(error_of("[{simple: {sdata: 0123456789012345678901234567890123}}]") ==
        "'sdata' is 34 bytes long, more than the kernel's 31");
}

TEST_CASE("simple: tc's words") {
  std::string diags;
  std::string y = imported(
      "qdisc add dev v0 clsact\nfilter add dev v0 ingress pref 1 matchall action simple sdata \"hello world\" drop "
      "index 4\n",
      diags);
  INFO(diags);
  INFO(y);
  CHECK(y.find("simple: {sdata: \"hello world\", control: drop}") != std::string::npos);
}
