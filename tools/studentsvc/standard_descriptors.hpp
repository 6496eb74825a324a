#pragma once
// Descriptors 0, 1 and 2 held before anything else opens one: a program started
// with stdout closed (`studentsvc get 1234567 >&-`) would otherwise write its
// records into whatever took descriptor 1 next (libcurl's wake-up socketpair,
// the --failed-to file).

namespace studentsvc_cli {

/// Opens /dev/null on each of descriptors 0, 1 and 2 that is closed, for the
/// other direction: stdin write-only, stdout and stderr read-only, so that a
/// read or write on one fails (EBADF) as it would on the closed descriptor, and
/// a closed stdout is a write error, never output silently lost. Then SIGPIPE
/// is ignored: a reader that went away (`| head -c1`) is a write error (EPIPE)
/// the tool reports and ends cleanly on, with --failed-to written.
void hold_standard_descriptors();

}  // namespace studentsvc_cli
