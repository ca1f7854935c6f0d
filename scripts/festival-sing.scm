;; Sings a song with Festival's singing mode and prints each sung word's time span: the sung
;; fixtures of the word-timing tests (caption-testkit's `festival_song`) and bench.
;;
;; Usage: festival --script scripts/festival-sing.scm VOICE WAV_OUT SONG
;;   VOICE   voice function name without "voice_": kal_diphone, ked_diphone (16 kHz diphone voices).
;;   WAV_OUT RIFF 16-bit mono at the voice's own rate.
;;   SONG    either a SINGING-DTD XML file (*.xml, as /usr/share/doc/festival/examples/songs/daisy.xml)
;;           or a plain text song (any other name), one note line per word:
;;               WORD   PITCHES   SECONDS        e.g.  daisy  F3,D3  0.75,0.75
;;               rest   SECONDS                  e.g.  rest   0.5      ("-" works as well as "rest")
;;           "," separates syllables, "+" slurs several notes onto one syllable (C3+D3 0.2+0.3).
;;           A pitch is a note in scientific notation (A4 = 440 Hz; C3, F#3, Bb2) or a number in Hz.
;;           '#' starts a comment line; blank lines are ignored; consecutive rests are summed.
;;           If a word has fewer syllable groups than the lexicon gives it syllables, the last group's
;;           time is split evenly over the missing syllables (same pitch); surplus groups are slurred
;;           onto the last syllable. Either is reported on stderr.
;;
;; Prints one line per sung word on stdout: "WORD<TAB>START_S<TAB>END_S", where START is the start of
;; the word's first segment and END the end of its last segment in the Segment relation (as
;; scripts/festival-words.scm does for speech). Rests are silence segments of their own
;; and so never fall inside a word. All lines not in that format go to stderr.

(load (path-append datadir "init.scm"))
(require 'singing-mode)

;;; ------------------------------------------------------------------ text format -> XML

(define (sw-read-file path)
  (let ((fd (fopen path "r")) (chunks nil) (s nil))
    (set! s (fread 65536 fd))
    (while s
      (set! chunks (cons s chunks))
      (set! s (fread 65536 fd)))
    (fclose fd)
    (apply string-append (reverse chunks))))

(define (sw-split str sep)
  "Split STR at every SEP (a one-character string), keeping empty fields."
  (let ((out nil))
    (while (string-matches str (string-append ".*" (char-quote sep) ".*"))
      (set! out (cons (string-before str sep) out))
      (set! str (string-after str sep)))
    (reverse (cons str out))))

(define (sw-fields line)
  "Whitespace-separated fields of LINE."
  (let ((out nil))
    (mapcar (lambda (f) (if (not (string-equal f "")) (set! out (cons f out))))
            (sw-split (apply string-append
                             (mapcar (lambda (f) (string-append f " ")) (sw-split line "\t")))
                      " "))
    (reverse out)))

(define (sw-join lst sep)
  (if (null lst) ""
      (apply string-append (cons (car lst) (mapcar (lambda (x) (string-append sep x)) (cdr lst))))))

(set! sw-note-offsets
  '(("C" 0) ("D" 2) ("E" 4) ("F" 5) ("G" 7) ("A" 9) ("B" 11)))

(define (sw-pitch->hz p)
  "A note name in scientific pitch notation (A4 = 440) or a frequency in Hz -> Hz string."
  (let ((c0 (substring p 0 1)))
    (if (assoc_string c0 sw-note-offsets)
        (let ((base (car (cdr (assoc_string c0 sw-note-offsets))))
              (rest (substring p 1 (- (string-length p) 1)))
              (acc 0))
          (while (and (> (string-length rest) 0)
                      (or (string-equal (substring rest 0 1) "#")
                          (string-equal (substring rest 0 1) "b")))
            (set! acc (+ acc (if (string-equal (substring rest 0 1) "#") 1 -1)))
            (set! rest (substring rest 1 (- (string-length rest) 1))))
          ;; MIDI number: C4 = 60
          (format nil "%f" (* 440.0 (pow 2.0 (/ (- (+ (* 12 (+ 1 (parse-number rest))) base acc) 69)
                                                12.0)))))
        (format nil "%f" (parse-number p)))))

(define (sw-word-nsyl word)
  (let ((entry (lex.lookup (downcase word) nil)))
    (length (car (cdr (cdr entry))))))

(define (sw-fit-groups word pitches durs)
  "Make the syllable groups of PITCHES and DURS (lists of lists of strings) match the lexicon."
  (let ((n (sw-word-nsyl word)) (k (length durs)))
    (cond
     ((or (equal? n k) (< n 1)) (list pitches durs))
     ((< k n)
      (format stderr "festival-sing: %s has %d syllables, %d given; splitting the last one\n" word n k)
      (let ((lastp (car (last pitches)))
            (total (apply + (mapcar parse-number (car (last durs)))))
            (np (reverse (cdr (reverse pitches))))
            (nd (reverse (cdr (reverse durs))))
            (m (+ 1 (- n k))) (i 0))
        (while (< i m)
          (set! np (append np (list (list (car lastp)))))
          (set! nd (append nd (list (list (format nil "%f" (/ total m))))))
          (set! i (+ i 1)))
        (list np nd)))
     (t
      (format stderr "festival-sing: %s has %d syllables, %d given; slurring the surplus\n" word n k)
      (let ((np nil) (nd nil) (i 0) (tp nil) (td nil))
        (while (< i k)
          (if (< i n)
              (begin (set! np (append np (list (nth i pitches))))
                     (set! nd (append nd (list (nth i durs)))))
              (begin (set! np (append (reverse (cdr (reverse np)))
                                      (list (append (car (last np)) (nth i pitches)))))
                     (set! nd (append (reverse (cdr (reverse nd)))
                                      (list (append (car (last nd)) (nth i durs)))))))
          (set! i (+ i 1)))
        (list np nd))))))

(define (sw-groups str)
  (mapcar (lambda (g) (sw-split g "+")) (sw-split str ",")))

(define (sw-groups->string groups)
  (sw-join (mapcar (lambda (g) (sw-join g "+")) groups) ","))

(define (sw-text->xml txt-path xml-path)
  (let ((lines (sw-split (sw-read-file txt-path) "\n"))
        (out nil) (pending-rest 0.0) (fields nil))
    (define (flush-rest)
      (if (> pending-rest 0.0)
          (set! out (cons (format nil "<REST SECONDS=\"%f\"></REST>\n" pending-rest) out)))
      (set! pending-rest 0.0))
    (mapcar
     (lambda (line)
       (set! fields (sw-fields line))
       (cond
        ((null fields) nil)
        ((string-equal (substring (car fields) 0 1) "#") nil)
        ((or (string-equal (downcase (car fields)) "rest") (string-equal (car fields) "-"))
         (set! pending-rest (+ pending-rest (parse-number (car (cdr fields))))))
        (t
         (flush-rest)
         (let ((word (car fields))
               (pitches (mapcar (lambda (g) (mapcar sw-pitch->hz g))
                                (sw-groups (car (cdr fields)))))
               (durs (sw-groups (car (cdr (cdr fields))))))
           (let ((fit (sw-fit-groups word pitches durs)))
             (set! out (cons (format nil "<DURATION SECONDS=\"%s\"><PITCH FREQ=\"%s\">%s</PITCH></DURATION>\n"
                                     (sw-groups->string (car (cdr fit)))
                                     (sw-groups->string (car fit))
                                     word)
                             out)))))))
     lines)
    (flush-rest)
    (let ((fd (fopen xml-path "w")))
      (format fd "<?xml version=\"1.0\"?>\n<!DOCTYPE SINGING PUBLIC \"-//SINGING//DTD SINGING mark up//EN\" \"Singing.v0_1.dtd\" []>\n<SINGING BPM=\"60\">\n")
      (mapcar (lambda (s) (format fd "%s" s)) (reverse out))
      (format fd "</SINGING>\n")
      (fclose fd))))

;;; ------------------------------------------------------------------ word spans

(define (word-first-segment word)
  (let ((syl (item.relation.daughter1 word 'SylStructure)))
    (and syl (item.daughter1 syl))))

(define (sw-silence? seg)
  (member_string (item.name seg) (car (cdr (assoc 'silences (PhoneSet.description))))))

(define (word-last-segment word)
  ;; The word's last segment in SylStructure, then on through any following segments that belong to
  ;; no syllable and are not silences: ked_diphone splits every "er" into "er" + an inserted "r" at
  ;; waveform-synthesis time (ked_diphone_fix_phone_name), and that "r" is the second half of the
  ;; word's own vowel.
  (let ((syl (item.relation.daughtern word 'SylStructure)) (seg nil) (nxt nil))
    (if syl
        (begin
          (set! seg (item.relation (item.daughtern syl) 'Segment))
          (set! nxt (item.next seg))
          (while (and nxt
                      (not (item.relation nxt 'SylStructure))
                      (not (sw-silence? nxt)))
            (set! seg nxt)
            (set! nxt (item.next seg)))))
    seg))

(define (print-word word offset)
  (let ((first-seg (word-first-segment word))
        (last-seg (word-last-segment word)))
    (if (and first-seg last-seg)
        (format t "%s\t%f\t%f\n"
                (item.name word)
                (+ offset (item.feat first-seg "segment_start"))
                (+ offset (item.feat last-seg "end"))))))

(set! sw-utts nil)
(define (sw-collect utt) (set! sw-utts (cons utt sw-utts)) utt)

(let ((voice (format nil "%s" (car argv)))
      (wav-out (format nil "%s" (car (cdr argv))))
      (song (format nil "%s" (car (cdr (cdr argv)))))
      (wave nil) (offset 0.0))
  (eval (cons (intern (string-append "voice_" voice)) nil))
  (if (not (string-matches song ".*\\.[xX][mM][lL]"))
      (let ((xml (string-append wav-out ".song.xml")))
        (sw-text->xml song xml)
        (set! song xml)))
  (set! tts_hooks (list utt.synth sw-collect))
  (tts_file song "singing")
  (set! sw-utts (reverse sw-utts))
  (if (> (length sw-utts) 1)
      (format stderr "festival-sing: %d utterances, concatenated\n" (length sw-utts)))
  (mapcar
   (lambda (utt)
     (let ((w (utt.wave utt)))
       (mapcar (lambda (word) (print-word word offset)) (utt.relation.items utt 'Word))
       ;; SING_WORDS_SEGMENTS=1 lists every segment on stderr: name, start, end, word
       (if (getenv "SING_WORDS_SEGMENTS")
           (mapcar (lambda (seg)
                     (format stderr "seg\t%s\t%f\t%f\t%s\n" (item.name seg)
                             (+ offset (item.feat seg "segment_start")) (+ offset (item.feat seg "end"))
                             (item.feat seg "R:SylStructure.parent.parent.name")))
                   (utt.relation.items utt 'Segment)))
       (set! offset (+ offset (/ (car (cdr (assoc 'num_samples (wave.info w))))
                                 (car (cdr (assoc 'sample_rate (wave.info w)))))))
       (set! wave (if wave (wave.append wave w) w))))
   sw-utts)
  (wave.save wave wav-out 'riff))
