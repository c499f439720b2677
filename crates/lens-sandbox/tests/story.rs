//! The driver story: what every `SandboxDriver` must do, run against `LocalDriver` with
//! real bubblewrap and against `GatewayDriver` talking to a fake OpenShell gateway over
//! real mutual TLS. Each scenario below runs on both (the `both!` list at the end);
//! what only one backend can show (bubblewrap's view of the host, its pool and
//! images) is in the tests after it.

use std::{sync::Arc, time::Duration};

use futures_util::StreamExt;
use lens_openshell::fake::{FakeGateway, FakeOptions};
use lens_sandbox::{
    AdmissionLimits, DEFAULT_HOST_UID, DriverSettings, ExecRequest, GatewayAddress, GatewayOptions, LocalDriver,
    LocalOptions, RunEnding, RunEvent, SandboxDriver, SandboxError, SandboxState, run_to_end, testing::eventually,
};

mod common;

use common::{agent, python};

/// What keeps a backend alive while its test runs.
#[allow(dead_code)]
enum Keep {
    Folder(tempfile::TempDir),
    Gateway(FakeGateway),
    Nothing,
}

fn settings(max_running: usize, wait: Duration) -> DriverSettings {
    DriverSettings {
        limits: Default::default(),
        admission: AdmissionLimits { max_running, max_memory_bytes: 64 << 30, wait, per_person: max_running },
        pool_size: 0,
        network: None,
    }
}

async fn local(settings: DriverSettings) -> (Arc<dyn SandboxDriver>, Keep) {
    let dir = tempfile::tempdir().unwrap();
    let d = LocalDriver::new(LocalOptions::new(&dir.path().join("sandboxes"), &agent())).unwrap();
    d.configure(&settings);
    (Arc::new(d), Keep::Folder(dir))
}

/// The gateway driver, on a fake that runs each sandbox in a container of its own.
async fn gateway(settings: DriverSettings) -> (Arc<dyn SandboxDriver>, Keep) {
    let fake = FakeGateway::start_with(FakeOptions { contain: true, ..Default::default() }).await.unwrap();
    let address =
        GatewayAddress { address: fake.address_string(), cert_dir: fake.cert_dir().to_owned(), server_name: None };
    let d = lens_sandbox::start_gateway(GatewayOptions::new(address, agent()), &settings).unwrap();
    (d, Keep::Gateway(fake))
}

/// The gateway driver on NVIDIA's real gateway, where scripts/openshell/real-gateway runs it.
async fn real_gateway(settings: DriverSettings) -> Option<(Arc<dyn SandboxDriver>, Keep)> {
    Some((common::real_gateway(&settings).await?, Keep::Nothing))
}

/// A local driver whose workspaces are mounted in the test's folder (`mounts`), where the
/// test can look at them.
fn driver() -> (Arc<dyn SandboxDriver>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut options = LocalOptions::new(&dir.path().join("sandboxes"), &agent());
    options.mounts = Some(dir.path().join("mounts"));
    (Arc::new(LocalDriver::new(options).unwrap()), dir)
}

async fn run(d: &dyn SandboxDriver, chat: &str, script: &str, timeout: Duration) -> (String, String, RunEnding) {
    let req = ExecRequest { argv: vec!["sh".into(), "-c".into(), script.into()], env: Default::default(), timeout };
    let run = run_to_end(d.exec(chat, req).await.unwrap()).await.unwrap();
    (run.stdout_text(), run.stderr_text(), run.ending)
}

const T: Duration = Duration::from_secs(20);

async fn lifecycle_files_and_runs(d: Arc<dyn SandboxDriver>) {
    assert_eq!(d.status("chat1").await.unwrap().state, SandboxState::Absent);
    assert_eq!(d.ensure("chat1").await.unwrap().state, SandboxState::Running);

    let (out, err, ending) = run(&*d, "chat1", "echo hello; echo warn >&2; exit 4", T).await;
    assert_eq!((out.as_str(), err.as_str(), ending), ("hello\n", "warn\n", RunEnding::Exited { code: 4 }));

    d.put_file("chat1", "data/in.csv", b"a,b\n1,2\n".to_vec()).await.unwrap();
    let (out, _, _) = run(&*d, "chat1", "wc -l < data/in.csv; echo made > out.txt", T).await;
    assert_eq!(out.trim(), "2");
    assert_eq!(d.get_file("chat1", "/workspace/out.txt", 100).await.unwrap(), b"made\n");
    let files: Vec<String> = d.list_files("chat1", "").await.unwrap().into_iter().map(|f| f.path).collect();
    assert_eq!(files, vec!["data", "out.txt"]);

    // Stopped keeps the files; the next run starts it again.
    d.stop("chat1").await.unwrap();
    assert_eq!(d.status("chat1").await.unwrap().state, SandboxState::Stopped);
    let (out, _, _) = run(&*d, "chat1", "cat out.txt", T).await;
    assert_eq!(out, "made\n");
    assert_eq!(d.list().await.unwrap().len(), 1);

    d.delete("chat1").await.unwrap();
    assert_eq!(d.status("chat1").await.unwrap().state, SandboxState::Absent);
    assert!(d.list().await.unwrap().is_empty());
}

async fn conversations_do_not_see_each_other(d: Arc<dyn SandboxDriver>) {
    d.put_file("alice", "secret.txt", b"alice's".to_vec()).await.unwrap();
    let (out, _, _) = run(&*d, "bob", "ls -A \"$HOME\"; echo end", T).await;
    assert_eq!(out, "end\n");
    assert!(matches!(d.get_file("bob", "secret.txt", 100).await, Err(SandboxError::NotFound(_))));
}

#[tokio::test]
async fn conversations_cannot_reach_each_others_folders() {
    let (d, _dir) = driver();
    d.put_file("alice", "secret.txt", b"alice's".to_vec()).await.unwrap();
    let (out, _, _) =
        run(&*d, "bob", "ls -A /workspace; cat /workspace/../*/secret.txt 2>/dev/null; echo end", T).await;
    assert_eq!(out, "end\n");
}

#[tokio::test]
async fn the_sandbox_sees_nothing_of_the_host() {
    let (d, dir) = driver();
    let (out, _, _) = run(
        &*d,
        "probe",
        "id -u; hostname; env | cut -d= -f1 | sort | tr '\\n' ' '; echo; ls /; ls /proc | grep -c '^[0-9]'; \
         cat /etc/shadow 2>&1 | head -1; touch /usr/x 2>&1 | head -1",
        T,
    )
    .await;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "1000", "never root inside");
    assert_eq!(lines[1], "sandbox");
    assert!(!lines[2].contains("LENS") && !lines[2].contains("CARGO"), "{}", lines[2]);
    // The root holds the system's read-only parts, scratch space and the workspace: no
    // host home, no Lens data directory, no /work, no /root.
    let root: Vec<&str> = lines[3..].iter().take_while(|l| l.parse::<u32>().is_err()).copied().collect();
    assert_eq!(root, ["bin", "dev", "etc", "lib", "lib64", "proc", "sbin", "tmp", "usr", "workspace"]);
    let processes: u32 = lines[3 + root.len()].parse().unwrap();
    assert!(processes < 10, "only the sandbox's own processes are visible: {processes}");
    assert!(lines.iter().any(|l| l.contains("No such file")), "{out}");
    assert!(lines.iter().any(|l| l.contains("Read-only file system")), "{out}");
    // Files the sandbox made belong to the unprivileged host user, never to root.
    run(&*d, "probe", "touch mine", T).await;
    let meta = std::fs::metadata(dir.path().join("mounts/lens-chat-probe/mine")).unwrap();
    use std::os::unix::fs::MetadataExt;
    assert_eq!(meta.uid(), DEFAULT_HOST_UID);
}

#[tokio::test]
async fn no_network_but_loopback() {
    let (d, _dir) = driver();
    let (out, _, _) = run(&*d, "net", "cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '", T).await;
    assert_eq!(out.trim(), "lo");
}

async fn time_outs_and_dropped_runs_end_the_whole_tree(d: Arc<dyn SandboxDriver>) {
    let (out, _, ending) = run(&*d, "slow", "sleep 30 & echo started; wait", Duration::from_millis(500)).await;
    assert_eq!((out.as_str(), ending), ("started\n", RunEnding::TimedOut { after_ms: 500 }));
    // A stream dropped mid-run kills the run: the next run finds no sleeper left.
    // (A length of sleep no other test uses: on a gateway, ps may see more than the sandbox.)
    let req = ExecRequest { argv: vec!["sleep".into(), "29.71".into()], env: Default::default(), timeout: T };
    drop(d.exec("slow", req).await.unwrap());
    let mut left = String::new();
    for _ in 0..50 {
        left = run(&*d, "slow", "ps -e -o args= | grep -c '^sleep 29[.]71' || true", T).await.0;
        if left.trim() == "0" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(left.trim(), "0");
}

async fn bad_names_and_paths_are_refused(d: Arc<dyn SandboxDriver>) {
    assert!(matches!(d.ensure("../etc").await, Err(SandboxError::BadName(_))));
    assert!(matches!(d.put_file("ok", "../x", b"x".to_vec()).await, Err(SandboxError::BadPath(_))));
    let refused = d.get_file("ok", "/etc/passwd", 10_000).await;
    assert!(
        matches!(&refused, Err(e @ SandboxError::BadPath(_)) if e.to_string() == "the path `/etc/passwd` is outside the workspace"),
        "{refused:?}"
    );
    d.put_file("ok", "ten.txt", b"0123456789".to_vec()).await.unwrap();
    let refused = d.get_file("ok", "ten.txt", 4).await;
    assert!(
        matches!(&refused, Err(e @ SandboxError::TooLarge(_)) if e.to_string() == "`ten.txt` is 10 bytes, more than the 4 allowed"),
        "{refused:?}"
    );
    let missing = d.list_files("ok", "nowhere").await;
    assert!(matches!(missing, Err(SandboxError::NotFound(_))), "{missing:?}");
}

async fn python_keeps_its_names_between_runs_and_sees_the_same_files(d: Arc<dyn SandboxDriver>) {
    let (out, err, ending) =
        python(&*d, "py", "import numpy as np\nm = np.arange(6).reshape(2, 3)\nprint(m.sum())").await;
    assert_eq!((out.as_str(), err.as_str(), ending), ("15\n", "", RunEnding::Exited { code: 0 }));
    let (out, _, _) = python(&*d, "py", "open('m.txt', 'w').write(str(m.shape))\nm.T.shape").await;
    assert_eq!(out, "(3, 2)\n");
    let (out, _, _) = run(&*d, "py", "cat m.txt", T).await;
    assert_eq!(out, "(2, 3)");
    // Stopping the sandbox ends the kernel: its names are gone, its files are not.
    d.stop("py").await.unwrap();
    let (_, err, _) = python(&*d, "py", "m").await;
    assert!(err.contains("NameError"), "{err}");
    let (out, _, _) = python(&*d, "py", "open('m.txt').read()").await;
    assert_eq!(out, "'(2, 3)'\n");
}

/// A file far larger than one frame (once refused past about 54 MB) goes in and comes
/// out whole, in parts; the sandbox goes on as it was: its Python names are still there.
/// Code too large for one request is refused with its size and the limit.
async fn a_file_of_any_size_goes_in_and_out_in_parts_and_the_sandbox_goes_on(d: Arc<dyn SandboxDriver>) {
    python(&*d, "big", "kept = 41").await;
    let bytes: Vec<u8> = (0..60u32 << 20).map(|i| (i % 253) as u8).collect();
    d.put_file("big", "huge.bin", bytes.clone()).await.unwrap();
    let (out, err, _) = python(&*d, "big", "import os\nprint(os.path.getsize('huge.bin'), kept + 1)").await;
    assert_eq!(out, format!("{} 42\n", 60 << 20), "{err}");
    assert!(d.get_file("big", "huge.bin", 64 << 20).await.unwrap() == bytes, "the same bytes come back");
    let names: Vec<String> = d.list_files("big", "").await.unwrap().into_iter().map(|e| e.path).collect();
    assert_eq!(names, ["huge.bin"], "nothing half-written beside it");
    let refused = d.run_python("big", &"#".repeat(17 << 20), T).await.err();
    assert!(
        matches!(&refused, Some(SandboxError::TooLarge(m)) if m.contains("at most 16 MB in one request")),
        "{refused:?}"
    );
    let (out, err, _) = python(&*d, "big", "print(kept + 1)").await;
    assert_eq!(out, "42\n", "{err}");
}

async fn stop_ends_a_run_still_in_progress(d: Arc<dyn SandboxDriver>) {
    let req = ExecRequest {
        argv: vec!["sh".into(), "-c".into(), "echo started; sleep 30".into()],
        env: Default::default(),
        timeout: T,
    };
    let mut stream = d.exec("busy", req).await.unwrap();
    assert!(matches!(stream.next().await, Some(RunEvent::Output { .. })), "the run is under way");
    d.stop("busy").await.unwrap();
    let run =
        tokio::time::timeout(Duration::from_secs(10), run_to_end(stream)).await.expect("the run ends with the sandbox");
    let ending = run.unwrap().ending;
    assert!(matches!(ending, RunEnding::CutShort | RunEnding::Killed { .. }), "{ending:?}");
    assert_eq!(d.status("busy").await.unwrap().state, SandboxState::Stopped);
}

#[tokio::test]
async fn a_stopped_sandbox_leaves_no_bwrap_behind() {
    let (d, _dir) = driver();
    stop_ends_a_run_still_in_progress(d.clone()).await;
    let mut left = String::new();
    for _ in 0..50 {
        let ps = std::process::Command::new("sh")
            .args(["-c", "ps -eo stat=,args= | grep -v '^Z' | grep -c 'lens-chat-bus[y] ' || true"])
            .output()
            .unwrap();
        left = String::from_utf8_lossy(&ps.stdout).trim().to_owned();
        if left == "0" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(left, "0", "no bwrap of the stopped sandbox is left");
}

async fn a_run_right_after_a_dropped_one_is_not_swept_away(d: Arc<dyn SandboxDriver>) {
    // Dropping a run (the person's Stop) kills it in the background; the next run may
    // start before that kill ends, and must not be taken for the old run's leftovers.
    for round in 0..40 {
        let req = ExecRequest {
            argv: vec!["sh".into(), "-c".into(), "echo begun; sleep 30".into()],
            env: Default::default(),
            timeout: T,
        };
        let mut stream = d.exec("quick", req).await.unwrap();
        assert!(matches!(stream.next().await, Some(RunEvent::Output { .. })));
        drop(stream);
        // The kill lands within a few milliseconds; the next run starts across that window.
        tokio::time::sleep(Duration::from_micros(round * 250)).await;
        let (out, err, ending) = run(&*d, "quick", "echo next", T).await;
        assert_eq!((out.as_str(), ending), ("next\n", RunEnding::Exited { code: 0 }), "round {round}: {err}");
    }
}

/// The files a run made, as the run's last event before its ending.
async fn files_made(mut stream: lens_sandbox::RunStream) -> Vec<(String, u64)> {
    use futures_util::StreamExt;
    let mut files = Vec::new();
    while let Some(event) = stream.next().await {
        match event {
            RunEvent::Files(f) => files = f.into_iter().map(|e| (e.path, e.size)).collect(),
            RunEvent::Ended(_) => return files,
            _ => {}
        }
    }
    panic!("no ending")
}

/// Hard links and moves between folders (npm's cache, git, `ln`) work in the workspace
/// and in /tmp, in a command and in the Python kernel; the workspace stays the wall.
async fn files_are_linked_and_moved_between_folders(d: Arc<dyn SandboxDriver>) {
    let script = "mkdir -p a b /tmp/x /tmp/y && echo x > a/f && ln a/f b/linked && stat -c %h b/linked \
                  && python3 -c \"import os; os.rename('a/f', 'b/moved'); print(sorted(os.listdir('b')))\" \
                  && echo t > /tmp/x/t && ln /tmp/x/t /tmp/y/t && echo tmp";
    let (out, err, ending) = run(&*d, "links", script, T).await;
    assert_eq!((out.as_str(), ending), ("2\n['linked', 'moved']\ntmp\n", RunEnding::Exited { code: 0 }), "{err}");
    let code =
        "import os\nos.link('b/moved', 'a/again')\nos.rename('a/again', 'again')\nprint(os.stat('again').st_nlink)";
    let (out, err, _) = python(&*d, "links", code).await;
    assert_eq!(out, "3\n", "{err}");
    // Out of the workspace it is refused still: nothing outside may be written.
    let (_, err, ending) = run(&*d, "links", "ln again /etc/lens-linked", T).await;
    assert_ne!(ending, RunEnding::Exited { code: 0 }, "{err}");
    assert_eq!(run(&*d, "links", "echo next", T).await.0, "next\n");
}

async fn runs_report_the_files_they_made_or_changed(d: Arc<dyn SandboxDriver>) {
    let script = "echo x > made.txt; mkdir -p out; echo yy > out/b.csv; echo z > .hidden";
    let req = ExecRequest { argv: vec!["sh".into(), "-c".into(), script.into()], env: Default::default(), timeout: T };
    let made = files_made(d.exec("maker", req).await.unwrap()).await;
    assert_eq!(made, [("made.txt".to_string(), 2), ("out/b.csv".to_string(), 3)]);
    let code = "open('made.txt', 'a').write('more')\nprint('unchanged elsewhere')";
    let made = files_made(d.run_python("maker", code, T).await.unwrap()).await;
    assert_eq!(made, [("made.txt".to_string(), 6)], "only what changed");
    let made = files_made(d.run_python("maker", "print(1)", T).await.unwrap()).await;
    assert!(made.is_empty());
}

#[tokio::test]
async fn workspace_images_and_mount_points_are_roots_alone() {
    use std::os::unix::fs::PermissionsExt;
    let (d, dir) = driver();
    run(&*d, "private", "echo hi > f", T).await;
    d.stop("private").await.unwrap();
    let mode = |p: &str| std::fs::metadata(dir.path().join(p)).unwrap().permissions().mode() & 0o777;
    assert_eq!((mode("sandboxes/lens-chat-private.img"), mode("mounts/lens-chat-private")), (0o600, 0o700));
    assert_eq!(mode("mounts"), 0o711, "the sandbox's user may pass through the mount folder, not list it");
}

fn admitting(max_running: usize, wait: Duration) -> (Arc<LocalDriver>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut options = LocalOptions::new(&dir.path().join("sandboxes"), &agent());
    options.admission =
        lens_sandbox::AdmissionLimits { max_running, max_memory_bytes: 64 << 30, wait, per_person: max_running };
    (Arc::new(LocalDriver::new(options).unwrap()), dir)
}

/// With room for one sandbox.
async fn an_idle_sandbox_is_stopped_to_make_room_for_another(d: Arc<dyn SandboxDriver>) {
    run(&*d, "first", "echo kept > f", T).await;
    let (out, _, ending) = run(&*d, "second", "echo second", T).await;
    assert_eq!((out.as_str(), ending), ("second\n", RunEnding::Exited { code: 0 }));
    assert_eq!(d.status("first").await.unwrap().state, SandboxState::Stopped, "the idle one made room");
    let (out, _, _) = run(&*d, "first", "cat f", T).await;
    assert_eq!(out, "kept\n", "and starts again, its files kept");
}

/// With room for one sandbox and a wait of 3 s.
async fn a_start_with_no_room_waits_in_line_and_is_refused_after_the_wait(d: Arc<dyn SandboxDriver>) {
    let req = ExecRequest {
        argv: vec!["sh".into(), "-c".into(), "echo busy; sleep 30".into()],
        env: Default::default(),
        timeout: T,
    };
    let mut busy = d.exec("busy", req).await.unwrap();
    assert!(matches!(busy.next().await, Some(RunEvent::Output { .. })));
    let late = {
        let d = d.clone();
        tokio::spawn(async move {
            run_to_end(
                d.exec("late", ExecRequest { argv: vec!["true".into()], env: Default::default(), timeout: T }).await?,
            )
            .await
        })
    };
    let mut place = None;
    for _ in 0..100 {
        place = d.queued("late").await;
        if place.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(place, Some(1), "the late start waits, first in line");
    let refused = late.await.unwrap().unwrap_err();
    assert!(matches!(&refused, SandboxError::Busy(m) if m.contains("no sandbox was free within 3 s")), "{refused:?}");
    assert_eq!(d.queued("late").await, None);
    drop(busy);
    // Once the busy run is over, its sandbox is idle and gives way.
    let (out, _, _) = run(&*d, "late", "echo in", T).await;
    assert_eq!(out, "in\n");
}

/// With room for one sandbox: two conversations taking turns stop each other's sandbox
/// to make room, and no run is ever stopped under it (a call that was handed a sandbox
/// holds it until its run is sent).
async fn conversations_taking_turns_in_one_room_lose_no_run(d: Arc<dyn SandboxDriver>) {
    let mut tasks = Vec::new();
    for chat in ["turna", "turnb"] {
        let d = d.clone();
        tasks.push(tokio::spawn(async move {
            let mut failed = Vec::new();
            for i in 0..8 {
                let (out, err, ending) = run(&*d, chat, &format!("echo {chat}{i}"), T).await;
                if out.trim() != format!("{chat}{i}") || ending != (RunEnding::Exited { code: 0 }) {
                    failed.push(format!("{chat} run {i}: {ending:?} {err}"));
                }
            }
            failed
        }));
    }
    for task in tasks {
        let failed = task.await.unwrap();
        assert!(failed.is_empty(), "{failed:?}");
    }
}

/// With room for one sandbox: a file on its way into one conversation's sandbox keeps it
/// from being stopped to make room for another; the other waits for the file to land.
/// (Taking turns above rarely meets that window; a 48 MiB file keeps it open.)
async fn a_sandbox_taking_a_file_is_not_stopped_to_make_room(d: Arc<dyn SandboxDriver>) {
    run(&*d, "giving", "true", T).await;
    let bytes: Vec<u8> = (0..48u32 << 20).map(|i| (i % 251) as u8).collect();
    let put = {
        let (d, bytes) = (d.clone(), bytes.clone());
        tokio::spawn(async move { d.put_file("giving", "big.bin", bytes).await })
    };
    // Once the file has begun to arrive (its part file is there), the call holds its sandbox.
    eventually("the file beginning to arrive", Duration::from_secs(60), || async {
        let (seen, _, _) = run(&*d, "giving", "test -e .big.bin.lens-tmp -o -e big.bin && echo yes", T).await;
        (seen == "yes\n").then_some(())
    })
    .await;
    let (out, err, _) = run(&*d, "taking", "echo in", T).await;
    assert_eq!(out, "in\n", "{err}");
    put.await.unwrap().expect("the file went in whole, its sandbox was not stopped under it");
    let back = d.get_file("giving", "big.bin", 64 << 20).await.unwrap();
    assert!(back == bytes, "the file came back as it went in ({} bytes of {})", back.len(), bytes.len());
}

/// Waits until the driver's pool holds `n` sandboxes.
async fn pool_reaches(d: &LocalDriver, n: usize) {
    for _ in 0..400 {
        if d.pooled() == n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the pool holds {} sandboxes, not {n}", d.pooled());
}

#[tokio::test]
async fn a_new_conversation_gets_a_pre_started_sandbox_and_keeps_its_files() {
    let (d, dir) = admitting(8, T);
    d.set_pool_size(1);
    d.keep_pool();
    pool_reaches(&d, 1).await;
    assert_eq!(d.admitted().0, 1, "the pool counts against admission");
    let (out, _, _) = python(&*d, "pooled", "import os\nprint(os.getpid() > 1)").await;
    assert_eq!(out, "True\n");
    assert_eq!(d.status("pooled").await.unwrap().state, SandboxState::Running);
    pool_reaches(&d, 1).await; // filled again for the next new conversation
    run(&*d, "pooled", "echo mine > f", T).await;
    d.stop("pooled").await.unwrap();
    assert_eq!(d.status("pooled").await.unwrap().state, SandboxState::Stopped);
    assert!(d.list().await.unwrap().iter().any(|s| s.chat_id == "pooled"), "listed under its own name");
    let (out, _, _) = run(&*d, "pooled", "cat f", T).await;
    assert_eq!(out, "mine\n", "its files came back under its own name");
    // A conversation with files of its own never takes a pre-started sandbox.
    d.stop("pooled").await.unwrap();
    let before = d.pooled();
    run(&*d, "pooled", "true", T).await;
    assert_eq!(d.pooled(), before);
    drop(d);
    let left: Vec<String> = std::fs::read_dir(dir.path().join("sandboxes"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("lens-pool-"))
        .collect();
    assert!(left.is_empty(), "the pool leaves nothing behind: {left:?}");
}

#[tokio::test]
async fn the_pool_grows_while_new_conversations_come() {
    // A crowd: each new conversation takes a ready sandbox, and the pool keeps as many
    // ready as came lately (a fixed pool of one left all but the first to start cold).
    let (d, dir) = admitting(16, T);
    d.set_pool_size(1);
    d.keep_pool();
    pool_reaches(&d, 1).await;
    for i in 0..4 {
        let (out, _, _) = run(&*d, &format!("crowd{i}"), "echo in", T).await;
        assert_eq!(out, "in\n");
    }
    assert_eq!(d.pool_target(), 4);
    pool_reaches(&d, 4).await;
    // Given back (as when the crowd has passed): nothing of the unclaimed ones stays.
    // A sandbox leaves the pool before its tear-down ends: its image goes a moment later.
    d.set_pool_size(0);
    pool_reaches(&d, 0).await;
    let images = || -> Vec<String> {
        std::fs::read_dir(dir.path().join("sandboxes"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("lens-pool-"))
            .collect()
    };
    for _ in 0..400 {
        if images().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(images().is_empty(), "{:?}", images());
    d.set_pool_size(1);
    // A conversation already known does not count: its workspace is its own.
    d.stop("crowd0").await.unwrap();
    run(&*d, "crowd0", "true", T).await;
    assert_eq!(d.pool_target(), 4);
}

#[tokio::test]
async fn the_pool_gives_way_to_a_start_that_needs_its_room() {
    let (d, _dir) = admitting(1, T);
    run(&*d, "owner", "echo x > f", T).await;
    d.stop("owner").await.unwrap();
    d.set_pool_size(1);
    d.keep_pool();
    pool_reaches(&d, 1).await;
    // A conversation with files of its own cannot use the pool: the pool makes room.
    let (out, _, ending) = run(&*d, "owner", "cat f", T).await;
    assert_eq!((out.as_str(), ending), ("x\n", RunEnding::Exited { code: 0 }));
    assert_eq!((d.pooled(), d.admitted().0), (0, 1), "the pre-started sandbox gave its room");
}

/// Every scenario above, on both drivers: the gateway's on the fake, and on NVIDIA's real
/// gateway where it runs.
macro_rules! both {
    ($($name:ident $(($max:expr, $wait:expr))?),* $(,)?) => {
        mod on_local {
            use super::*;
            $(
                #[tokio::test]
                async fn $name() {
                    let (d, _keep) = local(both!(@settings $(($max, $wait))?)).await;
                    super::$name(d).await;
                }
            )*
        }
        mod on_gateway {
            use super::*;
            $(
                #[tokio::test]
                async fn $name() {
                    let (d, _keep) = gateway(both!(@settings $(($max, $wait))?)).await;
                    super::$name(d).await;
                }
            )*
        }
        mod on_real_gateway {
            use super::*;
            $(
                #[tokio::test]
                async fn $name() {
                    let Some((d, _keep)) = real_gateway(both!(@settings $(($max, $wait))?)).await else { return };
                    super::$name(d.clone()).await;
                    d.shutdown().await;
                }
            )*
        }
    };
    (@settings) => { settings(8, T) };
    (@settings ($max:expr, $wait:expr)) => { settings($max, $wait) };
}

both!(
    lifecycle_files_and_runs,
    conversations_do_not_see_each_other,
    time_outs_and_dropped_runs_end_the_whole_tree,
    bad_names_and_paths_are_refused,
    python_keeps_its_names_between_runs_and_sees_the_same_files,
    stop_ends_a_run_still_in_progress,
    a_file_of_any_size_goes_in_and_out_in_parts_and_the_sandbox_goes_on,
    a_run_right_after_a_dropped_one_is_not_swept_away,
    runs_report_the_files_they_made_or_changed,
    files_are_linked_and_moved_between_folders,
    an_idle_sandbox_is_stopped_to_make_room_for_another(1, T),
    a_start_with_no_room_waits_in_line_and_is_refused_after_the_wait(1, Duration::from_secs(3)),
    conversations_taking_turns_in_one_room_lose_no_run(1, Duration::from_secs(60)),
    a_sandbox_taking_a_file_is_not_stopped_to_make_room(1, Duration::from_secs(60)),
);
