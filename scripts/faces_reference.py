"""The face detector's reference detections, an oracle independent of caption-faces' Rust: the
TFLite runtime runs mediapipe's own `face_detection_full_range_sparse.tflite` (not the graph
scripts/convert_blazeface.py writes) on a picture letterboxed as caption-faces does it, and the
boxes are decoded and merged as mediapipe's graph does (anchors, sigmoid, weighted suppression).

    python3 scripts/faces_reference.py face_detection_full_range_sparse.tflite PICTURE.png > ref.json

Needs numpy, pillow and tflite-runtime (a venv: `pip install "numpy<2" pillow tflite-runtime`).
"""

import json
import math
import sys

import numpy as np
import tflite_runtime.interpreter as tflite
from PIL import Image

SIDE = 192
MIN_SCORE = 0.6
MERGE_IOU = 0.3


def taps(out, size):
    """caption-faces' resampling: a triangle filter whose support widens with the reduction."""
    scale = size / out
    support = max(scale, 1.0)
    rows = []
    for o in range(out):
        centre = (o + 0.5) * scale
        first = max(int(math.floor(centre - support)), 0)
        last = min(int(math.ceil(centre + support)), size)
        w = np.array([max(0.0, 1 - abs(i + 0.5 - centre) / support) for i in range(first, last)], np.float32)
        rows.append((first, w / w.sum()))
    return rows


def letterbox(rgb):
    h, w, _ = rgb.shape
    scale = SIDE / max(w, h)
    nw = min(max(round(w * scale), 1), SIDE)
    nh = min(max(round(h * scale), 1), SIDE)
    left, top = (SIDE - nw) // 2, (SIDE - nh) // 2
    src = rgb.astype(np.float32)
    wide = np.zeros((h, nw, 3), np.float32)
    for x, (first, wt) in enumerate(taps(nw, w)):
        wide[:, x] = np.tensordot(wt, src[:, first : first + len(wt)], axes=([0], [1]))
    square = np.full((SIDE, SIDE, 3), -1.0, np.float32)
    for y, (first, wt) in enumerate(taps(nh, h)):
        square[top + y, left : left + nw] = np.tensordot(wt, wide[first : first + len(wt)], axes=([0], [0])) / 127.5 - 1
    return square, nw / w, left, top


def iou(a, b):
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = w * h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def main(model, picture):
    rgb = np.asarray(Image.open(picture).convert("RGB"))
    x, scale, left, top = letterbox(rgb)
    it = tflite.Interpreter(model)
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x[None])
    it.invoke()
    out = {d["shape"][-1]: it.get_tensor(d["index"])[0] for d in it.get_output_details()}
    boxes, scores = out[16], out[1][:, 0]
    cells = SIDE // 4
    found = []
    with np.errstate(over="ignore"):
        likely = 1 / (1 + np.exp(-np.clip(scores, -100, 100))) >= MIN_SCORE
    for i in np.nonzero(likely)[0]:
        ax, ay = (i % cells + 0.5) / cells * SIDE, (i // cells + 0.5) / cells * SIDE
        b = boxes[i]
        pt = lambda dx, dy: ((dx + ax - left) / scale, (dy + ay - top) / scale)
        cx, cy = pt(b[0], b[1])
        hw, hh = b[2] / 2 / scale, b[3] / 2 / scale
        score = float(1 / (1 + math.exp(-max(-100.0, min(100.0, float(scores[i]))))))
        kps = [pt(b[4 + 2 * k], b[5 + 2 * k]) for k in range(6)]
        found.append((score, [cx - hw, cy - hh, cx + hw, cy + hh], kps))
    found.sort(key=lambda f: -f[0])
    faces = []
    while found:
        best = found[0]
        group = [f for f in found if iou(best[1], f[1]) > MERGE_IOU]
        found = [f for f in found if iou(best[1], f[1]) <= MERGE_IOU]
        total = sum(f[0] for f in group)
        box = [sum(f[0] * f[1][k] for f in group) / total for k in range(4)]
        kps = [[sum(f[0] * f[2][k][j] for f in group) / total for j in range(2)] for k in range(6)]
        faces.append({"score": best[0], "box": [round(float(v), 4) for v in box],
                      "keypoints": [[round(float(v), 4) for v in kp] for kp in kps]})
    json.dump({"picture": picture.split("/")[-1], "faces": faces}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
