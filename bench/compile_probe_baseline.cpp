// Compile-time probe (f), the baseline: what any libcurl + nlohmann::json program includes.
#include <curl/curl.h>
#include <nlohmann/json.hpp>

int compile_probe() { return 0; }
