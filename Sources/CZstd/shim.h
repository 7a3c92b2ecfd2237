// zstd, the system's (libzstd-dev): the `Content-Encoding: zstd` of streamed downloads.
#include <zstd.h>
