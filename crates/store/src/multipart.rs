//! Create-only multipart uploads to S3. object_store completes a multipart upload without
//! conditions, so a body larger than one part is uploaded here: each request (create, parts,
//! complete, abort) is presigned by object_store's signer and sent with reqwest, and the
//! completion carries `If-None-Match: *`, which makes S3 publish the object only if the key is
//! free, atomically, whatever the object's size. A writer that loses the race gets
//! [`Error::AlreadyExists`] and its parts are thrown away.

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures_util::StreamExt as _;
use futures_util::stream::FuturesUnordered;
use object_store::aws::AmazonS3;
use object_store::path::Path;
use object_store::signer::{HeaderValue, Method, SignedUrlOptions, Signer as _};
use reqwest::StatusCode;
use reqwest::header::{ETAG, IF_NONE_MATCH};

use crate::error::{Error, Result};
use crate::key::ObjectKey;
use crate::put::{PART_BYTES, check_min, count};
use crate::storage::{ByteStream, PutOptions};

/// Parts in flight at once: memory stays near `PART_BYTES * (MAX_PARTS_IN_FLIGHT + 1)`.
const MAX_PARTS_IN_FLIGHT: usize = 2;
/// Lifetime of each request's signature; it is checked when the request starts.
const SIGNATURE_TTL: Duration = Duration::from_secs(15 * 60);
/// Tries of a create, part or abort request, and the pause before the second (doubling after).
const TRIES: u32 = 4;
const FIRST_WAIT: Duration = Duration::from_millis(200);
/// Tries of a completion that S3 answers 409 (another conditional write of the key is in
/// progress): the next try meets the winner's object and gets 412.
const COMPLETE_TRIES: u32 = 4;

/// Uploads `head` then the rest of `body` to `path` as a multipart upload completed only if
/// no object is at `path`. Returns the size written; on any error the upload is aborted.
pub(crate) async fn put_create_only(
    store: &AmazonS3,
    http: &reqwest::Client,
    path: &Path,
    key: &ObjectKey,
    head: Vec<Bytes>,
    body: ByteStream,
    options: &PutOptions,
) -> Result<u64> {
    let upload = Upload::create(store, http, path, key).await?;
    match upload.send(head, body, options).await {
        Ok(size_bytes) => Ok(size_bytes),
        Err(error) => {
            if let Err(abort_error) = upload.abort().await {
                tracing::warn!(key = %key, error = %abort_error, "aborting a failed upload failed; trying again in the background");
                abort_later(store, http, path, key, upload.upload_id);
            }
            Err(error)
        }
    }
}

/// Waits before the background aborts of an upload, doubling from a second to a minute:
/// about ten minutes in all, for a bucket that went away to come back.
const LATER_ABORTS: u32 = 14;

/// Aborts the upload `upload_id` in the background until the bucket takes the abort: when an
/// upload fails because the bucket went away, its abort cannot reach it either, and its parts
/// would stay in the bucket (billed, listed) until a lifecycle rule cleared them.
fn abort_later(
    store: &AmazonS3,
    http: &reqwest::Client,
    path: &Path,
    key: &ObjectKey,
    upload_id: String,
) {
    let (store, http, path, key) = (store.clone(), http.clone(), path.clone(), key.clone());
    tokio::spawn(async move {
        let upload = Upload {
            store: &store,
            http: &http,
            path: &path,
            key: &key,
            upload_id,
        };
        let mut wait = Duration::from_secs(1);
        for _ in 0..LATER_ABORTS {
            tokio::time::sleep(wait).await;
            match upload.abort().await {
                Ok(()) => {
                    tracing::info!(key = %key, "a failed upload was aborted once the bucket was back");
                    return;
                }
                Err(error) => {
                    tracing::debug!(key = %key, %error, "aborting a failed upload failed again");
                }
            }
            wait = (wait * 2).min(Duration::from_secs(60));
        }
        tracing::warn!(key = %key, upload_id = %upload.upload_id, "a failed upload could not be aborted; a lifecycle rule must clear its parts");
    });
}

struct Upload<'a> {
    store: &'a AmazonS3,
    http: &'a reqwest::Client,
    path: &'a Path,
    key: &'a ObjectKey,
    upload_id: String,
}

impl<'a> Upload<'a> {
    async fn create(
        store: &'a AmazonS3,
        http: &'a reqwest::Client,
        path: &'a Path,
        key: &'a ObjectKey,
    ) -> Result<Self> {
        let mut upload = Self {
            store,
            http,
            path,
            key,
            upload_id: String::new(),
        };
        let response = upload
            .send_retrying(Method::POST, &[("uploads", "")], None)
            .await?;
        let text = upload.text(response).await?;
        upload.upload_id = xml_element(&text, "UploadId")
            .ok_or_else(|| upload.backend(format!("no UploadId in the answer: {text:.200}")))?
            .to_owned();
        Ok(upload)
    }

    /// The parts, then the conditional completion.
    async fn send(
        &self,
        head: Vec<Bytes>,
        mut body: ByteStream,
        options: &PutOptions,
    ) -> Result<u64> {
        let mut size_bytes = 0_u64;
        let mut buffer = BytesMut::new();
        let mut parts: Vec<(u32, String)> = Vec::new();
        let mut in_flight = FuturesUnordered::new();
        let mut head = head.into_iter();
        let mut ended = false;
        while !ended {
            match head.next() {
                Some(chunk) => {
                    count(self.key, &mut size_bytes, &chunk, options)?;
                    buffer.extend_from_slice(&chunk);
                }
                None => match body.next().await {
                    Some(Ok(chunk)) => {
                        count(self.key, &mut size_bytes, &chunk, options)?;
                        buffer.extend_from_slice(&chunk);
                    }
                    Some(Err(source)) => {
                        return Err(Error::Body {
                            key: self.key.to_string(),
                            source,
                        });
                    }
                    None => ended = true,
                },
            }
            // The last part may be short (or the only one); every other is PART_BYTES.
            while buffer.len() >= PART_BYTES || (ended && !buffer.is_empty()) {
                let take = buffer.len().min(PART_BYTES);
                let number = u32::try_from(parts.len() + in_flight.len() + 1).unwrap_or(u32::MAX);
                in_flight.push(self.part(number, buffer.split_to(take).freeze()));
                while in_flight.len() >= MAX_PARTS_IN_FLIGHT {
                    if let Some(part) = in_flight.next().await {
                        parts.push(part?);
                    }
                }
            }
        }
        while let Some(part) = in_flight.next().await {
            parts.push(part?);
        }
        check_min(self.key, size_bytes, options)?;
        parts.sort_unstable_by_key(|(number, _)| *number);
        self.complete(&parts).await?;
        Ok(size_bytes)
    }

    async fn part(&self, number: u32, bytes: Bytes) -> Result<(u32, String)> {
        let number_text = number.to_string();
        let query = [
            ("partNumber", number_text.as_str()),
            ("uploadId", self.upload_id.as_str()),
        ];
        let response = self.send_retrying(Method::PUT, &query, Some(bytes)).await?;
        let etag = response
            .headers()
            .get(ETAG)
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| self.backend(format!("part {number} answered without an ETag")))?;
        Ok((number, etag.to_owned()))
    }

    async fn complete(&self, parts: &[(u32, String)]) -> Result<()> {
        let mut xml = String::from("<CompleteMultipartUpload>");
        for (number, etag) in parts {
            let etag = etag.replace('&', "&amp;").replace('"', "&quot;");
            xml.push_str(&format!(
                "<Part><PartNumber>{number}</PartNumber><ETag>{etag}</ETag></Part>"
            ));
        }
        xml.push_str("</CompleteMultipartUpload>");
        let query = [("uploadId", self.upload_id.as_str())];
        let mut tries = 0;
        loop {
            tries += 1;
            let response = self
                .send_signed(Method::POST, &query, true, Some(Bytes::from(xml.clone())))
                .await?;
            if response.status() == StatusCode::CONFLICT && tries < COMPLETE_TRIES {
                tokio::time::sleep(Duration::from_millis(100 * u64::from(tries))).await;
                continue;
            }
            let response = self.refused(response).await?;
            // S3 may answer 200 and put the error in the body, once the parts are assembled.
            let text = self.text(response).await?;
            return match xml_element(&text, "Code") {
                None => Ok(()),
                Some("PreconditionFailed") => Err(Error::AlreadyExists {
                    key: self.key.to_string(),
                }),
                Some(code) => {
                    Err(self.backend(format!("completing the upload: {code}: {text:.300}")))
                }
            };
        }
    }

    async fn abort(&self) -> Result<()> {
        let query = [("uploadId", self.upload_id.as_str())];
        self.send_retrying(Method::DELETE, &query, None).await?;
        Ok(())
    }

    /// Sends a request that changes nothing more when repeated (create, part, abort), again
    /// after a pause while it fails for now (no answer, 5xx, 429), up to [`TRIES`] times, as
    /// object_store does its own requests. A completion is not repeated this way: once done, a
    /// repeat would find the key taken by itself.
    async fn send_retrying(
        &self,
        method: Method,
        query: &[(&str, &str)],
        body: Option<Bytes>,
    ) -> Result<reqwest::Response> {
        let mut wait = FIRST_WAIT;
        let mut tries = 1;
        loop {
            let outcome = self
                .send_signed(method.clone(), query, false, body.clone())
                .await;
            let for_now = match &outcome {
                Ok(response) => {
                    response.status().is_server_error()
                        || response.status() == StatusCode::TOO_MANY_REQUESTS
                }
                Err(error) => matches!(error, Error::Backend { .. }),
            };
            if !for_now || tries >= TRIES {
                return self.refused(outcome?).await;
            }
            tracing::debug!(key = %self.key, %method, tries, "S3 request failed for now; trying again");
            tokio::time::sleep(wait).await;
            wait *= 2;
            tries += 1;
        }
    }

    /// Sends one presigned request, whatever its answer.
    async fn send_signed(
        &self,
        method: Method,
        query: &[(&str, &str)],
        create_only: bool,
        body: Option<Bytes>,
    ) -> Result<reqwest::Response> {
        let mut signed = SignedUrlOptions::new().with_query(query.iter().copied());
        if create_only {
            signed = signed.with_signed_header(IF_NONE_MATCH, HeaderValue::from_static("*"));
        }
        let url = self
            .store
            .signed_url_opts(method.clone(), self.path, SIGNATURE_TTL, &signed)
            .await
            .map_err(|e| Error::from_object_store(self.key.as_str(), e))?;
        let mut request = self.http.request(method, url.as_str());
        if create_only {
            request = request.header(IF_NONE_MATCH, "*");
        }
        if let Some(body) = body {
            request = request.body(body);
        }
        request.send().await.map_err(|e| Error::Backend {
            key: self.key.to_string(),
            source: Box::new(e),
        })
    }

    /// `response` if it succeeded; a 412 is [`Error::AlreadyExists`], any other refusal an
    /// [`Error::Backend`] naming the status.
    async fn refused(&self, response: reqwest::Response) -> Result<reqwest::Response> {
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        if status == StatusCode::PRECONDITION_FAILED {
            return Err(Error::AlreadyExists {
                key: self.key.to_string(),
            });
        }
        let text = response.text().await.unwrap_or_default();
        Err(self.backend(format!("answered {status}: {text:.300}")))
    }

    async fn text(&self, response: reqwest::Response) -> Result<String> {
        response.text().await.map_err(|e| Error::Backend {
            key: self.key.to_string(),
            source: Box::new(e),
        })
    }

    fn backend(&self, message: String) -> Error {
        Error::Backend {
            key: self.key.to_string(),
            source: message.into(),
        }
    }
}

/// The text of the first `<name>` element of an S3 answer (whose values hold no markup).
fn xml_element<'t>(xml: &'t str, name: &str) -> Option<&'t str> {
    let open = format!("<{name}>");
    let start = xml.find(&open)? + open.len();
    let end = xml[start..].find(&format!("</{name}>"))?;
    Some(&xml[start..start + end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_are_read_from_s3_answers() {
        let created = "<?xml version=\"1.0\"?><InitiateMultipartUploadResult><Bucket>b</Bucket>\
                       <UploadId>abc-123</UploadId></InitiateMultipartUploadResult>";
        assert_eq!(xml_element(created, "UploadId"), Some("abc-123"));
        let failed =
            "<Error><Code>PreconditionFailed</Code><Message>At least one</Message></Error>";
        assert_eq!(xml_element(failed, "Code"), Some("PreconditionFailed"));
        assert_eq!(xml_element(created, "Code"), None);
    }
}
