// <studentsvc/url.hpp>: a URL as a program may show it, without its userinfo.

#include <catch2/catch.hpp>

#include <string>

#include <studentsvc/url.hpp>

// Its own namespace: a test program compiles several files as one TU (unity build, tests/CMakeLists.txt).
namespace url_test {

TEST_CASE("strip_url_userinfo drops user:password from URLs and URL-like words", "[url]") {
  using studentsvc::strip_url_userinfo;
  CHECK(strip_url_userinfo("http://user:pw@proxy.example.edu:3128") == "http://proxy.example.edu:3128");
  CHECK(strip_url_userinfo("https://api.example.edu/students") == "https://api.example.edu/students");
  CHECK(strip_url_userinfo("u:p@proxy:8080") == "proxy:8080");
  CHECK(strip_url_userinfo("proxy 'http://a:b@p:1' refused") == "proxy 'http://p:1' refused");
  // An '@' in the path: more is removed, never less (the secret never survives).
  const auto over = strip_url_userinfo("http://u:secret@h/x@y");
  CHECK(over.find("secret") == std::string::npos);
  CHECK(strip_url_userinfo("") == "");
}

TEST_CASE("has_url_userinfo looks only at the authority", "[url]") {
  CHECK(studentsvc::has_url_userinfo("http://u:p@proxy:3128"));
  CHECK(studentsvc::has_url_userinfo("http://u@proxy"));
  CHECK_FALSE(studentsvc::has_url_userinfo("http://proxy:3128"));
  CHECK_FALSE(studentsvc::has_url_userinfo("https://api.example.edu/a@b"));
}

}  // namespace url_test
