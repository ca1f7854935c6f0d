"""Long-input benchmark: memory and drift of word timing over an hour of continuous speech.

Run through `scripts/bench-transcribe --long MINUTES` (which builds the binary and the fixtures
first). The clean continuous clips of the word-timing bench are laid end to end, with 0.6 s
between them, into a 5-minute and a MINUTES-long input whose every word time is known. Both are
transcribed by the example binary under /usr/bin/time; the report gives peak memory of each and
the boundary errors of the first and the last five minutes of the long one.
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


def build(clips, minutes, out):
    samples = array("h")
    truth = []
    gap = array("h", [0] * int(GAP_S * bench.SR))
    i = 0
    while len(samples) < minutes * 60 * bench.SR:
        clip = clips[i % len(clips)]
        i += 1
        _, audio = bench.read_wav(clip["wav"])
        offset = len(samples) / bench.SR
        truth += [{**w, "start": w["start"] + offset, "end": w["end"] + offset} for w in clip["truth"]]
        samples.extend(audio)
        samples.extend(gap)
    bench.write_wav(out, samples)
    return truth


def run(binary, wav, model, threads):
    out = subprocess.run(["/usr/bin/time", "-f", "%M", binary, str(wav), "--model", model,
                          "--threads", str(threads)], capture_output=True, text=True, check=True)
    peak_kb = int(out.stderr.strip().splitlines()[-1])
    return json.loads(out.stdout), peak_kb / 1024


def errors_between(truth, words, from_s, to_s):
    ref = [t for t in truth if from_s <= t["start"] < to_s]
    hyp = [w for w in words if from_s - 5 <= w["start"] < to_s + 5 and bench.norm(w["word"])]
    _, pairs = bench.align([bench.norm(t["word"]) for t in ref], [bench.norm(w["word"]) for w in hyp])
    errs = [abs(hyp[h][side] - ref[r][side]) for r, h in pairs for side in ("start", "end")]
    return errs


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
    args = parser.parse_args()
    fixtures = Path(args.fixtures)
    clips, _ = bench.make_continuous(fixtures / "continuous", ["clean"])
    short_wav, long_wav = fixtures / "long-5min.wav", fixtures / f"long-{args.minutes}min.wav"
    build(clips, 5, short_wav)
    truth = build(clips, args.minutes, long_wav)
    short, short_peak = run(args.binary, short_wav, args.model, args.threads)
    long, long_peak = run(args.binary, long_wav, args.model, args.threads)
    total_s = long["duration_s"]
    print(f"5 min: peak {short_peak:.0f} MB, {short['elapsed_s']:.0f} s")
    print(f"{args.minutes} min: peak {long_peak:.0f} MB ({long_peak / short_peak:.3f}x), "
          f"{long['elapsed_s']:.0f} s, real-time factor {long['elapsed_s'] / total_s:.3f}")
    print("first 5 min:", summary(errors_between(truth, long["words"], 0, 300)))
    print("last 5 min: ", summary(errors_between(truth, long["words"], total_s - 300, total_s)))


if __name__ == "__main__":
    sys.exit(main())
