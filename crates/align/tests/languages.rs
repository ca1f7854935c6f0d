//! The aligner in languages other than English: espeak-ng speech whose word times are known to
//! the sample (scripts/espeak_words.py), aligned with the true text. Needs `make setup`
//! (the PocketSphinx model, espeak-ng).

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "tests fail loudly")]

mod support;

use caption_align::Aligner;
use caption_testkit::speech::{espeak_sentence, read_wav_16k};
use support::{boundary_errors, to_f32};

/// One sentence a language, as the bench's held-out sentences are (never tuned on).
const SENTENCES: [(&str, &str); 6] = [
    (
        "es",
        "El pescador arreglaba sus redes mientras los niños miraban volver los barcos a la bahía.",
    ),
    (
        "fr",
        "Le pêcheur réparait ses filets pendant que les enfants regardaient les bateaux rentrer au port.",
    ),
    (
        "de",
        "Der Fischer flickte seine Netze, während die Kinder die Boote in die Bucht zurückkehren sahen.",
    ),
    (
        "it",
        "Il pescatore riparava le sue reti mentre i bambini guardavano le barche tornare nella baia.",
    ),
    (
        "pt",
        "O pescador consertava as suas redes enquanto as crianças viam os barcos voltar para a baía.",
    ),
    (
        "nl",
        "De visser herstelde zijn netten terwijl de kinderen de boten naar de baai zagen terugkeren.",
    ),
];

#[test]
fn six_languages_are_timed_as_english_is() {
    let dir = tempfile::tempdir().unwrap();
    let aligner = Aligner::open_installed().unwrap();
    for (language, text) in SENTENCES {
        for voice in [language.to_owned(), format!("{language}+f3")] {
            let wav = dir.path().join(format!("{voice}.wav"));
            let truth = espeak_sentence(text, &voice, &wav).unwrap();
            let samples = to_f32(&read_wav_16k(&wav).unwrap());
            let words: Vec<&str> = text.split_whitespace().collect();
            assert_eq!(words.len(), truth.len(), "{voice}");
            let spans = aligner
                .language(language)
                .unwrap()
                .align(&samples, &words)
                .unwrap_or_else(|e| panic!("{voice}: {e}"));
            let (mean, within) = boundary_errors(&truth, &spans);
            assert!(
                mean <= 0.03 && within >= 0.85,
                "{voice}: mean {mean:.3} s, {within:.2} within 50 ms"
            );
            assert!(spans.windows(2).all(|w| w[0].end_s <= w[1].start_s + 1e-9));
            assert!(spans.iter().all(|s| s.end_s > s.start_s), "{voice}");
        }
    }
}

#[test]
fn numbers_are_said_in_the_language_of_the_words() {
    // "25" is "veinticinco" in Spanish: a word of its own length, not "twenty five".
    let dir = tempfile::tempdir().unwrap();
    let aligner = Aligner::open_installed().unwrap();
    let text = "Pagué 25 euros el martes.";
    let wav = dir.path().join("es.wav");
    let truth = espeak_sentence(text, "es", &wav).unwrap();
    let samples = to_f32(&read_wav_16k(&wav).unwrap());
    let words: Vec<&str> = text.split_whitespace().collect();
    let spans = aligner
        .language("es")
        .unwrap()
        .align(&samples, &words)
        .unwrap();
    let (mean, within) = boundary_errors(&truth, &spans);
    assert!(
        mean <= 0.03 && within >= 0.85,
        "mean {mean:.3} s, {within:.2} within 50 ms: {spans:?} for {truth:?}"
    );
}

#[test]
fn languages_are_aligned_where_espeak_speaks_them_and_its_words_read() {
    let aligner = Aligner::open_installed().unwrap();
    for language in [
        "en", "es", "fr", "de", "it", "pt", "nl", "ru", "pl", "sv", "zh",
    ] {
        assert!(aligner.language(language).is_some(), "{language}");
    }
    // Written without spaces, or unknown to espeak-ng.
    for language in ["th", "yue", "xx"] {
        assert!(aligner.language(language).is_none(), "{language}");
    }
    let spanish = aligner.language("es").unwrap();
    // Vowels, nasals, liquids and glides open on the voice; stops and voiceless fricatives
    // do not.
    for word in ["el", "Mañana,", "los", "y", "una"] {
        assert!(spanish.opens_on_voice(word), "{word}");
    }
    for word in ["pescador", "todos", "su", "¿Qué?", "—"] {
        assert!(!spanish.opens_on_voice(word), "{word}");
    }
}

#[test]
fn mandarin_is_timed_by_the_character() {
    // espeak-ng's pinyin voice speaks the readings; each syllable is a word event of its own.
    let dir = tempfile::tempdir().unwrap();
    let aligner = Aligner::open_installed().unwrap();
    let mandarin = aligner.language("zh").unwrap();
    for (hanzi, pinyin) in [
        (
            "我们今天去公园散步",
            "wo3 men5 jin1 tian1 qu4 gong1 yuan2 san4 bu4",
        ),
        (
            "天气非常好大家都很高兴",
            "tian1 qi4 fei1 chang2 hao3 da4 jia1 dou1 hen3 gao1 xing4",
        ),
    ] {
        let wav = dir.path().join("zh.wav");
        let truth = espeak_sentence(pinyin, "cmn-latn-pinyin", &wav).unwrap();
        let characters: Vec<String> = hanzi.chars().map(String::from).collect();
        let words: Vec<&str> = characters.iter().map(String::as_str).collect();
        assert_eq!(words.len(), truth.len(), "{pinyin}");
        let samples = to_f32(&read_wav_16k(&wav).unwrap());
        let spans = mandarin.align(&samples, &words).unwrap();
        let (mean, within) = boundary_errors(&truth, &spans);
        eprintln!("{hanzi}: mean {mean:.3} s, {within:.2} within 50 ms");
        assert!(
            mean <= 0.03 && within >= 0.85,
            "{hanzi}: mean {mean:.3} s, {within:.2} within 50 ms: {spans:?} for {truth:?}"
        );
    }
}

#[test]
fn a_number_in_mandarin_is_timed_as_it_is_said() {
    // Whisper writes numbers in digits; the pinyin voice says "194" in Mandarin.
    let dir = tempfile::tempdir().unwrap();
    let wav = dir.path().join("zh.wav");
    let mut truth = espeak_sentence("da2 dao4 194 ci4", "cmn-latn-pinyin", &wav).unwrap();
    // espeak-ng sends a second word event where it says the "94" of the number.
    if truth.len() == 5 {
        let rest = truth.remove(3);
        truth[2].end_s = rest.end_s;
    }
    let words = ["达", "到", "194", "次"];
    assert_eq!(words.len(), truth.len(), "{truth:?}");
    let samples = to_f32(&read_wav_16k(&wav).unwrap());
    let aligner = Aligner::open_installed().unwrap();
    let spans = aligner
        .language("zh")
        .unwrap()
        .align(&samples, &words)
        .unwrap();
    let number = &spans[2];
    assert!(
        number.end_s - number.start_s >= 0.5,
        "five syllables in {number:?}"
    );
    let (mean, within) = boundary_errors(&truth, &spans);
    assert!(
        mean <= 0.05 && within >= 0.75,
        "mean {mean:.3} s, {within:.2} within 50 ms: {spans:?} for {truth:?}"
    );
}

#[test]
fn japanese_written_in_kanji_is_timed_by_its_reading() {
    // espeak-ng speaks the kana (the particle "は" as it is said, "わ"); the aligner is given
    // the words as whisper writes them, in kanji, and reads them with MeCab.
    let dir = tempfile::tempdir().unwrap();
    let aligner = Aligner::open_installed().unwrap();
    let japanese = aligner.language("ja").unwrap();
    for (written, spoken) in [
        ("今日 は 天気 が いい です", "きょー わ てんき が いい です"),
        ("私 の 名前 は 田中 です", "わたし の なまえ わ たなか です"),
    ] {
        let wav = dir.path().join("ja.wav");
        let truth = espeak_sentence(spoken, "ja", &wav).unwrap();
        let words: Vec<&str> = written.split_whitespace().collect();
        assert_eq!(words.len(), truth.len(), "{spoken}");
        let samples = to_f32(&read_wav_16k(&wav).unwrap());
        let spans = japanese.align(&samples, &words).unwrap();
        let (mean, within) = boundary_errors(&truth, &spans);
        eprintln!("{written}: mean {mean:.3} s, {within:.2} within 50 ms");
        assert!(
            mean <= 0.03 && within >= 0.85,
            "{written}: mean {mean:.3} s, {within:.2} within 50 ms: {spans:?} for {truth:?}"
        );
    }
}
