//! What the sandbox test binaries share: the agent binary and a bash run to its end.

// Each test binary is its own crate and uses only part of this.
#![allow(dead_code)]

pub mod registry;

use std::{path::PathBuf, time::Duration};

use futures_util::StreamExt;
use lens_sandbox::{ExecRequest, RunEnding, RunEvent, SandboxDriver, run_to_end};

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

/// The resident memory of this process, in bytes.
fn rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kb: u64 =
        status.lines().find(|l| l.starts_with("VmRSS:")).unwrap().split_whitespace().nth(1).unwrap().parse().unwrap();
    kb << 10
}

/// Whether a process whose command line holds `needle` waits to write to a full pipe
/// (seen from the host, which runs the tests as root).
fn blocked_writing(needle: &str) -> bool {
    let Ok(procs) = std::fs::read_dir("/proc") else { return false };
    procs.flatten().any(|p| {
        let command = std::fs::read(p.path().join("cmdline")).unwrap_or_default();
        String::from_utf8_lossy(&command).replace('\0', " ").contains(needle)
            && std::fs::read_to_string(p.path().join("wchan")).is_ok_and(|w| w.contains("pipe_write"))
    })
}

/// A run that prints 100 MB, read slower than it prints: the driver's memory stays
/// flat, and the next run in the conversation works.
pub async fn flood_read_slowly(d: &dyn SandboxDriver) {
    bash(d, "slow", "true", Duration::from_secs(20)).await;
    let before = rss();
    let req = ExecRequest {
        argv: vec!["bash".into(), "-c".into(), "head -c 100000000 /dev/zero".into()],
        env: Default::default(),
        timeout: Duration::from_secs(120),
    };
    let mut stream = d.exec("slow", req).await.unwrap();
    let (mut bytes, mut peak) = (0usize, 0u64);
    // A reader slower than the program: nothing is read until the program waits on its
    // full output pipe, which it does only if the agent and the driver queue no further.
    lens_sandbox::testing::eventually("the program waiting on its output", Duration::from_secs(60), || async {
        blocked_writing("head -c 100000000").then_some(())
    })
    .await;
    while let Some(event) = stream.next().await {
        if let RunEvent::Output { bytes: b, .. } = event {
            bytes += b.len();
            if bytes % (8 << 20) < b.len() {
                peak = peak.max(rss());
            }
        }
    }
    assert_eq!(bytes, 100_000_000);
    let grew = peak.saturating_sub(before);
    assert!(grew < 48 << 20, "the driver grew by {} MiB", grew >> 20);
    let (out, _, _) = bash(d, "slow", "echo ok", Duration::from_secs(20)).await;
    assert_eq!(out, "ok\n");
}

/// A run's events, and what it reached on the network (`None`: no such event).
pub async fn reached(d: &dyn SandboxDriver, chat: &str, script: &str) -> Option<Vec<lens_types::NetReach>> {
    let timeout = Duration::from_secs(30);
    let req = ExecRequest { argv: vec!["bash".into(), "-c".into(), script.into()], env: Default::default(), timeout };
    let mut run = d.exec(chat, req).await.unwrap();
    let (mut network, mut later) = (None, None);
    while let Some(event) = run.next().await {
        match event {
            RunEvent::Network(n) => network = Some(n),
            RunEvent::NetworkSoon(soon) => later = Some(soon),
            // Read after the ending, as the server adds it to the run's step.
            RunEvent::Ended(_) => match later {
                Some(soon) => return Some(soon.get().await).filter(|n| !n.is_empty()),
                None => return network,
            },
            RunEvent::Failed(e) => panic!("{e}"),
            _ => {}
        }
    }
    panic!("no ending")
}

/// Runs `code` in the conversation's Python kernel to its end: (stdout, stderr, ending).
pub async fn python(d: &dyn SandboxDriver, chat: &str, code: &str) -> (String, String, RunEnding) {
    let run = run_to_end(d.run_python(chat, code, Duration::from_secs(60)).await.unwrap()).await.unwrap();
    (run.stdout_text(), run.stderr_text(), run.ending)
}

/// The gateway driver on NVIDIA's real gateway and supervisor, started by
/// scripts/openshell/real-gateway (`None` elsewhere: the test says so and passes). Its
/// sandboxes outlive a test, so each test begins by deleting what an earlier one left,
/// and the tests run one at a time (`--test-threads=1`): their conversations' names meet.
pub async fn real_gateway(settings: &lens_sandbox::DriverSettings) -> Option<std::sync::Arc<dyn SandboxDriver>> {
    let Ok(address) = std::env::var("LENS_TEST_OPENSHELL_GATEWAY") else {
        eprintln!("not run: NVIDIA's gateway runs under scripts/openshell/real-gateway");
        return None;
    };
    let cert_dir = std::env::var("LENS_TEST_OPENSHELL_CERTS").expect("the gateway's certificates").into();
    let address = lens_sandbox::GatewayAddress { address, cert_dir, server_name: None };
    let mut options = lens_sandbox::GatewayOptions::new(address, agent());
    options.image = std::env::var("LENS_TEST_OPENSHELL_IMAGE").unwrap_or_default();
    let d = lens_sandbox::start_gateway(options, settings).unwrap();
    for left in d.list().await.unwrap() {
        d.delete(&left.chat_id).await.unwrap();
    }
    Some(d)
}

/// Python that calls `name_to_handle_at`, which a supervisor's deny-list lets through and
/// the agent's allow-list refuses: it prints `-1 Operation not permitted` under the agent's
/// filter, `-1 Value too large for defined data type` without it.
pub const REFUSED_BY_THE_AGENT_ALONE: &str = "import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); \
     buf = ctypes.create_string_buffer(8); mount = ctypes.c_int(); \
     r = libc.syscall(303, -100, b'/', buf, ctypes.byref(mount), 0); \
     print(r, os.strerror(ctypes.get_errno()))";
