// Unit tests for secret.hpp: the bytes come out only through reveal(), equal
// secrets compare equal, and a destroyed or moved-from Secret holds no copy
// in its own storage. (That it cannot be streamed, formatted or converted is
// the compile-fail test "secret: misuse does not compile".)

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <studentsvc/secret.hpp>

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace secret_test {

using studentsvc::Secret;

namespace {

/// True when `needle` appears anywhere in the bytes of `storage`.
template <std::size_t N>
bool holds(const unsigned char (&storage)[N], std::string_view needle) {
  const auto* begin = reinterpret_cast<const char*>(storage);
  return std::search(begin, begin + N, needle.begin(), needle.end()) != begin + N;
}

}  // namespace

TEST_CASE("a Secret gives its bytes through reveal() only", "[secret]") {
  const Secret s = "KEY-canary-1";
  CHECK(s.reveal() == "KEY-canary-1");
  CHECK(s.size() == 12);
  CHECK_FALSE(s.empty());
  CHECK(Secret{}.empty());
  CHECK(Secret(std::string("x")).reveal() == "x");
  CHECK(Secret(std::string_view("y")).reveal() == "y");
  STATIC_REQUIRE_FALSE(std::is_convertible_v<Secret, std::string>);
  STATIC_REQUIRE_FALSE(std::is_convertible_v<Secret, std::string_view>);
  STATIC_REQUIRE_FALSE(std::is_convertible_v<Secret, const char*>);
  STATIC_REQUIRE(std::is_nothrow_move_constructible_v<Secret>);
}

TEST_CASE("Secrets compare by their bytes", "[secret]") {
  CHECK(Secret("abc") == Secret("abc"));
  CHECK_FALSE(Secret("abc") == Secret("abd"));
  CHECK_FALSE(Secret("abc") == Secret("abcd"));
  CHECK(Secret() == Secret(""));
}

TEST_CASE("copies and moves keep the value where it belongs", "[secret]") {
  Secret a = "PW-canary-2";
  Secret b = a;
  CHECK(b.reveal() == "PW-canary-2");
  Secret c = std::move(a);
  CHECK(c.reveal() == "PW-canary-2");
  CHECK(a.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty, by contract
  a = c;
  CHECK(a.reveal() == "PW-canary-2");
  b = Secret("other");
  CHECK(b.reveal() == "other");
  b = std::move(c);
  CHECK(b.reveal() == "PW-canary-2");
  auto& self = b;
  b = self;
  CHECK(b.reveal() == "PW-canary-2");
}

TEST_CASE("a destroyed Secret leaves no copy in its own storage", "[secret]") {
  // A short value lives inside the object (the small-string buffer): after the
  // destructor, the storage that held it must not show it any more.
  alignas(Secret) unsigned char storage[sizeof(Secret)];
  auto* s = ::new (static_cast<void*>(storage)) Secret("PW-short");
  REQUIRE(s->reveal() == "PW-short");
  REQUIRE(holds(storage, "PW-short"));  // the control: the scan sees it while alive
  s->~Secret();
  CHECK_FALSE(holds(storage, "PW-short"));
}

TEST_CASE("a moved-from Secret leaves no copy in its own storage", "[secret]") {
  alignas(Secret) unsigned char storage[sizeof(Secret)];
  auto* from = ::new (static_cast<void*>(storage)) Secret("PW-moved");
  REQUIRE(holds(storage, "PW-moved"));
  const Secret to = std::move(*from);
  CHECK(to.reveal() == "PW-moved");
  CHECK_FALSE(holds(storage, "PW-moved"));
  Secret target = "PW-old";
  alignas(Secret) unsigned char storage2[sizeof(Secret)];
  auto* assigned_from = ::new (static_cast<void*>(storage2)) Secret("PW-assign");
  target = std::move(*assigned_from);
  CHECK(target.reveal() == "PW-assign");
  CHECK_FALSE(holds(storage2, "PW-assign"));
  from->~Secret();
  assigned_from->~Secret();
}

}  // namespace secret_test
