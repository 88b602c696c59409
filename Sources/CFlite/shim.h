#ifndef CHORUS_CFLITE_SHIM_H
#define CHORUS_CFLITE_SHIM_H
#include <setjmp.h>
#include <stdlib.h>
#include <flite/flite.h>
#include <flite/flite_version.h>

/* The voices' registration functions: exported by their libraries, declared in no installed header. */
cst_voice *register_cmu_us_slt(const char *voxdir);
cst_voice *register_cmu_us_rms(const char *voxdir);
cst_voice *register_cmu_us_awb(const char *voxdir);
cst_voice *register_cmu_us_kal16(const char *voxdir);
cst_voice *register_cmu_us_kal(const char *voxdir);

static inline const char *chorus_flite_version(void) { return FLITE_PROJECT_VERSION; }

/* Synthesizes `text` with per-utterance rate and pitch, and `count` pronunciations (`entries`) (feature names must
   outlive the utterance, so they are literals here). Flite reports internal errors by longjmp through the global `cst_errjmp`, or exits
   the process when it is unset: this catches them, so callers must not run two of these at once.
   Flite's voices excite unvoiced sounds with noise from libc's rand(): callers run this inside Chorus's
   SeededRandom.seeded, which seeds it and keeps other libraries from drawing during the utterance.
   Returns NULL on failure (the half-built utterance is abandoned: Flite cannot free it safely). */
static inline cst_utterance *chorus_flite_synth_with(const char *text, cst_voice *voice, float duration_stretch,
                                                     float f0_mean, float f0_stddev, const char *const *entries, int count) {
    jmp_buf env;
    /* Pronunciations for this utterance only: lexicon entries ("word : phones", phones valid in the voice's lexicon)
       put before the lexicon's own run-time addenda, and taken off again after (on the error path too). */
    cst_lexicon *volatile lexicon = NULL;
    cst_val *volatile saved = NULL, *volatile added = NULL, *volatile last = NULL;
    cst_utterance *volatile utterance = NULL;
    cst_errjmp = &env;
    if (setjmp(env) == 0) {
        if (count > 0) {
            lexicon = val_lexicon(feat_val(voice->features, "lexicon"));
            saved = lexicon->lex_addenda;
            for (int i = 0; i < count; i++) {
                cst_val *entry = cst_lex_make_entry(lexicon, entries[i]);
                if (entry) { added = cons_val(entry, added); if (!last) last = added; }
            }
            if (last) { set_cdr(last, saved); lexicon->lex_addenda = added; }
        }
        utterance = new_utterance();
        utt_set_input_text(utterance, text);
        if (duration_stretch > 0) feat_set_float(utterance->features, "duration_stretch", duration_stretch);
        if (f0_mean > 0) feat_set_float(utterance->features, "int_f0_target_mean", f0_mean);
        if (f0_stddev > 0) feat_set_float(utterance->features, "int_f0_target_stddev", f0_stddev);
        utterance = flite_do_synth(utterance, voice, utt_synth);
    } else {
        utterance = NULL;
    }
    cst_errjmp = NULL;
    if (last) { lexicon->lex_addenda = saved; set_cdr(last, NULL); delete_val(added); }
    return utterance;
}

static inline cst_utterance *chorus_flite_synth(const char *text, cst_voice *voice, float duration_stretch,
                                                float f0_mean, float f0_stddev) {
    return chorus_flite_synth_with(text, voice, duration_stretch, f0_mean, f0_stddev, NULL, 0);
}

/* The name of an item (a macro in cst_item.h, which Swift cannot import). */
static inline const char *chorus_flite_item_name(const cst_item *item) { return ffeature_string(item, "name"); }
#endif
