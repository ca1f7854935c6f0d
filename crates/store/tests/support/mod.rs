//! Shared test set-up: an s3s-fs server on loopback, curl as the browser, test bodies.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use bytes::Bytes;
use caption_store::{ByteStream, LinkOptions, S3Settings, S3Storage};
use futures_util::StreamExt as _;

pub const ACCESS_KEY: &str = "captions-test-key";
pub const SECRET_KEY: &str = "captions-test-secret";
pub const BUCKET: &str = "captions-test";
pub const REGION: &str = "us-east-1";

/// s3s-fs (it verifies SigV4 signatures and POST policies) with the test credentials and
/// bucket, on loopback; killed on drop.
pub struct S3sServer {
    server: caption_testkit::S3sServer,
    pub endpoint: String,
}

impl S3sServer {
    pub fn start() -> Self {
        let server = caption_testkit::S3sServer::start(ACCESS_KEY, SECRET_KEY, BUCKET)
            .unwrap_or_else(|e| panic!("{e}"));
        Self {
            endpoint: server.endpoint().to_owned(),
            server,
        }
    }

    pub fn settings(&self) -> S3Settings {
        S3Settings::new(&self.endpoint, BUCKET, REGION, ACCESS_KEY, SECRET_KEY).allow_http(true)
    }

    pub fn storage(&self, links: LinkOptions) -> S3Storage {
        S3Storage::open(&self.settings(), links).unwrap()
    }

    /// The file s3s-fs keeps for `key`, to prove nothing was written behind the API's back.
    pub fn object_file(&self, key: &str) -> PathBuf {
        self.server.object_file(key)
    }
}

/// Deterministic, non-repeating-looking test bytes.
pub fn test_bytes(len: usize, seed: u32) -> Vec<u8> {
    caption_testkit::upload::test_bytes(len, seed)
}

/// `bytes` as a stream of `chunk`-sized pieces.
pub fn stream_of(bytes: &[u8], chunk: usize) -> ByteStream {
    let chunks: Vec<std::io::Result<Bytes>> = bytes
        .chunks(chunk.max(1))
        .map(|c| Ok(Bytes::copy_from_slice(c)))
        .collect();
    futures_util::stream::iter(chunks).boxed()
}

pub async fn collect(mut body: ByteStream) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(chunk) = body.next().await {
        out.extend_from_slice(&chunk.unwrap());
    }
    out
}

/// POSTs a multipart form the way a browser form does: the fields in order, then the file
/// last. Returns the status code and response body.
pub fn curl_form(url: &str, fields: &[(String, String)], file: &Path) -> (u16, String) {
    caption_testkit::upload::curl_form(url, fields, file, "application/octet-stream").unwrap()
}

/// GETs a URL with curl; status and body bytes.
pub fn curl_get(url: &str) -> (u16, Vec<u8>) {
    let out = tempfile::NamedTempFile::new().unwrap();
    let output = Command::new("curl")
        .args(["-sS", "-o"])
        .arg(out.path())
        .args(["-w", "%{http_code}"])
        .arg(url)
        .output()
        .expect("curl must be installed");
    assert!(output.status.success(), "curl failed: {output:?}");
    let status = String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .unwrap();
    (status, std::fs::read(out.path()).unwrap())
}

/// The `<Code>` of an S3 XML error body.
pub fn s3_code(body: &str) -> &str {
    caption_testkit::upload::s3_error_code(body)
}

/// Changes the last character (a hex digit of a signature at the end of a URL or field).
pub fn flip_last_hex_digit(text: &str) -> String {
    let mut out = text.to_owned();
    let last = out.pop().unwrap();
    out.push(if last == '0' { '1' } else { '0' });
    out
}
