"""Recorded fixtures of the word-timing bench (scripts/bench_transcribe.py, `--groups real`).

Real speech with known word times: the recordings of Festival's Russian voice msu_ru_nsh (Debian
festvox-ru, BSD-like licence; 620 read sentences of one male speaker, 16 kHz), whose label files
give every phone's end time (automatic labels made when the voice was built, 10 ms steps; not
hand-checked). Words come from the voice's own front end (scripts/festival-phones.scm): the
phones of each word, in order, are walked along the .lab's phones (pauses skipped), so a word runs
from the start of its first phone to the end of its last. An utterance is used only if the front
end's phones equal the .lab's exactly (pauses aside); the others are dropped and counted.

Held out: the 6th, 12th, 18th, ... prompt of etc/txt.done.data (103 of 620). Never look at these
clips' errors while tuning the engine. Tuning (`--real-set tuning`): the 3rd, 9th, 15th, ...
prompt (another 103); the rest are left unused.

The prompts mark stress with "+" ("вол+ос"); the given text (.txt) and the truth drop it. A word
the front end splits ("серо-карие", "из-за") is one true word, as the text writes it.
"""

import json
import re
import statistics
import subprocess
from pathlib import Path

VOICE = "msu_ru_nsh_clunits"
VOICE_DIR = Path("/usr/share/festival/voices/russian") / VOICE
PHONES_SCRIPT = Path(__file__).resolve().parent / "festival-phones.scm"
HELD_OUT_EVERY = 6
# The tuning sample: the 3rd, 9th, 15th, ... prompt (as many as held out, none of them).
TUNING_AT = 3
PAUSE = "pau"


def prompts():
    """[(id, text with stress marks)] of the voice's prompt list, in its order."""
    return re.findall(r'^\(\s*(\S+)\s+"(.*)"\s*\)\s*$', (VOICE_DIR / "etc" / "txt.done.data").read_text(),
                      re.MULTILINE)


def front_end_words():
    """{id: [(word, [phones])]} from the voice's front end over every prompt (a few seconds)."""
    out = subprocess.run(["festival", "--script", str(PHONES_SCRIPT), VOICE, str(VOICE_DIR / "etc" / "txt.done.data")],
                         check=True, capture_output=True, text=True)
    words = {}
    for line in out.stdout.splitlines():
        if line.count("\t") == 2:
            utt, word, phones = line.split("\t")
            words.setdefault(utt, []).append((word, phones.split()))
    if not words:
        raise RuntimeError(f"festival printed no words: {out.stdout!r} {out.stderr!r}")
    return words


def lab_phones(utt):
    """[(phone, start_s, end_s)] of the utterance's label file, pauses included."""
    rows, start = [], 0.0
    for line in (VOICE_DIR / "lab" / f"{utt}.lab").read_text().splitlines():
        parts = line.split()
        if len(parts) == 3:
            end = float(parts[0])
            rows.append((parts[2], start, end))
            start = end
    return rows


def truth_of(text, fe_words, labs, norm):
    """The true words of one utterance ([{word, start, end}]), or None when the front end's phones
    differ from the labels' or its words do not add up to the text's."""
    phones = [p for p in labs if p[0] != PAUSE]
    if [p for _, ps in fe_words for p in ps] != [p[0] for p in phones]:
        return None
    # Each front-end word's span in the labels.
    spans, at = [], 0
    for word, ps in fe_words:
        spans.append((norm(word), phones[at][1] if ps else None, phones[at + len(ps) - 1][2] if ps else None))
        at += len(ps)
    # Text tokens ("серо-карие,") gather the front-end words that spell them ("серо", "карие").
    truth, k = [], 0
    for token in text.split():
        spelled = norm(token)
        if not spelled:
            continue  # a dash standing alone
        joined, start, end = "", None, None
        while k < len(spans) and len(joined) < len(spelled):
            joined += spans[k][0]
            start = start if start is not None else spans[k][1]
            end = spans[k][2] if spans[k][2] is not None else end
            k += 1
        if joined != spelled or start is None:
            return None
        truth.append({"word": re.sub(r"^\W+|\W+$", "", token), "start": start, "end": end})
    return truth if k == len(spans) else None


def chosen(index, set_name):
    """Whether the prompt at `index` (from 0) of the prompt list belongs to `set_name`."""
    return (index + 1) % HELD_OUT_EVERY == (0 if set_name == "held-out" else TUNING_AT)


def make_real(out_dir, norm, read_wav, resample_16k, set_name="held-out"):
    """Clips of group "real" (the prompts of `set_name` whose labels match), made once into
    out_dir. Returns (clips, check): check counts the prompts whose phones matched."""
    out_dir.mkdir(parents=True, exist_ok=True)
    truths_json = out_dir / "truths.json"
    if not truths_json.exists():
        fe = front_end_words()
        truths = {}
        for utt, marked in prompts():
            truth = truth_of(marked.replace("+", ""), fe.get(utt, []), lab_phones(utt), norm)
            if truth is not None:
                truths[utt] = truth
        truths_json.write_text(json.dumps(truths, ensure_ascii=False))
    truths = json.loads(truths_json.read_text())
    picked = [(utt, marked) for index, (utt, marked) in enumerate(prompts()) if chosen(index, set_name)]
    clips = []
    for utt, marked in (p for p in picked if p[0] in truths):
        wav = out_dir / f"{utt}.wav"
        if not wav.exists():
            resample_16k(VOICE_DIR / "wav" / f"{utt}.wav", wav)
            (out_dir / f"{utt}.txt").write_text(marked.replace("+", "") + "\n")
        rate, samples = read_wav(wav)
        clips.append({"name": f"real-{utt}", "group": "real", "set": set_name, "voice": "festvox-ru msu_ru_nsh",
                      "lang": "ru", "wav": str(wav), "text": str(out_dir / f"{utt}.txt"),
                      "duration_s": len(samples) / rate, "truth": truths[utt]})
    return clips, {"prompts": len(prompts()), "matched": len(truths), "set": set_name, "picked": len(picked),
                   "picked_matched": len(clips)}


def print_real_report(clips, ran, scores, aggregate, check):
    """The recorded-speech table, one row per engine. Returns the rows."""
    real = [c for c in clips if c["group"] == "real"]
    if not real:
        return {}
    secs = sum(c["duration_s"] for c in real)
    set_name = check["set"]
    print(f"\n== recorded speech (festvox-ru msu_ru_nsh, Russian, one male speaker) | {set_name} | {len(real)} clips, "
          f"{secs:.0f} s | truth: the voice's automatic phone labels grouped into words")
    print(f"   phones of front end = labels in {check['matched']} of {check['prompts']} prompts; "
          f"{set_name} {check['picked_matched']} of {check['picked']} (every {HELD_OUT_EVERY}th)")
    header = (f"{'engine':<38} {'WER':>6} {'mean ms':>8} {'median':>7} {'<=50ms':>7} {'max ms':>7} {'scored':>6} "
              f"{'wall s':>7}")
    print(header)
    print("-" * len(header))
    rows = {}
    for name in ran:
        r = aggregate(real, scores[name])
        r["wall_s"] = sum(ran[name][c["name"]]["elapsed_s"] for c in real)
        r["median_wall_s"] = statistics.median(ran[name][c["name"]]["elapsed_s"] for c in real)
        rows[f"real/{set_name}/{name}"] = r
        print(f"{name:<38} {r['wer']:>6.3f} {r['mean_s'] * 1000:>8.1f} {r['median_s'] * 1000:>7.1f} "
              f"{r['within_50ms']:>6.1%} {r['max_s'] * 1000:>7.0f} {r['scored']:>6} {r['wall_s']:>7.1f}")
    for name in ran:
        print(f"  {name}: worst boundary {rows[f'real/{set_name}/{name}']['worst']}")
    return rows
