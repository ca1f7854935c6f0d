//! The two routes local storage needs: the browser upload target of upload descriptors
//! (`POST /v1/storage/upload`, SigV4 POST policy checked as S3 checks it) and signed
//! downloads (`GET /v1/storage/files/{key}?expires=&sig=`). Both answer S3-style XML errors,
//! because their clients are the same as S3's, except a correctly signed download of a file
//! that does not exist yet (a background generate's output): a JSON 404 like the API's.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{DefaultBodyLimit, FromRequest as _, Multipart, Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use bytes::Bytes;
use caption_store::{
    ByteRange, Error as StoreError, FILES_ROUTE, GetOptions, LocalAuthority, PutOptions, S3Error,
    S3ErrorCode, Storage, UPLOAD_ROUTE,
};
use futures_util::StreamExt as _;
use serde::Deserialize;
use time::OffsetDateTime;
use tokio::sync::mpsc;

/// S3 refuses forms whose fields before the file pass 20 KB; so do we.
const MAX_FORM_FIELDS_BYTES: usize = 20 * 1024;
/// Chunks queued between the request body and the store: bounds memory per upload.
const BODY_CHUNKS_IN_FLIGHT: usize = 8;

/// What the storage routes need: the store, and the local authority that signs and checks
/// its links.
#[derive(Debug, Clone)]
pub struct StorageRoutes {
    /// Where uploads go and downloads come from.
    pub storage: Arc<dyn Storage>,
    /// Signs and checks the upload policies and download links.
    pub authority: LocalAuthority,
}

/// `POST /v1/storage/upload` and `GET /v1/storage/files/{*key}` over local storage.
pub fn storage_router(state: StorageRoutes) -> Router {
    Router::new()
        // The upload enforces its own bounds (policy size range, form size) while streaming.
        .route(
            UPLOAD_ROUTE,
            post(upload).layer(DefaultBodyLimit::disable()),
        )
        .route(&format!("{FILES_ROUTE}{{*key}}"), get(download))
        .with_state(state)
}

struct S3Reply(S3Error);

impl IntoResponse for S3Reply {
    fn into_response(self) -> Response {
        let status =
            StatusCode::from_u16(self.0.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (
            status,
            [(header::CONTENT_TYPE, "application/xml")],
            self.0.to_xml(),
        )
            .into_response()
    }
}

impl From<S3Error> for S3Reply {
    fn from(error: S3Error) -> Self {
        Self(error)
    }
}

fn store_error(error: &StoreError) -> S3Reply {
    let reply = S3Error::from_storage(error);
    if matches!(
        reply.code,
        S3ErrorCode::InternalError | S3ErrorCode::ServiceUnavailable
    ) {
        tracing::error!(%error, "storage failed");
    } else {
        tracing::debug!(%error, "storage request refused");
    }
    S3Reply(reply)
}

fn malformed(message: impl Into<String>) -> S3Reply {
    S3Reply(S3Error::new(S3ErrorCode::MalformedPOSTRequest, message))
}

async fn upload(State(state): State<StorageRoutes>, request: Request) -> Response {
    match receive_upload(&state, request).await {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(reply) => reply.into_response(),
    }
}

async fn receive_upload(state: &StorageRoutes, request: Request) -> Result<(), S3Reply> {
    let mut multipart = Multipart::from_request(request, &()).await.map_err(|_| {
        malformed("The body of your POST request is not well-formed multipart/form-data.")
    })?;
    let mut fields: Vec<(String, String)> = Vec::new();
    let mut fields_bytes = 0_usize;
    loop {
        let Some(mut field) = multipart
            .next_field()
            .await
            .map_err(|e| malformed(format!("Malformed multipart body: {e}")))?
        else {
            return Err(S3Reply(S3Error::new(
                S3ErrorCode::InvalidArgument,
                "POST requires exactly one file upload per request.",
            )));
        };
        let name = field.name().unwrap_or_default().to_owned();
        if name.eq_ignore_ascii_case("file") {
            let file_name = field.file_name().map(str::to_owned);
            let accepted = state.authority.post_verifier().verify(
                &fields,
                file_name.as_deref(),
                OffsetDateTime::now_utc(),
            )?;
            // Fields after the file are ignored, as S3 does: the form's authority ends here.
            return store_file(state, &accepted, &mut field).await;
        }
        let mut value = Vec::new();
        while let Some(chunk) = field
            .chunk()
            .await
            .map_err(|e| malformed(format!("Malformed multipart body: {e}")))?
        {
            fields_bytes += chunk.len() + name.len();
            if fields_bytes > MAX_FORM_FIELDS_BYTES {
                return Err(S3Reply(S3Error::new(
                    S3ErrorCode::MaxPostPreDataLengthExceededError,
                    "Your POST request fields preceding the upload file were too large.",
                )));
            }
            value.extend_from_slice(&chunk);
        }
        let value = String::from_utf8(value)
            .map_err(|_| malformed(format!("Form field '{name}' is not UTF-8")))?;
        fields.push((name, value));
    }
}

/// Streams the file part into the store. The part borrows the request, so it is pumped
/// through a small channel into the store's `'static` body stream, in this same task.
async fn store_file(
    state: &StorageRoutes,
    accepted: &caption_store::AcceptedUpload,
    field: &mut axum::extract::multipart::Field<'_>,
) -> Result<(), S3Reply> {
    let (sender, receiver) = mpsc::channel::<std::io::Result<Bytes>>(BODY_CHUNKS_IN_FLIGHT);
    let body = futures_util::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|item| (item, receiver))
    })
    .boxed();
    let pump = async move {
        loop {
            let item = match field.chunk().await {
                Ok(Some(chunk)) => Ok(chunk),
                Ok(None) => break,
                Err(error) => Err(std::io::Error::other(error.to_string())),
            };
            let failed = item.is_err();
            // A closed channel means the store already refused the upload: stop reading.
            if sender.send(item).await.is_err() || failed {
                break;
            }
        }
    };
    let options = PutOptions::size_range(accepted.min_bytes, accepted.max_bytes);
    let (stored, ()) = tokio::join!(state.storage.put(&accepted.key, body, options), pump);
    match stored {
        Ok(info) => {
            tracing::info!(key = %info.key, size_bytes = info.size_bytes, "upload stored");
            Ok(())
        }
        Err(error) => Err(store_error(&error)),
    }
}

#[derive(Debug, Deserialize)]
struct DownloadQuery {
    expires: Option<String>,
    sig: Option<String>,
}

async fn download(
    State(state): State<StorageRoutes>,
    key: Result<Path<String>, PathRejection>,
    query: Result<Query<DownloadQuery>, QueryRejection>,
    headers: HeaderMap,
) -> Response {
    // A link whose path or query cannot be read (bad percent-encoding, `sig` given twice) is
    // refused like every other bad link: an S3 error naming the problem, not axum's text.
    let (Path(key), Query(query)) = match (key, query) {
        (Ok(key), Ok(query)) => (key, query),
        (Err(rejection), _) => return malformed_link("path", &rejection.body_text()),
        (_, Err(rejection)) => {
            return malformed_link("query (expires, sig)", &rejection.body_text());
        }
    };
    match serve_file(&state, &key, &query, &headers).await {
        Ok(response) => response,
        Err(reply) => reply.into_response(),
    }
}

fn malformed_link(part: &str, why: &str) -> Response {
    S3Reply(S3Error::new(
        S3ErrorCode::InvalidArgument,
        format!("The link's {part} is malformed: {why}"),
    ))
    .into_response()
}

async fn serve_file(
    state: &StorageRoutes,
    key: &str,
    query: &DownloadQuery,
    headers: &HeaderMap,
) -> Result<Response, S3Reply> {
    let key = state.authority.verify_download(
        key,
        query.expires.as_deref().unwrap_or_default(),
        query.sig.as_deref().unwrap_or_default(),
        OffsetDateTime::now_utc(),
    )?;
    let range = headers
        .get(header::RANGE)
        .and_then(|value| value.to_str().ok())
        .and_then(parse_range);
    let options = match range.clone() {
        Some(range) => GetOptions::range(range),
        None => GetOptions::default(),
    };
    let object = match state.storage.get(&key, options).await {
        Ok(object) => object,
        Err(StoreError::RangeNotSatisfiable { size_bytes, .. }) => {
            let mut response = S3Reply(S3Error::new(
                S3ErrorCode::InvalidRange,
                "The requested range is not satisfiable",
            ))
            .into_response();
            if let Ok(value) = HeaderValue::from_str(&format!("bytes */{size_bytes}")) {
                response.headers_mut().insert(header::CONTENT_RANGE, value);
            }
            return Ok(response);
        }
        // A background generate's link is handed out before its file exists: until then the
        // link answers a JSON 404 the client can tell from a bad link.
        Err(StoreError::NotFound { .. }) => {
            return Ok(crate::ApiError::new(
                StatusCode::NOT_FOUND,
                "not_found",
                "no file at this link yet: a background generate stores it when it completes \
                 (see GET /v1/generate/{jobId})",
            )
            .into_response());
        }
        Err(error) => return Err(store_error(&error)),
    };

    let length = object.range.end - object.range.start;
    let mut response = Response::new(Body::from_stream(object.body));
    let out = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&object.info.content_type) {
        out.insert(header::CONTENT_TYPE, value);
    }
    out.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    out.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    // The key's file name was sanitised to [A-Za-z0-9._-] when the key was made.
    if let Ok(value) = HeaderValue::from_str(&format!(
        "inline; filename=\"{}\"",
        object.info.key.file_name()
    )) {
        out.insert(header::CONTENT_DISPOSITION, value);
    }
    if range.is_some() {
        let content_range = format!(
            "bytes {}-{}/{}",
            object.range.start,
            object.range.end.saturating_sub(1),
            object.info.size_bytes
        );
        if let Ok(value) = HeaderValue::from_str(&content_range) {
            out.insert(header::CONTENT_RANGE, value);
        }
        *response.status_mut() = StatusCode::PARTIAL_CONTENT;
    }
    Ok(response)
}

/// One `bytes=` range (`a-b`, `a-`, `-n`). Several ranges or anything malformed give `None`,
/// and the whole file is served, which RFC 9110 allows.
fn parse_range(value: &str) -> Option<ByteRange> {
    let spec = value.trim().strip_prefix("bytes=")?.trim();
    if spec.contains(',') {
        return None;
    }
    let (start, end) = spec.split_once('-')?;
    let (start, end) = (start.trim(), end.trim());
    match (start.is_empty(), end.is_empty()) {
        (true, false) => Some(ByteRange::Suffix(end.parse().ok()?)),
        (false, true) => Some(ByteRange::From(start.parse().ok()?)),
        (false, false) => {
            let start: u64 = start.parse().ok()?;
            let last: u64 = end.parse().ok()?;
            (last >= start).then(|| ByteRange::Bounded(start..last.saturating_add(1)))
        }
        (true, true) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse_like_rfc_9110() {
        assert_eq!(parse_range("bytes=0-9"), Some(ByteRange::Bounded(0..10)));
        assert_eq!(parse_range("bytes=5-"), Some(ByteRange::From(5)));
        assert_eq!(parse_range("bytes=-5"), Some(ByteRange::Suffix(5)));
        assert_eq!(parse_range("bytes=9-0"), None);
        assert_eq!(parse_range("bytes=0-1,4-5"), None);
        assert_eq!(parse_range("items=0-1"), None);
        assert_eq!(parse_range("bytes=-"), None);
    }
}
