//! The emoji lexicon against a careful editor's choices for the words creators say most: the
//! emoji by the word's sense, none for function words and for spellings that only look like a
//! keyword (`fixtures/emoji/creator-words.tsv`).

use caption_layout::EmojiLexicon;

/// `word → expected emoji (None for "-")` from the fixture.
fn expectations() -> Vec<(String, Option<String>)> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/emoji/creator-words.tsv"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|line| {
            let (word, emoji) = line
                .split_once('\t')
                .unwrap_or_else(|| panic!("{path}: {line:?} is not word<TAB>emoji"));
            let emoji = (emoji != "-").then(|| emoji.to_owned());
            (word.to_owned(), emoji)
        })
        .collect()
}

/// An emoji without its presentation selector (U+FE0F), which the font draws either way.
fn bare(emoji: &str) -> String {
    emoji.chars().filter(|&c| c != '\u{fe0f}').collect()
}

#[test]
fn a_hundred_creator_words_get_the_emoji_of_their_sense_or_none() {
    let expected = expectations();
    assert_eq!(expected.len(), 100, "the fixture holds 100 words");
    let lexicon = EmojiLexicon::get();
    let wrong: Vec<String> = expected
        .iter()
        .filter_map(|(word, want)| {
            let got = lexicon.lookup(word);
            (got.map(bare) != want.as_deref().map(bare))
                .then(|| format!("{word}: {got:?}, expected {want:?}"))
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{} of 100 wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
