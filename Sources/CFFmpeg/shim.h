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
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersrc.h>
#include <libavfilter/buffersink.h>

// Function-like macros Swift cannot import.
static inline int chorus_averror(int errnum) { return AVERROR(errnum); }
static inline int chorus_averror_eof(void) { return AVERROR_EOF; }
static inline int64_t chorus_nopts_value(void) { return AV_NOPTS_VALUE; }
static inline int chorus_averror_decoder_not_found(void) { return AVERROR_DECODER_NOT_FOUND; }


// Appends a zeroed chapter to a muxer's list (the context frees it); NULL when out of memory.
static inline AVChapter *chorus_add_chapter(AVFormatContext *s) {
    AVChapter *chapter = av_mallocz(sizeof(AVChapter));
    if (!chapter) return NULL;
    if (av_dynarray_add_nofree(&s->chapters, (int *)&s->nb_chapters, chapter) < 0) {
        av_free(chapter);
        return NULL;
    }
    return chapter;
}

#endif
