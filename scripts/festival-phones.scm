;; Run a Festival voice's front end over a prompt list and print each word's phones.
;;
;; Usage: festival --script scripts/festival-phones.scm VOICE PROMPTS
;;   VOICE is a voice function's name without "voice_" (msu_ru_nsh_clunits: Debian festvox-ru);
;;   PROMPTS is a festvox prompt list, lines of ( ID "TEXT" ), such as the voice's own
;;   etc/txt.done.data.
;;
;; Prints one line per word: "ID<TAB>WORD<TAB>PHONES" (PHONES space-separated, the word's segments
;; through SylStructure after PostLex, empty for a word with none). Nothing is synthesised: the
;; modules are the ones before waveform synthesis, which is where a festvox build takes the phone
;; sequence that it then labels, so a voice's own label files can be split into words with it.

;; --script skips Festival's init files (voices, lexicons); load them as text2wave does.
(load (path-append datadir "init.scm"))

(define (word-phones word)
  (let ((names nil))
    (mapcar (lambda (syl) (mapcar (lambda (seg) (set! names (cons (item.name seg) names)))
                                  (item.daughters syl)))
            (item.relation.daughters word 'SylStructure))
    (reverse names)))

;; SIOD's apply takes one argument list, so the names are joined by hand.
(define (join names)
  (cond ((null? names) "")
        ((null? (cdr names)) (car names))
        (t (string-append (car names) " " (join (cdr names))))))

(define (print-prompt prompt)
  (let ((id (car prompt))
        ;; Utterance is a special form that does not evaluate its arguments.
        (utt (eval (list 'Utterance 'Text (car (cdr prompt))))))
    (Initialize utt) (Text utt) (Token_POS utt) (Token utt) (POS utt) (Phrasify utt) (Word utt)
    (Pauses utt) (Intonation utt) (PostLex utt)
    (mapcar (lambda (word) (format t "%s\t%s\t%s\n" id (item.name word) (join (word-phones word))))
            (utt.relation.items utt 'Word))))

(eval (cons (intern (string-append "voice_" (car argv))) nil))
(mapcar print-prompt (load (car (cdr argv)) t))
