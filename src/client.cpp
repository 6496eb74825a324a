// Compiled mode (STUDENTSVC_HEADER_ONLY=OFF): Client's bodies, built once.
#include <studentsvc/detail/call/client-inl.hpp>
