// glibc's malloc tuning (`mallopt`), which the Glibc module leaves out: `d4h` caps the heap arenas
// (Sources/d4h/MallocArenaLimit.swift). Part of libc, so nothing to link.
#include <malloc.h>
