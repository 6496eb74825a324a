#pragma once
// nginx (Debian's nginx-light; STUDENTSVC_NGINX is its path) as a real TLS
// gateway on 127.0.0.1: one process in the foreground (a BackgroundServer),
// serving fixed student answers over HTTPS (HTTP/2 where offered) with the
// TestPki's server certificate, plus any directives the test adds: in the
// server block (mutual TLS: `ssl_client_certificate ...; ssl_verify_client on;`)
// and in the http block (a `log_format`). Stopped on destruction.

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "background_server.hpp"
#include "test_pki.hpp"

namespace studentsvc::test {

class NginxTls {
 public:
  /// The directives the test adds to nginx's configuration.
  struct Directives {
    std::string server;  ///< inside `server { }`
    std::string http;    ///< inside `http { }`, before the server
  };

  NginxTls(const TestPki& pki, Directives directives)
      : dir_(pki.dir), nginx_([&](int port) {
          std::ofstream(dir_ / "nginx-tls.conf") << config(pki, directives, port);
          return std::vector<std::string>{STUDENTSVC_NGINX, "-p", dir_.string() + "/", "-c",
                                          (dir_ / "nginx-tls.conf").string(), "-e",
                                          (dir_ / "nginx-error.log").string(), "-g",
                                          "daemon off; master_process off;"};
        }) {}
  NginxTls(const TestPki& pki, std::string server_directives)
      : NginxTls(pki, Directives{std::move(server_directives), {}}) {}

  [[nodiscard]] bool running() const { return nginx_.running(); }
  [[nodiscard]] std::string base_url() const { return "https://127.0.0.1:" + std::to_string(nginx_.port()); }
  /// Where nginx keeps its files: a log the test's directives name goes here.
  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }
  [[nodiscard]] std::string error_log() const { return read(dir_ / "nginx-error.log"); }
  [[nodiscard]] static std::string read(const std::filesystem::path& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

 private:
  [[nodiscard]] std::string config(const TestPki& pki, const Directives& directives, int port) const {
    const std::string d = dir_.string();
    const std::string student =
        R"('{"perm":"$perm","firstName":"Ana","lastName":"Lovelace","suffix":null,"email":"ana@example.edu"}')";
    return "pid " + d + "/nginx-tls.pid;\n"
           "events { worker_connections 256; }\n"
           "http {\n"
           "  client_body_temp_path " + d + "; proxy_temp_path " + d + "; fastcgi_temp_path " + d + ";\n"
           "  uwsgi_temp_path " + d + "; scgi_temp_path " + d + ";\n"
           "  access_log off;\n"
           "  " + directives.http + "\n"
           "  server {\n"
           "    listen 127.0.0.1:" + std::to_string(port) + " ssl http2;\n"
           "    ssl_certificate " + pki.server_cert.string() + ";\n"
           "    ssl_certificate_key " + pki.server_key.string() + ";\n"
           "    " + directives.server + "\n"
           "    keepalive_requests 100000;\n"
           "    location = /students/v2/students/current {\n"
           "      set $perm 2345678;\n"
           "      default_type application/json;\n"
           "      return 200 " + student + ";\n"
           "    }\n"
           "    location ~ \"^/students/v2/students/(?<perm>[0-9]{7})$\" {\n"
           "      default_type application/json;\n"
           "      return 200 " + student + ";\n"
           "    }\n"
           "  }\n"
           "}\n";
  }

  std::filesystem::path dir_;
  BackgroundServer nginx_;  // last: stopped before the directory's path goes
};

}  // namespace studentsvc::test
