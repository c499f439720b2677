//! A run that prints far more than anyone reads: the driver's memory stays flat, because
//! the agent (and the program) wait for a slow reader instead of the driver queueing.
//! Its own test binary, so no other test's memory is counted.

use std::time::Duration;

use futures_util::StreamExt;
use lens_sandbox::{ExecRequest, LocalDriver, LocalOptions, RunEvent, SandboxDriver};

mod common;

use common::agent;

fn driver() -> (LocalDriver, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    (LocalDriver::new(LocalOptions::new(&dir.path().join("sandboxes"), &agent())).unwrap(), dir)
}

/// The resident memory of this process, in bytes.
fn rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kb: u64 =
        status.lines().find(|l| l.starts_with("VmRSS:")).unwrap().split_whitespace().nth(1).unwrap().parse().unwrap();
    kb << 10
}

#[tokio::test]
async fn a_flood_read_slowly_does_not_grow_the_driver() {
    let (d, _dir) = driver();
    common::bash(&d, "slow", "true", Duration::from_secs(20)).await;
    let before = rss();
    let req = ExecRequest {
        argv: vec!["bash".into(), "-c".into(), "head -c 100000000 /dev/zero".into()],
        env: Default::default(),
        timeout: Duration::from_secs(120),
    };
    let mut stream = d.exec("slow", req).await.unwrap();
    let (mut bytes, mut peak) = (0usize, 0u64);
    // A reader slower than the program: the agent (and the program) wait, the driver does not queue.
    tokio::time::sleep(Duration::from_secs(2)).await;
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
    let (out, _, _) = common::bash(&d, "slow", "echo ok", Duration::from_secs(20)).await;
    assert_eq!(out, "ok\n");
}
