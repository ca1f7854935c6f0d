"""Sung fixtures of the word-timing bench (scripts/bench_transcribe.py, `--groups song`).

Songs sung by Festival's singing mode (scripts/festival-sing.scm) with both of its singing
voices (kal_diphone, ked_diphone), over the bench's music bed SONG_SNR_DB under the voice.
Each song is laid out as songs are: music alone before the first line, lines of words on a
melody and a rhythm of its own (short notes and notes held on a vowel, the last word of a line
held longest), rests between lines, an instrumental break in the middle, music after the last.
Truth: each word from the start of its first segment to the end of its last; an edge next to a
rest is the sound's onset or offset (the rule of the spoken Festival fixtures).

Scores, per song set (tuning apart from held-out, which must never be tuned on): the share of
the true words whose onset an engine put within 0.3 s of the truth (a word it did not give counts
as a miss), the mean onset error of the words it gave, and how many words it put outside the
singing (a word's middle in no sung line, 0.1 s of slack).
"""

import json
import random
import subprocess
from pathlib import Path

SONG_SNR_DB = 8.0
ONSET_WITHIN_S = 0.3
OUTSIDE_SLACK_S = 0.1
INTRO_S, BREAK_S, OUTRO_S = 4.0, 6.0, 3.0
SING_SCRIPT = Path(__file__).resolve().parent / "festival-sing.scm"
SONG_VOICES = [("festival kal", "kal_diphone"), ("festival ked", "ked_diphone")]

# (name, set, lines, rhythm of a line's notes (s, cycled), the held last note (s), rests after
# lines (s, cycled), melody (cycled)). No digits or apostrophes (spelling is not hearing).
SONGS = [
    ("morning-road", "tuning",
     ["the morning light is on the road", "and I walk along the river",
      "where the birds are flying high", "we sing until the day is done"],
     [0.5, 0.5, 1.0, 0.5, 0.5, 1.0, 0.5], 2.0, [0.8, 1.2], ["A2", "C3", "E3", "D3", "C3", "G2", "A2", "E3"]),
    ("hold-me", "tuning",
     ["hold me close and let me stay", "in the quiet of the night",
      "all the stars above are shining", "carry me back home again"],
     [0.75, 0.25, 0.5, 1.5], 2.5, [1.0], ["E3", "D3", "C3", "D3", "E3", "E3", "E3", "D3"]),
    ("summer-rain", "tuning",
     ["summer rain is falling down", "on the roofs of every town",
      "we were young and we were free", "dancing by the open sea"],
     [0.35, 0.35, 0.35, 0.7], 1.2, [0.4, 0.9], ["C3", "C3", "G2", "A2", "B2", "C3", "D3"]),
    ("golden-fields", "tuning",
     ["golden fields beneath the sun", "every road has just begun",
      "call my name across the water", "I will follow where you run"],
     [0.6, 0.3, 0.3, 1.2, 0.6], 1.8, [0.6, 1.5], ["G2", "B2", "D3", "E3", "D3", "B2", "A2"]),
    ("down-the-river", "tuning",
     ["down by the river we will go", "under the willow trees we lay",
      "the water carries all our dreams", "and takes them far away"],
     [0.4, 0.4, 0.4, 0.8, 1.2], 2.4, [1.5, 0.7], ["G2", "A2", "B2", "G2", "A2", "C3", "B2"]),
    ("city-lights", "tuning",
     ["city lights are shining bright tonight", "every window tells a story",
      "walking home along the street", "I can hear you calling me"],
     [0.3, 0.3, 0.6, 0.3, 0.3, 0.9], 1.5, [2.0, 0.5], ["C3", "D3", "E3", "F3", "E3", "D3", "C3", "A2"]),
    ("ocean-blue", "tuning",
     ["the ocean blue is calling", "a sailor on the sea",
      "the wind is in the sails again", "he is coming home to me"],
     [1.0, 0.5, 0.5, 1.5], 2.0, [3.0, 0.8], ["A2", "A2", "C3", "D3", "E3", "D3"]),
    ("mountain-morning", "tuning",
     ["a new day on the mountain", "the sun is rising slow",
      "we follow every footstep", "to the valley down below"],
     [0.25, 0.5, 0.25, 0.5, 1.0], 2.8, [0.6, 2.5], ["D3", "E3", "F3", "E3", "D3", "B2", "A2", "G2"]),
    ("low-harbor", "tuning",
     ["down in the harbor the boats are sleeping", "under a lantern we wait for the tide",
      "over the water the bells are ringing", "and every sailor is coming home"],
     [0.4, 0.4, 0.8, 0.4, 1.0], 2.2, [1.0, 1.6], ["E2", "D2", "E2", "G2", "A2", "G2", "E2", "D2"]),
    ("still-water", "tuning",
     ["I am only an echo", "all of us are out in the open",
      "over and over again I ask", "evening is easy and low"],
     [0.5, 0.5, 0.5, 1.0], 2.0, [0.9, 1.4], ["C3", "C3", "C3", "E3", "E3", "D3", "D3", "G2"]),
    ("winter-winds", "held-out",
     ["winter winds are blowing cold", "tell me stories from of old",
      "light a candle in the window", "keep the fire burning bright"],
     [0.5, 0.5, 0.5, 1.5], 2.2, [0.9], ["D3", "C3", "A2", "C3", "D3", "F3", "E3"]),
    ("over-mountains", "held-out",
     ["over mountains far away", "there is a place where we can play",
      "sing a song of long ago", "let the gentle river flow"],
     [0.4, 0.4, 0.8, 0.4, 1.2], 1.6, [0.7, 1.1], ["A2", "B2", "C3", "E3", "D3", "C3", "B2", "A2"]),
    ("silver-moon", "held-out",
     ["silver moon above the hill", "shining on the water still",
      "every star will light the way", "until the breaking of the day"],
     [0.45, 0.45, 0.9, 0.45, 0.9], 2.0, [1.2, 0.6], ["E3", "G3", "A3", "G3", "E3", "D3", "C3"]),
    ("long-road-home", "held-out",
     ["the road is long and the night is cold", "but I will carry on",
      "the lights of home are shining through", "and soon the dark is gone"],
     [0.3, 0.3, 0.6, 0.3, 0.9, 0.3], 2.6, [0.8, 1.8], ["G2", "G2", "A2", "B2", "A2", "G2", "E2", "D2"]),
    ("spring-garden", "held-out",
     ["flowers open in the spring", "birds return to us and sing",
      "every morning warm and new", "all the garden waits for you"],
     [0.6, 0.6, 0.3, 0.3, 1.2], 1.4, [0.5, 1.0], ["C3", "E3", "G3", "E3", "F3", "D3", "B2", "C3"]),
]


def score_text(lines, rhythm, hold_s, rests, melody):
    """The song in festival-sing.scm's plain text score format."""
    out, note = [f"rest {INTRO_S}"], 0
    for k, line in enumerate(lines):
        words = line.split()
        for i, word in enumerate(words):
            seconds = hold_s if i == len(words) - 1 else rhythm[i % len(rhythm)]
            out.append(f"{word} {melody[note % len(melody)]} {seconds}")
            note += 1
        if k + 1 < len(lines):
            out.append(f"rest {BREAK_S if k + 1 == len(lines) // 2 else rests[k % len(rests)]}")
    out.append(f"rest {OUTRO_S}")
    return "\n".join(out) + "\n"


def make_songs(out_dir, festival_sung, read_wav, write_wav, music_bed, mix, resample_16k):
    """Clips of group "song" (one per song and voice), made once into out_dir.

    festival_sung(voice, score_path, raw_wav) -> (truth, check) sings a score file."""
    out_dir.mkdir(parents=True, exist_ok=True)
    clips, bed = [], None
    for name, set_name, lines, rhythm, hold_s, rests, melody in SONGS:
        txt = out_dir / f"{name}.txt"
        txt.write_text("\n".join(lines) + "\n")
        for label, voice in SONG_VOICES:
            base = f"{name}-{voice.split('_')[0]}"
            wav, truth_json = out_dir / f"song-{base}.wav", out_dir / f"song-{base}.json"
            if not (wav.exists() and truth_json.exists()):
                score = out_dir / f"{base}.score.txt"
                score.write_text(score_text(lines, rhythm, hold_s, rests, melody))
                raw, clean_wav = out_dir / f"{base}.raw.wav", out_dir / f"clean-{base}.wav"
                truth, _ = festival_sung(voice, score, raw)
                resample_16k(raw, clean_wav)
                raw.unlink()
                _, clean = read_wav(clean_wav)
                if bed is None:
                    bed = music_bed(40)
                offset = random.Random(base).randrange(len(bed))
                write_wav(wav, mix(clean, truth, bed, offset, SONG_SNR_DB))
                truth_json.write_text(json.dumps({"truth": truth}))
            truth = json.loads(truth_json.read_text())["truth"]
            _, samples = read_wav(wav)
            clips.append({"name": f"song-{base}", "group": "song", "set": set_name, "voice": label, "lang": "en",
                          "wav": str(wav), "text": str(txt), "duration_s": len(samples) / 16_000, "truth": truth})
    return clips


def sung_lines(truth):
    """The sung stretches: runs of words with no rest between."""
    lines = []
    for w in truth:
        if lines and w["start"] - lines[-1][1] < 0.05:
            lines[-1][1] = w["end"]
        else:
            lines.append([w["start"], w["end"]])
    return lines


def score_song(clip, res, norm, align):
    truth, words = clip["truth"], [w for w in res["words"] if norm(w["word"])]
    edits, pairs = align([norm(w["word"]) for w in truth], [norm(w["word"]) for w in words])
    onsets = [abs(words[h]["start"] - truth[r]["start"]) for r, h in pairs]
    lines = sung_lines(truth)
    outside = sum(1 for w in words
                  if not any(a - OUTSIDE_SLACK_S <= (w["start"] + w["end"]) / 2 <= b + OUTSIDE_SLACK_S
                             for a, b in lines))
    return {"edits": edits, "true_words": len(truth), "onsets": onsets, "outside": outside}


def song_row(scores):
    true_words = sum(s["true_words"] for s in scores)
    onsets = [e for s in scores for e in s["onsets"]]
    return {
        "clips": len(scores),
        "wer": sum(s["edits"] for s in scores) / max(true_words, 1),
        "onsets_within": sum(e <= ONSET_WITHIN_S for e in onsets) / max(true_words, 1),
        "onset_mean_s": sum(onsets) / max(len(onsets), 1),
        "outside": sum(s["outside"] for s in scores),
        "words": true_words,
    }


def print_song_report(clips, ran, norm, align):
    """The song tables: per song set and engine, then per song and voice. Returns the rows."""
    songs = [c for c in clips if c["group"] == "song"]
    if not songs:
        return {}
    scores = {name: {c["name"]: score_song(c, res[c["name"]], norm, align) for c in songs}
              for name, res in ran.items()}
    header = (f"{'engine':<38} {'WER':>6} {'onsets <=0.3 s':>14} {'mean onset s':>12} "
              f"{'outside singing':>15}")
    rows = {}
    for set_name in ("tuning", "held-out"):
        subset = [c for c in songs if c["set"] == set_name]
        if not subset:
            continue
        secs = sum(c["duration_s"] for c in subset)
        print(f"\n== sung (Festival singing mode, music bed {SONG_SNR_DB:.0f} dB under) | {set_name} songs | "
              f"{len(subset)} clips, {secs:.0f} s | target: >= 90 % onsets within 0.3 s, mean <= 0.15 s, "
              f"none outside")
        print(header)
        print("-" * len(header))
        for name in ran:
            r = song_row([scores[name][c["name"]] for c in subset])
            rows[f"song/{set_name}/{name}"] = r
            print(f"{name:<38} {r['wer']:>6.3f} {r['onsets_within']:>13.1%} {r['onset_mean_s']:>12.3f} "
                  f"{r['outside']:>8}/{r['words']:<6}")
    print("\n== sung, per song and voice: onsets within 0.3 s / mean onset error (s)")
    print(f"{'song':<32} {'set':<9} " + " ".join(f"{name[:26]:>26}" for name in ran))
    for c in songs:
        cells = []
        for name in ran:
            r = song_row([scores[name][c["name"]]])
            rows[f"song/clip/{c['name']}/{name}"] = r
            cells.append(f"{r['onsets_within']:>14.0%} / {r['onset_mean_s']:>5.2f}s {r['outside']:>2}")
        print(f"{c['name']:<32} {c['set']:<9} " + " ".join(f"{cell:>26}" for cell in cells))
    return rows
