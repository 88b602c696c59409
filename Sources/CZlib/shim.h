#ifndef CHORUS_CZLIB_SHIM_H
#define CHORUS_CZLIB_SHIM_H
// zlib (Debian's zlib1g-dev): how well a transcript compresses tells Whisper's decoding it is stuck repeating itself.
#include <zlib.h>
#endif
