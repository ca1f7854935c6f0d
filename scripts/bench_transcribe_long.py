"""Long-input benchmark: memory and drift of word timing over an hour of continuous speech.

Run through `scripts/bench-transcribe --long MINUTES` (which builds the binary and the fixtures
first). The clean continuous clips of the word-timing bench are laid end to end, with 0.6 s
between them, into a 5-minute and a MINUTES-long input whose every word time is known. Both are
transcribed by the example binary under /usr/bin/time; the report gives peak memory of each and
the boundary errors of each five minutes of the long one; its last five minutes repeat its first
five, so drift is also compared on the same words. With --beside-faster-whisper N, the 5-minute
input is also transcribed N times by each of ours and faster-whisper (int8, beam 5, same threads,
same weights, both told the speech is English; with its previous-text prompt, its default, and
without), alternating: wall time median and spread, the ratios, word error rate and boundary
errors of each.

With --languages en,es,fr,de,it,pt,nl (and a multilingual --model), the time of each language on
inputs of the same length: the clean espeak-ng clips of each language (two voices, its tuning and
held-out sentences) laid end to end into a MINUTES-long input, each transcribed RUNS times by ours
(and by faster-whisper with --beside-faster-whisper), alternating languages; wall time a second of
audio, median and spread, its ratio to English's, and word error rate. Clips a few seconds long
are the clip bench's; this is the length users transcribe, where pieces fill whisper's window.
"""

import argparse
import json
import statistics
import subprocess
import sys
import wave
from array import array
from pathlib import Path

import bench_transcribe as bench

GAP_S = 0.6
# The head of the input, repeated at its end.
HEAD_S = 300.0


def build(clips, minutes, out, noise_db=None):
    """Lays clips end to end into a MINUTES-long wav; its last five minutes repeat the clips of its
    first five in the same order, so drift is measured on the same speech. With `noise_db`, pink
    noise runs under all of it, that many dB under the speech. Returns the true words and the
    placements: (clip index, start s, end s) of each clip laid."""
    order, laid_s = [], 0.0
    while laid_s < min(HEAD_S, minutes * 60):
        order.append(len(order) % len(clips))
        laid_s += clips[order[-1]]["duration_s"] + GAP_S
    head = list(order)
    while laid_s < minutes * 60 - (HEAD_S if minutes * 60 > 2 * HEAD_S else 0):
        order.append((order[-1] + 1) % len(clips))
        laid_s += clips[order[-1]]["duration_s"] + GAP_S
    if minutes * 60 > 2 * HEAD_S:
        order += head
    samples, truth, placements = array("h"), [], []
    gap = array("h", [0] * int(GAP_S * bench.SR))
    for i in order:
        clip = clips[i]
        _, audio = bench.read_wav(clip["wav"])
        offset = len(samples) / bench.SR
        truth += [{**w, "start": w["start"] + offset, "end": w["end"] + offset} for w in clip["truth"]]
        samples.extend(audio)
        placements.append((i, offset, len(samples) / bench.SR))
        samples.extend(gap)
    if noise_db is not None:
        samples = bench.mix(samples, truth, bench.pink_noise(60 * bench.SR, 1), 0, noise_db)
    bench.write_wav(out, samples)
    return truth, placements


def run(binary, wav, model, threads, extra=(), lang="en"):
    # Told the language, as faster-whisper is below (and as the clip bench tells both).
    out = subprocess.run(["/usr/bin/time", "-f", "%M", binary, str(wav), "--model", model, "--lang", lang,
                          "--threads", str(threads), *extra], capture_output=True, text=True, check=True)
    peak_kb = int(out.stderr.strip().splitlines()[-1])
    return json.loads(out.stdout), peak_kb / 1024


def beside_faster_whisper(binary, wav, truth, model, threads, runs, variants=()):
    """Ours (and ours with each variant's arguments) and faster-whisper on the same input,
    alternating, `runs` times each."""
    # faster-whisper prompts each window with the text before it (its default); ours takes
    # every piece alone. On this input, whose sentences come round again every ~75 s, the
    # prompt can hold the very sentence being heard, so faster-whisper is also run without it.
    ours = {"ours": ()} | {f"ours {v}": tuple(v.split()) for v in variants}
    times = {name: [] for name in ours} | {"faster-whisper": [], "faster-whisper, no prompt": []}
    words = {}
    input_ = [{"name": "long", "wav": str(wav)}]
    for _ in range(runs):
        for name, extra in ours.items():
            result, _ = run(binary, wav, model, threads, extra)
            times[name].append(result["elapsed_s"])
            words[name] = result["words"]
        for engine, previous_text in (("faster-whisper", True), ("faster-whisper, no prompt", False)):
            fw = bench.run_faster_whisper(input_, model, "en", threads, "int8", 5, previous_text)
            times[engine].append(fw["long"]["elapsed_s"])
            words[engine] = fw["long"]["words"]
    for engine, elapsed in times.items():
        errs = errors_between(truth, words[engine], 0.0, float("inf"))
        print(f"{engine:>25}: {statistics.median(elapsed):.1f} s median of {runs} "
              f"({min(elapsed):.1f}-{max(elapsed):.1f}), WER {wer(truth, words[engine]):.3f}, {summary(errs)}")
    for name in ours:
        for engine in ("faster-whisper", "faster-whisper, no prompt"):
            ratios = sorted(a / b for a, b in zip(times[name], times[engine]))
            print(f"{name} / {engine}: {statistics.median(ratios):.2f}x median "
                  f"({ratios[0]:.2f}-{ratios[-1]:.2f}x)")


def by_language(args, fixtures):
    """Time a second of audio per language on inputs of --minutes each (see the docstring)."""
    languages = [lang for lang in args.languages.split(",") if lang]
    inputs = {}
    for lang in languages:
        clips, _ = bench.make_continuous(fixtures / "continuous", ["clean"], [] if lang == "en" else [lang])
        clips = [c for c in clips if c["voice"].startswith("espeak")]
        wav = fixtures / f"long-{lang}-{args.minutes}min.wav"
        truth, _ = build(clips, args.minutes, wav)
        inputs[lang] = (wav, truth)
    runs = max(args.beside_faster_whisper, args.runs)
    engines = ["ours"] + (["faster-whisper"] if args.beside_faster_whisper else [])
    per_s = {(engine, lang): [] for engine in engines for lang in languages}
    words = {}
    # Its model loaded once, as ours loads its own once a run (neither load is timed).
    fw = bench.FasterWhisper(args.model, args.threads, "int8") if "faster-whisper" in engines else None
    for _ in range(runs):
        for lang, (wav, _) in inputs.items():
            result, _ = run(args.binary, wav, args.model, args.threads, lang=lang)
            per_s["ours", lang].append(result["elapsed_s"] / result["duration_s"])
            words["ours", lang] = result["words"]
            if fw is not None:
                heard = fw.on({"name": lang, "wav": str(wav)}, lang, 5)
                per_s["faster-whisper", lang].append(heard["elapsed_s"] / result["duration_s"])
                words["faster-whisper", lang] = heard["words"]
    print(f"{args.minutes} min a language (espeak-ng, clean), model {args.model}, {args.threads} threads, "
          f"{runs} runs each, wall time a second of audio, median (range):")
    for engine in engines:
        english = statistics.median(per_s[engine, "en"]) if "en" in languages else None
        for lang in languages:
            times = per_s[engine, lang]
            ratio = f", {statistics.median(times) / english:.2f}x English" if english else ""
            print(f"{engine:>15} {lang}: {statistics.median(times):.3f} ({min(times):.3f}-{max(times):.3f})"
                  f"{ratio}, WER {wer(inputs[lang][1], words[engine, lang]):.3f}")


def wer(truth, words):
    """Word error rate of `words` against `truth` (normalised as the clip bench does)."""
    ref = [bench.norm(t["word"]) for t in truth]
    edits, _ = bench.align(ref, [bench.norm(w["word"]) for w in words if bench.norm(w["word"])])
    return edits / len(ref)


def errors_between(truth, words, from_s, to_s):
    ref = [t for t in truth if from_s <= t["start"] < to_s]
    hyp = [w for w in words if from_s - 1 <= w["start"] < to_s + 1 and bench.norm(w["word"])]
    _, pairs = bench.align([bench.norm(t["word"]) for t in ref], [bench.norm(w["word"]) for w in hyp])
    errs = [abs(hyp[h][side] - ref[r][side]) for r, h in pairs for side in ("start", "end")]
    return errs


def paired(truth, words, placements, clips_laid):
    """Boundary errors of the words heard in both the first and the last laying of the head's
    clips: (first errors, last errors), the same words in the same order."""
    first, last = [], []
    for a, b in zip(placements[:clips_laid], placements[-clips_laid:]):
        def per_word(start_s, end_s):
            ref = [t for t in truth if start_s <= t["start"] < end_s]
            hyp = [w for w in words if start_s - 0.5 <= w["start"] < end_s + 0.5 and bench.norm(w["word"])]
            _, pairs = bench.align([bench.norm(t["word"]) for t in ref],
                                   [bench.norm(w["word"]) for w in hyp])
            return {r: [abs(hyp[h][side] - ref[r][side]) for side in ("start", "end")] for r, h in pairs}
        ea, eb = per_word(a[1], a[2]), per_word(b[1], b[2])
        for r in sorted(ea.keys() & eb.keys()):
            first += ea[r]
            last += eb[r]
    return first, last


def summary(errs):
    return (f"mean {statistics.mean(errs):.3f} s, median {statistics.median(errs):.3f} s, "
            f"{sum(e <= 0.05 for e in errs) / len(errs):.1%} within 50 ms ({len(errs) // 2} words)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--model", default="tiny.en")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--minutes", type=int, default=60)
    parser.add_argument("--fixtures", default=str(bench.CACHE / f"bench-fixtures-v{bench.FIXTURE_VERSION}"))
    parser.add_argument("--beside-faster-whisper", type=int, default=0, metavar="RUNS",
                        help="also time ours and faster-whisper RUNS times each on the 5-minute input")
    parser.add_argument("--variant", action="append", default=[], metavar="ARGS",
                        help="with --beside-faster-whisper, also run ours with these arguments "
                             "(repeatable; e.g. --variant=--whole-window)")
    parser.add_argument("--languages", metavar="LANGS",
                        help="time per language instead: en,es,fr,de,it,pt,nl inputs of --minutes each "
                             "(a multilingual --model)")
    parser.add_argument("--runs", type=int, default=3, help="with --languages, runs of each input")
    parser.add_argument("--noise", type=float, metavar="SNR_DB",
                        help="pink noise under the whole input, SNR_DB under the speech")
    args = parser.parse_args()
    fixtures = Path(args.fixtures)
    if args.languages:
        if args.model.removesuffix("-q8_0").endswith(".en"):
            parser.error(f"--languages needs a multilingual --model, not {args.model}")
        return by_language(args, fixtures)
    clips, _ = bench.make_continuous(fixtures / "continuous", ["clean"])
    tag = "" if args.noise is None else f"-noise{args.noise:g}"
    short_wav = fixtures / f"long-5min{tag}.wav"
    long_wav = fixtures / f"long-{args.minutes}min{tag}.wav"
    short_truth, _ = build(clips, 5, short_wav, args.noise)
    if args.beside_faster_whisper:
        print(f"5 min, model {args.model}, {args.threads} threads:")
        beside_faster_whisper(args.binary, short_wav, short_truth, args.model, args.threads,
                              args.beside_faster_whisper, args.variant)
    truth, placements = build(clips, args.minutes, long_wav, args.noise)
    short, short_peak = run(args.binary, short_wav, args.model, args.threads)
    long, long_peak = run(args.binary, long_wav, args.model, args.threads)
    total_s = long["duration_s"]
    print(f"5 min: peak {short_peak:.0f} MB, {short['elapsed_s']:.0f} s")
    print(f"{args.minutes} min: peak {long_peak:.0f} MB ({long_peak / short_peak:.3f}x), "
          f"{long['elapsed_s']:.0f} s, real-time factor {long['elapsed_s'] / total_s:.3f}")
    print(f"words heard {sum(1 for w in long['words'] if bench.norm(w['word']))}, true {len(truth)}")
    block = 0.0
    while block < total_s:
        errs = errors_between(truth, long["words"], block, min(block + HEAD_S, total_s))
        if errs:
            print(f"{block / 60:5.0f}-{min(block + HEAD_S, total_s) / 60:.0f} min: {summary(errs)}")
        block += HEAD_S
    head_laid = sum(1 for p in placements if p[1] < HEAD_S)
    if total_s > 2 * HEAD_S and head_laid:
        first, last = paired(truth, long["words"], placements, head_laid)
        print(f"the head's {head_laid} clips, words heard both times:")
        print("  first laying:", summary(first))
        print("  last laying: ", summary(last))


if __name__ == "__main__":
    sys.exit(main())
