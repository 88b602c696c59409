#ifndef CHORUS_CONNXRUNTIME_SHIM_H
#define CHORUS_CONNXRUNTIME_SHIM_H
// ONNX Runtime's C API: the header at API version 26 (from PyPI's fastkokoro wheel), the library 1.32.0 (PyPI's
// onnxruntime wheel), both installed by scripts/setup-speech.sh. A runtime serves every API version up to its own.
#include <onnxruntime/onnxruntime_c_api.h>

// The API version this header declares (a macro Swift cannot read as a number through its own import).
static inline uint32_t chorus_ort_api_version(void) { return ORT_API_VERSION; }
#endif
