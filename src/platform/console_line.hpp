// Purpose: where the progress line and messages go on the console. The progress line is drawn on stderr, so a log of
// stdout never holds it; a message on stderr starts by erasing a progress line drawn in place, so it starts on a line
// of its own.
#pragma once

#include <cstdio>

namespace mgpu {

// Whether the progress line is redrawn in place on `out` (stderr in mgpu_bench). MGPU_PROGRESS=line or =plain decides
// when set (the launch/ scripts set it from whether their own stderr is a terminal); otherwise isatty(out). Open MPI
// gives a rank's stdout a pseudo-terminal even when mpirun's own output goes to a file (open-mpi/ompi#7868), but its
// stderr only a pipe, so under mpirun only MGPU_PROGRESS=line draws in place.
bool progress_in_place(std::FILE* out);

// What a message to stderr starts with: "\r\033[K" (back to the line's start, erase it) where the progress line is
// drawn in place on stderr, so that a message of any rank replaces it instead of continuing it; "" otherwise, so logs
// hold no control characters.
const char* message_start();

}  // namespace mgpu
