//! Shared by the service tests: the real binary, s3s-fs, an HTTP client.

#![allow(dead_code, reason = "each test binary uses a part of this module")]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

pub fn captions_binary() -> PathBuf {
    std::env::var_os("CAPTIONS_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_captions")))
}

pub fn free_port() -> u16 {
    caption_testkit::free_port().unwrap()
}

pub fn wait_for_port(port: u16, what: &str) {
    caption_testkit::wait_for_port(port, Duration::from_secs(60))
        .unwrap_or_else(|e| panic!("{what}: {e}"));
}

/// A running `captions serve` (testkit's [`caption_testkit::Service`] of this build's binary);
/// killed on drop if the test did not stop it.
pub struct Service {
    pub base: String,
    inner: caption_testkit::Service,
}

impl Service {
    pub fn start(data_dir: &Path, env: &[(&str, String)]) -> Self {
        let inner = caption_testkit::Service::start(&captions_binary(), data_dir, env)
            .unwrap_or_else(|e| panic!("{e}"));
        Self {
            base: inner.base().to_owned(),
            inner,
        }
    }

    /// The lines printed at start-up, up to the ready curl line.
    pub fn banner(&self) -> Vec<String> {
        self.inner.banner().unwrap_or_else(|e| panic!("{e}"))
    }

    pub fn pid(&self) -> u32 {
        self.inner.pid()
    }

    /// SIGKILL; returns once the process is gone.
    pub fn kill(&mut self) {
        self.inner.kill();
    }

    /// SIGTERM, then the exit status must be success: a graceful stop.
    pub fn terminate(self) {
        self.inner.terminate().unwrap_or_else(|e| panic!("{e}"));
    }
}

pub fn run(program: &str, args: &[&str]) -> Vec<u8> {
    caption_testkit::media::run(program, args).unwrap_or_else(|e| panic!("{e:#}"))
}

/// The duration of the media file at `path` by ffprobe, seconds.
pub fn duration_s(path: &Path) -> f64 {
    caption_testkit::media::duration_s(path).unwrap_or_else(|e| panic!("{e:#}"))
}

/// FFmpeg's arguments for a small, quickly made H.264 picture.
pub fn h264_fast() -> Vec<&'static str> {
    caption_testkit::media::H264_FAST.to_vec()
}

/// FFmpeg, quiet and overwriting, with `args`.
pub fn ffmpeg(args: &[&str]) {
    caption_testkit::media::ffmpeg(args).unwrap_or_else(|e| panic!("{e:#}"));
}

/// `text` spoken by espeak-ng's en-us voice at `words_per_minute`, as a WAV file at `path`.
pub fn espeak_wav(path: &Path, words_per_minute: u32, text: &str) {
    caption_testkit::media::espeak_wav(path, words_per_minute, text)
        .unwrap_or_else(|e| panic!("{e:#}"));
}

pub const S3_ACCESS_KEY: &str = "captions-e2e-key";
pub const S3_SECRET_KEY: &str = "captions-e2e-secret";
pub const S3_BUCKET: &str = "captions-e2e";

/// s3s-fs (installed by scripts/setup-s3s) on a loopback port with the e2e credentials and
/// bucket; killed on drop.
pub fn start_s3s() -> caption_testkit::S3sServer {
    caption_testkit::S3sServer::start(S3_ACCESS_KEY, S3_SECRET_KEY, S3_BUCKET)
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The service's settings for `s3`'s bucket (S3 storage with the e2e credentials).
pub fn s3_env(s3: &caption_testkit::S3sServer) -> Vec<(&'static str, String)> {
    s3.service_env()
}

pub struct Client {
    pub http: reqwest::Client,
    pub base: String,
    pub key: String,
}

impl Client {
    pub async fn get(&self, path: &str) -> (u16, Value) {
        let response = self
            .http
            .get(format!("{}{path}", self.base))
            .header("x-api-key", &self.key)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap())
    }

    /// Gets an upload descriptor for `file_name`, posts `path` with its fields as a browser
    /// form does (every field, then the file), asserts the store accepted it and returns the
    /// descriptor's file identifier.
    pub async fn upload(&self, path: &Path, file_name: &str, mime: &str) -> String {
        let (status, descriptor) = self
            .get(&format!("/v1/signedUrl?fileName={file_name}"))
            .await;
        assert_eq!(status, 200, "{descriptor}");
        let mut form = reqwest::multipart::Form::new();
        for (name, value) in descriptor["fields"].as_object().unwrap() {
            form = form.text(name.clone(), value.as_str().unwrap().to_owned());
        }
        let part = reqwest::multipart::Part::bytes(std::fs::read(path).unwrap())
            .file_name(file_name.to_owned())
            .mime_str(mime)
            .unwrap();
        let upload = self
            .http
            .post(descriptor["url"].as_str().unwrap())
            .multipart(form.part("file", part))
            .send()
            .await
            .unwrap();
        let upload_status = upload.status().as_u16();
        assert!(
            (200..300).contains(&upload_status),
            "upload: {upload_status} {}",
            upload.text().await.unwrap()
        );
        descriptor["file"].as_str().unwrap().to_owned()
    }

    pub async fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let response = self
            .http
            .post(format!("{}{path}", self.base))
            .header("x-api-key", &self.key)
            .json(body)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap())
    }
}

/// `captions` with `args`, the tiny English model, and the output captured.
pub fn captions(args: &[&str]) -> std::process::Output {
    Command::new(captions_binary())
        .args(args)
        .env("CAPTIONS_MODEL", "tiny.en")
        .output()
        .unwrap()
}

/// [`captions`] run by `sh` after `umask <mask>`, as a user's shell with that umask runs it.
pub fn captions_under_umask(mask: &str, args: &[&str]) -> std::process::Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("umask {mask} && exec \"$0\" \"$@\""))
        .arg(captions_binary())
        .args(args)
        .env("CAPTIONS_MODEL", "tiny.en")
        .output()
        .unwrap()
}

/// What a command printed on standard error.
pub fn stderr_of(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// What a command printed on standard output.
pub fn stdout_of(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A path as the `&str` a command line takes.
pub fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}
