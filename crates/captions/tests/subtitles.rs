//! Subtitles through the front door, on a spoken clip: words exported to each format and read
//! back by length, and a file's cues timed on the speech by the aligner.

use caption_testkit::media::speech_video;
use captions::subtitles::ExportOptions;
use captions::{Captioner, ErrorCode, Task};

#[test]
fn subtitles_written_and_read_back_by_length_and_by_the_aligner() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let video = speech_video(
        &dir.path().join("clip.mp4"),
        "color=c=0x303030:s=320x180:r=25",
        "The quick brown fox jumps over the lazy dog.",
    )
    .expect("spoken clip");
    let captioner = Captioner::builder()
        .model("tiny.en")
        .build()
        .expect("captioner");
    let heard = captioner
        .transcribe(&video, &Task::default())
        .expect("transcription");
    assert!(heard.len() >= 7, "heard {heard:?}");

    for extension in ["srt", "vtt", "ass"] {
        let path = dir.path().join(format!("clip.{extension}"));
        captioner
            .export_subtitles(&heard, &path, &ExportOptions::default())
            .expect("export");
        // By length: the same words, inside the cues' span.
        let read = captioner
            .import_subtitles(&path, None, &Task::default())
            .expect("import by length");
        // ASS shows the words as the style draws them (the default template: capitals, no
        // punctuation); SRT and VTT as spoken.
        let texts = |words: &[captions::Word]| -> Vec<String> {
            words
                .iter()
                .map(|w| {
                    if extension == "ass" {
                        w.word.to_lowercase()
                    } else {
                        w.punctuated_word.clone()
                    }
                })
                .collect()
        };
        assert_eq!(texts(&read), texts(&heard), "{extension}");
        assert!((read[0].start - heard[0].start).abs() < 0.01, "{extension}");
        // By the aligner: each word near where it was heard.
        let aligned = captioner
            .import_subtitles(&path, Some(&video), &Task::default())
            .expect("import on the audio");
        assert_eq!(texts(&aligned), texts(&heard), "{extension}");
        for (a, h) in aligned.iter().zip(&heard) {
            assert!(
                (a.start - h.start).abs() < 0.15,
                "{extension}: {:?} at {} against {}",
                a.word,
                a.start,
                h.start
            );
        }
    }

    let wrong = captioner
        .export_subtitles(
            &heard,
            dir.path().join("clip.docx"),
            &ExportOptions::default(),
        )
        .expect_err("a .docx is not a subtitle format");
    assert_eq!(wrong.code(), ErrorCode::InvalidRequest);
    assert!(
        wrong.to_string().contains(".srt, .vtt, .ass or .txt"),
        "{wrong}"
    );
}
