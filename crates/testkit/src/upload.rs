//! A browser's form upload, played by curl: an upload descriptor's fields in a form's order,
//! changed or missing fields for the cases a store must refuse, the POST itself and the S3
//! error it may answer; and upload bodies.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use anyhow::{Context as _, ensure};

/// An upload descriptor's `fields` in a browser form's order: `key` first, as forms usually
/// have it (the file always goes last).
pub fn form_fields(fields: &BTreeMap<String, String>) -> Vec<(String, String)> {
    let mut fields: Vec<(String, String)> =
        fields.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    fields.sort_by_key(|(k, _)| k != "key");
    fields
}

/// `fields` with the value of `name` replaced by `value`.
pub fn with_field(fields: &[(String, String)], name: &str, value: &str) -> Vec<(String, String)> {
    fields
        .iter()
        .map(|(k, v)| {
            let v = if k == name { value } else { v };
            (k.clone(), v.to_owned())
        })
        .collect()
}

/// `fields` without `name`.
pub fn without_field(fields: &[(String, String)], name: &str) -> Vec<(String, String)> {
    fields.iter().filter(|(k, _)| k != name).cloned().collect()
}

/// POSTs `fields` in order, then `file` (typed `content_type`) last, as multipart/form-data to
/// `url`, exactly as a browser form does (`--form-string` sends values as they are, never read
/// from a file). Returns the status code and the response body.
///
/// It blocks: from an async test whose server runs on the same runtime, call it in
/// `spawn_blocking`.
pub fn curl_form(
    url: &str,
    fields: &[(String, String)],
    file: &Path,
    content_type: &str,
) -> anyhow::Result<(u16, String)> {
    let mut command = Command::new("curl");
    command.args(["-sS", "-o", "-", "-w", "\n%{http_code}"]);
    for (name, value) in fields {
        command.arg("--form-string").arg(format!("{name}={value}"));
    }
    command
        .arg("-F")
        .arg(format!("file=@{};type={content_type}", file.display()));
    command.arg(url);
    let output = command
        .output()
        .context("curl must be installed (scripts/setup-system)")?;
    ensure!(output.status.success(), "curl failed: {output:?}");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let (body, status) = text
        .rsplit_once('\n')
        .context("curl printed no status code")?;
    Ok((status.trim().parse()?, body.to_owned()))
}

/// The `<Code>` of an S3 XML error body; empty when there is none.
///
/// ```
/// let body = "<Error><Code>AccessDenied</Code><Message>no</Message></Error>";
/// assert_eq!(caption_testkit::upload::s3_error_code(body), "AccessDenied");
/// assert_eq!(caption_testkit::upload::s3_error_code("ok"), "");
/// ```
pub fn s3_error_code(body: &str) -> &str {
    body.split_once("<Code>")
        .and_then(|(_, rest)| rest.split_once("</Code>"))
        .map_or("", |(code, _)| code)
}

/// `len` deterministic bytes that look random (xorshift from `seed`): an upload body whose
/// every byte counts.
///
/// ```
/// let a = caption_testkit::upload::test_bytes(1000, 1);
/// assert_eq!(a, caption_testkit::upload::test_bytes(1000, 1));
/// assert_ne!(a, caption_testkit::upload::test_bytes(1000, 2));
/// ```
pub fn test_bytes(len: usize, seed: u32) -> Vec<u8> {
    let mut state = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            (state >> 24) as u8
        })
        .collect()
}
