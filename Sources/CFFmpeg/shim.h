#ifndef CHORUS_CFFMPEG_SHIM_H
#define CHORUS_CFFMPEG_SHIM_H

#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/error.h>
#include <libavutil/mem.h>
#include <libavutil/opt.h>
#include <libavutil/samplefmt.h>
#include <libswresample/swresample.h>

// Function-like macros Swift cannot import.
static inline int chorus_averror(int errnum) { return AVERROR(errnum); }
static inline int chorus_averror_eof(void) { return AVERROR_EOF; }
static inline int64_t chorus_nopts_value(void) { return AV_NOPTS_VALUE; }
static inline int chorus_averror_decoder_not_found(void) { return AVERROR_DECODER_NOT_FOUND; }

#endif
