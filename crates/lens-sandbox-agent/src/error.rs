//! What the agent's own setup can fail with: confining itself, making the programs'
//! Landlock domain, starting the Python kernel. The server reads the sentence.

use std::io;

/// A step of the agent's setup failed.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// A system call failed; `call` names it.
    #[error("{call}: {source}")]
    System {
        call: &'static str,
        #[source]
        source: io::Error,
    },
    /// The kernel lacks what the sandbox needs; the sentence says what.
    #[error("{0}")]
    Unsupported(&'static str),
    #[error("Landlock: {0}")]
    Landlock(#[from] landlock::RulesetError),
    #[error("Landlock: {0}")]
    LandlockPath(#[from] landlock::PathFdError),
    #[error("seccomp: {0}")]
    Seccomp(#[from] seccompiler::Error),
    #[error("seccomp: {0}")]
    SeccompRule(#[from] seccompiler::BackendError),
    #[error("could not start Python: {0}")]
    Python(#[source] io::Error),
}

impl AgentError {
    /// The last system call's failure, named.
    pub fn last_os(call: &'static str) -> Self {
        Self::System { call, source: io::Error::last_os_error() }
    }
}
