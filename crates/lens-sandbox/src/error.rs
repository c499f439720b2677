//! What a sandbox operation can fail with, split by what the caller must decide.

/// A sandbox failure. Messages are fit to show a person; none carries host paths.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SandboxError {
    /// The conversation id cannot name a sandbox.
    #[error("`{0}` cannot name a sandbox: ids are 1–9 lowercase letters or digits")]
    BadName(String),
    /// A path leaves `/workspace` (the sentence says which).
    #[error("{0}")]
    BadPath(String),
    /// No such file or folder (the sentence says which).
    #[error("{0}")]
    NotFound(String),
    /// A file is larger than the request allows (the sentence says how large).
    #[error("{0}")]
    TooLarge(String),
    /// The sandbox cannot run on this machine (the check says why).
    #[error("the sandbox is not available here: {0}")]
    Unavailable(String),
    /// No room for another sandbox now (the sentence says why and what to do).
    #[error("{0}")]
    Busy(String),
    /// A file changed while it was read (the sentence says which).
    #[error("{0}")]
    Changed(String),
    /// The workspace is full.
    #[error("the sandbox's disk quota is used up")]
    QuotaExceeded,
    /// The backend refused a change of settings (the sentence says which and why).
    #[error("{0}")]
    Refused(String),
    /// The driver or its backend failed; the log has details.
    #[error("the sandbox failed: {0}")]
    Backend(String),
}
