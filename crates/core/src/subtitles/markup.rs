//! Text inside cues: joining words by script, escaping what each format would read as markup,
//! and reading the same escapes and markup back.

use crate::script::{joins_without_space, split_unspaced};

/// Joins words into a line: a space between two words, none where both sides of the joint are
/// in a script written without spaces (two Chinese or Japanese words).
pub(crate) fn join_words<'a>(words: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = String::new();
    for word in words {
        if word.is_empty() {
            continue;
        }
        if !out.is_empty() && !joins_without_space(&out, word) {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// A word's text on one line: any line break or run of spaces inside it becomes one space, so a
/// word can neither break a cue's lines nor end an SRT block with a blank line.
pub(crate) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The words of a cue's text: cut at spaces, and text of scripts without spaces cut into its
/// words.
pub(crate) fn tokens(text: &str) -> Vec<&str> {
    text.split_whitespace().flat_map(split_unspaced).collect()
}

/// WebVTT cue text: `&`, `<` and `>` as character references (`<` would open a tag, and `-->`
/// would end the cue's text).
pub(crate) fn escape_vtt(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c => out.push(c),
        }
    }
    out
}

/// SRT cue text: SRT has no escapes, and players read `<b>` as a tag (ffmpeg drops even `<3 a >`),
/// `{\an8}` as an ASS override, `{C:...}` as a MicroDVD style and (through ffmpeg, as mpv
/// does) `\N` as a line break, so every `<`, `{` and backslash is followed by a word joiner,
/// which shows nothing and makes it text.
pub(crate) fn escape_srt(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        out.push(c);
        if matches!(c, '<' | '{' | '\\') {
            out.push(WORD_JOINER);
        }
    }
    out
}

/// The character ASS writers put after a backslash so that it cannot start an escape (`\N`,
/// `\h`, `\{`) with the letter after it: ASS has no escape for the backslash itself, so players
/// (mpv does the same) are given one that shows nothing.
const WORD_JOINER: char = '\u{2060}';

/// ASS event text: `{` and `}` escaped (`\{`, `\}`, libass shows them as braces) so they cannot
/// open an override block, and a backslash followed by a word joiner so it cannot escape the
/// letter after it.
pub(crate) fn escape_ass(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '{' => out.push_str("\\{"),
            '}' => out.push_str("\\}"),
            '\\' => {
                out.push('\\');
                out.push(WORD_JOINER);
            }
            c => out.push(c),
        }
    }
    out
}

/// The length in bytes of the tag `s` starts with (`<i>`, `</b>`, `<c.yellow>`, `<v Roger>`,
/// `<00:00:01.000>`, `<font color="red">`), if it starts with one. A `<` that is not followed by
/// a letter, `/` or a timestamp, or never closed, is text (`a < b`, `<3 >`).
fn tag_len(s: &str) -> Option<usize> {
    let after = s.strip_prefix('<')?;
    let first = after.chars().next()?;
    // Timestamps (`<00:00:01.000>`, `<01.000>`) are the only tags that start with a digit.
    let timestamp = first.is_ascii_digit()
        && after
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .starts_with([':', '.']);
    if !(first == '/' || first.is_ascii_alphabetic() || timestamp) {
        return None;
    }
    let end = after.find(['>', '<'])?;
    after[end..].starts_with('>').then_some(end + 2)
}

/// The character a reference such as `amp`, `#38` or `#x26` stands for (`None` for the marks
/// that show nothing); `Err` when it is not one.
fn entity(name: &str) -> Result<Option<char>, ()> {
    let decoded = match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => ' ',
        "lrm" | "rlm" => return Ok(None),
        _ => {
            let number = name.strip_prefix('#').ok_or(())?;
            let code = match number.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16),
                None => number.parse(),
            };
            code.ok().and_then(char::from_u32).ok_or(())?
        }
    };
    Ok(Some(decoded))
}

/// Decodes WebVTT's character references in one pass (so `&amp;lt;` reads as `&lt;`, not `<`);
/// an `&` that starts no known reference stays as it is. (SRT has none: ffmpeg and players show
/// `&amp;` in an SRT file as written.)
pub(crate) fn decode_entities(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let reference = rest[1..]
            .find(';')
            .filter(|&end| end <= 10)
            .and_then(|end| Some((end, entity(&rest[1..=end]).ok()?)));
        match reference {
            Some((end, decoded)) => {
                out.extend(decoded);
                rest = &rest[end + 2..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// SRT and WebVTT cue text without its tags (`<i>`, `<c.yellow>`, `<v Roger>`, timestamps)
/// and, with `ass_overrides` (SRT), the `{\an8}` some SRT files carry, and without the word
/// joiner [`escape_srt`] puts after a mark that is text.
pub(crate) fn strip_tags(s: &str, ass_overrides: bool) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        if let Some(text) = ["<\u{2060}", "{\u{2060}", "\\\u{2060}"]
            .iter()
            .find_map(|escaped| rest.strip_prefix(escaped))
        {
            out.push(c);
            rest = text;
            continue;
        }
        if let Some(len) = tag_len(rest) {
            rest = &rest[len..];
            continue;
        }
        if ass_overrides
            && rest.starts_with("{\\")
            && let Some(end) = rest.find('}')
        {
            rest = &rest[end + 1..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// The text of lines (already free of markup) as one line, words joined by script.
pub(crate) fn join_lines<'a>(lines: impl IntoIterator<Item = &'a str>) -> String {
    join_words(lines.into_iter().flat_map(str::split_whitespace))
}

/// A karaoke syllable of an ASS event: a `\k` time and the text it lights.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Syllable {
    pub(crate) duration_s: f64,
    pub(crate) text: String,
}

/// An ASS event's text read: what it shows, and its karaoke syllables when every shown
/// character belongs to one.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AssText {
    /// Shown text, `\N` as a line break.
    pub(crate) plain: String,
    /// Empty when the event has no `\k` or shows text before its first one.
    pub(crate) syllables: Vec<Syllable>,
}

/// The karaoke times (`\k`, `\K`, `\kf`, `\ko`, in centiseconds) an override block sets, in
/// order.
fn karaoke_durations(block: &str) -> impl Iterator<Item = f64> + '_ {
    block.split('\\').filter_map(|tag| {
        let value = ["kf", "ko", "k", "K"]
            .iter()
            .find_map(|name| tag.strip_prefix(name))?;
        let number: f64 = value.trim().parse().ok()?;
        (number.is_finite() && number >= 0.0).then_some(number / 100.0)
    })
}

/// Reads an ASS event's text: override blocks `{...}` dropped (their `\k` times kept), `\N` and
/// `\n` as line breaks, `\h` as a space, `\{` and `\}` as braces, a backslash before a word
/// joiner as a backslash.
pub(crate) fn read_ass_text(body: &str) -> AssText {
    let mut plain = String::with_capacity(body.len());
    let mut syllables: Vec<Syllable> = Vec::new();
    let mut text_before_karaoke = false;
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        let shown = match c {
            '{' => {
                let block: String = chars.by_ref().take_while(|&c| c != '}').collect();
                syllables.extend(karaoke_durations(&block).map(|duration_s| Syllable {
                    duration_s,
                    text: String::new(),
                }));
                continue;
            }
            '\\' => match chars.peek().copied() {
                Some('N' | 'n') => {
                    chars.next();
                    '\n'
                }
                Some('h') => {
                    chars.next();
                    ' '
                }
                Some(brace @ ('{' | '}')) => {
                    chars.next();
                    brace
                }
                Some(WORD_JOINER) => {
                    chars.next();
                    '\\'
                }
                _ => '\\',
            },
            c => c,
        };
        // A joiner after a mark is an escape of ours, perhaps carried over from SRT by another
        // tool (ffmpeg keeps it): it shows nothing and is not part of the text.
        if shown == WORD_JOINER && plain.ends_with(['<', '{', '\\']) {
            continue;
        }
        plain.push(shown);
        match syllables.last_mut() {
            Some(syllable) => syllable.text.push(shown),
            None => text_before_karaoke |= !shown.is_whitespace(),
        }
    }
    if text_before_karaoke {
        syllables.clear();
    }
    AssText { plain, syllables }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chinese_and_japanese_words_join_without_spaces() {
        assert_eq!(
            join_words(["我们", "今天", "去", "公园。"]),
            "我们今天去公园。"
        );
        assert_eq!(join_words(["東京", "に", "行きます"]), "東京に行きます");
        assert_eq!(
            join_words(["I", "love", "東京", "and", "大阪"]),
            "I love 東京 and 大阪"
        );
        assert_eq!(join_words(["hello", "", "world"]), "hello world");
    }

    #[test]
    fn vtt_escapes_read_back() {
        let text = "Fish & chips <3 --> a<b>c &amp;";
        let escaped = escape_vtt(text);
        assert_eq!(
            escaped,
            "Fish &amp; chips &lt;3 --&gt; a&lt;b&gt;c &amp;amp;"
        );
        assert_eq!(decode_entities(&strip_tags(&escaped, false)), text);
    }

    #[test]
    fn ass_escapes_read_back_and_open_no_override() {
        let text = r"C:\New {not a tag} \h \N";
        let escaped = escape_ass(text);
        let braces = escaped.match_indices(['{', '}']).map(|(i, _)| i);
        assert!(
            braces.into_iter().all(|i| escaped[..i].ends_with('\\')),
            "{escaped}"
        );
        assert!(
            !escaped.contains(r"\N") && !escaped.contains(r"\h"),
            "{escaped}"
        );
        let read = read_ass_text(&escaped);
        assert_eq!(read.plain, text);
        assert!(read.syllables.is_empty());
    }

    #[test]
    fn tags_and_entities_are_removed_and_lone_marks_kept() {
        assert_eq!(
            strip_tags("<v Roger>Hi</v> <c.loud>there</c>", true),
            "Hi there"
        );
        assert_eq!(strip_tags("<00:00:01.000>one <i>two</i>", true), "one two");
        assert_eq!(
            strip_tags("{\\an8}<font color=\"red\">top</font>", true),
            "top"
        );
        assert_eq!(strip_tags("a < b and <3", true), "a < b and <3");
        assert_eq!(strip_tags("<3 a > b", true), "<3 a > b");
        assert_eq!(read_ass_text("<\u{2060}b>").plain, "<b>");
        assert_eq!(
            decode_entities("R&D &#233;t&#xE9; &bogus; &"),
            "R&D été &bogus; &"
        );
        assert_eq!(decode_entities("x&lrm;y &amp;lt;"), "xy &lt;");
    }

    #[test]
    fn srt_marks_that_would_be_markup_stay_text() {
        let text = "a<b>c {\\an8} <3 &amp;";
        let escaped = escape_srt(text);
        assert_eq!(
            escaped,
            "a<\u{2060}b>c {\u{2060}\\\u{2060}an8} <\u{2060}3 &amp;"
        );
        assert_eq!(strip_tags(&escaped, true), text);
    }

    #[test]
    fn karaoke_syllables_carry_their_times() {
        let read = read_ass_text(r"{\an5\pos(540,1440)}{\k40}hello {\k10}{\kf35}world\Nagain");
        assert_eq!(read.plain, "hello world\nagain");
        let times: Vec<f64> = read.syllables.iter().map(|s| s.duration_s).collect();
        assert_eq!(times, [0.4, 0.1, 0.35]);
        assert_eq!(read.syllables[2].text, "world\nagain");
        assert!(read_ass_text(r"lead {\k10}x").syllables.is_empty());
    }

    #[test]
    fn cjk_text_is_cut_into_words() {
        assert_eq!(tokens("hello  world"), ["hello", "world"]);
        assert!(tokens("我们今天去公园。").len() >= 3);
    }
}
