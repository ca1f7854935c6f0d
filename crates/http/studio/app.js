// Captions Studio: upload, transcribe, edit, style and generate through the public API.

import { api, ApiError, forgetKey, onUnauthorized, poll, policyMaxBytes, saveKey, savedKey, upload } from "./api.js";
import { Editor } from "./editor.js";
import { Style } from "./style.js";

const $ = (id) => document.getElementById(id);
const VIDEO_EXTENSIONS = /\.(mp4|m4v|mov|webm|mkv|avi|mpe?g|ts|3gp)$/i;
// Whisper's languages, named in the reader's own language by the browser.
const LANGUAGES = ("en zh de es ru ko fr ja pt tr pl ca nl ar sv it id hi fi vi he uk el ms cs ro da hu ta no th ur hr bg lt la mi ml cy sk te fa lv bn sr az sl kn et mk br eu is hy ne mn bs kk sq sw gl mr pa si km sn yo so af oc ka be tg sd gu am yi lo uz fo ht ps tk nn mt sa lb my bo tl mg as tt haw ln ha ba jw su").split(" ");

const state = { file: null, lang: "en", transcribed: false, frame: { width: 0, height: 0 } };

function toast(message) {
  const el = $("toast");
  el.textContent = message;
  el.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { el.hidden = true; }, 8000);
}

function report(error) {
  if (error && error.name === "AbortError") return;
  if (error instanceof ApiError && error.status === 401) return; // the key form says it
  toast(error instanceof ApiError ? error.message : `Something went wrong: ${error}`);
}

function setStage(stage) {
  document.body.dataset.stage = stage;
  const order = ["upload", "transcribe", "edit", "generate"];
  const current = { start: 0, uploaded: 1, transcribed: 2, generating: 3, generated: 4 }[stage] ?? 0;
  document.querySelectorAll(".steps li").forEach((li) => {
    const i = order.indexOf(li.dataset.step);
    li.dataset.state = i < current ? "done" : i === current ? "current" : "todo";
    if (i === current) li.setAttribute("aria-current", "step");
    else li.removeAttribute("aria-current");
  });
}

function progress(prefix, label, fraction) {
  $(prefix + "-status").hidden = false;
  $(prefix + "-label").textContent = label;
  const bar = $(prefix + "-progress");
  if (fraction === null) {
    bar.removeAttribute("value");
    $(prefix + "-pct").textContent = "";
  } else {
    bar.value = Math.round(fraction * 100);
    $(prefix + "-pct").textContent = `${Math.round(fraction * 100)} %`;
  }
}

// ---- theme -------------------------------------------------------------------------------

function applyTheme(theme) {
  document.documentElement.dataset.theme = theme;
  const next = theme === "dark" ? "light" : "dark";
  $("theme-toggle").setAttribute("aria-label", `Switch to ${next} theme`);
}
const prefersDark = matchMedia("(prefers-color-scheme: dark)").matches;
applyTheme(localStorage.getItem("captions.theme") || (prefersDark ? "dark" : "light"));
$("theme-toggle").addEventListener("click", () => {
  const theme = document.documentElement.dataset.theme === "dark" ? "light" : "dark";
  localStorage.setItem("captions.theme", theme);
  applyTheme(theme);
});

// ---- the key -----------------------------------------------------------------------------

function showConnect(message) {
  $("connect").hidden = false;
  $("workspace").hidden = true;
  $("key-change").hidden = true;
  const error = $("key-error");
  error.textContent = message || "";
  error.hidden = !message;
  $("key-input").focus();
}

async function connect(key) {
  try {
    await api.templates({ key });
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      showConnect("The service refused this key (401). Paste the key that captions serve printed.");
    } else {
      showConnect(`The service did not answer: ${error.message}`);
    }
    return false;
  }
  saveKey(key);
  $("connect").hidden = true;
  $("workspace").hidden = false;
  $("key-change").hidden = false;
  if (!style.templates.length) style.load().catch(report);
  return true;
}

$("key-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const key = $("key-input").value.trim();
  if (!key) {
    showConnect("Enter the API key first.");
    return;
  }
  if (await connect(key)) $("key-input").value = "";
});
$("key-change").addEventListener("click", () => {
  forgetKey();
  showConnect("");
});
onUnauthorized(() => {
  forgetKey();
  showConnect("The service refused the saved key (401). Paste the key that captions serve printed.");
});

// ---- video and playhead ------------------------------------------------------------------

const video = $("video");
const fmt = (t) => `${Math.floor(t / 60)}:${(t % 60).toFixed(1).padStart(4, "0")}`;

function tick() {
  $("seek").value = video.currentTime;
  $("clock").textContent = fmt(video.currentTime);
  editor.setTime(video.currentTime);
  if (!video.paused) {
    showPlaybackFrame(video.currentTime);
    requestAnimationFrame(tick);
  }
}

video.addEventListener("loadedmetadata", () => {
  state.frame = { width: video.videoWidth, height: video.videoHeight };
  const ar = video.videoWidth / video.videoHeight;
  document.documentElement.style.setProperty("--ar", `${ar}`);
  $("seek").max = video.duration.toFixed(2);
  // A paused video shows no picture until it has been positioned once.
  if (video.currentTime === 0) video.currentTime = 0.001;
  tick();
});
video.addEventListener("play", () => {
  $("play-icon").setAttribute("d", "M6 5h4v14H6zm8 0h4v14h-4z");
  $("play").setAttribute("aria-label", "Pause");
  $("preview-badge").hidden = true;
  tick();
});
video.addEventListener("pause", () => {
  $("play-icon").setAttribute("d", "M8 5v14l11-7z");
  $("play").setAttribute("aria-label", "Play");
  schedulePreview(0);
});
video.addEventListener("seeked", () => {
  tick();
  if (video.paused) schedulePreview(0);
});
const togglePlay = () => (video.paused ? video.play().catch(report) : video.pause());
$("play").addEventListener("click", togglePlay);
video.addEventListener("click", togglePlay);
$("preview-img").addEventListener("click", togglePlay);
$("seek").addEventListener("input", (event) => { video.currentTime = Number(event.target.value); });

function seekTo(t) {
  return new Promise((resolve) => {
    if (Math.abs(video.currentTime - t) < 0.001 || !video.duration) {
      resolve();
      return;
    }
    video.addEventListener("seeked", () => resolve(), { once: true });
    video.currentTime = Math.min(t, video.duration);
  });
}

// ---- upload ------------------------------------------------------------------------------

async function chooseFile(file) {
  if (!file) return;
  if (!(file.type.startsWith("video/") || VIDEO_EXTENSIONS.test(file.name))) {
    toast(`${file.name} is not a video (${file.type || "unknown type"}). Choose an MP4, MOV, WebM or MKV file.`);
    return;
  }
  if (file.size === 0) {
    toast(`${file.name} is empty.`);
    return;
  }
  if (!(await hasPicture(file))) {
    toast(`${file.name} is not a video: no picture could be read from it. Choose an MP4, MOV, WebM or MKV file.`);
    return;
  }
  try {
    const descriptor = await api.signedUrl(file.name);
    const max = policyMaxBytes(descriptor);
    if (max !== null && file.size > max) {
      toast(`${file.name} is ${(file.size / 2 ** 20).toFixed(0)} MiB; this service takes at most ${(max / 2 ** 20).toFixed(0)} MiB.`);
      return;
    }
    video.src = URL.createObjectURL(file);
    $("toast").hidden = true;
    $("dropzone").hidden = true;
    $("frame").hidden = false;
    $("transport").hidden = false;
    state.transcribed = false;
    for (const id of ["transcribe-card", "edit-card", "style-card", "generate-card", "result"]) $(id).hidden = true;
    $("transcribe-status").hidden = true;
    progress("upload", `Uploading ${file.name}…`, 0);
    await upload(descriptor, file, (f) => progress("upload", `Uploading ${file.name}…`, f));
    state.file = descriptor.file;
    progress("upload", `${file.name} uploaded`, 1);
    $("transcribe-card").hidden = false;
    setStage("uploaded");
    $("transcribe-btn").focus();
  } catch (error) {
    report(error);
    $("upload-status").hidden = true;
  }
}

/** Whether the browser reads a picture from `file` (its width, height and length), before
 * anything is uploaded: a renamed text file or an audio file is refused here. */
function hasPicture(file) {
  return new Promise((resolve) => {
    const probe = document.createElement("video");
    const url = URL.createObjectURL(file);
    const done = (ok) => {
      clearTimeout(timer);
      probe.removeAttribute("src");
      probe.load();
      URL.revokeObjectURL(url);
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), 15000);
    probe.muted = true;
    probe.preload = "metadata";
    probe.addEventListener("loadedmetadata", () => done(probe.videoWidth > 0 && probe.videoHeight > 0 && probe.duration > 0), { once: true });
    probe.addEventListener("error", () => done(false), { once: true });
    probe.src = url;
  });
}

$("file-input").addEventListener("change", (event) => chooseFile(event.target.files[0]));
const dropzone = $("dropzone");
for (const name of ["dragenter", "dragover"]) {
  dropzone.addEventListener(name, (event) => {
    event.preventDefault();
    dropzone.classList.add("over");
  });
}
dropzone.addEventListener("dragleave", () => dropzone.classList.remove("over"));
dropzone.addEventListener("drop", (event) => {
  event.preventDefault();
  dropzone.classList.remove("over");
  chooseFile(event.dataTransfer.files[0]);
});

// ---- transcribe --------------------------------------------------------------------------

const names = new Intl.DisplayNames([navigator.language || "en"], { type: "language" });
$("lang-select").replaceChildren(
  new Option("Detect automatically", "auto"),
  ...LANGUAGES.map((code) => new Option(names.of(code) || code, code))
    .sort((a, b) => a.text.localeCompare(b.text)),
);
$("lang-select").value = "en";

$("transcribe-btn").addEventListener("click", async () => {
  const button = $("transcribe-btn");
  button.disabled = true;
  try {
    const lang = $("lang-select").value;
    const { job_id } = await api.transcribe(state.file, lang);
    progress("transcribe", "Queued…", null);
    const job = await poll(() => api.transcript(job_id), (j) => {
      if (j.status === "IN_PROGRESS") {
        progress("transcribe", "Listening…", j.progress != null ? j.progress / 100 : null);
      }
    });
    if (job.status === "FAILED") {
      progress("transcribe", "Transcription failed", 0);
      toast(job.error ? job.error.message : "The transcription failed.");
      return;
    }
    progress("transcribe", `${job.words.length} words`, 1);
    state.lang = lang === "auto" ? "en" : lang;
    await transcribed(job.words);
  } catch (error) {
    report(error);
  } finally {
    button.disabled = false;
  }
});

async function transcribed(words) {
  editor.load(words);
  forgetPlaybackFrames();
  state.transcribed = true;
  for (const id of ["edit-card", "style-card", "generate-card"]) $(id).hidden = false;
  setStage("transcribed");
  style.loadFonts(state.lang).catch(report);
  if (words.length) {
    const first = words[0];
    await seekTo((first.start + first.end) / 2);
  }
  schedulePreview(0);
  scheduleGallery(0);
}

// ---- previews ----------------------------------------------------------------------------

let previewTimer = 0;
let previewAbort = null;

function schedulePreview(delayMs = 250) {
  if (!state.transcribed) return;
  clearTimeout(previewTimer);
  previewTimer = setTimeout(() => renderPreview().catch(report), delayMs);
}

/** The preview size: the frame as shown, in device pixels, never above the video's own. */
function previewSize(cssWidth) {
  const { width, height } = state.frame;
  const w = Math.max(16, Math.min(width, Math.round(cssWidth * devicePixelRatio)));
  return { width: w, height: Math.max(16, Math.round((w * height) / width)) };
}

async function renderPreview() {
  const config = style.config();
  if (!config || !state.frame.width) return;
  previewAbort?.abort();
  previewAbort = new AbortController();
  const at = video.currentTime;
  const size = previewSize($("frame").clientWidth);
  $("preview-badge").textContent = "Updating preview…";
  $("preview-badge").hidden = false;
  const blob = await api.preview({ words: editor.words, config, at, ...size }, previewAbort.signal);
  const img = $("preview-img");
  const old = playback.still;
  playback.still = URL.createObjectURL(blob);
  img.src = playback.still;
  playback.shown = -1;
  await img.decode();
  if (old) URL.revokeObjectURL(old);
  img.dataset.version = String(Number(img.dataset.version || 0) + 1);
  img.dataset.at = at.toFixed(3);
  if (video.paused) img.hidden = false;
  $("preview-badge").textContent = `Preview at ${fmt(at)}`;
}

// ---- captions while the video plays ------------------------------------------------------
// The caption changes at word boundaries: one frame per word, from the same preview endpoint,
// fetched a few words ahead of the playhead and kept until the words or the style change.

// `still`: the exact frame drawn for a paused video.
const playback = { frames: new Map(), pending: new Set(), version: 0, shown: -1, still: null };
const PLAYBACK_AHEAD = 6;
/** After a word ends, its caption stays this long before a pause clears it (seconds). */
const PLAYBACK_HOLD_S = 1.0;

function forgetPlaybackFrames() {
  for (const url of playback.frames.values()) URL.revokeObjectURL(url);
  playback.frames.clear();
  playback.version += 1;
  playback.shown = -1;
}

/** The index of the word whose caption shows at `t`: the last one begun, unless a pause
 * followed it; -1 for none. */
function wordShownAt(t) {
  const words = editor.words;
  let i = -1;
  for (let k = 0; k < words.length && words[k].start <= t; k++) i = k;
  if (i < 0 || t > words[i].end + PLAYBACK_HOLD_S) return -1;
  return i;
}

async function fetchPlaybackFrame(i) {
  const config = style.config();
  if (!config || playback.frames.has(i) || playback.pending.has(i)) return;
  const word = editor.words[i];
  const version = playback.version;
  playback.pending.add(i);
  try {
    const at = word.start + 0.6 * Math.max(0, word.end - word.start);
    const size = previewSize($("frame").clientWidth);
    const blob = await api.preview({ words: editor.words, config, at, ...size });
    if (version === playback.version) playback.frames.set(i, URL.createObjectURL(blob));
  } finally {
    playback.pending.delete(i);
  }
}

function showPlaybackFrame(t) {
  if (!state.transcribed || !state.frame.width) return;
  const img = $("preview-img");
  const i = wordShownAt(t);
  const from = Math.max(i, 0);
  for (let k = from; k < Math.min(editor.words.length, from + PLAYBACK_AHEAD); k++) {
    if (playback.pending.size >= 2) break;
    fetchPlaybackFrame(k).catch(report);
  }
  if (i < 0) {
    img.hidden = true;
    playback.shown = -1;
    return;
  }
  const url = playback.frames.get(i);
  if (!url) return; // the previous caption stays until this one arrives
  if (playback.shown !== i) {
    img.src = url;
    img.dataset.playing = String(i);
    img.dataset.playingVersion = String(Number(img.dataset.playingVersion || 0) + 1);
    playback.shown = i;
  }
  img.hidden = false;
}

let galleryTimer = 0;
function scheduleGallery(delayMs = 1200) {
  clearTimeout(galleryTimer);
  galleryTimer = setTimeout(() => renderGallery().catch(report), delayMs);
}

/** Each template's card: its caption over the video's frame at the playhead. */
async function renderGallery() {
  if (!state.transcribed || !state.frame.width) return;
  const thumbWidth = Math.round(180 * Math.min(devicePixelRatio, 2));
  const size = previewSize(thumbWidth / devicePixelRatio);
  const canvas = document.createElement("canvas");
  canvas.width = size.width;
  canvas.height = size.height;
  canvas.getContext("2d").drawImage(video, 0, 0, size.width, size.height);
  const frameBlob = await new Promise((r) => canvas.toBlob(r, "image/jpeg", 0.85));
  if (style.frameUrl) URL.revokeObjectURL(style.frameUrl);
  style.frameUrl = URL.createObjectURL(frameBlob);
  const at = video.currentTime;
  const queue = style.templates.map((t) => t.id);
  const worker = async () => {
    for (let id = queue.shift(); id; id = queue.shift()) {
      const blob = await api.preview({ words: editor.words, templateId: id, at, ...size });
      style.setThumb(id, URL.createObjectURL(blob), style.frameUrl);
    }
  };
  await Promise.all([worker(), worker()]);
  $("gallery").dataset.rendered = String(Number($("gallery").dataset.rendered || 0) + 1);
}

// ---- editor and style --------------------------------------------------------------------

const editor = new Editor({
  onChange: () => {
    forgetPlaybackFrames();
    schedulePreview();
    scheduleGallery();
  },
  onSelect: (word) => {
    seekTo((word.start + word.end) / 2);
  },
});

const style = new Style({
  onChange: () => {
    forgetPlaybackFrames();
    schedulePreview();
  },
  onError: report,
});

$("copy-config").addEventListener("click", async () => {
  const copied = await style.copy();
  toast(copied ? "Config copied to the clipboard." : "Config selected: press Ctrl+C to copy it.");
});

document.addEventListener("keydown", (event) => {
  const typing = event.target.matches("input[type=text], input[type=number], input:not([type]), textarea, select");
  if (typing || !(event.ctrlKey || event.metaKey) || event.key.toLowerCase() !== "z") return;
  event.preventDefault();
  if (event.shiftKey) editor.redo();
  else editor.undo();
});

// ---- generate ----------------------------------------------------------------------------

$("generate-btn").addEventListener("click", async () => {
  const button = $("generate-btn");
  button.disabled = true;
  $("result").hidden = true;
  setStage("generating");
  try {
    const { job_id, download_url } = await api.generate({
      input: state.file,
      words: editor.words,
      config: style.config(),
    });
    progress("generate", "Queued…", 0);
    const job = await poll(() => api.generateJob(job_id), (j) => {
      if (j.status === "IN_PROGRESS") progress("generate", "Burning captions…", j.progress / 100);
    });
    if (job.status === "FAILED") {
      progress("generate", "Generation failed", 0);
      toast(job.error ? job.error.message : "The generation failed.");
      setStage("transcribed");
      return;
    }
    progress("generate", "Done", 1);
    const result = $("result-video");
    result.src = download_url;
    $("download-link").href = download_url;
    $("result").hidden = false;
    setStage("generated");
    $("download-link").focus();
  } catch (error) {
    report(error);
    setStage("transcribed");
  } finally {
    button.disabled = false;
  }
});

// ---- start -------------------------------------------------------------------------------

setStage("start");
if (savedKey()) connect(savedKey());
else showConnect("");
