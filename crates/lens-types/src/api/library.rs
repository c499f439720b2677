//! The library: namespaces and their documents.

use serde::{Deserialize, Serialize};

use super::UnixMillis;

/// A library namespace: a named shelf of documents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct NamespaceView {
    pub id: String,
    pub name: String,
    pub documents: u64,
    pub created_at: UnixMillis,
}

/// Make or rename a namespace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NamespaceRequest {
    /// 1–100 characters once trimmed, no control characters.
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 100, pattern = r"^[^\x00-\x1f\x7f-\x9f]*\S[^\x00-\x1f\x7f-\x9f]*$")
    )]
    pub name: String,
}

/// A document in the library.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DocumentView {
    pub id: String,
    pub namespace_id: String,
    pub name: String,
    pub size: u64,
    pub mime: String,
    pub created_at: UnixMillis,
}
