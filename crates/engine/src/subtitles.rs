//! Subtitle files in and out: a captioner reads their words (timed on the audio when it is
//! given) and writes them, ASS as the burn lays the captions out.

use std::path::Path;
use std::sync::Arc;

use caption_core::{ExportOptions, SubtitleFormat, Word};
use caption_render::{CaptionRenderer, FrameSize, SystemFonts};
use caption_transcribe::GivenText;

use crate::overlay::caption_error;
use crate::task::Task;
use crate::{Captioner, Error, Result};

impl Captioner {
    /// The words of a subtitle file (SRT, WebVTT or ASS, by its extension). With `audio`, each
    /// cue's words are timed on that file's speech by the aligner (the cue's text decides the
    /// words); without, each cue's time is shared among its words by their length (ASS karaoke
    /// `\k` times are used when present).
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("talk.srt");
    /// std::fs::write(&path, "1\n00:00:01,000 --> 00:00:02,000\nHello there\n")?;
    /// let captioner = caption_engine::Captioner::builder().build()?;
    /// let words = captioner.import_subtitles(&path, None, &caption_engine::Task::default())?;
    /// assert_eq!(words.len(), 2);
    /// assert_eq!((words[0].start, words[1].end), (1.0, 2.0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidRequest`](crate::ErrorCode::InvalidRequest) for a file that is not
    /// SRT, VTT or ASS or has a time that cannot be read (naming its line); the errors of
    /// [`Captioner::align`] when `audio` is given.
    pub fn import_subtitles(
        &self,
        subtitles: impl AsRef<Path>,
        audio: Option<&Path>,
        task: &Task,
    ) -> Result<Vec<Word>> {
        let path = subtitles.as_ref();
        let format = subtitle_format(path)?;
        if !format.is_timed() {
            return Err(Error::invalid(
                "subtitles",
                "plain text has no times: give the audio to align its words on (Captioner::align)",
            ));
        }
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io {
            context: format!("reading {}", path.display()),
            source,
        })?;
        match audio {
            Some(audio) => {
                let cues = caption_core::parse_cues(&text, format)?;
                self.align(audio, &GivenText::Cues(cues), task)
            }
            None => Ok(caption_core::import_words(&text, format)?),
        }
    }

    /// Writes `words` as a subtitle file in the format its extension names: `.srt`, `.vtt`,
    /// `.ass` or `.txt`, as [`Captioner::subtitles`] writes them.
    ///
    /// ```
    /// use caption_engine::{Captioner, ExportOptions, Word};
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("talk.vtt");
    ///
    /// let captioner = Captioner::builder().build()?;
    /// let words = vec![Word::new(0.0, 0.4, "Fish"), Word::new(0.4, 0.9, "&"), Word::new(0.9, 1.5, "chips")];
    /// captioner.export_subtitles(&words, &path, &ExportOptions::default())?;
    /// assert!(std::fs::read_to_string(&path)?.contains("Fish &amp; chips"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidRequest`](crate::ErrorCode::InvalidRequest) for another extension or
    /// (ASS) a style the burn refuses; [`ErrorCode::Internal`](crate::ErrorCode::Internal) when
    /// the file cannot be written.
    pub fn export_subtitles(
        &self,
        words: &[Word],
        path: impl AsRef<Path>,
        options: &ExportOptions,
    ) -> Result<()> {
        let path = path.as_ref();
        let text = self.subtitles(words, subtitle_format(path)?, options)?;
        std::fs::write(path, text).map_err(|source| Error::Io {
            context: format!("writing {}", path.display()),
            source,
        })
    }

    /// `words` as a subtitle file in `format`. SRT, WebVTT and text follow subtitle practice
    /// (at least 0.8 s, at most 7 s, two lines of 42 characters, 20 characters a second). ASS
    /// shows the captions as the burn does, in the style and at the video size of `options`
    /// (the default template and a 1080x1920 frame when they are not given): the burn's pages
    /// and lines, laid out with the system's fonts, each page where the burn puts it, each word
    /// lit while it is spoken, with its karaoke time (`\k`). Effects and emoji are left out.
    ///
    /// ```
    /// use caption_engine::{Captioner, ExportOptions, SubtitleFormat, Word};
    ///
    /// let captioner = Captioner::builder().build()?;
    /// let words = vec![
    ///     Word::new(0.0, 0.4, "Hello"),
    ///     Word::new(0.4, 0.9, "everyone."),
    ///     Word::new(1.0, 1.5, "Welcome."),
    /// ];
    /// let ass = captioner.subtitles(&words, SubtitleFormat::Ass, &ExportOptions::default())?;
    /// // A page a sentence, as the burn shows them.
    /// assert_eq!(ass.lines().filter(|l| l.starts_with("Dialogue:")).count(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ErrorCode::InvalidRequest`](crate::ErrorCode::InvalidRequest) for (ASS) a style the
    /// burn refuses or a frame size of 0 or over 16,384 pixels.
    pub fn subtitles(
        &self,
        words: &[Word],
        format: SubtitleFormat,
        options: &ExportOptions,
    ) -> Result<String> {
        if format != SubtitleFormat::Ass {
            return Ok(caption_core::export_words(words, format, options)?);
        }
        let config = options
            .config
            .as_ref()
            .unwrap_or_else(|| self.catalog().default_config());
        let (width_px, height_px) = options.frame_size_px.unwrap_or((1080, 1920));
        if !(1..=16_384).contains(&width_px) || !(1..=16_384).contains(&height_px) {
            return Err(Error::invalid(
                "frame_size_px",
                format!("{width_px}x{height_px}: each side must be 1 to 16384 pixels"),
            ));
        }
        let fonts = Arc::new(SystemFonts::new().map_err(caption_error)?);
        let renderer =
            CaptionRenderer::new(words, config, FrameSize::new(width_px, height_px), fonts)
                .map_err(caption_error)?;
        Ok(caption_core::export_layout(
            &renderer.caption_layout(),
            config,
        ))
    }
}

/// The subtitle format a path's extension names.
fn subtitle_format(path: &Path) -> Result<SubtitleFormat> {
    SubtitleFormat::from_path(path).ok_or_else(|| {
        Error::invalid(
            "path",
            format!("{} must end in .srt, .vtt, .ass or .txt", path.display()),
        )
    })
}
