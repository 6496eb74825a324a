// Compile-time probe (f): the SDK's umbrella header.
#include <studentsvc/studentsvc.hpp>

int compile_probe() { return 0; }
