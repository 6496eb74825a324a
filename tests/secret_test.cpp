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

#include <studentsvc/detail/call/coalescer.hpp>
#include <studentsvc/detail/call/wiped_copy.hpp>
#include <studentsvc/detail/text/wipe.hpp>
#include <studentsvc/http.hpp>
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

/// How often `needle` appears in the `size` bytes at `bytes`.
std::size_t count_in(const void* bytes, std::size_t size, std::string_view needle) {
  const auto* begin = static_cast<const char*>(bytes);
  const auto* end = begin + size;
  std::size_t n = 0;
  for (auto it = std::search(begin, end, needle.begin(), needle.end()); it != end;
       it = std::search(it + 1, end, needle.begin(), needle.end())) {
    ++n;
  }
  return n;
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

TEST_CASE("wipe_string zeroes the whole buffer, spare capacity and inline buffer included", "[secret][wipe]") {
  std::string s = "KEY-long-canary-0123456789-abcdefghijklmnopqrstuvwxyz";
  s.reserve(200);
  const char* buffer = s.data();
  const std::size_t capacity = s.capacity();
  s.resize(20);  // a shorter value: the old tail stays in the spare capacity
  REQUIRE(count_in(buffer, capacity, "abcdefghij") == 1);
  studentsvc::detail::wipe_string(s);
  CHECK(s.empty());
  CHECK(s.data() == buffer);  // not freed, not moved: wiped in place
  CHECK(s.capacity() == capacity);
  CHECK(std::all_of(buffer, buffer + capacity, [](char c) { return c == 0; }));

  alignas(std::string) unsigned char storage[sizeof(std::string)];
  auto* short_one = ::new (static_cast<void*>(storage)) std::string("PW-short");
  REQUIRE(holds(storage, "PW-short"));
  studentsvc::detail::wipe_string(*short_one);
  CHECK_FALSE(holds(storage, "PW-short"));
  using std::string;
  short_one->~string();
}

TEST_CASE("Headers leave no value behind: cleared (as destroyed), erased, replaced, assigned over", "[secret][wipe]") {
  // A short value lives inside the object, so a destroyed field leaves it in
  // storage that is not freed (the Headers' own, or the vector's spare room).
  SECTION("cleared, as the destructor does first") {
    alignas(studentsvc::Headers) unsigned char storage[sizeof(studentsvc::Headers)];
    auto* h = ::new (static_cast<void*>(storage)) studentsvc::Headers();
    h->set("svc-user-jwt", "JWT-short-1");
    const auto* fields = &*h->begin();
    const std::size_t bytes = 2 * sizeof(studentsvc::Headers::Field);
    REQUIRE(count_in(fields, bytes, "JWT-short-1") == 1);
    // The vector's storage is freed by the destructor: look at it just before,
    // with the values wiped by clear() (what the destructor runs first).
    h->clear();
    CHECK(count_in(fields, bytes, "JWT-short-1") == 0);
    h->~Headers();
  }
  SECTION("erased: the value and the moved-from tail") {
    studentsvc::Headers h;
    h.set("x-api-key", "KEY-short-12");
    h.set("Accept", "ACC-s2");
    const auto* fields = &*h.begin();
    const std::size_t bytes = 2 * sizeof(studentsvc::Headers::Field);
    REQUIRE(count_in(fields, bytes, "KEY-short-12") == 1);
    h.erase("x-api-key");  // Accept moves into the first slot
    CHECK(h.size() == 1);
    CHECK(h.find("Accept") == "ACC-s2");
    CHECK(count_in(fields, bytes, "rt-12") == 0);   // no remnant of the key under the shorter value
    CHECK(count_in(fields, bytes, "ACC-s2") == 1);  // and no copy left in the moved-from slot
  }
  SECTION("replaced by set()") {
    studentsvc::Headers h;
    h.set("x-api-key", "KEY-old-value-1");
    const auto* fields = &*h.begin();
    h.set("x-api-key", "K2");  // built in the same slot: a shorter value would not cover the old one
    CHECK(h.find("x-api-key") == "K2");
    CHECK(count_in(fields, 2 * sizeof(studentsvc::Headers::Field), "old-value-1") == 0);
  }
  SECTION("assigned over") {
    studentsvc::Headers h;
    h.set("x-api-key", "KEY-assign");
    const auto* fields = &*h.begin();
    const studentsvc::Headers shorter{{"Accept", "a"}};
    h = shorter;  // copies into the same storage: the old value must not linger past the new one
    CHECK(h.find("Accept") == "a");
    CHECK(count_in(fields, 2 * sizeof(studentsvc::Headers::Field), "Y-assign") == 0);
  }
}

TEST_CASE("the coalescing key holds the credentials as a Secret, compared in full", "[secret][wipe]") {
  studentsvc::HttpRequest a;
  a.url = "https://h/students/v2/students/1234567";
  a.headers.set("x-api-key", "KEY-one");
  a.headers.set("svc-user-jwt", "JWT-alice");
  studentsvc::HttpRequest b = a;
  b.headers.set("svc-user-jwt", "JWT-bob");
  const auto key_a = studentsvc::detail::coalescing_key("get_student", a, {});
  STATIC_REQUIRE(std::is_same_v<std::remove_const_t<decltype(key_a)>, Secret>);  // wiped on destruction
  CHECK(key_a.reveal().find("JWT-alice") != std::string_view::npos);
  CHECK_FALSE(key_a == studentsvc::detail::coalescing_key("get_student", b, {}));  // two identities never share
  CHECK(key_a == studentsvc::detail::coalescing_key("get_student", a, {}));
}

TEST_CASE("a call's copy of CallOptions wipes its JWT when it goes", "[secret][wipe]") {
  using Copy = studentsvc::detail::WipedCopy<studentsvc::CallOptions>;
  studentsvc::CallOptions call;
  call.user_jwt = "JWT-short-2";
  alignas(Copy) unsigned char storage[sizeof(Copy)];
  auto* copy = ::new (static_cast<void*>(storage)) Copy(call);
  REQUIRE(holds(storage, "JWT-short-2"));
  {
    const Copy moved = std::move(*copy);  // the moved-from copy keeps the short bytes until it goes
    CHECK(moved.value.user_jwt == "JWT-short-2");
  }
  copy->~Copy();
  CHECK_FALSE(holds(storage, "JWT-short-2"));
  CHECK(call.user_jwt == "JWT-short-2");  // the caller's own is the caller's
}

}  // namespace secret_test
