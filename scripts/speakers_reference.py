"""The voice encoder's reference embeddings, an oracle independent of caption-speakers' Rust:
resemblyzer's own front end (librosa's melspectrogram, as resemblyzer/audio.py calls it) and the
network in numpy, on the weights scripts/convert_ge2e.py wrote.

    python3 scripts/speakers_reference.py WEIGHTS.f32 CLIP.wav SECONDS > reference.json

Needs numpy and librosa (a venv: `pip install numpy librosa`). Prints the partial embeddings and
the utterance embedding of the clip's first SECONDS, as resemblyzer's `embed_utterance` computes
them on a wave already at -30 dBFS (the loudness step is applied here as caption-speakers does).
"""

import json
import sys
import wave

import librosa
import numpy as np

HIDDEN = 256


def load(path):
    w = np.fromfile(path, dtype="<f4")
    params, at = {}, 0
    for layer in range(3):
        for name, shape in (
            ("wih", (4 * HIDDEN, 40 if layer == 0 else HIDDEN)),
            ("whh", (4 * HIDDEN, HIDDEN)),
            ("bih", (4 * HIDDEN,)),
            ("bhh", (4 * HIDDEN,)),
        ):
            n = int(np.prod(shape))
            params[f"{name}{layer}"] = w[at : at + n].reshape(shape)
            at += n
    params["lw"] = w[at : at + HIDDEN * HIDDEN].reshape(HIDDEN, HIDDEN)
    params["lb"] = w[at + HIDDEN * HIDDEN : at + HIDDEN * HIDDEN + HIDDEN]
    assert at + HIDDEN * HIDDEN + HIDDEN == len(w)
    return params


def partial_slices(n_samples, rate=1.3, min_coverage=0.75):
    """resemblyzer's VoiceEncoder.compute_partial_slices, mel frame ranges only."""
    n_frames = int(np.ceil((n_samples + 1) / 160))
    step = int(np.round((16000 / rate) / 160))
    slices = [(i, i + 160) for i in range(0, max(1, n_frames - 160 + step + 1), step)]
    coverage = (n_samples - slices[-1][0] * 160) / (160 * 160)
    if coverage < min_coverage and len(slices) > 1:
        slices = slices[:-1]
    return slices


def embed(params, mels):
    """resemblyzer's VoiceEncoder.forward on a batch of (frames, 40) spectrograms."""
    sigmoid = lambda x: 1 / (1 + np.exp(-x))
    x = mels.astype(np.float64)
    for layer in range(3):
        h = np.zeros((x.shape[0], HIDDEN))
        c = np.zeros((x.shape[0], HIDDEN))
        outputs = []
        for t in range(x.shape[1]):
            g = x[:, t] @ params[f"wih{layer}"].T + params[f"bih{layer}"]
            g = g + h @ params[f"whh{layer}"].T + params[f"bhh{layer}"]
            i, f, cell, o = np.split(g, 4, axis=1)
            c = sigmoid(f) * c + sigmoid(i) * np.tanh(cell)
            h = sigmoid(o) * np.tanh(c)
            outputs.append(h)
        x = np.stack(outputs, axis=1)
    e = np.maximum(h @ params["lw"].T + params["lb"], 0)
    return e / np.linalg.norm(e, axis=1, keepdims=True)


def main(weights, clip, seconds):
    with wave.open(clip) as w:
        assert w.getframerate() == 16000 and w.getnchannels() == 1
        wav = np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float32) / 32768
    wav = wav[: int(seconds * 16000)]
    rms = np.sqrt(np.mean((wav.astype(np.float64) * 32767) ** 2))
    wav = (wav * 10 ** ((-30 - 20 * np.log10(rms / 32767)) / 20)).astype(np.float32)
    slices = partial_slices(len(wav))
    if slices[-1][1] * 160 >= len(wav):
        wav = np.pad(wav, (0, slices[-1][1] * 160 - len(wav)))
    mel = librosa.feature.melspectrogram(
        y=wav, sr=16000, n_fft=400, hop_length=160, n_mels=40
    ).astype(np.float32).T
    partials = embed(load(weights), np.stack([mel[a:b] for a, b in slices]))
    utterance = partials.mean(0)
    utterance /= np.linalg.norm(utterance)
    json.dump(
        {
            "clip": clip.rsplit("/", 1)[-1],
            "seconds": seconds,
            "librosa": librosa.__version__,
            "partials": [[round(float(v), 7) for v in p] for p in partials],
            "utterance": [round(float(v), 7) for v in utterance],
        },
        sys.stdout,
    )
    print()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]))
