// The transcript editor: the words in reading order as chips, an inspector for the selected
// word (text, emoji, start and end with nudges, merge, split, delete) and undo/redo.

const $ = (id) => document.getElementById(id);
const round2 = (t) => Math.round(t * 100) / 100;
const EDGE_PUNCTUATION = /^[\p{P}\p{S}]+|[\p{P}\p{S}]+$/gu;

/**
 * Below this confidence a heard word is marked for checking: on the word-timing bench a third
 * of the words whisper heard under 0.5 were wrong, against 4 % of those over 0.8.
 */
const CHECK_BELOW = 0.5;

/** Whether a word was heard with little confidence (words typed or edited have none). */
export function unsure(w) {
  return typeof w.confidence === "number" && w.confidence < CHECK_BELOW;
}

/** The bare word of a text as written ("Hello," -> "Hello"). */
export function bareWord(text) {
  const bare = text.replace(EDGE_PUNCTUATION, "");
  return bare || text;
}

export class Editor {
  constructor({ onChange, onSelect }) {
    this.words = [];
    this.selected = -1;
    this.speaking = -1;
    this.undoStack = [];
    this.redoStack = [];
    this.onChange = onChange;
    this.onSelect = onSelect;
    this.list = $("words");
    this.bind();
  }

  load(words) {
    this.words = words.map((w) => ({ ...w }));
    this.undoStack = [];
    this.redoStack = [];
    this.selected = -1;
    this.render();
  }

  /**
   * Records the state before an edit, applies `edit`, and redraws. Edits with the same
   * `coalesce` key in a row (typing in one field of one word) are undone as one.
   */
  edit(edit, coalesce = null) {
    const before = JSON.stringify(this.words);
    edit();
    if (JSON.stringify(this.words) === before) return;
    const last = this.undoStack[this.undoStack.length - 1];
    const key = coalesce && `${coalesce}:${this.selected}`;
    if (!(key && last && last.key === key && this.redoStack.length === 0)) {
      this.undoStack.push({ words: before, selected: this.selected, key });
    }
    if (this.undoStack.length > 200) this.undoStack.shift();
    this.redoStack = [];
    this.render();
    this.onChange(this.words);
  }

  undo() { this.travel(this.undoStack, this.redoStack); }
  redo() { this.travel(this.redoStack, this.undoStack); }

  travel(from, to) {
    const state = from.pop();
    if (!state) return;
    to.push({ words: JSON.stringify(this.words), selected: this.selected });
    this.words = JSON.parse(state.words);
    this.selected = Math.min(state.selected, this.words.length - 1);
    this.render();
    this.onChange(this.words);
  }

  select(index, { focus = false } = {}) {
    if (index < 0 || index >= this.words.length) return;
    this.selected = index;
    this.render();
    if (focus) this.list.querySelector(`[data-index="${index}"]`)?.focus();
    this.onSelect(this.words[index], index);
  }

  /** Lights up the word spoken at `t_s` (seconds). */
  setTime(t_s) {
    const index = this.words.findIndex((w) => w.start <= t_s && t_s < w.end);
    if (index === this.speaking) return;
    this.list.querySelector(".speaking")?.classList.remove("speaking");
    this.speaking = index;
    const chip = this.list.querySelector(`[data-index="${index}"]`);
    if (chip) {
      chip.classList.add("speaking");
      const box = this.list.getBoundingClientRect();
      const r = chip.getBoundingClientRect();
      if (r.top < box.top || r.bottom > box.bottom) chip.scrollIntoView({ block: "nearest" });
    }
  }

  render() {
    const list = this.list;
    list.replaceChildren(...this.words.map((w, i) => {
      const chip = document.createElement("span");
      chip.className = "word" + (i === this.speaking ? " speaking" : "") + (unsure(w) ? " unsure" : "");
      if (typeof w.confidence === "number") chip.dataset.confidence = String(w.confidence);
      chip.setAttribute("role", "option");
      chip.dataset.index = i;
      chip.setAttribute("aria-selected", String(i === this.selected));
      chip.tabIndex = i === Math.max(this.selected, 0) ? 0 : -1;
      chip.textContent = w.punctuated_word;
      if (w.emoji) {
        const emoji = document.createElement("span");
        emoji.className = "word-emoji";
        emoji.textContent = w.emoji;
        chip.append(emoji);
      }
      chip.title = `${w.start.toFixed(2)}–${w.end.toFixed(2)} s`;
      return chip;
    }));
    $("undo").disabled = this.undoStack.length === 0;
    $("redo").disabled = this.redoStack.length === 0;
    this.renderInspector();
  }

  renderInspector() {
    const w = this.words[this.selected];
    $("inspector").hidden = !w;
    if (!w) return;
    const set = (id, value) => {
      const input = $(id);
      if (document.activeElement !== input) input.value = value;
    };
    set("word-text", w.punctuated_word);
    set("word-emoji", w.emoji || "");
    set("word-start", w.start.toFixed(2));
    set("word-end", w.end.toFixed(2));
    const note = $("word-note");
    note.hidden = !unsure(w);
    if (unsure(w)) {
      note.textContent = `Heard with little confidence (${Math.round(w.confidence * 100)} %): check the word against the speech.`;
    }
    $("word-merge").disabled = this.selected >= this.words.length - 1;
    $("word-split").disabled = w.punctuated_word.length < 2;
  }

  showError(message) {
    const error = $("word-error");
    error.textContent = message || "";
    error.hidden = !message;
  }

  bind() {
    this.list.addEventListener("click", (event) => {
      const chip = event.target.closest(".word");
      if (chip) this.select(Number(chip.dataset.index), { focus: true });
    });
    this.list.addEventListener("keydown", (event) => {
      const current = Math.max(this.selected, 0);
      const moves = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1, Home: -Infinity, End: Infinity };
      if (event.key in moves) {
        event.preventDefault();
        const next = Math.min(Math.max(current + moves[event.key], 0), this.words.length - 1);
        this.select(next, { focus: true });
      } else if (event.key === "Enter" || event.key === "F2") {
        event.preventDefault();
        if (this.selected < 0) this.select(current);
        $("word-text").focus();
        $("word-text").select();
      }
    });
    $("word-text").addEventListener("input", (event) => {
      const text = event.target.value.trim();
      if (!text) {
        this.showError("A word needs some text; use Delete to remove it.");
        return;
      }
      this.showError("");
      this.edit(() => {
        const w = this.words[this.selected];
        w.punctuated_word = text;
        w.word = bareWord(text);
        // The text is now the user's, not what was heard.
        delete w.confidence;
      }, "text");
    });
    $("word-emoji").addEventListener("input", (event) => {
      const emoji = event.target.value.trim();
      this.edit(() => {
        const w = this.words[this.selected];
        if (emoji) w.emoji = emoji;
        else delete w.emoji;
      }, "emoji");
    });
    for (const field of ["start", "end"]) {
      $("word-" + field).addEventListener("change", (event) => {
        this.setTimeField(field, Number(event.target.value));
      });
    }
    $("inspector").addEventListener("click", (event) => {
      const nudge = event.target.closest("[data-nudge]");
      if (!nudge) return;
      const field = nudge.dataset.nudge;
      const w = this.words[this.selected];
      this.setTimeField(field, w[field] + Number(nudge.dataset.by));
    });
    $("inspector").addEventListener("submit", (event) => event.preventDefault());
    $("word-merge").addEventListener("click", () => this.merge());
    $("word-split").addEventListener("click", () => this.split());
    $("word-delete").addEventListener("click", () => this.remove());
    $("undo").addEventListener("click", () => this.undo());
    $("redo").addEventListener("click", () => this.redo());
  }

  setTimeField(field, value) {
    const w = this.words[this.selected];
    if (!Number.isFinite(value) || value < 0) {
      this.showError(`${field === "start" ? "Start" : "End"} must be a number of seconds, 0 or more.`);
      return;
    }
    const t = round2(value);
    if ((field === "start" && t > w.end) || (field === "end" && t < w.start)) {
      this.showError("A word cannot end before it starts.");
      this.renderInspector();
      return;
    }
    this.showError("");
    this.edit(() => { w[field] = t; });
    this.onSelect(w, this.selected);
  }

  merge() {
    const i = this.selected;
    if (i < 0 || i >= this.words.length - 1) return;
    this.edit(() => {
      const [a, b] = this.words.slice(i, i + 2);
      const merged = {
        start: Math.min(a.start, b.start),
        end: Math.max(a.end, b.end),
        word: `${a.word} ${b.word}`,
        punctuated_word: `${a.punctuated_word} ${b.punctuated_word}`,
      };
      const emoji = a.emoji || b.emoji;
      if (emoji) merged.emoji = emoji;
      this.words.splice(i, 2, merged);
    });
  }

  /** Splits at the first space, or in the middle; the time is shared by length. */
  split() {
    const i = this.selected;
    const w = this.words[i];
    if (!w || w.punctuated_word.length < 2) return;
    const text = w.punctuated_word;
    const space = text.indexOf(" ");
    const chars = [...text];
    const left = space > 0 ? text.slice(0, space) : chars.slice(0, Math.ceil(chars.length / 2)).join("");
    const right = (space > 0 ? text.slice(space + 1) : chars.slice(Math.ceil(chars.length / 2)).join("")).trim();
    if (!right) return;
    const cut = round2(w.start + (w.end - w.start) * (left.length / (left.length + right.length)));
    this.edit(() => {
      const first = { start: w.start, end: cut, word: bareWord(left), punctuated_word: left };
      const second = { start: cut, end: w.end, word: bareWord(right), punctuated_word: right };
      if (w.emoji) first.emoji = w.emoji;
      this.words.splice(i, 1, first, second);
    });
  }

  remove() {
    const i = this.selected;
    if (i < 0) return;
    this.edit(() => {
      this.words.splice(i, 1);
      this.selected = Math.min(i, this.words.length - 1);
    });
  }
}
