"""One transcription alone, two at once in one process, two at once as two processes.

Run through `scripts/bench-concurrent`. Each case runs `--runs` times; the times are those the
binary reports (decoding and transcription, the model already loaded).
"""

import argparse
import json
import statistics
import subprocess


def transcribe(binary, file, model, concurrent):
    cmd = [binary, file, "--model", model, "--concurrent", str(concurrent)]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def finish(proc):
    out, _ = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"transcribe_file failed with {proc.returncode}")
    return json.loads(out)["elapsed_each_s"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--default-file", required=True)
    parser.add_argument("--file")
    parser.add_argument("--model", default="tiny.en")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    file = args.file or args.default_file

    cases = {"one alone": [], "two in one process": [], "two processes": []}
    for _ in range(args.runs):
        cases["one alone"] += finish(transcribe(args.binary, file, args.model, 1))
        cases["two in one process"] += finish(transcribe(args.binary, file, args.model, 2))
        both = [transcribe(args.binary, file, args.model, 1) for _ in range(2)]
        cases["two processes"] += [t for p in both for t in finish(p)]

    alone = statistics.median(cases["one alone"])
    print(f"{file}, model {args.model}, {args.runs} runs per case; seconds per transcription")
    print(f"{'case':<22}{'median':>8}{'min':>8}{'max':>8}{'vs alone':>10}")
    for name, times in cases.items():
        median = statistics.median(times)
        print(f"{name:<22}{median:>8.2f}{min(times):>8.2f}{max(times):>8.2f}{median / alone:>9.2f}x")


if __name__ == "__main__":
    main()
