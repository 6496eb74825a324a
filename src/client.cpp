// Compiled mode (STUDENTSVC_HEADER_ONLY=OFF): Client's bodies, built once.
#include <studentsvc/detail/client-inl.hpp>
