;; Synthesise one sentence with Festival and print each word's exact time span.
;;
;; Usage: festival --script scripts/festival-words.scm VOICE WAV_OUT "TEXT"
;;   VOICE is a voice function's name without "voice_": cmu_us_slt_arctic_hts, kal_diphone,
;;   ked_diphone (Debian festvox-us-slt-hts, festvox-kallpc16k, festvox-kdlpc16k).
;;
;; Writes the wave at the voice's own rate (slt 32 kHz, kal and ked 16 kHz; resample afterwards)
;; as RIFF 16-bit mono, and prints one line per word on stdout: "WORD<TAB>START_S<TAB>END_S".
;; A word's span runs from the start of its first segment to the end of its last segment in the
;; utterance's Segment relation (through SylStructure: word -> syllables -> segments). Pauses are
;; segments of their own that belong to no word, so they fall between words, never inside one.
;; The waveform is made from these very segment times (diphone joins / HTS state durations), so
;; the spans are the synthesiser's own boundaries, not an estimate.

;; --script skips Festival's init files (voices, lexicons); load them as text2wave does.
(load (path-append datadir "init.scm"))

(define (word-first-segment word)
  (let ((syl (item.relation.daughter1 word 'SylStructure)))
    (and syl (item.daughter1 syl))))

(define (word-last-segment word)
  (let ((syl (item.relation.daughtern word 'SylStructure)))
    (and syl (item.daughtern syl))))

(define (print-word word)
  (let ((first-seg (word-first-segment word))
        (last-seg (word-last-segment word)))
    (if (and first-seg last-seg)
        (format t "%s\t%f\t%f\n"
                (item.name word)
                (item.feat first-seg "segment_start")
                (item.feat last-seg "end")))))

(let ((voice (car argv))
      (wav-out (car (cdr argv)))
      ;; Festival hands arguments over as symbols; SynthText needs a string or it reads one token.
      (text (format nil "%s" (car (cdr (cdr argv))))))
  (eval (cons (intern (string-append "voice_" voice)) nil))
  (set! utt (SynthText text))
  (utt.save.wave utt wav-out 'riff)
  (mapcar print-word (utt.relation.items utt 'Word)))
