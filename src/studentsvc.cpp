// Compiled mode (STUDENTSVC_HEADER_ONLY=OFF): every non-template body of the
// SDK (Client's, CurlTransport's), built once. As {fmt}'s src/format.cc, the
// library has one source of bodies: <studentsvc/src.hpp>, the same TU a build
// without CMake compiles (README, "Separate compilation without CMake").
#include <studentsvc/src.hpp>
