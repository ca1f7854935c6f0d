//! Transcription jobs end to end: storage → queue → worker → words, on real media.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use caption_core::{JobStatus, TranscriptRequest, TranscriptResult, TranscriptTask};
use caption_engine::{Engine, EngineOptions, Error};
use caption_jobs::EmbeddedJobStore;
use caption_store::{LinkOptions, LocalStorage, Storage};

mod support;

const JFK: &str = "and so my fellow americans ask not what your country can do for you ask what you can do for your country";

fn jfk_wav() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/audio/jfk.wav")
}

fn normalise(words: &[caption_core::Word]) -> String {
    words
        .iter()
        .map(|w| {
            w.word
                .to_lowercase()
                .chars()
                .filter(|c| c.is_alphanumeric() || *c == '\'')
                .collect::<String>()
        })
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn ffmpeg(args: &[&str]) {
    let out = Command::new("ffmpeg")
        .args(["-hide_banner", "-loglevel", "error", "-y"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ffmpeg {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

struct Rig {
    dir: tempfile::TempDir,
    storage: Arc<dyn Storage>,
}

impl Rig {
    fn new() -> Self {
        let _ = tracing_subscriber::fmt()
            .with_test_writer()
            .with_env_filter("info")
            .try_init();
        let dir = tempfile::tempdir().unwrap();
        let storage = LocalStorage::open(
            &dir.path().join("objects"),
            "http://127.0.0.1:1",
            LinkOptions::default(),
        )
        .unwrap();
        Self {
            dir,
            storage: Arc::new(storage),
        }
    }

    fn engine(&self, model: &str) -> Engine {
        let jobs = EmbeddedJobStore::open(self.dir.path().join("jobs.redb")).unwrap();
        let options = EngineOptions::default()
            .data_dir(self.dir.path().to_owned())
            .model(model.to_owned())
            .lease(Duration::from_secs(5));
        Engine::new(options, Arc::clone(&self.storage), Arc::new(jobs)).unwrap()
    }

    async fn upload(&self, path: &Path) -> String {
        support::upload(self.storage.as_ref(), path)
            .await
            .to_string()
    }
}

async fn wait_final(engine: &Engine, id: &str) -> TranscriptResult {
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let result = engine.transcription(id).await.unwrap();
        if result.status.is_final() {
            return result;
        }
        assert!(
            Instant::now() < deadline,
            "job {id} never finished: {result:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn jfk_transcribes_word_exact_through_the_queue() {
    let rig = Rig::new();
    let engine = rig.engine("tiny.en");
    let input = rig.upload(&jfk_wav()).await;
    let id = engine.submit_transcription(&input, "en").await.unwrap();
    let queued = engine.transcription(&id).await.unwrap();
    assert!(matches!(
        queued.status,
        JobStatus::InQueue | JobStatus::InProgress
    ));
    assert_eq!(queued.words, None);
    let workers = engine.spawn_workers(true).await.unwrap();
    let done = wait_final(&engine, &id).await;
    workers.shutdown().await;
    assert_eq!(done.status, JobStatus::Completed, "{done:?}");
    let words = done.words.unwrap();
    assert_eq!(normalise(&words), JFK);
    assert!(words.windows(2).all(|w| w[0].end <= w[1].start));
    assert!(words.iter().all(|w| w.end > w.start));
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_inputs_fail_the_job_not_the_worker() {
    let rig = Rig::new();
    let engine = rig.engine("tiny.en");
    let silent_video = rig.dir.path().join("video-only.mp4");
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc=size=160x120:rate=10",
        "-t",
        "1",
        "-pix_fmt",
        "yuv420p",
        silent_video.to_str().unwrap(),
    ]);
    let corrupt = rig.dir.path().join("corrupt.mp4");
    std::fs::write(
        &corrupt,
        b"\x00\x00\x00\x18ftypmp42 this is not really a video",
    )
    .unwrap();

    let no_audio = engine
        .submit_transcription(&rig.upload(&silent_video).await, "auto")
        .await
        .unwrap();
    let unreadable = engine
        .submit_transcription(&rig.upload(&corrupt).await, "auto")
        .await
        .unwrap();
    let good = engine
        .submit_transcription(&rig.upload(&jfk_wav()).await, "auto")
        .await
        .unwrap();
    let workers = engine.spawn_workers(true).await.unwrap();
    let no_audio = wait_final(&engine, &no_audio).await;
    let unreadable = wait_final(&engine, &unreadable).await;
    let good = wait_final(&engine, &good).await;
    workers.shutdown().await;

    assert_eq!(no_audio.status, JobStatus::Failed);
    assert_eq!(no_audio.words, None);
    assert_eq!(no_audio.error.unwrap().code, "no_audio");
    assert_eq!(unreadable.status, JobStatus::Failed);
    let error = unreadable.error.unwrap();
    assert_eq!(error.code, "unreadable_input");
    assert!(
        !error.message.contains(rig.dir.path().to_str().unwrap()),
        "no server paths leak: {}",
        error.message
    );
    assert_eq!(
        good.status,
        JobStatus::Completed,
        "the worker survived and went on"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn refused_at_submission() {
    let rig = Rig::new();
    let engine = rig.engine("tiny.en");
    let input = rig.upload(&jfk_wav()).await;
    match engine.submit_transcription(&input, "es").await {
        Err(Error::Invalid(errors)) => {
            assert_eq!(errors.0[0].path, "lang");
            assert!(errors.0[0].rule.contains("English only"), "{errors}");
        }
        other => panic!("{other:?}"),
    }
    match engine
        .submit_transcription_with(&translation(&input), None)
        .await
    {
        Err(Error::Invalid(errors)) => {
            assert_eq!(errors.0[0].path, "task");
            assert!(errors.0[0].rule.contains("multilingual"), "{errors}");
        }
        other => panic!("{other:?}"),
    }
    match engine
        .submit_transcription("uploads/nothing/here.mp4", "en")
        .await
    {
        Err(e @ Error::NotFound { .. }) => assert_eq!(e.code().as_str(), "not_found"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        engine.submit_transcription("../etc/passwd", "en").await,
        Err(Error::Invalid(_))
    ));
    assert!(matches!(
        engine.transcription("no-such-job").await,
        Err(Error::NotFound { .. })
    ));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_translation_job_gives_english_words_for_spanish_speech() {
    let rig = Rig::new();
    let engine = rig.engine("base");
    let dir = tempfile::tempdir().unwrap();
    let wav = dir.path().join("es.wav");
    caption_testkit::media::spanish_wav(&wav).unwrap();
    let input = rig.upload(&wav).await;
    let id = engine
        .submit_transcription_with(&translation(&input), None)
        .await
        .unwrap();
    let workers = engine.spawn_workers(true).await.unwrap();
    let done = wait_final(&engine, &id).await;
    workers.shutdown().await;
    assert_eq!(done.status, JobStatus::Completed, "{done:?}");
    let text = normalise(&done.words.unwrap());
    let english = caption_testkit::media::SPANISH_TEXT_IN_ENGLISH;
    let hits = english.iter().filter(|w| text.contains(*w)).count();
    assert!(hits >= 3, "expected English words, got {text:?}");
    for spanish in caption_testkit::media::SPANISH_WORDS {
        assert!(
            !text.split(' ').any(|w| w == *spanish),
            "{spanish:?} in {text:?}"
        );
    }
}

/// Parent side: a child process (this test binary, re-run in child mode) works a long job and
/// is SIGKILLed mid-transcription; a fresh engine on the same data folder finishes the job.
#[tokio::test(flavor = "multi_thread")]
async fn a_job_interrupted_by_sigkill_completes_after_restart() {
    if std::env::var_os("CAPTIONS_CHILD_DIR").is_some() {
        return; // in the child, only `child_worker` runs
    }
    let rig = Rig::new();
    let long = rig.dir.path().join("jfk-x3.wav");
    let jfk = jfk_wav();
    let jfk = jfk.to_str().unwrap();
    ffmpeg(&[
        "-i",
        jfk,
        "-i",
        jfk,
        "-i",
        jfk,
        "-filter_complex",
        "concat=n=3:v=0:a=1",
        long.to_str().unwrap(),
    ]);
    let input = rig.upload(&long).await;
    let id = {
        let engine = rig.engine("tiny.en");
        engine.submit_transcription(&input, "en").await.unwrap()
    }; // the engine (and its database handle) is gone before the child opens it

    let marker = rig.dir.path().join("in-progress");
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_worker",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env("CAPTIONS_CHILD_DIR", rig.dir.path())
        .env("CAPTIONS_CHILD_JOB", &id)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while !marker.exists() {
        assert!(Instant::now() < deadline, "the child never started the job");
        assert!(
            child.try_wait().unwrap().is_none(),
            "the child exited early"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    let engine = rig.engine("tiny.en");
    let interrupted = engine.transcription(&id).await.unwrap();
    assert_eq!(
        interrupted.status,
        JobStatus::InProgress,
        "killed while in progress"
    );
    let workers = engine.spawn_workers(true).await.unwrap();
    let done = wait_final(&engine, &id).await;
    workers.shutdown().await;
    assert_eq!(done.status, JobStatus::Completed, "{done:?}");
    // The words are those of the whole input, produced once (tiny.en may mishear a word of the
    // third repetition, so the count is compared, not every word).
    let text = normalise(&done.words.unwrap());
    assert!(text.starts_with(JFK), "{text}");
    let expected = 3 * JFK.split(' ').count();
    assert!(text.split(' ').count().abs_diff(expected) <= 3, "{text}");
}

/// Child side of the test above: works the queue and marks when the job is in progress.
#[tokio::test(flavor = "multi_thread")]
async fn child_worker() {
    let Some(dir) = std::env::var_os("CAPTIONS_CHILD_DIR").map(PathBuf::from) else {
        return;
    };
    let id = std::env::var("CAPTIONS_CHILD_JOB").unwrap();
    let storage = LocalStorage::open(
        &dir.join("objects"),
        "http://127.0.0.1:1",
        LinkOptions::default(),
    )
    .unwrap();
    let jobs = EmbeddedJobStore::open(dir.join("jobs.redb")).unwrap();
    let options = EngineOptions::default()
        .data_dir(dir.clone())
        .model("tiny.en")
        .threads_per_job(1);
    let engine = Engine::new(options, Arc::new(storage), Arc::new(jobs)).unwrap();
    let _workers = engine.spawn_workers(true).await.unwrap();
    loop {
        let status = engine.transcription(&id).await.unwrap().status;
        assert_ne!(
            status,
            JobStatus::Completed,
            "the job finished before the parent could kill this process"
        );
        if status == JobStatus::InProgress {
            std::fs::write(dir.join("in-progress"), b"").unwrap();
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A `POST /transcript` request for `input` with `task` and `keep_fillers`.
fn request(input: &str, task: TranscriptTask, keep_fillers: bool) -> TranscriptRequest {
    TranscriptRequest {
        input: input.to_owned(),
        lang: "auto".to_owned(),
        task,
        keep_fillers,
        speakers: None,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_tells_the_speakers_apart_when_asked() {
    use caption_testkit::dialogue::{Voice, conversation};
    let rig = Rig::new();
    let engine = rig.engine("tiny.en");
    let dir = tempfile::tempdir().unwrap();
    let wav = dir.path().join("dialogue.wav");
    conversation(
        &[Voice::Espeak("en-us"), Voice::Espeak("en-gb+f3")],
        4,
        None,
    )
    .unwrap()
    .write_wav(&wav)
    .unwrap();
    let input = rig.upload(&wav).await;
    let mut asked = request(&input, TranscriptTask::Transcribe, false);
    asked.speakers = Some(caption_core::SpeakerCount::Auto);
    let job = engine
        .submit_transcription_with(&asked, None)
        .await
        .unwrap();
    let workers = engine.spawn_workers(true).await.unwrap();
    let result = wait_final(&engine, &job).await;
    workers.shutdown().await;
    let words = result.words.expect("completed");
    let speakers: Vec<&str> = words.iter().filter_map(|w| w.speaker.as_deref()).collect();
    assert_eq!(speakers.len(), words.len(), "every word has a speaker");
    assert_eq!(speakers.first(), Some(&"S1"));
    assert!(speakers.contains(&"S2") && speakers.iter().all(|s| ["S1", "S2"].contains(s)));
}

fn translation(input: &str) -> TranscriptRequest {
    request(input, TranscriptTask::Translate, false)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_job_keeps_fillers_when_asked() {
    let rig = Rig::new();
    let engine = rig.engine("tiny.en");
    let dir = tempfile::tempdir().unwrap();
    let wav = dir.path().join("um.wav");
    caption_testkit::media::espeak_wav(
        &wav,
        150,
        "We walked along the bank, um, until the evening. Then, uh, the rain began to fall.",
    )
    .unwrap();
    let input = rig.upload(&wav).await;
    let kept = engine
        .submit_transcription_with(&request(&input, TranscriptTask::Transcribe, true), None)
        .await
        .unwrap();
    let plain = engine.submit_transcription(&input, "en").await.unwrap();
    let workers = engine.spawn_workers(true).await.unwrap();
    let kept = wait_final(&engine, &kept).await;
    let plain = wait_final(&engine, &plain).await;
    workers.shutdown().await;
    let fillers = |result: &TranscriptResult| -> Vec<String> {
        let words = result.words.as_ref().expect("completed");
        words
            .iter()
            .filter(|w| w.filler)
            .map(|w| w.word.to_lowercase())
            .collect()
    };
    assert_eq!(
        fillers(&kept),
        ["um", "uh"],
        "{}",
        normalise(kept.words.as_ref().unwrap())
    );
    assert!(
        fillers(&plain).is_empty(),
        "{}",
        normalise(plain.words.as_ref().unwrap())
    );
}
