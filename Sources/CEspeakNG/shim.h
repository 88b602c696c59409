#ifndef CHORUS_CESPEAKNG_SHIM_H
#define CHORUS_CESPEAKNG_SHIM_H
#include <espeak-ng/speak_lib.h>
#endif
