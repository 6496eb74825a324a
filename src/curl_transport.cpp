// Compiled mode (STUDENTSVC_HEADER_ONLY=OFF): CurlTransport's bodies, built once.
#include <studentsvc/detail/config.hpp>

#if STUDENTSVC_WITH_CURL
#include <studentsvc/detail/curl/transport-inl.hpp>
#endif
