//! Escape attempts: each is contained, ends with a clear ending, and the driver still
//! works afterwards. Every attack runs against this machine's sandbox and, through the
//! gateway driver, against a fake OpenShell gateway that runs each sandbox in a container
//! (its own cgroup and bubblewrap; see the fake's `container.rs`), so what Lens itself
//! does on a gateway (its agent, the kernel, the run stream, healing) meets the same
//! code. The limits here are smaller than the defaults so the bombs end quickly.

use std::{path::Path, sync::Arc, time::Duration};

use futures_util::StreamExt;
use lens_openshell::fake::{FakeGateway, FakeOptions};
use lens_sandbox::{
    AdmissionLimits, DriverSettings, ExecRequest, GatewayAddress, GatewayOptions, Limits, LocalDriver, LocalOptions,
    RunEnding, RunEvent, SandboxDriver, SandboxError, run_to_end,
};

mod common;

use common::agent;

/// Where an attack runs: the server's data directory, and how its agent's program is
/// named on this machine (both drivers' sandboxes for the same conversation run at once).
struct Host<'a> {
    data: &'a Path,
    agent: &'static str,
}

const LIMITS: Limits = Limits { memory_bytes: 256 << 20, processes: 64, cpu_millis: 1000, disk_bytes: 64 << 20 };

/// A driver whose data directory holds a secret beside the sandboxes, as Lens's does.
fn driver() -> (Arc<dyn SandboxDriver>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("secret.key"), "top-secret-key").unwrap();
    let mut options = LocalOptions::new(&dir.path().join("sandboxes"), &agent());
    options.limits = LIMITS;
    let d = LocalDriver::new(options).unwrap();
    (Arc::new(d), dir)
}

/// The gateway driver with the same limits and a data directory like Lens's, on a fake
/// gateway that contains its sandboxes.
async fn gateway() -> (Arc<dyn SandboxDriver>, tempfile::TempDir, FakeGateway) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("secret.key"), "top-secret-key").unwrap();
    let fake = FakeGateway::start_with(FakeOptions { contain: true, ..Default::default() }).await.unwrap();
    let address =
        GatewayAddress { address: fake.address_string(), cert_dir: fake.cert_dir().to_owned(), server_name: None };
    let mut options = GatewayOptions::new(address, agent());
    options.last_used_file = Some(dir.path().join("gateway-last-used.json"));
    let settings = DriverSettings {
        limits: LIMITS,
        admission: AdmissionLimits {
            max_running: 8,
            max_memory_bytes: 64 << 30,
            wait: Duration::from_secs(20),
            per_person: 8,
        },
        pool_size: 0,
        network: None,
    };
    (lens_sandbox::start_gateway(options, &settings).unwrap(), dir, fake)
}

async fn python(d: &dyn SandboxDriver, chat: &str, code: &str) -> (String, String, RunEnding) {
    let run = run_to_end(d.run_python(chat, code, Duration::from_secs(20)).await.unwrap()).await.unwrap();
    (run.stdout_text(), run.stderr_text(), run.ending)
}

async fn bash(d: &dyn SandboxDriver, chat: &str, script: &str) -> (String, String, RunEnding) {
    common::bash(d, chat, script, Duration::from_secs(20)).await
}

/// A run under way: it printed, then sleeps for a minute.
async fn long_run(d: &dyn SandboxDriver, chat: &str, timeout: Duration) -> lens_sandbox::RunStream {
    let req = ExecRequest {
        argv: vec!["bash".into(), "-c".into(), "echo begun; sleep 60".into()],
        env: Default::default(),
        timeout,
    };
    let mut stream = d.exec(chat, req).await.unwrap();
    assert!(matches!(stream.next().await, Some(RunEvent::Output { .. })), "the run is under way");
    stream
}

/// The driver still runs code after an attempt.
async fn still_healthy(d: &dyn SandboxDriver) {
    let (out, _, ending) = bash(d, "healthy", "echo ok").await;
    assert_eq!((out.as_str(), ending), ("ok\n", RunEnding::Exited { code: 0 }));
}

async fn host_secrets_and_lens_data_are_out_of_reach(d: Arc<dyn SandboxDriver>, host: &Host<'_>) {
    let probe = format!(
        "cat {0}/secret.key; ls {0}; cat /etc/shadow; cat /root/.bashrc; cat /proc/1/environ | tr '\\0' '\\n' | grep -c LENS; \
         find / -name secret.key -not -path '/proc/*' 2>/dev/null | wc -l",
        host.data.display()
    );
    let (out, err, _) = bash(&*d, "thief", &probe).await;
    assert!(!out.contains("top-secret-key"), "{out}");
    assert_eq!(out.lines().collect::<Vec<_>>(), ["0", "0"], "no LENS variable, no secret.key anywhere: {out}");
    assert!(err.contains("No such file or directory"), "{err}");
    still_healthy(&*d).await;
}

async fn host_processes_cannot_be_seen_or_signalled(d: Arc<dyn SandboxDriver>, _host: &Host<'_>) {
    let me = std::process::id();
    let (out, _, _) =
        bash(&*d, "signaller", &format!("kill -9 {me} 2>&1; kill -9 1 2>&1; ps -e -o pid= | wc -l")).await;
    assert!(out.contains("No such process"), "{out}");
    let count: usize = out.lines().last().unwrap().trim().parse().unwrap();
    assert!(count < 10, "only the sandbox's own processes: {count}");
    still_healthy(&*d).await; // this process was not killed either
}

async fn no_network_reaches_out(d: Arc<dyn SandboxDriver>, _host: &Host<'_>) {
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

async fn nothing_is_writable_outside_the_workspace_and_tmp(d: Arc<dyn SandboxDriver>, _host: &Host<'_>) {
    let (out, _, _) = bash(
        &*d,
        "writer",
        "for p in /usr/x /etc/x /x /proc/sys/kernel/hostname /sandbox/x $(ls -d /.lens/agent* /sandbox/.lens/agent* 2>/dev/null); \
         do echo hi > $p 2>/dev/null && echo wrote $p; done; echo t > /tmp/t && echo tmp-ok; echo w > ./w && echo ws-ok",
    )
    .await;
    assert_eq!(out, "tmp-ok\nws-ok\n");
    still_healthy(&*d).await;
}

async fn no_nested_namespaces_and_no_capabilities(d: Arc<dyn SandboxDriver>, _host: &Host<'_>) {
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

async fn binary_output_and_a_large_flood_end_cleanly(d: Arc<dyn SandboxDriver>, _host: &Host<'_>) {
    let (out, _, ending) = bash(&*d, "binary", "head -c 100000 /dev/urandom; echo").await;
    assert_eq!(ending, RunEnding::Exited { code: 0 });
    assert!(out.len() >= 100_000 / 2, "bytes arrive (lossily shown): {}", out.len());
    let (out, _, ending) = bash(&*d, "flood", "yes | head -c 100000000").await;
    assert_eq!(out.len(), 100_000_000, "a 100 MB flood arrives whole and ends");
    assert_eq!(ending, RunEnding::Exited { code: 0 });
    still_healthy(&*d).await;
}

async fn a_fork_bomb_hits_the_process_limit_and_is_cleared(d: Arc<dyn SandboxDriver>, _host: &Host<'_>) {
    let req = ExecRequest {
        argv: vec!["bash".into(), "-c".into(), "bomb() { bomb | bomb & }; bomb; sleep 30".into()],
        env: Default::default(),
        timeout: Duration::from_secs(3),
    };
    let run = run_to_end(d.exec("bomber", req).await.unwrap()).await.unwrap();
    assert_eq!(run.ending, RunEnding::TimedOut { after_ms: 3000 });
    // The same sandbox forks again: the bomb is gone, not just stopped.
    let (out, _, ending) = bash(&*d, "bomber", "ps -e --no-headers | wc -l").await;
    assert_eq!(ending, RunEnding::Exited { code: 0 });
    assert!(out.trim().parse::<u32>().unwrap() < 8, "processes left after the bomb: {out}");
    still_healthy(&*d).await;
}

async fn a_memory_bomb_ends_out_of_memory_and_the_kernel_comes_back(d: Arc<dyn SandboxDriver>, _host: &Host<'_>) {
    let (_, _, ending) = bash(&*d, "hog", "python3 -c 'x = bytearray(1 << 30); print(len(x))'").await;
    // Either the kernel kills it for the cgroup, or Python's allocation fails first.
    assert!(matches!(ending, RunEnding::OutOfMemory | RunEnding::Exited { code: 1 }), "{ending:?}");
    let (_, _, ending) =
        python(&*d, "hog", "kept = 1\nchunks = []\nwhile True: chunks.append(b'x' * (16 << 20))").await;
    assert_eq!(ending, RunEnding::OutOfMemory);
    let (out, err, ending) = python(&*d, "hog", "print('back')").await;
    assert_eq!((out.as_str(), ending), ("back\n", RunEnding::Exited { code: 0 }), "{err}");
    still_healthy(&*d).await;
}

#[tokio::test]
async fn filling_the_disk_fails_clearly_and_stays_inside_the_quota() {
    let (d, dir) = driver();
    let (_, err, ending) = bash(&*d, "filler", "head -c 200000000 /dev/zero > big").await;
    assert_eq!(ending, RunEnding::Exited { code: 1 });
    assert!(err.contains("No space left on device"), "{err}");
    let image = dir.path().join("sandboxes/lens-chat-filler.img");
    use std::os::unix::fs::MetadataExt;
    let used = std::fs::metadata(&image).unwrap().blocks() * 512;
    assert!(used < 80 << 20, "the host holds {used} bytes for a 64 MiB quota");
    // A file put into the full workspace is refused as such, and leaves nothing half-written.
    let put = d.put_file("filler", "more.bin", vec![7u8; 1 << 20]).await;
    assert!(matches!(put, Err(SandboxError::QuotaExceeded)), "{put:?}");
    let (out, _, _) = bash(&*d, "filler", "ls -A").await;
    assert_eq!(out, "big\n", "no temporary file is left");
    // Freeing space makes the workspace usable again.
    let (out, _, _) = bash(&*d, "filler", "rm big && echo fine > small && cat small").await;
    assert_eq!(out, "fine\n");
    still_healthy(&*d).await;
}

async fn ptrace_is_refused(d: Arc<dyn SandboxDriver>, _host: &Host<'_>) {
    let code = "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n\
                print(libc.ptrace(16, 1, 0, 0), os.strerror(ctypes.get_errno()))\n\
                print(libc.ptrace(0, 0, 0, 0), os.strerror(ctypes.get_errno()))";
    let (out, err, _) = python(&*d, "tracer", code).await;
    assert_eq!(out, "-1 Operation not permitted\n-1 Operation not permitted\n", "{err}");
    still_healthy(&*d).await;
}

async fn a_background_process_does_not_outlive_its_run(d: Arc<dyn SandboxDriver>, _host: &Host<'_>) {
    let (_, _, ending) =
        bash(&*d, "lingerer", "setsid sleep 300 & (nohup sleep 301 &) ; disown -a; echo started").await;
    assert_eq!(ending, RunEnding::Exited { code: 0 });
    let (out, _, _) = bash(&*d, "lingerer", "ps -eo args --no-headers | grep -c '^sleep' || true").await;
    assert_eq!(out, "0\n", "no sleeper survived its run");
    let (out, _, _) =
        python(&*d, "lingerer", "import subprocess\nsubprocess.Popen(['sleep', '302'])\nprint('ok')").await;
    assert_eq!(out, "ok\n");
    let (out, _, _) = bash(&*d, "lingerer", "ps -eo args --no-headers | grep -c '^sleep' || true").await;
    assert_eq!(out, "0\n", "no sleeper survived its cell");
}

/// Processes on the host whose command line names `needle` (bwrap names the workspace).
fn processes_naming(needle: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().chars().all(|c| c.is_ascii_digit()))
        .filter(|e| std::fs::read(e.path().join("cmdline")).is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle)))
        .count()
}

fn mounts_under(needle: &str) -> usize {
    std::fs::read_to_string("/proc/self/mountinfo").unwrap().lines().filter(|l| l.contains(needle)).count()
}

#[tokio::test]
async fn a_crashed_server_leaves_nothing_once_the_next_one_starts() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("sandboxes");
    // Mounted, and named on bwrap's command line, in a folder of the test's own.
    let mut options = LocalOptions::new(&root, &agent());
    options.mounts = Some(dir.path().join("mounts"));
    let needle = dir.path().join("mounts").to_string_lossy().into_owned();
    let first = LocalDriver::new(options.clone()).unwrap();
    for chat in ["crash1", "crash2"] {
        bash(&first, chat, "sleep 300 > /dev/null 2>&1 & echo ok > kept.txt").await;
    }
    assert!(processes_naming(&needle) >= 2, "two sandboxes run (bwrap and its init each)");
    assert_eq!(mounts_under(&needle), 2, "two workspaces are mounted");
    // The server dies without cleaning up: nothing of its Drop runs.
    std::mem::forget(first);
    let second = LocalDriver::new(options).unwrap();
    assert_eq!((processes_naming(&needle), mounts_under(&needle)), (0, 0), "the next start cleans up");
    let kept = second.get_file("crash1", "kept.txt", 100).await.unwrap();
    assert_eq!(kept, b"ok\n", "files survive the crash");
    drop(second);
    assert_eq!((processes_naming(&needle), mounts_under(&needle)), (0, 0), "a driver going away leaves nothing");
}

/// The host pid of a conversation's agent: the process running `host.agent` in the
/// sandbox's cgroup.
fn agent_pid_on_host(host: &Host<'_>, chat: &str) -> i32 {
    let cgroup = format!("lens-chat-{chat}");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<i32>().ok())
        .find(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let groups = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline);
            let program = cmdline.split('\0').next().unwrap_or_default();
            program.starts_with(host.agent) && groups.contains(&cgroup)
        })
        .expect("the sandbox's agent runs")
}

fn signal_on_host(pid: i32, signal: nix::sys::signal::Signal) {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), signal).unwrap();
}

async fn kill_minus_one_ends_the_run_and_the_next_runs_work(d: Arc<dyn SandboxDriver>, _host: &Host<'_>) {
    python(&*d, "killer", "kept = 1").await;
    let (out, _, ending) = bash(&*d, "killer", "sleep 30 & kill -9 -1; echo after").await;
    assert_eq!((out.as_str(), ending), ("after\n", RunEnding::Exited { code: 0 }), "it kills only its own");
    let (out, err, ending) = bash(&*d, "killer", "echo ok").await;
    assert_eq!((out.as_str(), ending), ("ok\n", RunEnding::Exited { code: 0 }), "{err}");
    // Every run has a Landlock domain of its own: not even the kernel was in reach.
    let (out, err, ending) = python(&*d, "killer", "kept").await;
    assert_eq!((out.as_str(), ending), ("1\n", RunEnding::Exited { code: 0 }), "{err}");
    // A cell that kills everything it can reaches only itself; the next cell gets a new kernel.
    let (_, _, ending) =
        python(&*d, "killer", "import os, signal\nos.kill(-1, signal.SIGKILL)\nos.kill(os.getpid(), 9)").await;
    assert!(matches!(ending, RunEnding::Killed { .. }), "{ending:?}");
    let (out, err, ending) = python(&*d, "killer", "print('again')").await;
    assert_eq!((out.as_str(), ending), ("again\n", RunEnding::Exited { code: 0 }), "{err}");
}

async fn the_agent_cannot_be_stopped_killed_or_read_from_inside(d: Arc<dyn SandboxDriver>, _host: &Host<'_>) {
    let script = "a=$(pgrep -f '^(/sandbox)?/.lens/agent' | head -1); test -n \"$a\" && echo found; \
                  for s in STOP KILL TERM; do kill -$s $a 2>/dev/null && echo sent $s; done; \
                  cat /proc/$a/environ >/dev/null 2>&1 && echo read environ; \
                  head -c1 /proc/$a/mem >/dev/null 2>&1 && echo read mem; \
                  readlink /proc/$a/fd/1 >/dev/null 2>&1 && echo saw its pipe; \
                  echo forged > /proc/$a/fd/1 2>/dev/null && echo wrote its pipe; \
                  echo done";
    let (out, _, ending) = bash(&*d, "reacher", script).await;
    assert_eq!((out.as_str(), ending), ("found\ndone\n", RunEnding::Exited { code: 0 }), "every attempt refused");
    let (out, err, _) = bash(&*d, "reacher", "echo ok").await;
    assert_eq!(out, "ok\n");
    assert!(!err.contains("restarted"), "the same sandbox still serves: {err}");
}

async fn a_frozen_agent_cannot_hold_a_run_past_its_limit_and_the_sandbox_heals(
    d: Arc<dyn SandboxDriver>,
    host: &Host<'_>,
) {
    python(&*d, "frozen", "kept = 1").await;
    let stream = long_run(&*d, "frozen", Duration::from_secs(2)).await;
    // Frozen from outside, as code with the agent in reach would have frozen it.
    signal_on_host(agent_pid_on_host(host, "frozen"), nix::sys::signal::Signal::SIGSTOP);
    let run = tokio::time::timeout(Duration::from_secs(60), run_to_end(stream)).await.expect("the server ends the run");
    let run = run.unwrap();
    assert_eq!(run.ending, RunEnding::TimedOut { after_ms: 2000 });
    assert!(run.stderr_text().contains("Lens ended the sandbox"), "{}", run.stderr_text());
    let (out, err, ending) = bash(&*d, "frozen", "cat /workspace/.kept 2>/dev/null; echo ok").await;
    assert_eq!((out.as_str(), ending), ("ok\n", RunEnding::Exited { code: 0 }), "{err}");
    assert!(err.contains("restarted this conversation's sandbox"), "said once: {err}");
    let (_, err, _) = bash(&*d, "frozen", "echo again").await;
    assert!(err.is_empty(), "only the first run after the restart says so: {err}");
    let (_, err, _) = python(&*d, "frozen", "kept").await;
    assert!(err.contains("NameError"), "the Python names went with the sandbox: {err}");
}

async fn a_killed_agent_ends_its_run_clearly_and_the_sandbox_heals_over_the_same_files(
    d: Arc<dyn SandboxDriver>,
    host: &Host<'_>,
) {
    bash(&*d, "victim", "echo kept > kept.txt").await;
    let stream = long_run(&*d, "victim", Duration::from_secs(20)).await;
    signal_on_host(agent_pid_on_host(host, "victim"), nix::sys::signal::Signal::SIGKILL);
    let run = tokio::time::timeout(Duration::from_secs(30), run_to_end(stream)).await.expect("the run ends").unwrap();
    assert!(matches!(run.ending, RunEnding::Killed { .. } | RunEnding::OutOfMemory), "{:?}", run.ending);
    assert!(run.stderr_text().contains("the sandbox stopped during this run"), "{}", run.stderr_text());
    let (out, err, ending) = bash(&*d, "victim", "cat kept.txt").await;
    assert_eq!((out.as_str(), ending), ("kept\n", RunEnding::Exited { code: 0 }), "{err}");
    assert!(err.contains("Files in /workspace are kept"), "{err}");
    // Files work on a healed sandbox too.
    assert_eq!(d.get_file("victim", "kept.txt", 100).await.unwrap(), b"kept\n");
}

async fn filling_tmp_past_the_memory_limit_then_a_run_works(d: Arc<dyn SandboxDriver>, _host: &Host<'_>) {
    let (out, _, ending) = bash(&*d, "tmpfill", "head -c 400000000 /dev/zero > /tmp/fill && echo wrote").await;
    assert!(out.is_empty() && ending != RunEnding::Exited { code: 0 }, "the fill cannot succeed: {out} {ending:?}");
    let (out, err, ending) = bash(&*d, "tmpfill", "echo ok").await;
    assert_eq!((out.as_str(), ending), ("ok\n", RunEnding::Exited { code: 0 }), "{err}");
    let (out, err, ending) = python(&*d, "tmpfill", "print('python too')").await;
    assert_eq!((out.as_str(), ending), ("python too\n", RunEnding::Exited { code: 0 }), "{err}");
}

async fn stop_and_delete_do_not_wait_on_a_frozen_sandbox(d: Arc<dyn SandboxDriver>, host: &Host<'_>) {
    bash(&*d, "icy", "echo hi").await;
    signal_on_host(agent_pid_on_host(host, "icy"), nix::sys::signal::Signal::SIGSTOP);
    // A request to the frozen agent: it must come back, not hang.
    let listed = tokio::time::timeout(Duration::from_secs(90), d.list_files("icy", "")).await;
    assert!(matches!(listed, Ok(Err(_))), "a frozen agent's request fails: {listed:?}");
    let stopped = tokio::time::timeout(Duration::from_secs(30), d.stop("icy")).await;
    assert!(matches!(stopped, Ok(Ok(()))), "{stopped:?}");
    let (out, _, _) = bash(&*d, "icy", "echo thawed").await;
    assert_eq!(out, "thawed\n");
    signal_on_host(agent_pid_on_host(host, "icy"), nix::sys::signal::Signal::SIGSTOP);
    let deleted = tokio::time::timeout(Duration::from_secs(30), d.delete("icy")).await;
    assert!(matches!(deleted, Ok(Ok(()))), "{deleted:?}");
}

/// Every attack above, on both drivers.
macro_rules! both {
    ($($name:ident),* $(,)?) => {
        mod on_local {
            use super::*;
            $(
                #[tokio::test]
                async fn $name() {
                    let (d, dir) = driver();
                    super::$name(d, &Host { data: dir.path(), agent: "/.lens/agent" }).await;
                }
            )*
        }
        mod on_gateway {
            use super::*;
            $(
                #[tokio::test]
                async fn $name() {
                    let (d, dir, _fake) = gateway().await;
                    super::$name(d, &Host { data: dir.path(), agent: "/sandbox/.lens/agent-" }).await;
                }
            )*
        }
    };
}

both!(
    host_secrets_and_lens_data_are_out_of_reach,
    host_processes_cannot_be_seen_or_signalled,
    no_network_reaches_out,
    nothing_is_writable_outside_the_workspace_and_tmp,
    no_nested_namespaces_and_no_capabilities,
    binary_output_and_a_large_flood_end_cleanly,
    a_fork_bomb_hits_the_process_limit_and_is_cleared,
    a_memory_bomb_ends_out_of_memory_and_the_kernel_comes_back,
    ptrace_is_refused,
    a_background_process_does_not_outlive_its_run,
    kill_minus_one_ends_the_run_and_the_next_runs_work,
    the_agent_cannot_be_stopped_killed_or_read_from_inside,
    a_frozen_agent_cannot_hold_a_run_past_its_limit_and_the_sandbox_heals,
    a_killed_agent_ends_its_run_clearly_and_the_sandbox_heals_over_the_same_files,
    filling_tmp_past_the_memory_limit_then_a_run_works,
    stop_and_delete_do_not_wait_on_a_frozen_sandbox,
);
