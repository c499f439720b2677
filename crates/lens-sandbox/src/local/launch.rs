//! Starting a sandbox: the bwrap command line, the agent as its first process, and
//! the checks before the sandbox is moved into its cgroup and asked anything.

use super::*;

impl LocalDriver {
    pub(super) fn bwrap_args(&self, workspace: &Path, limits: &Limits, bundle: &Path) -> Vec<String> {
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
        // The system's authorities and the sandbox's own (the read-only registry proxy's),
        // where pip, npm, Python and curl look by default and by the variables set.
        push(&["--ro-bind", &bundle.to_string_lossy(), SYSTEM_BUNDLE]);
        push(&["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/dev/shm"]);
        let ws = workspace.to_string_lossy().into_owned();
        let agent = self.agent.to_string_lossy().into_owned();
        push(&["--bind", &ws, "/workspace", "--ro-bind", &agent, "/.lens/agent"]);
        push(&["--chdir", "/workspace", "--remount-ro", "/", "--", "/.lens/agent", "--root", "/workspace"]);
        push(&["--own-pid-namespace", "--proxy"]);
        push(&["--max-file-bytes", &limits.disk_bytes.to_string()]);
        a
    }

    pub(super) async fn start(&self, chat_id: &str, name: &str) -> Result<Arc<Running>, SandboxError> {
        let limits = self.limits();
        // Room first: the host is never asked for more than the limits allow.
        let ticket =
            self.admission.admit(name, chat_id, limits.memory_bytes, |only| self.stop_idle(name, only)).await?;
        self.launch(chat_id, name, limits, ticket).await
    }

    /// Starts sandbox `name` in the room `ticket` holds.
    pub(super) async fn launch(
        &self,
        chat_id: &str,
        name: &str,
        limits: Limits,
        ticket: Ticket,
    ) -> Result<Arc<Running>, SandboxError> {
        let workspace = self.workspace(name);
        let owner = if running_as_root() { self.host_uid } else { nix::unistd::getuid().as_raw() };
        let (cgroups, name_owned, ws) = (self.cgroups.clone(), name.to_owned(), workspace.clone());
        // Mounting and cgroup files are blocking work.
        let cgroup = tokio::task::spawn_blocking(move || {
            ws.mount(limits.disk_bytes, owner)?;
            cgroups.create(&name_owned, &limits)
        })
        .await
        .map_err(backend)??;
        let ca = Arc::new(SandboxCa::new()?);
        let bundle = bundle_path(&workspace.dir);
        write_bundle(&bundle, ca.cert_pem()).map_err(|e| backend(format!("writing {}: {e}", bundle.display())))?;
        let env = limits.sandbox_env("/workspace");
        let mut cmd = tokio::process::Command::new("bwrap");
        cmd.args(self.bwrap_args(&workspace.dir, &limits, &bundle)).env_clear().envs(env.iter().cloned());
        // As root, bwrap drops to the unprivileged host user; a non-root Lens is already one.
        if running_as_root() {
            cmd.uid(self.host_uid).gid(self.host_uid);
        }
        // The sandbox's user may not be able to enter the folder Lens runs in.
        cmd.current_dir("/");
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
        let mut child = cmd.spawn().map_err(|e| SandboxError::Unavailable(format!("bwrap could not start: {e}")))?;
        let stdin = child.stdin.take().ok_or_else(|| backend("no stdin"))?;
        let mut stdout = child.stdout.take().ok_or_else(|| backend("no stdout"))?;
        let said = first_words(child.stderr.take().ok_or_else(|| backend("no stderr"))?);
        // The agent's first frame says it is confined; until then nothing else runs inside,
        // so the whole tree can be moved into the cgroup without a race.
        let first = tokio::time::timeout(START_TIMEOUT, read_reply(&mut stdout)).await;
        let confinement = match first {
            Ok(Some(Reply::Ready { landlock_abi, landlock_full, seccomp, .. })) => {
                let pid = child.id().ok_or_else(|| gone("it ended while starting"))?;
                for pid in process_tree(pid) {
                    cgroup.add(pid).map_err(|e| backend(format!("cannot move the sandbox into its cgroup: {e}")))?;
                }
                (landlock_abi, landlock_full, seccomp)
            }
            other => {
                let _ = child.start_kill();
                cgroup.remove();
                let _ = std::fs::remove_file(&bundle);
                workspace.unmount();
                return Err(SandboxError::Unavailable(match other {
                    Ok(Some(Reply::Failed { message, .. })) => message,
                    // bwrap's own words say why (a folder it cannot reach, namespaces
                    // that are not allowed here), rather than a guess.
                    Ok(_) => match tokio::time::timeout(SAID_WAIT, said).await {
                        Ok(Ok(words)) if !words.trim().is_empty() => {
                            format!("the sandbox ended while starting: {}", words.trim())
                        }
                        _ => "the sandbox ended while starting, without saying why".into(),
                    },
                    Err(_) => "the sandbox did not start in time".into(),
                }));
            }
        };
        // Proxy frames go out in order through the link's one writer; the queue is
        // bounded, so a remote host that sends faster than the sandbox reads waits on its
        // socket.
        let (outbox, mut frames) = mpsc::channel::<Request>(NET_QUEUE);
        let active: Arc<AtomicUsize> = Arc::default();
        let shared = RelayShared {
            network: self.network.clone(),
            log: self.egress_log.clone(),
            active: active.clone(),
            ca,
            chat_hosts: self.chat_hosts.clone(),
        };
        let relay = Relay::new(chat_id.to_owned(), outbox, shared);
        let to_relay = relay.clone();
        let link = AgentLink::start(stdout, stdin, move |reply| match reply {
            Reply::NetConnect { id, method, target } => to_relay.connect(id, method, target),
            Reply::NetData { id, data } => to_relay.data(id, data),
            Reply::NetClose { id } => to_relay.close(id),
            _ => {}
        });
        let writer = Arc::downgrade(&link);
        tokio::spawn(async move {
            while let Some(frame) = frames.recv().await {
                let Some(link) = writer.upgrade() else { break };
                if link.write(&frame).await.is_err() {
                    break;
                }
            }
        });
        let running = Arc::new(Running {
            child: Mutex::new(child),
            link,
            cgroup,
            workspace: Mutex::new(workspace),
            limits,
            env,
            confinement,
            tenancy: Tenancy::new(ticket, active),
            relay,
        });
        Ok(running)
    }
}

/// Where the system's certificate bundle is, outside and inside the sandbox.
const SYSTEM_BUNDLE: &str = "/etc/ssl/certs/ca-certificates.crt";

/// The sandbox's bundle, beside its workspace's mount point (never inside the workspace,
/// where its programs could change it).
pub(super) fn bundle_path(mount_point: &Path) -> PathBuf {
    let mut name = mount_point.file_name().unwrap_or_default().to_os_string();
    name.push(".ca-bundle.pem");
    mount_point.with_file_name(name)
}

/// The system's bundle and the sandbox's authority, written whole (then renamed), readable
/// by the sandbox's user.
fn write_bundle(path: &Path, ca_pem: &str) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    // The host's bundle, read once (every sandbox start writes a bundle).
    static SYSTEM: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let system = SYSTEM.get_or_init(|| {
        let mut text = std::fs::read_to_string(SYSTEM_BUNDLE).unwrap_or_default();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text
    });
    let text = format!("{system}{ca_pem}");
    let part = path.with_extension("part");
    std::fs::write(&part, text)?;
    std::fs::set_permissions(&part, std::fs::Permissions::from_mode(0o644))?;
    std::fs::rename(&part, path)
}

/// How long a sandbox that ended while starting is given to finish saying why.
const SAID_WAIT: Duration = Duration::from_secs(5);

/// What bwrap (and then the agent) writes to stderr: the first few lines are kept for a
/// start that fails, the rest is read and dropped so a chatty sandbox never blocks on it.
fn first_words(mut stderr: tokio::process::ChildStderr) -> tokio::task::JoinHandle<String> {
    use tokio::io::AsyncReadExt;
    const KEPT: usize = 2048;
    tokio::spawn(async move {
        let mut kept = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = stderr.read(&mut buf).await {
            if n == 0 {
                break;
            }
            let room = KEPT.saturating_sub(kept.len());
            kept.extend_from_slice(&buf[..n.min(room)]);
        }
        String::from_utf8_lossy(&kept).into_owned()
    })
}
