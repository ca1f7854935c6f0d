//! Generate end to end: a real video in storage, words and a template → a captioned mp4 whose
//! frames show the highlight at each word's time and nothing before the first word.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use std::path::Path;
use std::sync::Arc;

use caption_core::{ConfigPatch, GenerateRequest, OutputKind, Word, parse_config_patch};
use caption_engine::{Engine, EngineOptions, Error};
use caption_jobs::EmbeddedJobStore;
use caption_store::{GetOptions, LocalStorage, ObjectKey, PutOptions, Storage};
use futures_util::StreamExt;
use serde_json::json;
use support::{local_storage, upload};

mod support;

const W: u32 = 360;
const H: u32 = 640;

fn ffmpeg(args: &[&str]) -> Vec<u8> {
    caption_testkit::media::ffmpeg(args).unwrap()
}

/// The decoded RGB frame shown at `t_s`.
fn frame_at(video: &Path, t_s: f64) -> Vec<u8> {
    let rgb = caption_testkit::media::frame_rgb_at(video, t_s).unwrap();
    assert_eq!(rgb.len(), (W * H * 3) as usize);
    rgb
}

fn count(rgb: &[u8], pred: impl Fn(u8, u8, u8) -> bool) -> usize {
    rgb.chunks_exact(3)
        .filter(|p| pred(p[0], p[1], p[2]))
        .count()
}

fn green(r: u8, g: u8, b: u8) -> bool {
    g > 200 && r < 80 && b < 80
}

fn not_gray(r: u8, g: u8, b: u8) -> bool {
    [r, g, b].iter().any(|&c| c.abs_diff(128) > 40)
}

#[tokio::test(flavor = "multi_thread")]
async fn captions_appear_at_word_times_in_the_generated_video() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("clip.mp4");
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        &format!("color=c=gray:s={W}x{H}:r=30:d=4"),
        "-f",
        "lavfi",
        "-i",
        "sine=frequency=440:duration=4",
        "-c:v",
        "libx264",
        "-pix_fmt",
        "yuv420p",
        "-c:a",
        "aac",
        "-shortest",
        src.to_str().unwrap(),
    ]);
    let storage: Arc<dyn Storage> = Arc::new(local_storage(dir.path()));
    let key = upload(storage.as_ref(), &src).await;
    let jobs = EmbeddedJobStore::open(dir.path().join("jobs.redb")).unwrap();
    let options = EngineOptions::default().data_dir(dir.path().to_owned());
    let engine = Engine::new(options, Arc::clone(&storage), Arc::new(jobs)).unwrap();

    let words = vec![Word::new(1.0, 1.8, "hello"), Word::new(2.0, 2.8, "world")];
    // The default template with a pure green highlight and no shadow, so the test can find it.
    let config = parse_config_patch(
        &json!({"colors": {"hilightColor": {"colors": [{"r": 0, "g": 255, "b": 0}]}}, "wordHasShadow": false}),
        "config",
    )
    .unwrap();
    let generate_with = |output: OutputKind, file: &'static str, config: &ConfigPatch| {
        let (engine, storage, dir) = (engine.clone(), Arc::clone(&storage), dir.path().to_owned());
        let request = GenerateRequest {
            input: key.to_string(),
            words: words.clone(),
            config: config.clone(),
            template_id: None,
            output,
            reframe: None,
        };
        async move {
            let url = engine.generate(request).await.unwrap().download_url;
            assert!(
                url.starts_with("http://127.0.0.1:9/v1/storage/files/outputs/"),
                "{url}"
            );
            let out_key = url
                .split("/v1/storage/files/")
                .nth(1)
                .unwrap()
                .split('?')
                .next()
                .unwrap();
            let mut object = storage
                .get(&ObjectKey::parse(out_key).unwrap(), GetOptions::default())
                .await
                .unwrap();
            let out = dir.join(file);
            let mut data = Vec::new();
            while let Some(chunk) = object.body.next().await {
                data.extend_from_slice(&chunk.unwrap());
            }
            std::fs::write(&out, data).unwrap();
            (out_key.to_owned(), out)
        }
    };
    let generate = |output: OutputKind, file: &'static str| generate_with(output, file, &config);
    let (_, out) = generate(OutputKind::Video, "out.mp4").await;

    let before = frame_at(&out, 0.5);
    assert_eq!(
        count(&before, not_gray),
        0,
        "no caption before the first word"
    );
    for t in [1.4, 2.4] {
        let during = frame_at(&out, t);
        assert!(count(&during, green) > 200, "highlight visible at {t} s");
    }
    let info = caption_media::probe(&out).unwrap();
    assert!((info.duration_s - 4.0).abs() < 0.1, "{}", info.duration_s);
    assert!(info.audio.is_some());

    // The caption layer: VP9 with alpha, transparent before the first word, opaque on it.
    let (layer_key, layer) = generate(OutputKind::OverlayWebm, "layer.webm").await;
    assert!(layer_key.ends_with("clip-captions.webm"), "{layer_key}");
    let info = caption_media::probe(&layer).unwrap();
    let video = info.video.unwrap();
    assert_eq!(
        (video.codec.as_str(), video.width, video.height),
        ("vp9", W, H)
    );
    assert!((info.duration_s - 4.0).abs() < 0.1, "{}", info.duration_s);
    let alpha = |t: f64| {
        caption_testkit::media::run(
            "ffmpeg",
            &[
                "-loglevel",
                "error",
                "-c:v",
                "libvpx-vp9",
                "-ss",
                &t.to_string(),
                "-i",
                layer.to_str().unwrap(),
                "-frames:v",
                "1",
                "-vf",
                "alphaextract",
                "-f",
                "rawvideo",
                "-pix_fmt",
                "gray",
                "-",
            ],
        )
        .unwrap()
    };
    assert!(
        alpha(0.5).iter().all(|&a| a < 3),
        "transparent before the words"
    );
    let during = alpha(1.4);
    assert_eq!(during.len(), (W * H) as usize);
    assert!(
        during.iter().filter(|&&a| a > 250).count() > 200,
        "opaque on the caption"
    );

    // Pauses over 0.4 s cut: the tone is no voice, so the words alone are what is kept.
    // 1.0 s before "hello" keeps 0.4 s, the 1.2 s after "world" too: 1.4 s go.
    let mut cutting = config.clone();
    cutting.cut_pauses_s = Some(0.4);
    let (_, cut) = generate_with(OutputKind::Video, "cut.mp4", &cutting).await;
    let info = caption_media::probe(&cut).unwrap();
    assert!((info.duration_s - 2.6).abs() < 0.05, "{}", info.duration_s);
    assert_eq!(count(&frame_at(&cut, 0.2), not_gray), 0);
    for t in [0.8, 1.8] {
        assert!(
            count(&frame_at(&cut, t), green) > 200,
            "highlight at {t} s after the cut"
        );
    }
}

#[tokio::test]
async fn generate_refuses_unknown_files_templates_and_fonts() {
    let dir = tempfile::tempdir().unwrap();
    let storage = Arc::new(local_storage(dir.path()));
    let jobs = Arc::new(EmbeddedJobStore::open(dir.path().join("jobs.redb")).unwrap());
    let engine = Engine::new(
        EngineOptions::default().data_dir(dir.path().to_owned()),
        storage,
        jobs,
    )
    .unwrap();
    let request = |template: Option<&str>, config: serde_json::Value| GenerateRequest {
        input: "uploads/none/clip.mp4".into(),
        words: vec![],
        config: parse_config_patch(&config, "config").unwrap(),
        template_id: template.map(str::to_owned),
        output: Default::default(),
        reframe: None,
    };
    assert!(matches!(
        engine.generate(request(None, json!({}))).await,
        Err(Error::NotFound { what: "file", .. })
    ));
    assert!(matches!(
        engine.generate(request(Some("nope"), json!({}))).await,
        Err(Error::NotFound {
            what: "template",
            ..
        })
    ));
}

/// Local storage whose first output put stores the file and then fails as a bucket whose
/// answer was lost does (stored, then unreachable before it said so).
#[derive(Debug)]
struct AnswerLost {
    inner: LocalStorage,
    /// Output puts so far.
    output_puts: std::sync::atomic::AtomicUsize,
}

#[async_trait::async_trait]
impl Storage for AnswerLost {
    fn kind(&self) -> caption_store::StorageKind {
        self.inner.kind()
    }
    async fn put(
        &self,
        key: &ObjectKey,
        body: caption_store::ByteStream,
        options: PutOptions,
    ) -> caption_store::Result<caption_store::ObjectInfo> {
        let first_output = key.as_str().starts_with("outputs/")
            && self
                .output_puts
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
                == 0;
        let info = self.inner.put(key, body, options).await?;
        if first_output {
            return Err(caption_store::Error::Backend {
                key: key.to_string(),
                source: "connection reset before the answer".into(),
            });
        }
        Ok(info)
    }
    async fn get(
        &self,
        key: &ObjectKey,
        options: GetOptions,
    ) -> caption_store::Result<caption_store::GetObject> {
        self.inner.get(key, options).await
    }
    async fn head(&self, key: &ObjectKey) -> caption_store::Result<caption_store::ObjectInfo> {
        self.inner.head(key).await
    }
    async fn delete(&self, key: &ObjectKey) -> caption_store::Result<()> {
        self.inner.delete(key).await
    }
    async fn upload_descriptor(
        &self,
        file_name: &str,
    ) -> caption_store::Result<caption_core::UploadDescriptor> {
        self.inner.upload_descriptor(file_name).await
    }
    async fn download_url(&self, key: &ObjectKey) -> caption_store::Result<String> {
        self.inner.download_url(key).await
    }
}

/// A background generate whose output was stored but whose answer was lost is tried again
/// (the bucket failed) and completes with that output; it is not failed for finding its own
/// file there.
#[tokio::test(flavor = "multi_thread")]
async fn a_generate_whose_stored_output_lost_its_answer_completes_on_its_retry() {
    let dir = tempfile::tempdir().unwrap();
    let clip = dir.path().join("clip.mp4");
    caption_testkit::media::tone_video(&clip, "color=c=gray:s=160x120:r=10", 1.0).unwrap();
    let storage = Arc::new(AnswerLost {
        inner: local_storage(dir.path()),
        output_puts: std::sync::atomic::AtomicUsize::new(0),
    });
    let key = upload(storage.as_ref(), &clip).await;
    let jobs = EmbeddedJobStore::open(dir.path().join("jobs.redb")).unwrap();
    let options = EngineOptions::default()
        .data_dir(dir.path().to_owned())
        .model("tiny.en");
    let engine = Engine::new(options, Arc::clone(&storage) as _, Arc::new(jobs)).unwrap();
    let workers = engine.spawn_workers(false).await.unwrap();
    let request = GenerateRequest {
        input: key.to_string(),
        words: vec![Word::new(0.1, 0.8, "stored")],
        config: ConfigPatch::default(),
        template_id: None,
        output: OutputKind::Video,
        reframe: None,
    };
    let (job_id, _) = engine.generate_async(request, None).await.unwrap();
    let status = loop {
        let status = engine.generate_status(&job_id).await.unwrap();
        if matches!(
            status.status,
            caption_core::JobStatus::Completed | caption_core::JobStatus::Failed
        ) {
            break status;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    workers.shutdown().await;
    assert_eq!(
        status.status,
        caption_core::JobStatus::Completed,
        "{:?}",
        status.error
    );
    assert_eq!(
        storage
            .output_puts
            .load(std::sync::atomic::Ordering::SeqCst),
        2,
        "the output was put twice: the lost answer, then the retry"
    );
    let output = status
        .download_url
        .split("/v1/storage/files/")
        .nth(1)
        .unwrap()
        .split('?')
        .next()
        .unwrap()
        .to_owned();
    let info = storage
        .head(&ObjectKey::parse(&output).unwrap())
        .await
        .unwrap();
    assert!(info.size_bytes > 1000, "{info:?}");
}
