// zlib, the system's (zlib1g-dev): inflate for the iPhone's export.zip.
#include <zlib.h>
