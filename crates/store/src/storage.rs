use std::fmt;
use std::ops::Range;

use async_trait::async_trait;
use bytes::Bytes;
use futures_util::stream::BoxStream;

use crate::error::{Error, Result};
use crate::key::ObjectKey;
use caption_core::UploadDescriptor;

/// A body to store or a body read back: chunks of bytes, ending early with an I/O error.
pub type ByteStream = BoxStream<'static, std::io::Result<Bytes>>;

/// Which backend a [`Storage`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StorageKind {
    /// [`LocalStorage`](crate::LocalStorage): files in a data folder.
    Local,
    /// An S3-compatible bucket.
    S3,
}

/// Options of [`Storage::put`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PutOptions {
    /// The body must have at least this many bytes, or nothing is stored.
    pub min_bytes: u64,
    /// The put is aborted as soon as the body passes this many bytes; nothing is stored.
    pub max_bytes: Option<u64>,
}

impl PutOptions {
    /// Bodies of `min_bytes..=max_bytes` bytes.
    pub fn size_range(min_bytes: u64, max_bytes: u64) -> Self {
        Self {
            min_bytes,
            max_bytes: Some(max_bytes),
        }
    }
}

/// A byte range of an object, as an HTTP `Range` header can ask for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ByteRange {
    /// Bytes `start..end` (end exclusive, clamped to the object's size).
    Bounded(Range<u64>),
    /// Bytes from an offset to the end.
    From(u64),
    /// The last `n` bytes.
    Suffix(u64),
}

impl ByteRange {
    /// The concrete range within an object of `size_bytes`, or `None` if nothing overlaps.
    pub fn resolve(&self, size_bytes: u64) -> Option<Range<u64>> {
        let range = match *self {
            Self::Bounded(ref r) => r.start..r.end.min(size_bytes),
            Self::From(start) => start..size_bytes,
            Self::Suffix(n) => size_bytes.saturating_sub(n)..size_bytes,
        };
        (range.start < range.end).then_some(range)
    }
}

/// Options of [`Storage::get`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GetOptions {
    /// Only these bytes; the whole object when `None`.
    pub range: Option<ByteRange>,
}

impl GetOptions {
    /// Only the bytes of `range`.
    pub fn range(range: ByteRange) -> Self {
        Self { range: Some(range) }
    }
}

/// What the store knows about an object.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ObjectInfo {
    /// The object's key.
    pub key: ObjectKey,
    /// Its size, bytes.
    pub size_bytes: u64,
    /// Guessed from the key's file extension; objects carry no stored content type.
    pub content_type: String,
}

impl ObjectInfo {
    pub(crate) fn new(key: ObjectKey, size_bytes: u64) -> Self {
        let content_type = mime_guess::from_path(key.file_name())
            .first_or_octet_stream()
            .essence_str()
            .to_owned();
        Self {
            key,
            size_bytes,
            content_type,
        }
    }
}

/// An object being read: its info, the byte range served and the bytes themselves.
#[non_exhaustive]
pub struct GetObject {
    /// The whole object's key, size and type.
    pub info: ObjectInfo,
    /// The bytes of the object that `body` yields (the whole object without a range).
    pub range: Range<u64>,
    /// The bytes of `range`, streamed.
    pub body: ByteStream,
}

impl fmt::Debug for GetObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GetObject")
            .field("info", &self.info)
            .field("range", &self.range)
            .finish_non_exhaustive()
    }
}

/// Object storage for inputs and outputs, held as `Arc<dyn Storage>`.
///
/// Contract, the same for every backend (checked by the conformance suite in `tests/`):
/// - `put` streams the body, never overwrites (an existing key is [`Error::AlreadyExists`])
///   and is atomic: a reader sees the whole object or no object, never a partial one; a body
///   outside the size bounds or a failing body stores nothing.
/// - `get` streams the object or a byte range of it; a range that misses the object is
///   [`Error::RangeNotSatisfiable`]; a missing key is [`Error::NotFound`].
/// - `upload_descriptor` makes a fresh key and a SigV4 POST policy that admits exactly one
///   file of 1..=`max_upload_bytes` bytes under that key until the upload TTL runs out.
/// - `download_url` is a link that serves the object to anyone holding it until the download
///   TTL runs out.
#[async_trait]
pub trait Storage: Send + Sync + fmt::Debug {
    /// Which backend this is.
    fn kind(&self) -> StorageKind;

    /// Stores `body` under `key`.
    async fn put(
        &self,
        key: &ObjectKey,
        body: ByteStream,
        options: PutOptions,
    ) -> Result<ObjectInfo>;

    /// Reads the object under `key`.
    async fn get(&self, key: &ObjectKey, options: GetOptions) -> Result<GetObject>;

    /// The object's size and type, without its bytes.
    async fn head(&self, key: &ObjectKey) -> Result<ObjectInfo>;

    /// Removes the object; removing a missing key is not an error.
    async fn delete(&self, key: &ObjectKey) -> Result<()>;

    /// A descriptor for a browser form (or any client) to upload one file named `file_name`.
    async fn upload_descriptor(&self, file_name: &str) -> Result<UploadDescriptor>;

    /// A link that downloads the object under `key`.
    async fn download_url(&self, key: &ObjectKey) -> Result<String>;
}

/// Resolves a requested range against the object's size for backends that read by range.
pub(crate) fn resolve_range(info: &ObjectInfo, range: Option<&ByteRange>) -> Result<Range<u64>> {
    match range {
        None => Ok(0..info.size_bytes),
        Some(range) => range
            .resolve(info.size_bytes)
            .ok_or_else(|| Error::RangeNotSatisfiable {
                key: info.key.to_string(),
                size_bytes: info.size_bytes,
            }),
    }
}
