#ifndef CHORUS_CSNDFILE_SHIM_H
#define CHORUS_CSNDFILE_SHIM_H
#include <sndfile.h>
#endif
