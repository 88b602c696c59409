#ifndef CHORUS_CGD_SHIM_H
#define CHORUS_CGD_SHIM_H
#include <gd.h>
#include <gdfonts.h>
#endif
