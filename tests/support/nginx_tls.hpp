#pragma once
// nginx (Debian's nginx-light; STUDENTSVC_NGINX is its path) as a real TLS
// gateway on 127.0.0.1: one process in the foreground, serving fixed student
// answers over HTTPS (HTTP/2 where offered) with the TestPki's server
// certificate, plus any server directives the test adds (mutual TLS:
// `ssl_client_certificate ...; ssl_verify_client on;`). Stopped on destruction.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "test_pki.hpp"

extern "C" char** environ;

namespace studentsvc::test {

class NginxTls {
 public:
  NginxTls(const TestPki& pki, const std::string& server_directives) : dir_(pki.dir) {
    using namespace std::chrono_literals;
    for (int tries = 0; tries < 5 && pid_ <= 0; ++tries) {
      port_ = free_port();
      std::ofstream(dir_ / "nginx-tls.conf") << config(pki, server_directives);
      std::vector<std::string> args = {STUDENTSVC_NGINX, "-p", dir_.string() + "/", "-c",
                                       (dir_ / "nginx-tls.conf").string(), "-e", (dir_ / "nginx-error.log").string(),
                                       "-g", "daemon off; master_process off;"};
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      pid_t pid = 0;
      if (::posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) continue;
      const auto until = std::chrono::steady_clock::now() + 10s;
      while (std::chrono::steady_clock::now() < until && !accepts(port_)) {
        if (int status = 0; ::waitpid(pid, &status, WNOHANG) == pid) {  // exited: the port was taken
          pid = 0;
          break;
        }
        std::this_thread::sleep_for(20ms);
      }
      if (pid > 0 && accepts(port_)) {
        pid_ = pid;
      } else if (pid > 0) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
      }
    }
  }
  ~NginxTls() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  NginxTls(const NginxTls&) = delete;
  NginxTls& operator=(const NginxTls&) = delete;

  [[nodiscard]] bool running() const { return pid_ > 0; }
  [[nodiscard]] std::string base_url() const { return "https://127.0.0.1:" + std::to_string(port_); }
  [[nodiscard]] std::string error_log() const {
    std::ifstream in(dir_ / "nginx-error.log");
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

 private:
  static int free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    const bool ok = fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
    if (fd >= 0) ::close(fd);
    return ok ? ntohs(addr.sin_port) : 0;
  }
  static bool accepts(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    const bool ok = fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    if (fd >= 0) ::close(fd);
    return ok;
  }
  [[nodiscard]] std::string config(const TestPki& pki, const std::string& directives) const {
    const std::string d = dir_.string();
    const std::string student =
        R"('{"perm":"$perm","firstName":"Ana","lastName":"Lovelace","suffix":null,"email":"ana@example.edu"}')";
    return "pid " + d + "/nginx-tls.pid;\n"
           "events { worker_connections 256; }\n"
           "http {\n"
           "  client_body_temp_path " + d + "; proxy_temp_path " + d + "; fastcgi_temp_path " + d + ";\n"
           "  uwsgi_temp_path " + d + "; scgi_temp_path " + d + ";\n"
           "  access_log off;\n"
           "  server {\n"
           "    listen 127.0.0.1:" + std::to_string(port_) + " ssl http2;\n"
           "    ssl_certificate " + pki.server_cert.string() + ";\n"
           "    ssl_certificate_key " + pki.server_key.string() + ";\n"
           "    " + directives + "\n"
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
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace studentsvc::test
