use std::fmt;

use caption_core::ErrorCode;

use crate::error::Error;

/// The S3 error codes the local upload and download routes answer with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum S3ErrorCode {
    /// The policy expired, or a condition other than the ones below failed (403).
    AccessDenied,
    /// The policy's or link's signature is not the authority's (403).
    SignatureDoesNotMatch,
    /// The credential names another access key (403).
    InvalidAccessKeyId,
    /// A form field or query parameter is malformed (400).
    InvalidArgument,
    /// The policy is not valid base64 JSON of a POST policy (400).
    InvalidPolicyDocument,
    /// The form is not a multipart form with a file (400).
    MalformedPOSTRequest,
    /// The fields before the file pass 20 KB (400).
    MaxPostPreDataLengthExceededError,
    /// The file is larger than the policy admits (400).
    EntityTooLarge,
    /// The file is smaller than the policy admits (400).
    EntityTooSmall,
    /// The body ended before its stated length (400).
    IncompleteBody,
    /// An object already exists under the key (412).
    PreconditionFailed,
    /// No object under the key (404).
    NoSuchKey,
    /// The range misses the object (416).
    InvalidRange,
    /// The store failed (500).
    InternalError,
    /// The store cannot take the request for now: its disk is full or its backend is
    /// unreachable (503; S3 clients retry it).
    ServiceUnavailable,
}

impl S3ErrorCode {
    /// The code as S3 spells it in its XML error documents.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::AccessDenied => "AccessDenied",
            Self::SignatureDoesNotMatch => "SignatureDoesNotMatch",
            Self::InvalidAccessKeyId => "InvalidAccessKeyId",
            Self::InvalidArgument => "InvalidArgument",
            Self::InvalidPolicyDocument => "InvalidPolicyDocument",
            Self::MalformedPOSTRequest => "MalformedPOSTRequest",
            Self::MaxPostPreDataLengthExceededError => "MaxPostPreDataLengthExceededError",
            Self::EntityTooLarge => "EntityTooLarge",
            Self::EntityTooSmall => "EntityTooSmall",
            Self::IncompleteBody => "IncompleteBody",
            Self::PreconditionFailed => "PreconditionFailed",
            Self::NoSuchKey => "NoSuchKey",
            Self::InvalidRange => "InvalidRange",
            Self::InternalError => "InternalError",
            Self::ServiceUnavailable => "ServiceUnavailable",
        }
    }

    /// The HTTP status S3 answers this code with.
    pub fn status(self) -> u16 {
        match self {
            Self::AccessDenied | Self::SignatureDoesNotMatch | Self::InvalidAccessKeyId => 403,
            Self::NoSuchKey => 404,
            Self::PreconditionFailed => 412,
            Self::InvalidRange => 416,
            Self::InternalError => 500,
            Self::ServiceUnavailable => 503,
            Self::InvalidArgument
            | Self::InvalidPolicyDocument
            | Self::MalformedPOSTRequest
            | Self::MaxPostPreDataLengthExceededError
            | Self::EntityTooLarge
            | Self::EntityTooSmall
            | Self::IncompleteBody => 400,
        }
    }
}

/// A refused upload or download, rendered as S3's XML error document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct S3Error {
    /// What went wrong, as S3 names it.
    pub code: S3ErrorCode,
    /// A sentence for the client.
    pub message: String,
}

impl S3Error {
    /// An error of `code` with `message`.
    pub fn new(code: S3ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// The HTTP status to answer with.
    pub fn status(&self) -> u16 {
        self.code.status()
    }

    /// `<Error><Code>…</Code><Message>…</Message></Error>` as S3 writes it.
    ///
    /// ```
    /// use caption_store::{S3Error, S3ErrorCode};
    ///
    /// let error = S3Error::new(S3ErrorCode::EntityTooLarge, "over 5 GB & more");
    /// assert_eq!(error.status(), 400);
    /// assert!(error.to_xml().ends_with(
    ///     "<Error><Code>EntityTooLarge</Code><Message>over 5 GB &amp; more</Message></Error>"
    /// ));
    /// ```
    pub fn to_xml(&self) -> String {
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>{}</Code><Message>{}</Message></Error>",
            self.code.as_str(),
            xml_escape(&self.message)
        )
    }

    /// What a failed store operation looks like to an S3 client. Internal failures keep
    /// their detail out of the response (it is logged by the caller).
    pub fn from_storage(error: &Error) -> Self {
        match error {
            Error::TooLarge { max_bytes, .. } => Self::new(
                S3ErrorCode::EntityTooLarge,
                format!(
                    "Your proposed upload exceeds the maximum allowed size of {max_bytes} bytes"
                ),
            ),
            Error::TooSmall { min_bytes, .. } => Self::new(
                S3ErrorCode::EntityTooSmall,
                format!(
                    "Your proposed upload is smaller than the minimum allowed size of {min_bytes} bytes"
                ),
            ),
            Error::AlreadyExists { .. } => Self::new(
                S3ErrorCode::PreconditionFailed,
                "At least one of the pre-conditions you specified did not hold: the key already exists",
            ),
            Error::NotFound { .. } => {
                Self::new(S3ErrorCode::NoSuchKey, "The specified key does not exist.")
            }
            Error::InvalidKey { reason, .. } => Self::new(
                S3ErrorCode::InvalidArgument,
                format!("Invalid key: {reason}"),
            ),
            Error::RangeNotSatisfiable { .. } => Self::new(
                S3ErrorCode::InvalidRange,
                "The requested range is not satisfiable",
            ),
            Error::Body { .. } => Self::new(
                S3ErrorCode::IncompleteBody,
                "The request body ended before the upload was complete",
            ),
            _ if error.code() == ErrorCode::DiskFull => Self::new(
                S3ErrorCode::ServiceUnavailable,
                "The server's disk is full. Please try again later.",
            ),
            _ if error.code() == ErrorCode::StorageUnavailable => Self::new(
                S3ErrorCode::ServiceUnavailable,
                "The storage backend cannot be reached. Please try again later.",
            ),
            _ => Self::new(
                S3ErrorCode::InternalError,
                "We encountered an internal error. Please try again.",
            ),
        }
    }
}

impl fmt::Display for S3Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for S3Error {}

fn xml_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            _ => out.push(ch),
        }
    }
    out
}
