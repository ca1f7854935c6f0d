// The style panel: the template gallery (each card a preview of that template on the user's
// own video and words) and the main fields of the config over the chosen template.

import { api } from "./api.js";

const $ = (id) => document.getElementById(id);

const CHOICES = {
  effect: ["DISABLED", "POP", "BOUNCE", "ZOOM", "FADE", "SLIDE", "SHAKE", "TYPEWRITER"],
  "display-mode": ["ALL", "PROGRESSIVE", "WORD"],
  "emoji-mode": ["NONE", "WORD", "LINE", "PAGE"],
  caps: ["NONE", "UPPERCASE", "LOWERCASE", "CAPITALIZE", "SENTENCE"],
};
const LABELS = {
  DISABLED: "None", POP: "Pop", BOUNCE: "Bounce", ZOOM: "Zoom", FADE: "Fade", SLIDE: "Slide",
  SHAKE: "Shake", TYPEWRITER: "Typewriter", ALL: "Whole page", PROGRESSIVE: "As spoken",
  WORD: "One word", NONE: "None", LINE: "Per line", PAGE: "Per page", UPPERCASE: "UPPERCASE",
  LOWERCASE: "lowercase", CAPITALIZE: "Each Word", SENTENCE: "Sentence case",
};
const COLOR_ROLES = [
  ["defaultColor", "Text"],
  ["hilightColor", "Spoken now"],
  ["spokenColor", "Already spoken"],
  ["strokeColor", "Outline"],
  ["backgroundColor", "Box"],
  ["shadowColor", "Shadow"],
];

const isObject = (v) => v && typeof v === "object" && !Array.isArray(v);

/** `patch` over `base`, object by object (arrays and values replace). */
export function merge(base, patch) {
  const out = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    out[k] = isObject(v) && isObject(base[k]) ? merge(base[k], v) : v;
  }
  return out;
}

const hex = (c) => "#" + [c.r, c.g, c.b].map((v) => Math.round(v).toString(16).padStart(2, "0")).join("");
const rgb = (h, a) => {
  const n = parseInt(h.slice(1), 16);
  const c = { r: (n >> 16) & 255, g: (n >> 8) & 255, b: n & 255 };
  if (a !== undefined && a !== 255) c.a = a;
  return c;
};

export class Style {
  constructor({ onChange, onError }) {
    this.templates = [];
    this.templateId = null;
    this.base = null;
    this.overrides = {};
    this.onChange = onChange;
    this.onError = onError;
    this.cards = new Map();
    this.fontLang = null;
    this.buildFields();
  }

  /** The full config: the template's with the user's changes. */
  config() {
    return this.base ? merge(this.base, this.overrides) : null;
  }

  async load() {
    this.templates = await api.templates();
    const gallery = $("gallery");
    gallery.replaceChildren(...this.templates.map((t) => {
      const card = document.createElement("button");
      card.type = "button";
      card.className = "template-card";
      card.dataset.id = t.id;
      card.setAttribute("role", "radio");
      card.setAttribute("aria-checked", "false");
      card.innerHTML = `<span class="thumb"><img alt="" hidden></span><span class="name"></span>`;
      card.querySelector(".name").textContent = t.name;
      card.addEventListener("click", () => this.choose(t.id));
      card.addEventListener("keydown", (event) => this.galleryKeys(event, t.id));
      this.cards.set(t.id, card);
      return card;
    }));
    const first = this.templates.find((t) => t.id === "bold-highlight") || this.templates[0];
    if (first) await this.choose(first.id, { quiet: true });
  }

  galleryKeys(event, id) {
    const ids = this.templates.map((t) => t.id);
    const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[event.key];
    if (!step) return;
    event.preventDefault();
    const next = ids[(ids.indexOf(id) + step + ids.length) % ids.length];
    this.cards.get(next).focus();
    this.choose(next);
  }

  async choose(id, { quiet = false } = {}) {
    const template = await api.template(id);
    this.templateId = id;
    this.base = template.config;
    this.overrides = {};
    for (const [cardId, card] of this.cards) {
      const on = cardId === id;
      card.setAttribute("aria-checked", String(on));
      card.tabIndex = on ? 0 : -1;
    }
    this.renderFields();
    if (!quiet) this.onChange();
  }

  /** Lists the fonts that cover `lang` (an ISO 639-1 code). */
  async loadFonts(lang) {
    if (lang === this.fontLang) return;
    this.fontLang = lang;
    const fonts = await api.fonts(lang);
    const select = $("font-select");
    const options = [new Option("Template's font", "")];
    for (const name of fonts) options.push(new Option(name, name));
    select.replaceChildren(...options);
    this.renderFields();
  }

  set(patch) {
    this.overrides = merge(this.overrides, patch);
    this.renderFields();
    this.onChange();
  }

  buildFields() {
    for (const [id, values] of Object.entries(CHOICES)) {
      $(id).replaceChildren(...values.map((v) => new Option(LABELS[v] || v, v)));
    }
    $("color-fields").replaceChildren(...COLOR_ROLES.map(([role, label]) => {
      const wrap = document.createElement("label");
      wrap.className = "swatch";
      wrap.innerHTML = `<input type="color" data-role="${role}"><span></span>`;
      wrap.querySelector("span").textContent = label;
      return wrap;
    }));
    const on = (id, event, patch) => $(id).addEventListener(event, (e) => this.set(patch(e.target)));
    on("font-select", "change", (t) => ({ font: t.value || this.base.font }));
    on("font-size", "input", (t) => ({ sizes: { fontSize: Number(t.value) } }));
    on("position-y", "input", (t) => ({ position: { x: this.config().position?.x ?? 0.5, y: Number(t.value) } }));
    on("lines", "change", (t) => ({ linesCount: clampInt(t, 1, 6) }));
    on("words-per-line", "change", (t) => ({ wordsPerLineCount: clampInt(t, 1, 12) }));
    on("effect", "change", (t) => ({ modes: { effectType: t.value } }));
    on("display-mode", "change", (t) => ({ modes: { displayMode: t.value } }));
    on("emoji-mode", "change", (t) => ({ modes: { displayEmojis: t.value } }));
    on("caps", "change", (t) => ({ capitalizationType: t.value }));
    on("has-background", "change", (t) => ({ wordHasBackground: t.checked }));
    on("has-shadow", "change", (t) => ({ wordHasShadow: t.checked }));
    on("has-punctuation", "change", (t) => ({ wordHasPunctuation: t.checked }));
    $("color-fields").addEventListener("input", (event) => {
      const role = event.target.dataset.role;
      if (!role) return;
      const current = this.config().colors[role].colors[0];
      this.set({ colors: { [role]: { colors: [rgb(event.target.value, current?.a)] } } });
    });
  }

  renderFields() {
    const c = this.config();
    if (!c) return;
    const value = (id, v) => { if (document.activeElement !== $(id)) $(id).value = v; };
    const select = $("font-select");
    const fontChosen = this.overrides.font && this.overrides.font !== this.base.font;
    select.options[0] && (select.options[0].text = `Template's font (${this.base.font || "default"})`);
    value("font-select", fontChosen ? c.font : "");
    value("font-size", c.sizes.fontSize);
    $("font-size-out").textContent = `${Math.round(c.sizes.fontSize)} px`;
    const y = c.position?.y ?? 0.75;
    value("position-y", y);
    $("position-y-out").textContent = `${Math.round(y * 100)} % down`;
    value("lines", c.linesCount);
    value("words-per-line", c.wordsPerLineCount);
    value("effect", c.modes.effectType);
    value("display-mode", c.modes.displayMode);
    value("emoji-mode", c.modes.displayEmojis);
    value("caps", c.capitalizationType);
    $("has-background").checked = c.wordHasBackground;
    $("has-shadow").checked = c.wordHasShadow;
    $("has-punctuation").checked = c.wordHasPunctuation;
    for (const input of $("color-fields").querySelectorAll("input")) {
      const first = c.colors[input.dataset.role].colors[0];
      input.value = first ? hex(first) : "#000000";
      input.closest(".swatch").classList.toggle("unused", !first);
    }
    $("config-json").textContent = JSON.stringify(c, null, 2);
  }

  /** Puts `url` (a caption PNG) on the template's card over `frameUrl` (the video frame). */
  setThumb(id, url, frameUrl) {
    const card = this.cards.get(id);
    if (!card) return;
    const thumb = card.querySelector(".thumb");
    if (frameUrl) thumb.style.backgroundImage = `url("${frameUrl}")`;
    const img = card.querySelector("img");
    const old = img.src;
    img.src = url;
    img.hidden = false;
    if (old.startsWith("blob:")) URL.revokeObjectURL(old);
  }

  async copy() {
    const text = JSON.stringify(this.config(), null, 2);
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch {
      // No clipboard permission (an insecure origin, a headless browser): select the text so
      // the user can copy it by hand.
      const details = $("config-json").closest("details");
      details.open = true;
      const range = document.createRange();
      range.selectNodeContents($("config-json"));
      const selection = getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      return false;
    }
  }
}

function clampInt(input, min, max) {
  const n = Math.round(Number(input.value));
  const v = Number.isFinite(n) ? Math.min(Math.max(n, min), max) : min;
  input.value = v;
  return v;
}
