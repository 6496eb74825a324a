// conversation: call {base_url}/conversation. The interface shows neither the
// method nor the payloads, so the SDK passes them through and returns the raw answer.
//
//   STUDENTSVC_BASE_URL=https://... STUDENTSVC_API_KEY=... conversation
//   conversation --mock     # against the bundled mock server, which echoes the request
#include <iostream>
#include <optional>
#include <string_view>

#include <studentsvc/json.hpp>  // RawResponse::json() (left out of the umbrella in compiled mode)
#include <studentsvc/studentsvc.hpp>
#include <studentsvc/testing/mock_server.hpp>  // only for --mock

int main(int argc, char** argv) {
  const bool use_mock = argc > 1 && std::string_view(argv[1]) == "--mock";
  std::optional<studentsvc::testing::MockServer> mock;
  auto options = use_mock ? mock.emplace().client_options() : studentsvc::ClientOptions::from_env();
  if (!options) {
    std::cerr << "configuration: " << to_string(options.error()) << '\n';
    return 1;
  }

  const studentsvc::Client client(*options);
  studentsvc::ConversationRequest request;
  request.method = "POST";
  request.sub_path = "threads/42";  // sent as /conversation/threads/42
  request.query = {{"lang", "en"}};
  request.body = R"({"text":"When does registration open?"})";  // Content-Type: application/json
  const auto response = client.conversation(request);
  if (!response) {
    std::cerr << "conversation: " << to_string(response.error()) << '\n';
    return 1;
  }
  std::cout << "status " << response->status << '\n';
  if (const auto json = response->json()) {
    std::cout << json->dump(2) << '\n';
  } else {
    std::cout << response->body << '\n';  // not JSON: print it as it came
  }
  return 0;
}
