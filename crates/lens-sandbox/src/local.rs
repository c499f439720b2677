//! `LocalDriver`: one bubblewrap process tree per running sandbox, with the agent as its
//! first process.
//!
//! bwrap runs as an unprivileged host user (never root), builds a user namespace in which
//! the sandbox is uid 1000, and new pid, ipc, uts, network and cgroup namespaces: the
//! network namespace has only loopback. `/usr` is read-only, `/tmp` a tmpfs, the
//! workspace the only writable host folder, and nothing of Lens's data directory,
//! secrets or environment is mounted or passed in.
//!
//! Still to come (see the sandbox issue): cgroup limits, the disk quota, Landlock and
//! seccomp in the agent, and the egress proxy.

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    process::Stdio,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use base64::{Engine, engine::general_purpose::STANDARD as B64};
use lens_sandbox_agent::protocol::{Reply, Request};
use lens_types::RunEnding;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    process::{Child, ChildStdin},
    sync::mpsc,
};

use crate::{
    ExecRequest, FileEntry, RunEvent, RunStream, SandboxDriver, SandboxError, SandboxInfo, SandboxState, sandbox_name,
};

/// The host user bwrap runs as (and who owns the workspaces) when Lens runs as root:
/// `nobody`. A Lens run by another user runs its sandboxes as that user.
pub const DEFAULT_HOST_UID: u32 = 65534;

/// Host files the sandbox may read besides `/usr`: enough for Python, TLS and fonts, and
/// nothing that says anything about the host or Lens.
const ETC_READ_ONLY: &[&str] = &[
    "/etc/ld.so.cache",
    "/etc/alternatives",
    "/etc/ssl/certs",
    "/etc/ca-certificates",
    "/etc/localtime",
    "/etc/matplotlibrc",
    "/etc/python3",
    "/etc/python3.11",
    "/etc/fonts",
    "/etc/mime.types",
];

/// The environment of every command in a sandbox.
const BASE_ENV: &[(&str, &str)] = &[
    ("PATH", "/usr/local/bin:/usr/bin:/bin"),
    ("HOME", "/workspace"),
    ("USER", "sandbox"),
    ("LANG", "C.UTF-8"),
    ("TMPDIR", "/tmp"),
    ("MPLBACKEND", "Agg"),
    ("MPLCONFIGDIR", "/workspace/.cache/matplotlib"),
    ("OMP_NUM_THREADS", "1"),
    ("OPENBLAS_NUM_THREADS", "1"),
];

/// A running sandbox: its bwrap child and the agent's request pipe.
struct Running {
    /// Behind a lock so `stop` can kill it while runs still hold the `Running`.
    child: Mutex<Child>,
    /// The agent's requests; `None` once stopped (the agent ends when it reads EOF).
    stdin: tokio::sync::Mutex<Option<ChildStdin>>,
    waiting: Arc<Mutex<HashMap<u64, mpsc::UnboundedSender<Reply>>>>,
}

/// The local driver.
pub struct LocalDriver {
    root: PathBuf,
    agent: PathBuf,
    host_uid: u32,
    next_id: AtomicU64,
    running: tokio::sync::Mutex<HashMap<String, Arc<Running>>>,
}

impl LocalDriver {
    /// `root` holds one folder per sandbox; `agent` is the agent binary on the host.
    pub fn new(root: &Path, agent: &Path, host_uid: u32) -> Result<Self, SandboxError> {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(root).map_err(backend)?;
        // The host user must be able to pass through to its own workspaces, and no further.
        std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o711)).map_err(backend)?;
        if !agent.is_file() {
            return Err(SandboxError::Unavailable(format!("the sandbox agent is missing at {}", agent.display())));
        }
        Ok(Self {
            root: root.to_owned(),
            agent: agent.to_owned(),
            host_uid,
            next_id: AtomicU64::new(1),
            running: tokio::sync::Mutex::default(),
        })
    }

    fn workspace(&self, name: &str) -> PathBuf {
        self.root.join(name)
    }

    fn bwrap_args(&self, workspace: &Path) -> Vec<String> {
        let mut a: Vec<String> = Vec::new();
        let mut push = |xs: &[&str]| a.extend(xs.iter().map(|s| s.to_string()));
        push(&["--unshare-user", "--uid", "1000", "--gid", "1000", "--disable-userns"]);
        push(&["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net", "--unshare-cgroup-try"]);
        push(&["--hostname", "sandbox", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]);
        push(&["--ro-bind", "/usr", "/usr"]);
        push(&["--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib"]);
        push(&["--symlink", "usr/lib64", "/lib64", "--symlink", "usr/sbin", "/sbin"]);
        for p in ETC_READ_ONLY {
            push(&["--ro-bind-try", p, p]);
        }
        push(&["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/dev/shm"]);
        let ws = workspace.to_string_lossy().into_owned();
        let agent = self.agent.to_string_lossy().into_owned();
        push(&["--bind", &ws, "/workspace", "--ro-bind", &agent, "/.lens/agent"]);
        push(&["--chdir", "/workspace", "--remount-ro", "/", "--", "/.lens/agent", "--root", "/workspace"]);
        a
    }

    async fn start(&self, name: &str) -> Result<Arc<Running>, SandboxError> {
        let workspace = self.workspace(name);
        if !workspace.exists() {
            std::fs::create_dir_all(&workspace).map_err(backend)?;
            if running_as_root() {
                std::os::unix::fs::chown(&workspace, Some(self.host_uid), Some(self.host_uid)).map_err(backend)?;
            }
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&workspace, std::fs::Permissions::from_mode(0o700)).map_err(backend)?;
        }
        let mut cmd = tokio::process::Command::new("bwrap");
        cmd.args(self.bwrap_args(&workspace)).env_clear().envs(BASE_ENV.iter().copied());
        // As root, bwrap drops to the unprivileged host user; a non-root Lens is already one.
        if running_as_root() {
            cmd.uid(self.host_uid).gid(self.host_uid);
        }
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).kill_on_drop(true);
        let mut child = cmd.spawn().map_err(|e| SandboxError::Unavailable(format!("bwrap could not start: {e}")))?;
        let stdin = child.stdin.take().ok_or_else(|| backend("no stdin"))?;
        let mut stdout = child.stdout.take().ok_or_else(|| backend("no stdout"))?;
        let waiting: Arc<Mutex<HashMap<u64, mpsc::UnboundedSender<Reply>>>> = Arc::default();
        let routes = waiting.clone();
        // Replies go to whoever waits for their id; when the agent dies, every waiter hears it.
        tokio::spawn(async move {
            loop {
                let mut len = [0u8; 4];
                if stdout.read_exact(&mut len).await.is_err() {
                    break;
                }
                let len = u32::from_be_bytes(len) as usize;
                if len > lens_sandbox_agent::protocol::MAX_FRAME {
                    break;
                }
                let mut body = vec![0u8; len];
                if stdout.read_exact(&mut body).await.is_err() {
                    break;
                }
                let Ok(reply) = serde_json::from_slice::<Reply>(&body) else {
                    break;
                };
                let id = reply_id(&reply);
                let to = routes.lock().ok().and_then(|w| w.get(&id).cloned());
                if let Some(to) = to {
                    let _ = to.send(reply);
                }
            }
            if let Ok(mut w) = routes.lock() {
                w.clear();
            }
        });
        Ok(Arc::new(Running { child: Mutex::new(child), stdin: tokio::sync::Mutex::new(Some(stdin)), waiting }))
    }

    /// The running sandbox, started if needed.
    async fn running(&self, chat_id: &str) -> Result<Arc<Running>, SandboxError> {
        let name = sandbox_name(chat_id)?;
        let mut all = self.running.lock().await;
        if let Some(r) = all.get(&name) {
            return Ok(r.clone());
        }
        let r = self.start(&name).await?;
        all.insert(name, r.clone());
        Ok(r)
    }

    /// Sends a request; replies for its id arrive on the receiver.
    async fn send(
        &self,
        running: &Running,
        make: impl FnOnce(u64) -> Request,
    ) -> Result<(u64, mpsc::UnboundedReceiver<Reply>), SandboxError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::unbounded_channel();
        running.waiting.lock().map_err(backend)?.insert(id, tx);
        write_request(running, &make(id)).await?;
        Ok((id, rx))
    }

    /// One request, one reply.
    async fn ask(&self, chat_id: &str, make: impl FnOnce(u64) -> Request) -> Result<Reply, SandboxError> {
        let running = self.running(chat_id).await?;
        let (id, mut rx) = self.send(&running, make).await?;
        let reply = rx.recv().await.ok_or_else(|| gone("the sandbox stopped"));
        running.waiting.lock().map_err(backend)?.remove(&id);
        match reply? {
            Reply::Failed { message, .. } => Err(failure(message)),
            other => Ok(other),
        }
    }
}

/// Writes one frame to the agent.
async fn write_request(running: &Running, request: &Request) -> Result<(), SandboxError> {
    let body = serde_json::to_vec(request).map_err(backend)?;
    let mut guard = running.stdin.lock().await;
    let stdin = guard.as_mut().ok_or_else(|| gone("it was stopped"))?;
    stdin.write_all(&(body.len() as u32).to_be_bytes()).await.map_err(gone)?;
    stdin.write_all(&body).await.map_err(gone)?;
    stdin.flush().await.map_err(gone)
}

/// Whether Lens runs as root (the owner of `/proc/self` is the effective uid).
fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").map(|m| m.uid() == 0).unwrap_or(false)
}

fn reply_id(reply: &Reply) -> u64 {
    match reply {
        Reply::Output { id, .. }
        | Reply::Ended { id, .. }
        | Reply::File { id, .. }
        | Reply::Files { id, .. }
        | Reply::Done { id }
        | Reply::Failed { id, .. } => *id,
    }
}

fn backend(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Backend(e.to_string())
}

fn gone(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Backend(format!("the sandbox went away ({e})"))
}

/// The agent's words, mapped to what the caller must decide.
fn failure(message: String) -> SandboxError {
    if message.contains("outside the workspace") {
        SandboxError::BadPath(message)
    } else if message.contains("does not exist") {
        SandboxError::NotFound(message)
    } else {
        SandboxError::Backend(message)
    }
}

#[async_trait::async_trait]
impl SandboxDriver for LocalDriver {
    async fn ensure(&self, chat_id: &str) -> Result<SandboxInfo, SandboxError> {
        self.running(chat_id).await?;
        self.status(chat_id).await
    }

    async fn exec(&self, chat_id: &str, request: ExecRequest) -> Result<RunStream, SandboxError> {
        let running = self.running(chat_id).await?;
        let mut env: Vec<(String, String)> = BASE_ENV.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        env.extend(request.env);
        let timeout_ms = request.timeout.as_millis() as u64;
        let (id, rx) = self.send(&running, |id| Request::Exec { id, argv: request.argv, env, timeout_ms }).await?;
        Ok(run_stream(running, id, rx))
    }

    async fn run_python(&self, chat_id: &str, code: &str, timeout: Duration) -> Result<RunStream, SandboxError> {
        let running = self.running(chat_id).await?;
        let env: Vec<(String, String)> = BASE_ENV.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let timeout_ms = timeout.as_millis() as u64;
        let (id, rx) = self.send(&running, |id| Request::Python { id, code: code.to_owned(), env, timeout_ms }).await?;
        Ok(run_stream(running, id, rx))
    }

    async fn put_file(&self, chat_id: &str, path: &str, bytes: Vec<u8>) -> Result<(), SandboxError> {
        let data = B64.encode(bytes);
        self.ask(chat_id, |id| Request::WriteFile { id, path: path.to_owned(), data }).await.map(|_| ())
    }

    async fn get_file(&self, chat_id: &str, path: &str, max_bytes: u64) -> Result<Vec<u8>, SandboxError> {
        match self.ask(chat_id, |id| Request::ReadFile { id, path: path.to_owned(), max_bytes }).await? {
            Reply::File { data, .. } => B64.decode(data).map_err(backend),
            other => Err(backend(format!("unexpected reply {other:?}"))),
        }
    }

    async fn list_files(&self, chat_id: &str, path: &str) -> Result<Vec<FileEntry>, SandboxError> {
        match self.ask(chat_id, |id| Request::ListFiles { id, path: path.to_owned() }).await? {
            Reply::Files { entries, .. } => {
                Ok(entries.into_iter().map(|e| FileEntry { path: e.path, size: e.size, is_dir: e.is_dir }).collect())
            }
            other => Err(backend(format!("unexpected reply {other:?}"))),
        }
    }

    async fn stop(&self, chat_id: &str) -> Result<(), SandboxError> {
        let name = sandbox_name(chat_id)?;
        let taken = self.running.lock().await.remove(&name);
        if let Some(running) = taken {
            // Closing its input ends the agent, and with it the sandbox's first process and
            // pid namespace; that works even if bwrap has not finished setting up, when a
            // kill of bwrap alone could leave the sandbox behind. Runs still following it
            // then see their stream end.
            running.stdin.lock().await.take();
            if let Ok(mut child) = running.child.lock() {
                let _ = child.start_kill();
            }
        }
        Ok(())
    }

    async fn delete(&self, chat_id: &str) -> Result<(), SandboxError> {
        self.stop(chat_id).await?;
        let workspace = self.workspace(&sandbox_name(chat_id)?);
        match std::fs::remove_dir_all(&workspace) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(backend(e)),
        }
    }

    async fn status(&self, chat_id: &str) -> Result<SandboxInfo, SandboxError> {
        let name = sandbox_name(chat_id)?;
        let running = self.running.lock().await.contains_key(&name);
        let workspace = self.workspace(&name);
        let state = if running {
            SandboxState::Running
        } else if workspace.exists() {
            SandboxState::Stopped
        } else {
            SandboxState::Absent
        };
        Ok(SandboxInfo { name, chat_id: chat_id.to_owned(), state, disk_bytes: disk_usage(&workspace) })
    }

    async fn list(&self) -> Result<Vec<SandboxInfo>, SandboxError> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(&self.root).map_err(backend)?.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(chat_id) = name.strip_prefix("lens-chat-") {
                out.push(self.status(chat_id).await?);
            }
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }
}

/// The events of one run; dropping the stream before its end kills the run.
fn run_stream(running: Arc<Running>, id: u64, rx: mpsc::UnboundedReceiver<Reply>) -> RunStream {
    struct Guard {
        running: Arc<Running>,
        id: u64,
        ended: bool,
    }
    impl Drop for Guard {
        fn drop(&mut self) {
            if let Ok(mut w) = self.running.waiting.lock() {
                w.remove(&self.id);
            }
            if !self.ended {
                let running = self.running.clone();
                let id = self.id;
                tokio::spawn(async move {
                    let _ = write_request(&running, &Request::Kill { id }).await;
                });
            }
        }
    }
    let guard = Guard { running, id, ended: false };
    Box::pin(futures_util::stream::unfold((rx, guard), |(mut rx, mut guard)| async move {
        if guard.ended {
            return None;
        }
        let event = loop {
            match rx.recv().await {
                Some(Reply::Output { stream, data, .. }) => {
                    break RunEvent::Output { stream, bytes: B64.decode(data).unwrap_or_default() };
                }
                Some(Reply::Ended { ending, .. }) => {
                    guard.ended = true;
                    break RunEvent::Ended(ending);
                }
                Some(Reply::Failed { message, .. }) => {
                    guard.ended = true;
                    break RunEvent::Failed(message);
                }
                // A run gets only output and its ending; anything else is not for it.
                Some(_) => {}
                // The sandbox died under the run.
                None => {
                    guard.ended = true;
                    break RunEvent::Ended(RunEnding::Killed { signal: 9 });
                }
            }
        };
        Some((event, (rx, guard)))
    }))
}

fn disk_usage(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => disk_usage(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}
