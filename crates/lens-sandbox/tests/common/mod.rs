//! What the sandbox test binaries share: the agent binary and a bash run to its end.

// Each test binary is its own crate and uses only part of this.
#![allow(dead_code)]

use std::{path::PathBuf, time::Duration};

use lens_sandbox::{ExecRequest, RunEnding, SandboxDriver, run_to_end};

/// The agent binary cargo built beside this test (`cargo test` at the workspace root
/// builds it; alone: `cargo build -p lens-sandbox-agent`).
pub fn agent() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let agent = exe.parent().and_then(|d| d.parent()).unwrap().join("lens-sandbox-agent");
    assert!(agent.is_file(), "build the agent first: cargo build -p lens-sandbox-agent ({})", agent.display());
    agent
}

/// Runs `script` with bash to its end: (stdout, stderr, ending).
pub async fn bash(d: &dyn SandboxDriver, chat: &str, script: &str, timeout: Duration) -> (String, String, RunEnding) {
    let req = ExecRequest { argv: vec!["bash".into(), "-c".into(), script.into()], env: Default::default(), timeout };
    let run = run_to_end(d.exec(chat, req).await.unwrap()).await.unwrap();
    (run.stdout_text(), run.stderr_text(), run.ending)
}
