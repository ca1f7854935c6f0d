//! ASS subtitles drawn by libass (ffmpeg's `ass` filter) show what the burn shows: the burn's
//! pages and lines, and the words it lights lit at the same instants and in the same places,
//! one word at a time where the burn lights one word. The burn's own layout (the renderer's
//! timeline, with the system's fonts as libass has them) is the oracle.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use std::io::Read as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

use caption_core::{CaptionLayout, Catalog, Color, Config, ExportOptions, SubtitleFormat, Word};
use caption_engine::Captioner;
use caption_layout::{BoxKind, RectPx, Timeline, Visibility};
use caption_render::{CaptionRenderer, FrameSize, SystemFonts};

const W: usize = 1080;
const H: usize = 1920;
/// Frames are numbered in hundredths of a second.
const FPS: f64 = 100.0;

/// The first sentences of a real transcript (the engine's words of espeak-ng speech).
fn transcript() -> Vec<Word> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/transcripts/creator-tips.json");
    let words: Vec<Word> = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    words.into_iter().take(34).collect()
}

/// The ASS file the captioner writes for `words` in `config` on a 1080x1920 video.
fn ass_file(words: &[Word], config: &Config, path: &Path) -> String {
    let captioner = Captioner::builder().build().unwrap();
    let options = ExportOptions::default()
        .with_frame_size(W as u32, H as u32)
        .with_config(config.clone());
    let ass = captioner
        .subtitles(words, SubtitleFormat::Ass, &options)
        .unwrap();
    std::fs::write(path, &ass).unwrap();
    ass
}

/// The RGB frames libass draws of `ass` over a slate picture at each frame number in `frames`
/// (hundredths of a second).
fn libass_frames(ass: &Path, frames: &[u64]) -> Vec<Vec<u8>> {
    assert!(!ass.to_str().unwrap().contains([':', '\'', '\\']));
    let last = *frames.iter().max().unwrap();
    let source = format!(
        "color=c=0x343C4A:s={W}x{H}:r={FPS}:d={},format=rgb24",
        (last + 10) as f64 / FPS
    );
    // Frames are picked before libass draws, so it draws only those.
    let picks: Vec<String> = frames.iter().map(|n| format!("eq(n\\,{n})")).collect();
    let filter = format!("select='{}',ass={}", picks.join("+"), ass.display());
    let mut child = Command::new("ffmpeg")
        .args([
            "-hide_banner",
            "-loglevel",
            "error",
            "-nostdin",
            "-f",
            "lavfi",
            "-i",
        ])
        .arg(&source)
        .args(["-vf", &filter, "-fps_mode", "passthrough"])
        .args(["-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("ffmpeg (with libass) must be installed");
    let mut stdout = child.stdout.take().unwrap();
    let mut out = Vec::new();
    let mut frame = vec![0u8; W * H * 3];
    while stdout.read_exact(&mut frame).is_ok() {
        out.push(frame.clone());
    }
    assert!(child.wait().unwrap().success());
    assert_eq!(out.len(), frames.len(), "one frame per instant asked for");
    out
}

fn close(pixel: &[u8], c: Color) -> bool {
    pixel[0].abs_diff(c.r) <= 24 && pixel[1].abs_diff(c.g) <= 24 && pixel[2].abs_diff(c.b) <= 24
}

fn inside(r: &RectPx, x: usize, y: usize) -> bool {
    let (x, y) = (x as f32 + 0.5, y as f32 + 0.5);
    x >= r.x && x <= r.right() && y >= r.y && y <= r.bottom()
}

/// The colour the burn lights words with at `t_s` and the words that show it (their text, or
/// their box under `wordHasBackground`); `None` when nothing is lit or the colour is also that
/// of an unlit word or box.
fn lit_at(timeline: &Timeline, t_s: f64) -> Option<(Color, Vec<usize>)> {
    let config = &timeline.config;
    let state = timeline.state_at(t_s);
    let active = state
        .words
        .iter()
        .find(|s| s.visibility == Visibility::Active)?;
    let word = &timeline.words[active.word];
    if config.word_has_background {
        let color = config.colors.hilight_color.nth(word.index)?;
        let unlit = state.words.iter().any(|s| s.text_color == color)
            || state
                .boxes
                .iter()
                .any(|b| b.color == color && b.kind != BoxKind::Active);
        return (!unlit).then(|| (color, vec![active.word]));
    }
    let color = active.text_color;
    let lit: Vec<usize> = state
        .words
        .iter()
        .filter(|s| s.text_color == color)
        .map(|s| s.word)
        .collect();
    (lit.len() < state.words.len()).then_some((color, lit))
}

/// Where libass draws word `i`: across, where the burn draws it (the ASS widens the spaces to
/// the burn's); down, in its line of a block of lines one font size apart (ASS sizes a font by
/// its line height) centred on the page's centre. Grown by the room an outline or box takes.
fn drawn_at(timeline: &Timeline, layout: &CaptionLayout, i: usize) -> RectPx {
    let word = &timeline.words[i];
    let page = &timeline.pages[word.page];
    let (lines, line) = (
        page.lines.len() as f32,
        (word.line - page.lines.start) as f32,
    );
    let center_y = layout.pages[word.page].center_px.1;
    let pitch = layout.font_size_px;
    let top = center_y - lines * pitch / 2.0 + line * pitch;
    let grow = 0.25 * timeline.font_px + timeline.stroke_px + 4.0;
    RectPx {
        x: word.rect.x,
        y: top,
        w: word.rect.w,
        h: pitch,
    }
    .inflate(grow, grow)
}

/// The text of each line of each event: override blocks dropped, `\N` between lines.
fn event_lines(ass: &str) -> Vec<Vec<String>> {
    ass.lines()
        .filter_map(|l| l.strip_prefix("Dialogue: "))
        .map(|event| {
            let text = event.splitn(10, ',').nth(9).unwrap();
            text.split("\\N")
                .map(|line| {
                    let mut plain = String::new();
                    let mut depth = 0;
                    for c in line.chars() {
                        match c {
                            '{' => depth += 1,
                            '}' => depth -= 1,
                            c if depth == 0 => plain.push(c),
                            _ => {}
                        }
                    }
                    plain.trim().to_owned()
                })
                .collect()
        })
        .collect()
}

#[test]
fn libass_draws_the_burns_pages_and_lights_the_words_the_burn_lights() {
    let words = transcript();
    let dir = tempfile::tempdir().unwrap();
    let fonts = Arc::new(SystemFonts::new().unwrap());
    let mut problems = Vec::new();
    let mut lighting = 0;
    for template in Catalog::builtin().unwrap().templates() {
        let config = &template.config;
        let path = dir.path().join(format!("{}.ass", template.id));
        let ass = ass_file(&words, config, &path);
        let renderer = CaptionRenderer::new(
            &words,
            config,
            FrameSize::new(W as u32, H as u32),
            fonts.clone(),
        )
        .unwrap();
        let timeline = renderer.timeline();
        let layout = renderer.caption_layout();

        // The burn's pages and lines, one event a page.
        let burn_lines: Vec<Vec<String>> = timeline
            .pages
            .iter()
            .map(|p| {
                timeline.lines[p.lines.clone()]
                    .iter()
                    .map(|l| {
                        timeline.words[l.words.clone()]
                            .iter()
                            .map(|w| w.text.as_str())
                            .collect::<Vec<_>>()
                            .join(" ")
                    })
                    .collect()
            })
            .collect();
        assert_eq!(event_lines(&ass), burn_lines, "{}", template.id);

        // Mid-word instants where the burn lights some words and not others.
        let mut instants = Vec::new();
        for w in &timeline.words {
            if w.end_s - w.start_s < 0.12 {
                continue;
            }
            let n = ((w.start_s + w.end_s) / 2.0 * FPS).round() as u64;
            if let Some(lit) = lit_at(timeline, n as f64 / FPS) {
                instants.push((n, lit));
            }
        }
        // A word a page (one-word), or no highlight colour (clean-subtitle): the burn lights no
        // word apart from the others, and the lines are all there is to compare.
        if instants.is_empty() {
            continue;
        }
        assert!(
            instants.len() >= 10,
            "{}: {} instants",
            template.id,
            instants.len()
        );
        lighting += 1;
        let frames = libass_frames(&path, &instants.iter().map(|(n, _)| *n).collect::<Vec<_>>());
        for ((n, (color, lit)), frame) in instants.iter().zip(&frames) {
            let at = *n as f64 / FPS;
            let rects: Vec<RectPx> = lit
                .iter()
                .map(|&i| drawn_at(timeline, &layout, i))
                .collect();
            let mut stray = 0;
            let mut on_word = vec![0usize; rects.len()];
            for (k, pixel) in frame.chunks_exact(3).enumerate() {
                if !close(pixel, *color) {
                    continue;
                }
                let (x, y) = (k % W, k / W);
                match rects.iter().position(|r| inside(r, x, y)) {
                    Some(i) => on_word[i] += 1,
                    None => stray += 1,
                }
            }
            if stray > 40 {
                problems.push(format!(
                    "{} at {at:.2} s: {stray} pixels lit outside the words the burn lights",
                    template.id
                ));
            }
            if on_word.iter().any(|&count| count < 40) {
                problems.push(format!(
                    "{} at {at:.2} s: a word the burn lights is not lit ({on_word:?} pixels)",
                    template.id
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        lighting >= 10,
        "{lighting} templates light words one by one"
    );
}
