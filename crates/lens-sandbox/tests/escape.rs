//! Escape attempts against the local sandbox: each is contained, ends with a clear
//! ending, and the driver still works afterwards. (Fork and memory bombs and disk fill
//! need the cgroup limits and the quota, and ptrace needs the seccomp filter, which come
//! next; they are not run here so they cannot hurt the machine.)

use std::{path::PathBuf, sync::Arc, time::Duration};

use lens_sandbox::{DEFAULT_HOST_UID, ExecRequest, LocalDriver, RunEnding, SandboxDriver, run_to_end};

fn agent() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let agent = exe.parent().and_then(|d| d.parent()).unwrap().join("lens-sandbox-agent");
    assert!(agent.is_file(), "build the agent first: cargo build -p lens-sandbox-agent");
    agent
}

/// A driver whose data directory holds a secret beside the sandboxes, as Lens's does.
fn driver() -> (Arc<dyn SandboxDriver>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("secret.key"), "top-secret-key").unwrap();
    let d = LocalDriver::new(&dir.path().join("sandboxes"), &agent(), DEFAULT_HOST_UID).unwrap();
    (Arc::new(d), dir)
}

async fn bash(d: &dyn SandboxDriver, chat: &str, script: &str) -> (String, String, RunEnding) {
    let req = ExecRequest {
        argv: vec!["bash".into(), "-c".into(), script.into()],
        env: Default::default(),
        timeout: Duration::from_secs(20),
    };
    let run = run_to_end(d.exec(chat, req).await.unwrap()).await.unwrap();
    (run.stdout_text(), run.stderr_text(), run.ending)
}

/// The driver still runs code after an attempt.
async fn still_healthy(d: &dyn SandboxDriver) {
    let (out, _, ending) = bash(d, "healthy", "echo ok").await;
    assert_eq!((out.as_str(), ending), ("ok\n", RunEnding::Exited { code: 0 }));
}

#[tokio::test]
async fn host_secrets_and_lens_data_are_out_of_reach() {
    let (d, dir) = driver();
    let probe = format!(
        "cat {0}/secret.key; ls {0}; cat /etc/shadow; cat /root/.bashrc; cat /proc/1/environ | tr '\\0' '\\n' | grep -c LENS; \
         find / -name secret.key -not -path '/proc/*' 2>/dev/null | wc -l",
        dir.path().display()
    );
    let (out, err, _) = bash(&*d, "thief", &probe).await;
    assert!(!out.contains("top-secret-key"), "{out}");
    assert_eq!(out.lines().collect::<Vec<_>>(), ["0", "0"], "no LENS variable, no secret.key anywhere: {out}");
    assert!(err.contains("No such file or directory"), "{err}");
    still_healthy(&*d).await;
}

#[tokio::test]
async fn host_processes_cannot_be_seen_or_signalled() {
    let (d, _dir) = driver();
    let me = std::process::id();
    let (out, _, _) =
        bash(&*d, "signaller", &format!("kill -9 {me} 2>&1; kill -9 1 2>&1; ps -e -o pid= | wc -l")).await;
    assert!(out.contains("No such process"), "{out}");
    let count: usize = out.lines().last().unwrap().trim().parse().unwrap();
    assert!(count < 10, "only the sandbox's own processes: {count}");
    still_healthy(&*d).await; // this process was not killed either
}

#[tokio::test]
async fn no_network_reaches_out() {
    let (d, _dir) = driver();
    // Loopback works inside (the sandbox's own), nothing else does; no DNS either.
    let script = "python3 - <<'EOF'\nimport socket\nfor host, port in [('127.0.0.1', 1), ('10.0.0.1', 80), ('1.1.1.1', 443)]:\n    \
        s = socket.socket(); s.settimeout(2)\n    \
        try:\n        s.connect((host, port)); print(host, 'open')\n    except OSError as e:\n        print(host, type(e).__name__)\ntry:\n    \
        socket.getaddrinfo('example.org', 443); print('dns ok')\nexcept OSError as e:\n    print('dns', type(e).__name__)\nEOF";
    let (out, _, _) = bash(&*d, "net", script).await;
    assert!(!out.contains("open") && !out.contains("dns ok"), "{out}");
    assert!(out.contains("1.1.1.1 OSError") || out.contains("1.1.1.1 TimeoutError"), "{out}");
    still_healthy(&*d).await;
}

#[tokio::test]
async fn nothing_is_writable_outside_the_workspace_and_tmp() {
    let (d, _dir) = driver();
    let (out, _, _) = bash(
        &*d,
        "writer",
        "for p in /usr/x /etc/x /x /proc/sys/kernel/hostname /.lens/agent; do echo hi > $p 2>/dev/null && echo wrote $p; done; \
         echo t > /tmp/t && echo tmp-ok; echo w > /workspace/w && echo ws-ok",
    )
    .await;
    assert_eq!(out, "tmp-ok\nws-ok\n");
    still_healthy(&*d).await;
}

#[tokio::test]
async fn no_nested_namespaces_and_no_capabilities() {
    let (d, _dir) = driver();
    let (out, _, _) = bash(
        &*d,
        "nester",
        "unshare -U true 2>/dev/null && echo nested; unshare -r true 2>/dev/null && echo root-map; \
         grep -E '^Cap(Eff|Prm)' /proc/self/status | awk '{print $2}'",
    )
    .await;
    assert_eq!(out, "0000000000000000\n0000000000000000\n", "no nested namespaces, no capabilities: {out}");
    still_healthy(&*d).await;
}

#[tokio::test]
async fn binary_output_and_a_large_flood_end_cleanly() {
    let (d, _dir) = driver();
    let (out, _, ending) = bash(&*d, "binary", "head -c 100000 /dev/urandom; echo").await;
    assert_eq!(ending, RunEnding::Exited { code: 0 });
    assert!(out.len() >= 100_000 / 2, "bytes arrive (lossily shown): {}", out.len());
    let (_, _, ending) = bash(&*d, "flood", "yes | head -c 20000000 > /dev/stdout").await;
    assert_eq!(ending, RunEnding::Exited { code: 0 });
    still_healthy(&*d).await;
}
