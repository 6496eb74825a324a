// Compile-time probe (f): the Transport interface alone, as a custom transport includes it.
#include <studentsvc/http.hpp>

int compile_probe() { return 0; }
