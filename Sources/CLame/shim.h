#ifndef CHORUS_CLAME_SHIM_H
#define CHORUS_CLAME_SHIM_H
#include <lame/lame.h>
#endif
