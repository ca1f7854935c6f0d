use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What `GET /signedUrl` answers: the new object's key (`file`), the URL to POST a
/// `multipart/form-data` form to, and the fields to send before the file.
//
// Same shape as caption-core's wire type; kept here until that crate is usable from this one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UploadDescriptor {
    pub file: String,
    pub url: String,
    pub fields: BTreeMap<String, String>,
}
