#ifndef CHORUS_CEBUR128_SHIM_H
#define CHORUS_CEBUR128_SHIM_H
#include <ebur128.h>
#endif
