#ifndef CHORUS_CSHERPAONNX_SHIM_H
#define CHORUS_CSHERPAONNX_SHIM_H
// sherpa-onnx's C API, version 2.0.1 (installed by scripts/setup-speech.sh; its structs change between releases).
#include <sherpa-onnx/c-api/c-api.h>
#endif
