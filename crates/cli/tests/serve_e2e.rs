//! `captions serve` end to end: the real binary on a loopback port, a real HTTP client, speech
//! from espeak-ng in an ffmpeg-made video, local storage and S3 (s3s-fs), then schemathesis
//! against `/v1/openapi.json`.
//!
//! `CAPTIONS_BIN` runs the same tests against another build of the binary.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test code: a panic is the failure report"
)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

mod support;

use caption_testkit::media;
use support::{Client, S3_ACCESS_KEY, S3_BUCKET, S3_SECRET_KEY, Service, duration_s, run};

const W: usize = 640;
const H: usize = 360;

/// A gray 640x360 video whose audio is espeak-ng saying a short English sentence.
fn speech_video(dir: &Path) -> PathBuf {
    let picture = format!("color=c=gray:s={W}x{H}:r=25");
    media::speech_video(
        &dir.join("speech.mp4"),
        &picture,
        "Hello world. This is a caption test.",
    )
    .unwrap()
}

fn stream_kinds(path: &Path) -> Vec<String> {
    let out = run(
        "ffprobe",
        &[
            "-v",
            "error",
            "-show_entries",
            "stream=codec_type,codec_name",
            "-of",
            "csv=p=0",
            path.to_str().unwrap(),
        ],
    );
    let mut kinds: Vec<String> = String::from_utf8_lossy(&out)
        .lines()
        .map(str::to_owned)
        .collect();
    kinds.sort();
    kinds
}

/// Pixels of the frame shown at `t_s` that are far from the gray background.
fn caption_pixels_at(path: &Path, t_s: f64) -> usize {
    let rgb = media::frame_rgb_at(path, t_s).unwrap();
    assert_eq!(rgb.len(), W * H * 3);
    rgb.chunks_exact(3)
        .filter(|p| p.iter().any(|&c| c.abs_diff(128) > 60))
        .count()
}

/// Descriptor, browser-form upload, transcript job polled to COMPLETED, generate with a
/// built-in template's config, download and check the mp4. Returns the job id.
async fn caption_flow(client: &Client, work: &Path) -> String {
    let video = speech_video(work);
    let source_duration_s = duration_s(&video);

    let file = client.upload(&video, "speech.mp4", "video/mp4").await;
    let file = file.as_str();

    let (status, created) = client
        .post("/v1/transcript", &json!({"input": file, "lang": "en"}))
        .await;
    assert_eq!(status, 200, "{created}");
    let job_id = created["job_id"].as_str().unwrap().to_owned();
    let deadline = Instant::now() + Duration::from_secs(600);
    let result = loop {
        let (status, job) = client.get(&format!("/v1/transcript/{job_id}")).await;
        assert_eq!(status, 200, "{job}");
        match job["status"].as_str().unwrap() {
            "COMPLETED" => break job,
            "FAILED" => panic!("transcription failed: {job}"),
            "IN_QUEUE" | "IN_PROGRESS" => assert!(job["words"].is_null(), "{job}"),
            other => panic!("unknown status {other}"),
        }
        assert!(
            Instant::now() < deadline,
            "job still {} after 600 s",
            job["status"]
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let words = result["words"].as_array().unwrap().clone();
    let text: Vec<String> = words
        .iter()
        .map(|w| w["word"].as_str().unwrap().to_lowercase())
        .collect();
    assert!(
        text.iter().any(|w| w.contains("hello")) && text.iter().any(|w| w.contains("test")),
        "{text:?}"
    );

    let (status, templates) = client.get("/v1/templates").await;
    assert_eq!(status, 200);
    let ids: Vec<&str> = templates
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    let id = if ids.contains(&"karaoke") {
        "karaoke"
    } else {
        ids[0]
    };
    let (status, template) = client.get(&format!("/v1/templates/{id}")).await;
    assert_eq!(status, 200);
    let (status, generated) = client
        .post(
            "/v1/generate",
            &json!({"input": file, "words": words, "config": template["config"]}),
        )
        .await;
    assert_eq!(status, 200, "{generated}");
    let download = client
        .http
        .get(generated["download_url"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(download.status().as_u16(), 200);
    let output = work.join("captioned.mp4");
    std::fs::write(&output, download.bytes().await.unwrap()).unwrap();

    let output_duration_s = duration_s(&output);
    assert!(
        (output_duration_s - source_duration_s).abs() < 0.2,
        "duration {output_duration_s} vs {source_duration_s}"
    );
    assert_eq!(stream_kinds(&output), ["aac,audio", "h264,video"]);
    let word = &words[0];
    let mid_s = (word["start"].as_f64().unwrap() + word["end"].as_f64().unwrap()) / 2.0;
    let lit = caption_pixels_at(&output, mid_s);
    assert!(lit > 300, "only {lit} caption pixels at {mid_s:.2} s");
    assert!(
        caption_pixels_at(&video, mid_s) < 50,
        "the source itself is plain gray"
    );
    job_id
}

#[tokio::test(flavor = "multi_thread")]
async fn local_storage_flow_through_the_real_binary() {
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    // No key configured: the first run makes one in the data folder and prints it.
    let service = Service::start(data.path(), &[]);
    let banner = service.banner();
    let key = banner
        .iter()
        .find_map(|l| l.strip_prefix("API key: "))
        .unwrap_or_else(|| panic!("no key printed: {banner:?}"))
        .to_owned();
    assert!(
        banner.last().unwrap().contains(&key),
        "curl line: {banner:?}"
    );
    let key_file = data.path().join("api-key");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&key_file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let client = Client {
        http: reqwest::Client::new(),
        base: service.base.clone(),
        key: key.clone(),
    };
    let unauthorized = client
        .http
        .get(format!("{}/v1/templates", service.base))
        .send()
        .await
        .unwrap();
    assert_eq!(unauthorized.status().as_u16(), 401);

    let job_id = caption_flow(&client, work.path()).await;
    service.terminate();

    // Jobs and the key persist across a restart.
    let again = Service::start(data.path(), &[]);
    let banner = again.banner();
    assert!(banner.iter().any(|l| l == &format!("API key: {key}")));
    let client = Client {
        base: again.base.clone(),
        ..client
    };
    let (status, job) = client.get(&format!("/v1/transcript/{job_id}")).await;
    assert_eq!(status, 200);
    assert_eq!(job["status"], "COMPLETED");
    again.terminate();
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_storage_flow_through_the_real_binary() {
    let s3 = support::start_s3s();
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let key = "e2e-s3-key".to_owned();
    let service = Service::start(
        data.path(),
        &[
            ("CAPTIONS_API_KEYS", key.clone()),
            ("CAPTIONS_STORAGE", "s3".into()),
            ("CAPTIONS_S3_ENDPOINT", s3.endpoint().to_owned()),
            ("CAPTIONS_S3_BUCKET", S3_BUCKET.into()),
            ("CAPTIONS_S3_REGION", "us-east-1".into()),
            ("CAPTIONS_S3_ACCESS_KEY", S3_ACCESS_KEY.into()),
            ("CAPTIONS_S3_SECRET_KEY", S3_SECRET_KEY.into()),
        ],
    );
    let banner = service.banner();
    assert!(
        !banner.iter().any(|l| l.starts_with("API key:")),
        "{banner:?}"
    );
    let client = Client {
        http: reqwest::Client::new(),
        base: service.base.clone(),
        key,
    };
    // Uploads and downloads go to the bucket, not through the service.
    let (status, descriptor) = client.get("/v1/signedUrl?fileName=probe.mp4").await;
    assert_eq!(status, 200);
    assert!(
        descriptor["url"]
            .as_str()
            .unwrap()
            .starts_with(s3.endpoint()),
        "{descriptor}"
    );
    caption_flow(&client, work.path()).await;
    service.terminate();
}

#[test]
fn schemathesis_finds_no_server_error_and_no_schema_violation() {
    let st = PathBuf::from(std::env::var_os("HOME").unwrap())
        .join(".cache/caption-engine/schemathesis-venv/bin/st");
    assert!(
        st.is_file(),
        "schemathesis not found at {} (run scripts/setup-schemathesis)",
        st.display()
    );
    let data = tempfile::tempdir().unwrap();
    let reports = tempfile::tempdir().unwrap();
    let key = "schemathesis-key";
    let service = Service::start(data.path(), &[("CAPTIONS_API_KEYS", key.to_owned())]);
    let _ = service.banner();
    // Every check but positive_data_acceptance: some rules span fields (a word's end not
    // before its start) or need the server's state (a known language), which a schema cannot
    // express, so schema-valid data may rightly get a 422.
    let out = Command::new(&st)
        .arg("run")
        .arg(format!("{}/v1/openapi.json", service.base))
        .args(["--header", &format!("x-api-key: {key}")])
        .args([
            "--checks",
            "all",
            "--exclude-checks",
            "positive_data_acceptance",
        ])
        // One worker: schemathesis compiles generated code with Python's `ast`, whose
        // recursion-depth bookkeeping is shared between threads in Python 3.11, so two workers
        // now and then die with "AST constructor recursion depth mismatch".
        .args(["--max-examples", "40", "--workers", "1", "--no-color"])
        .arg("--report-dir")
        .arg(reports.path())
        // It keeps a cache folder in its working directory.
        .current_dir(reports.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "schemathesis failed:\n{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    service.terminate();
}
