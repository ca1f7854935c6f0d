"""Speech from espeak-ng with exact word times: the continuous fixtures of the word-timing bench
(scripts/bench_transcribe.py) and of the Rust tests (caption-testkit's `espeak_sentence`).

    python3 scripts/espeak_words.py VOICE OUT.wav TEXT

writes OUT.wav (espeak-ng's own rate, 22050 Hz, mono 16-bit) and prints one JSON object:
{"rate": 22050, "truth": [{"word", "start", "end"}, ...], "check": {...}} (times in seconds).

Synthesis goes through libespeak-ng's C API (ctypes) in synchronous mode: the synth callback
collects the samples and the espeakEVENT_WORD events, whose `sample` field is the event's position
in the output stream to the sample. Word-time rule: inside a run of speech, a word ends where the
next word begins (espeak-ng's own word event: the start of the next word's first phoneme, e.g. a
stop's closure). Where punctuation puts a pause between two words, and at the clip's edges, the
edge next to the pause is the sound's onset or offset: the first or last sample inside the word's
span whose magnitude reaches 1 % of the clip's peak. "check" tells how far that moved espeak-ng's
own phoneme events (a measure of how exact they are).
"""

import ctypes
import json
import re
import sys
import wave
from array import array

EDGE_THRESHOLD = 0.01  # of the clip's peak: sound onset/offset next to a pause
PAUSE_PUNCTUATION = re.compile(r"[,.;:!?、。，！？；：]")


def read_wav(path):
    with wave.open(str(path)) as w:
        assert w.getsampwidth() == 2 and w.getnchannels() == 1, path
        return w.getframerate(), array("h", w.readframes(w.getnframes()))


def write_wav(path, samples, rate=16_000):
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(samples.tobytes())


class EspeakEvent(ctypes.Structure):
    # espeak_EVENT of speak_lib.h (espeak-ng 1.51)
    _fields_ = [
        ("type", ctypes.c_int),
        ("unique_identifier", ctypes.c_uint),
        ("text_position", ctypes.c_int),  # 1-based character offset of the word in the text
        ("length", ctypes.c_int),  # the word's length in characters
        ("audio_position", ctypes.c_int),  # ms
        ("sample", ctypes.c_int),  # the event's position in the output stream, in samples
        ("user_data", ctypes.c_void_p),
        ("id", ctypes.c_char * 8),
    ]


ESPEAK_EVENT_LIST_TERMINATED, ESPEAK_EVENT_WORD, ESPEAK_EVENT_PHONEME = 0, 1, 7
AUDIO_OUTPUT_SYNCHRONOUS = 2
ESPEAK_INITIALIZE_PHONEME_EVENTS, ESPEAK_INITIALIZE_DONT_EXIT = 0x0001, 0x8000
POS_CHARACTER, ESPEAK_CHARS_UTF8, ESPEAK_ENDPAUSE = 1, 1, 0x1000
SynthCallback = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int,
                                 ctypes.POINTER(EspeakEvent))


class Espeak:
    """libespeak-ng in synchronous mode: text in, (rate, samples, word events) out."""

    def __init__(self):
        self.lib = ctypes.CDLL("libespeak-ng.so.1")
        self.rate = self.lib.espeak_Initialize(
            AUDIO_OUTPUT_SYNCHRONOUS, 0, None, ESPEAK_INITIALIZE_PHONEME_EVENTS | ESPEAK_INITIALIZE_DONT_EXIT)
        if self.rate <= 0:
            raise RuntimeError("espeak_Initialize failed")
        self.samples, self.events = array("h"), []

        def collect(wav, n, events):
            if wav and n > 0:
                self.samples.extend(wav[:n])
            i = 0
            while events[i].type != ESPEAK_EVENT_LIST_TERMINATED:
                e = events[i]
                if e.type in (ESPEAK_EVENT_WORD, ESPEAK_EVENT_PHONEME):
                    name = bytes(e.id).split(b"\0")[0].decode() if e.type == ESPEAK_EVENT_PHONEME else ""
                    self.events.append((e.type, e.text_position, e.length, e.sample, name))
                i += 1
            return 0

        self.callback = SynthCallback(collect)  # kept alive as long as the library may call it
        self.lib.espeak_SetSynthCallback(self.callback)

    # espeak_SetVoiceByName matches voice names and files, not the languages the command line's
    # -v also accepts: en-gb is the file gmw/en.
    API_NAMES = {"en-us": "gmw/en-US", "en-gb+f3": "gmw/en+f3"}

    def synth(self, voice, text):
        if self.lib.espeak_SetVoiceByName(self.API_NAMES.get(voice, voice).encode()) != 0:
            raise RuntimeError(f"espeak-ng has no voice {voice}")
        self.samples, self.events = array("h"), []
        data = text.encode()
        rc = self.lib.espeak_Synth(ctypes.c_char_p(data), len(data) + 1, 0, POS_CHARACTER, 0,
                                   ESPEAK_CHARS_UTF8 | ESPEAK_ENDPAUSE, None, None)
        if rc != 0:
            raise RuntimeError(f"espeak_Synth failed ({rc})")
        return self.rate, self.samples, self.events


def sound_onset(samples, lo, hi, threshold):
    for i in range(lo, hi):
        if abs(samples[i]) >= threshold:
            return i
    return lo


def sound_offset(samples, lo, hi, threshold):
    for i in range(hi - 1, lo - 1, -1):
        if abs(samples[i]) >= threshold:
            return i + 1
    return hi


def spans_with_pause_edges(samples, rate, words, pause_before, pause_after):
    """Words as (start, end) sample spans; edges next to a pause move onto the sound.

    Returns the timed words and how far each moved edge went (s, signed: + means later)."""
    threshold = EDGE_THRESHOLD * max(max(samples), -min(samples))
    timed, moves = [], []
    for i, (word, start, end) in enumerate(words):
        new_start, new_end = start, end
        if pause_before[i]:
            new_start = sound_onset(samples, start, end, threshold)
            moves.append(("start", (new_start - start) / rate))
        if pause_after[i]:
            new_end = sound_offset(samples, new_start, end, threshold)
            moves.append(("end", (new_end - end) / rate))
        timed.append({"word": word, "start": new_start / rate, "end": new_end / rate})
    return timed, moves


def espeak_sentence(espeak, voice, text, raw_wav):
    rate, samples, events = espeak.synth(voice, text)
    # After an earlier synthesis, espeak-ng may send an empty word event (length 0) at a clause's
    # pause; it is no word.
    word_events = [e for e in events if e[0] == ESPEAK_EVENT_WORD and e[2] > 0]
    phonemes = [e for e in events if e[0] == ESPEAK_EVENT_PHONEME]
    words, pause_before, pause_after, lead, synth_edges = [], [], [], [], []
    for k, (_, pos, length, sample, _) in enumerate(word_events):
        word = text[pos - 1:pos - 1 + length]
        end = word_events[k + 1][3] if k + 1 < len(word_events) else len(samples)
        between = text[pos - 1 + length:word_events[k + 1][1] - 1] if k + 1 < len(word_events) else "."
        words.append((word, sample, end))
        pause_before.append(k == 0 or pause_after[-1])
        pause_after.append(bool(PAUSE_PUNCTUATION.search(between)))
        own = [p for p in phonemes if sample <= p[3] < end]
        first = next((p[3] for p in own if not p[4].startswith("_")), sample)
        pause = next((p[3] for p in own if p[4].startswith("_") and p[3] > first), end)
        # The WORD event comes before the first PHONEME event by a stop's closure, or (after a
        # pause) by the silence espeak-ng puts before a phoneme.
        lead.append((first - sample) / rate)
        synth_edges.append((first, pause))
    timed, moves = spans_with_pause_edges(samples, rate, words, pause_before, pause_after)
    # The pause-side edges espeak-ng itself gives (the word's first phoneme event, the pause
    # phoneme's event) against the sound's onset and offset.
    check = []
    for k, w in enumerate(timed):
        if pause_before[k]:
            check.append(("start", w["start"] - synth_edges[k][0] / rate))
        if pause_after[k]:
            check.append(("end", w["end"] - synth_edges[k][1] / rate))
    write_wav(raw_wav, samples, rate)
    return timed, {"moves": check, "event_lead": lead}


def main():
    if len(sys.argv) != 4:
        sys.exit(f"usage: {sys.argv[0]} VOICE OUT.wav TEXT")
    voice, out, text = sys.argv[1:]
    espeak = Espeak()
    truth, check = espeak_sentence(espeak, voice, text, out)
    json.dump({"rate": espeak.rate, "truth": truth, "check": check}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
