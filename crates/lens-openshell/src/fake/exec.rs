//! How the fake runs a command: for real, as the gateway does, its command line (see
//! `remote_command.rs`) through the sandbox's shell, its output streamed as exec events
//! and exactly one exit event last. A shell killed by a signal reports no exit status,
//! and the stream ends UNAVAILABLE, as the gateway's SSH relay ends it. Contained, the
//! container's bubblewrap reports such a death as 128 + the signal, as an exit.

use std::{
    path::{Path, PathBuf},
    process::Stdio,
    sync::Arc,
    time::Duration,
};

use tokio::{
    io::{AsyncRead, AsyncReadExt, AsyncWriteExt},
    sync::mpsc,
};
use tonic::Status;

use super::State;
use crate::proto::openshell::v1::{
    ExecSandboxEvent, ExecSandboxExit, ExecSandboxRequest, ExecSandboxStderr, ExecSandboxStdout,
    exec_sandbox_event::Payload,
};

/// How long output may keep coming after the command ended (a process it left behind
/// may hold the pipes).
const PIPE_GRACE: Duration = Duration::from_secs(1);

/// The gateway's exit code for a command it ended at its time limit.
const TIMED_OUT: i32 = 124;

type Events = mpsc::Sender<Result<ExecSandboxEvent, Status>>;

pub(crate) struct Job {
    pub sandbox: String,
    pub home: PathBuf,
    /// The command line the shell runs (`cd ... && K=v 'arg' ...`).
    pub line: String,
    /// The sandbox's own environment, from its spec.
    pub env: std::collections::HashMap<String, String>,
    /// The sandbox's container, when the fake contains.
    pub container: Option<Arc<super::container::Container>>,
    /// In a container, what puts the filesystem policy in force first.
    pub landlock: Option<Vec<String>>,
    pub request: ExecSandboxRequest,
    /// Whether the end of the caller's input ends the command: an interactive exec's does,
    /// as the gateway follows the input's EOF with closing the command's SSH channel.
    pub input_end_kills: bool,
}

/// Where `requested` (a path inside, as the sandbox sees it) is when the fake runs
/// commands on this machine: `/sandbox` is the sandbox's folder.
pub(crate) fn on_host(home: &Path, requested: &str) -> String {
    match requested.strip_prefix("/sandbox") {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => format!("{}{rest}", home.display()),
        _ => requested.to_owned(),
    }
}

/// The supervisor stand-in: whether a command runs in the sandbox (its container, when
/// the fake contains), as the gateway's supervisor must before the sandbox is READY.
pub(crate) async fn supervisor_connects(home: &Path, container: Option<&super::container::Container>) -> bool {
    let probe = ["/bin/bash".to_owned(), "-c".to_owned(), "exit 0".to_owned()];
    let mut cmd = match container {
        Some(container) => container.command(home, "/sandbox", None, &probe),
        None => {
            let mut cmd = tokio::process::Command::new(&probe[0]);
            cmd.args(&probe[1..]).current_dir(home);
            cmd
        }
    };
    cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null()).kill_on_drop(true);
    let ran = tokio::time::timeout(Duration::from_secs(60), cmd.status()).await;
    matches!(ran, Ok(Ok(status)) if status.success())
}

/// What the gateway says when a command ends without an exit status.
const NO_EXIT_STATUS: &str = "exec relay closed before the command reported an exit status";

/// Kills a command's whole process group.
pub(crate) fn kill_group(pgid: i32) {
    let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pgid), nix::sys::signal::Signal::SIGKILL);
}

fn event(payload: Payload) -> Result<ExecSandboxEvent, Status> {
    Ok(ExecSandboxEvent { payload: Some(payload) })
}

/// Starts the command and a task that streams it to `events`.
pub(crate) fn spawn(
    state: Arc<State>,
    job: Job,
    mut input: mpsc::Receiver<Vec<u8>>,
    events: Events,
) -> Result<(), Status> {
    let r = &job.request;
    // bash, as a sandbox image's user shell is: it runs the line's last command in its
    // own place, so that command's death by a signal is the shell's (no exit status).
    let shell = ["/bin/bash".to_owned(), "-c".to_owned(), job.line.clone()];
    let (mut cmd, home) = match &job.container {
        Some(container) => {
            (container.command(&job.home, "/sandbox", job.landlock.as_deref(), &shell), PathBuf::from("/sandbox"))
        }
        None => {
            let mut cmd = tokio::process::Command::new(&shell[0]);
            cmd.args(&shell[1..]).current_dir(&job.home);
            (cmd, job.home.clone())
        }
    };
    cmd.env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", &home)
        .env("LANG", "C.UTF-8")
        .envs(&job.env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let timeout = r.execution_timeout.and_then(|d| Duration::try_from(d).ok()).filter(|d| !d.is_zero());
    let mut child = cmd.spawn().map_err(|e| Status::unavailable(format!("the sandbox's shell did not start: {e}")))?;
    let pgid = child.id().map(|p| p as i32).ok_or_else(|| Status::internal("the command ended at once"))?;
    state.track(&job.sandbox, pgid, true);
    let mut drops = state.drops();
    drops.borrow_and_update();
    let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let input_end_kills = job.input_end_kills;
    tokio::spawn(async move {
        if let Some(mut stdin) = stdin {
            while let Some(bytes) = input.recv().await {
                if stdin.write_all(&bytes).await.is_err() {
                    return;
                }
            }
            // Dropped here: EOF for the command.
        }
        if input_end_kills {
            kill_group(pgid);
        }
    });
    let readers = [
        stdout.map(|o| tokio::spawn(pump(o, events.clone(), false, pgid))),
        stderr.map(|e| tokio::spawn(pump(e, events.clone(), true, pgid))),
    ];
    tokio::spawn(async move {
        let sleep = async {
            match timeout {
                Some(t) => tokio::time::sleep(t).await,
                None => std::future::pending().await,
            }
        };
        let code = tokio::select! {
            status = child.wait() => status.ok().and_then(|s| s.code()),
            () = sleep => {
                kill_group(pgid);
                let _ = child.wait().await;
                Some(TIMED_OUT)
            }
            _ = drops.changed() => {
                kill_group(pgid);
                state.track(&job.sandbox, pgid, false);
                let _ = events.send(Err(Status::unavailable("the exec stream was dropped (fault injected)"))).await;
                return;
            }
            () = events.closed() => {
                // The caller went away: nothing it started may go on.
                kill_group(pgid);
                state.track(&job.sandbox, pgid, false);
                return;
            }
        };
        for reader in readers.into_iter().flatten() {
            let abort = reader.abort_handle();
            if tokio::time::timeout(PIPE_GRACE, reader).await.is_err() {
                abort.abort();
            }
        }
        state.track(&job.sandbox, pgid, false);
        let end = match code {
            Some(exit_code) => event(Payload::Exit(ExecSandboxExit { exit_code })),
            None => Err(Status::unavailable(NO_EXIT_STATUS)),
        };
        let _ = events.send(end).await;
    });
    Ok(())
}

/// Streams one pipe as events; a caller gone kills the command.
async fn pump(mut pipe: impl AsyncRead + Unpin, events: Events, stderr: bool, pgid: i32) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let data = buf[..n].to_vec();
        let payload = if stderr {
            Payload::Stderr(ExecSandboxStderr { data })
        } else {
            Payload::Stdout(ExecSandboxStdout { data })
        };
        if events.send(event(payload)).await.is_err() {
            kill_group(pgid);
            return;
        }
    }
}
