//! `LocalDriver`: one bubblewrap process tree per running sandbox, with the agent as its
//! first process.
//!
//! bwrap runs as an unprivileged host user (never root), builds a user namespace in which
//! the sandbox is uid 1000, and new pid, ipc, uts, network and cgroup namespaces: the
//! network namespace has only loopback. `/usr` is read-only, `/tmp` a tmpfs, the
//! workspace the only writable host folder, and nothing of Lens's data directory,
//! secrets or environment is mounted or passed in.
//!
//! Each running sandbox has its own cgroup (memory, processes, CPU) and its workspace is
//! its own loop-mounted file system (the disk quota). The agent confines itself with
//! Landlock and seccomp and says so in its first frame; only then is the sandbox moved
//! into its cgroup and asked anything.

mod demand;
pub(crate) mod folders;
mod launch;
mod pool;

use std::{
    collections::HashMap,
    path::{Path, PathBuf},
    process::Stdio,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, AtomicUsize, Ordering},
    },
    time::Duration,
};

use lens_sandbox_agent::protocol::{Reply, Request};
use tokio::{process::Child, sync::mpsc};

use crate::{
    AdmissionLimits, DriverSettings, Limits, SandboxDriver, SandboxError, SandboxInfo, SandboxState,
    admission::{Admission, Ticket},
    agent_core::{AgentBackend, Env},
    cgroup::{Cgroups, SandboxCgroup, process_tree},
    link::{AgentLink, backend, gone, read_reply},
    quota::Workspace,
    read_only::SandboxCa,
    relay::{ChatHosts, ChatNetwork, EgressLog, Network, Relay, RelayShared},
    room::{self, Found, Idle, Tenancy},
    run_stream::{InUse, RunHost, run_stream},
    sandbox_name,
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

/// How long a new sandbox may take to report that it is ready.
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// Proxy frames that may wait to be written to the agent; past it, the remote host
/// that sends waits on its socket.
const NET_QUEUE: usize = 64;

/// How long the pool waits after a sandbox was taken before it starts the next.
const REFILL_PAUSE: Duration = Duration::from_secs(1);

/// The names of pre-started sandboxes, before a conversation has them.
const POOL_PREFIX: &str = "lens-pool-";

/// How the local driver is set up.
#[derive(Debug, Clone)]
pub struct LocalOptions {
    /// Holds one workspace image per sandbox.
    pub root: PathBuf,
    /// Where workspaces are mounted while their sandboxes run, beside the agent's copy: a
    /// folder the sandbox's host user can pass through. `None`: under `/run/lens` as root
    /// (see `folders.rs`), else `root`.
    pub mounts: Option<PathBuf>,
    /// The agent binary on the host.
    pub agent: PathBuf,
    /// The host user the sandboxes run as when Lens runs as root.
    pub host_uid: u32,
    pub limits: Limits,
    /// How many sandboxes may run at once, with how much memory together.
    pub admission: AdmissionLimits,
}

impl LocalOptions {
    pub fn new(root: &Path, agent: &Path) -> Self {
        Self {
            root: root.to_owned(),
            mounts: None,
            agent: agent.to_owned(),
            host_uid: DEFAULT_HOST_UID,
            limits: Limits::default(),
            admission: AdmissionLimits::for_host(),
        }
    }
}

/// A running sandbox: its bwrap child and the connection to its agent.
pub(crate) struct Running {
    /// Behind a lock so `stop` can kill it while runs still hold the `Running`.
    child: Mutex<Child>,
    link: Arc<AgentLink>,
    cgroup: SandboxCgroup,
    /// Behind a lock: a pre-started sandbox's image is renamed to its conversation's
    /// when it is given one (its mount point keeps the pool's name until it stops).
    workspace: Mutex<Workspace>,
    /// The limits it was started with (a pre-started one with old limits is not used).
    limits: Limits,
    env: Vec<(String, String)>,
    /// What the agent reported: (Landlock ABI, every right enforced, seccomp applied).
    confinement: (u32, bool, bool),
    tenancy: Tenancy,
    relay: Arc<Relay>,
}

impl Running {
    /// Marks the sandbox dead and kills bwrap (its pid namespace goes with it); what
    /// is left in the cgroup goes with [`tear_down`] or [`Self::kill_from_outside`].
    fn end(&self) {
        self.link.mark_dead();
        if let Ok(mut child) = self.child.lock() {
            let _ = child.start_kill();
        }
    }

    fn workspace(&self) -> Option<Workspace> {
        self.workspace.lock().ok().map(|w| w.clone())
    }
}

impl room::Idle for Running {
    fn is_dead(&self) -> bool {
        self.link.is_dead()
    }

    fn tenancy(&self) -> &Tenancy {
        &self.tenancy
    }
}

type Slot = room::Slot<Running>;

/// The local driver.
pub struct LocalDriver {
    root: PathBuf,
    /// Where workspaces are mounted (see `folders.rs`).
    mounts: PathBuf,
    /// The agent's copy in `mounts`, which the sandbox's user can reach.
    agent: PathBuf,
    host_uid: u32,
    limits: Mutex<Limits>,
    cgroups: Cgroups,
    /// What sandboxes may reach; `None` is no network.
    network: Arc<Mutex<Option<Network>>>,
    egress_log: Arc<EgressLog>,
    /// The hosts each conversation's owner allowed for it.
    chat_hosts: Arc<ChatHosts>,
    admission: Admission,
    /// Pre-started sandboxes no conversation has yet, and how many to keep ready.
    pool: Mutex<Vec<Arc<Running>>>,
    pool_size: AtomicUsize,
    pool_wake: Arc<tokio::sync::Notify>,
    next_pool: AtomicU64,
    /// Held while the pool starts sandboxes: shutting down waits for a start under way,
    /// so none is pooled (and its workspace written) after the driver stopped.
    refilling: tokio::sync::Mutex<()>,
    /// New conversations lately: the pool grows with them.
    demand: demand::Demand,
    /// One slot per sandbox ever touched; a slot is locked while its sandbox starts or
    /// stops, so one conversation's start never waits for another's.
    running: tokio::sync::Mutex<HashMap<String, Slot>>,
}

impl LocalDriver {
    /// Sets up the driver, and cleans up after a previous server on the same folder: its
    /// sandboxes' processes, cgroups and mounts.
    pub fn new(options: LocalOptions) -> Result<Self, SandboxError> {
        use std::os::unix::fs::PermissionsExt;
        let LocalOptions { root, mounts, agent, host_uid, limits, admission } = options;
        std::fs::create_dir_all(&root).map_err(backend)?;
        // Only root opens the images; where mounts are kept here, the host user must be
        // able to pass through to its own workspaces, and no further.
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o711)).map_err(backend)?;
        if !agent.is_file() {
            return Err(SandboxError::Unavailable(format!("the sandbox agent is missing at {}", agent.display())));
        }
        let root = root.canonicalize().map_err(backend)?;
        let (mounts, user) = folders::mounts_and_user(mounts.as_deref(), &root, host_uid);
        let agent = folders::prepare(&mounts, &agent, user)?;
        let cgroups = Cgroups::detect(&cgroup_folder(&root))?;
        cgroups.sweep();
        let driver = Self {
            root,
            mounts,
            agent,
            host_uid,
            limits: Mutex::new(limits),
            cgroups,
            network: Arc::default(),
            egress_log: Arc::default(),
            chat_hosts: Arc::default(),
            admission: Admission::new(admission),
            pool: Mutex::default(),
            pool_size: AtomicUsize::new(0),
            pool_wake: Arc::default(),
            next_pool: AtomicU64::new(1),
            refilling: tokio::sync::Mutex::default(),
            demand: Default::default(),
            running: tokio::sync::Mutex::default(),
        };
        driver.unmount_all();
        folders::forget_old_mount_points(&driver.root, &driver.mounts);
        driver.forget_pool_leftovers();
        Ok(driver)
    }

    /// The limits new sandboxes get.
    pub fn limits(&self) -> Limits {
        self.limits.lock().map(|l| *l).unwrap_or_default()
    }

    /// Changes the limits; sandboxes started from now on get them.
    pub fn set_limits(&self, limits: Limits) {
        if let Ok(mut l) = self.limits.lock() {
            *l = limits;
        }
    }

    /// Changes how many sandboxes may run at once and with how much memory; waiting
    /// starts are looked at again.
    pub fn set_admission(&self, limits: AdmissionLimits) {
        self.admission.set_limits(limits);
    }

    /// Sandboxes running and the memory they may use together, as admission counts them.
    pub fn admitted(&self) -> (usize, u64) {
        self.admission.in_use()
    }

    /// Stops a pre-started sandbox, else the one idle longest (a dead one first), to make
    /// room for `for_name`:
    /// one at a time, so a start takes only the room it needs.
    async fn stop_idle(&self, for_name: &str, only: Option<String>) {
        // A pre-started sandbox is nobody's: it gives way first, but not for a person
        // at their share (that room would go to them).
        let spare = if only.is_none() { self.pool.lock().ok().and_then(|mut p| p.pop()) } else { None };
        if let Some(running) = spare {
            running.end();
            tear_down(running).await;
            return;
        }
        let Some((_, slot)) = room::idlest(&self.running, for_name, only.as_deref()).await else { return };
        let mut live = slot.lock().await;
        if room::may_give_way(&live)
            && let Some(taken) = live.take()
        {
            tracing::info!("stopping an idle sandbox to make room for another");
            taken.end();
            tear_down(taken).await;
        }
    }

    /// Changes what sandboxes may reach (`None`: nothing); runs from now on see it.
    pub fn set_network(&self, network: Option<Network>) {
        if let Ok(mut n) = self.network.lock() {
            *n = network;
        }
    }

    /// The latest egress decisions, newest last.
    pub fn egress_log(&self) -> Vec<crate::egress::EgressDecision> {
        self.egress_log.recent()
    }

    /// Memory charged to a running sandbox now (0 when it is not running).
    pub async fn memory_bytes(&self, chat_id: &str) -> u64 {
        let Ok(name) = sandbox_name(chat_id) else { return 0 };
        self.live(&name).await.map(|r| r.cgroup.memory_bytes()).unwrap_or(0)
    }

    /// What a running sandbox's agent reported about its confinement.
    pub(crate) async fn confinement(&self, chat_id: &str) -> Option<(u32, bool, bool)> {
        let name = sandbox_name(chat_id).ok()?;
        self.live(&name).await.map(|r| r.confinement)
    }

    fn workspace(&self, name: &str) -> Workspace {
        Workspace::new(&self.root, &self.mounts, name)
    }

    /// Unmounts every workspace (on start-up: they belong to sandboxes that are gone).
    fn unmount_all(&self) {
        for entry in std::fs::read_dir(&self.mounts).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if (name.starts_with("lens-chat-") || name.starts_with(POOL_PREFIX)) && entry.path().is_dir() {
                self.workspace(&name).unmount();
            }
        }
    }

    fn slot_of(all: &mut HashMap<String, Slot>, name: &str) -> Slot {
        all.entry(name.to_owned()).or_default().clone()
    }

    /// The running sandbox, started if needed, held while the hold lives.
    async fn running(&self, chat_id: &str) -> Result<(Arc<Running>, InUse), SandboxError> {
        self.running_healed(chat_id).await.map(|(r, _, hold)| (r, hold))
    }

    /// The running sandbox, started if needed; `true` when it had died and was started
    /// afresh over the same workspace (the caller tells the person).
    async fn running_healed(&self, chat_id: &str) -> Result<(Arc<Running>, bool, InUse), SandboxError> {
        let name = sandbox_name(chat_id)?;
        let slot = Self::slot_of(&mut *self.running.lock().await, &name);
        let mut live = slot.lock().await;
        let healed = match room::look(&mut live) {
            Found::Live(r, hold) => return Ok((r, false, hold)),
            Found::Dead(dead) => {
                // A program may kill its agent at every run: within the sandbox's log budget.
                if self.egress_log.may_log(chat_id) {
                    tracing::warn!(sandbox = %name, "the sandbox had stopped; starting it afresh");
                }
                dead.end();
                tear_down(dead).await;
                true
            }
            Found::Empty => match self.claim(chat_id, &name).await {
                Some(r) => {
                    *live = Some(r.clone());
                    let hold = InUse::new(&r.tenancy.in_use);
                    return Ok((r, false, hold));
                }
                None => false,
            },
        };
        let r = self.start(chat_id, &name).await?;
        *live = Some(r.clone());
        let hold = InUse::new(&r.tenancy.in_use);
        Ok((r, healed, hold))
    }

    /// The sandbox if it runs (waiting for a start or stop in progress).
    async fn live(&self, name: &str) -> Option<Arc<Running>> {
        let slot = self.running.lock().await.get(name).cloned()?;
        slot.lock().await.clone()
    }
}

impl LocalDriver {
    /// Stops every sandbox (the server is going down): no process, cgroup or mount is
    /// left; the workspaces stay.
    pub async fn shutdown(&self) {
        self.pool_size.store(0, Ordering::SeqCst);
        // A start under way finishes first (the pool then wants none and stops filling).
        let _no_refill = self.refilling.lock().await;
        self.drain_pool().await;
        let names: Vec<String> = self.running.lock().await.keys().cloned().collect();
        for name in names {
            if let Some(chat_id) = name.strip_prefix("lens-chat-") {
                let _ = self.stop(chat_id).await;
            }
        }
        let cgroups = self.cgroups.clone();
        let _ = tokio::task::spawn_blocking(move || cgroups.remove_all()).await;
        self.unmount_all();
    }
}

impl Drop for LocalDriver {
    /// A driver going away takes its sandboxes' processes, cgroups and mounts with it;
    /// the workspace images stay.
    fn drop(&mut self) {
        for running in self.pool.get_mut().map(std::mem::take).unwrap_or_default() {
            running.end();
        }
        for (_, slot) in self.running.get_mut().drain() {
            if let Some(running) = slot.try_lock().ok().and_then(|mut s| s.take()) {
                running.end();
            }
        }
        self.cgroups.remove_all();
        self.unmount_all();
        self.forget_pool_leftovers();
        folders::clear(&self.mounts, &self.root);
    }
}

/// The cgroup folder of the sandboxes of the driver on `root`: stable across restarts
/// (FNV-1a of the path), different for two servers on different folders.
fn cgroup_folder(root: &Path) -> String {
    format!("lens-{:016x}", crate::name::fnv1a(root.to_string_lossy().as_bytes()))
}

/// Removes what a sandbox that is gone left: its connections, what is still in its
/// cgroup, the cgroup, and its workspace's mount.
async fn tear_down(running: Arc<Running>) {
    running.relay.close_all();
    let _ = tokio::task::spawn_blocking(move || {
        running.cgroup.remove();
        if let Some(workspace) = running.workspace() {
            let _ = std::fs::remove_file(launch::bundle_path(&workspace.dir));
            workspace.unmount();
            workspace.mark_used();
            // A pre-started sandbox's mount point; its image has its conversation's name.
            if workspace.dir.file_name().is_some_and(|n| n.to_string_lossy().starts_with(POOL_PREFIX)) {
                let _ = std::fs::remove_dir(&workspace.dir);
            }
            // One never claimed (the pool shrank, or gave way): its image is nobody's.
            if workspace.image.file_name().is_some_and(|n| n.to_string_lossy().starts_with(POOL_PREFIX)) {
                let _ = std::fs::remove_file(&workspace.image);
            }
        }
        // Only now, with nothing left of it, is its room given back.
        running.tenancy.release();
    })
    .await;
}

/// Whether Lens runs as root (the owner of `/proc/self` is the effective uid).
fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").map(|m| m.uid() == 0).unwrap_or(false)
}

#[async_trait::async_trait]
impl AgentBackend for LocalDriver {
    type Sandbox = Running;

    async fn sandbox(&self, chat_id: &str) -> Result<(Arc<Running>, bool, InUse), SandboxError> {
        self.running_healed(chat_id).await
    }

    /// The sandbox's environment, plus the proxy's when there is a network.
    fn run_env(&self, running: &Running) -> Env {
        let mut env = running.env.clone();
        if let Ok(Some(network)) = self.network.lock().as_deref() {
            env.extend(network.env.iter().cloned());
        }
        env
    }
}

#[async_trait::async_trait]
impl SandboxDriver for LocalDriver {
    async fn ensure(&self, chat_id: &str) -> Result<SandboxInfo, SandboxError> {
        self.running(chat_id).await?;
        self.status(chat_id).await
    }

    async fn stop(&self, chat_id: &str) -> Result<(), SandboxError> {
        let name = sandbox_name(chat_id)?;
        let slot = self.running.lock().await.get(&name).cloned();
        let Some(slot) = slot else { return Ok(()) };
        // Holding the slot until all is gone: a run asked for meanwhile starts afresh after.
        let mut live = slot.lock().await;
        let taken = live.take();
        if let Some(running) = taken {
            // Closing its input ends the agent, and with it the sandbox's first process and
            // pid namespace; that works even if bwrap has not finished setting up, when a
            // kill of bwrap alone could leave the sandbox behind. Runs still following it
            // then see their stream end.
            // (A writer stuck on a frozen agent holds the pipe: then it is not waited for.)
            running.link.close().await;
            running.end();
            // Then nothing may be left: not a process that left its group, not a mount.
            // The image's time records when the sandbox was last used.
            tear_down(running).await;
        }
        Ok(())
    }

    async fn let_go(&self, chat_id: &str) -> Result<(), SandboxError> {
        // A local sandbox's processes are this server's own: they end; the folder stays.
        self.stop(chat_id).await
    }

    async fn delete(&self, chat_id: &str) -> Result<(), SandboxError> {
        self.stop(chat_id).await?;
        let workspace = self.workspace(&sandbox_name(chat_id)?);
        tokio::task::spawn_blocking(move || workspace.delete()).await.map_err(backend)?
    }

    async fn status(&self, chat_id: &str) -> Result<SandboxInfo, SandboxError> {
        let name = sandbox_name(chat_id)?;
        let live = self.live(&name).await.map(|r| (r.idle_secs(), r.tenancy.running()));
        let running = live.is_some();
        let workspace = self.workspace(&name);
        let state = if running {
            SandboxState::Running
        } else if workspace.exists() {
            SandboxState::Stopped
        } else {
            SandboxState::Absent
        };
        let (idle_secs, busy) = live.unwrap_or((workspace.idle_secs(), false));
        Ok(SandboxInfo {
            name,
            chat_id: chat_id.to_owned(),
            state,
            disk_bytes: workspace.used_bytes(),
            idle_secs,
            busy,
        })
    }

    async fn queued(&self, chat_id: &str) -> Option<usize> {
        self.admission.place(&sandbox_name(chat_id).ok()?)
    }

    async fn list(&self) -> Result<Vec<SandboxInfo>, SandboxError> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(&self.root).map_err(backend)?.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(chat_id) = name.strip_prefix("lens-chat-").and_then(|n| n.strip_suffix(".img")) {
                out.push(self.status(chat_id).await?);
            }
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }

    fn configure(&self, settings: &DriverSettings) {
        self.set_limits(settings.limits);
        self.set_admission(settings.admission);
        self.set_pool_size(settings.pool_size);
        self.set_network(settings.network.clone());
    }

    fn egress_log(&self) -> Vec<crate::egress::EgressDecision> {
        LocalDriver::egress_log(self)
    }

    fn set_chat_network(&self, chat_id: &str, network: ChatNetwork) {
        self.chat_hosts.set(chat_id, network);
    }

    fn note_egress(&self, chat_id: &str, target: &str, reason: &str) {
        self.egress_log.note(chat_id, target, reason);
    }

    fn admission(&self) -> &Admission {
        &self.admission
    }

    async fn make_room(&self, only: Option<String>) {
        self.stop_idle("", only).await;
    }

    async fn shutdown(&self) {
        LocalDriver::shutdown(self).await;
    }
}

#[async_trait::async_trait]
impl RunHost for Running {
    fn link(&self) -> &AgentLink {
        &self.link
    }

    fn oom_kills(&self) -> u64 {
        self.cgroup.oom_kills()
    }

    fn run_started(&self) {
        // A run's record starts empty (runs in one sandbox go one at a time).
        if self.tenancy.active.fetch_add(1, Ordering::SeqCst) == 0 {
            self.relay.reached.clear();
        }
    }

    async fn reached(&self) -> Vec<lens_types::NetReach> {
        self.relay.reached.taken()
    }

    fn run_ended(&self) {
        // The network is open only while a run is: what an earlier run left behind
        // (a thread in the kernel) loses its connections when the last run ends.
        if self.tenancy.active.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.relay.close_all();
        }
        self.tenancy.touch();
    }

    /// Ends a sandbox that does not answer, from outside: bwrap and everything in its
    /// cgroup are killed, whatever state the agent is in (frozen, flooding, gone).
    async fn kill_from_outside(&self) {
        self.end();
        let cgroup = self.cgroup.clone();
        let _ = tokio::task::spawn_blocking(move || cgroup.kill_all()).await;
    }
}

/// Starts the local backend with these settings: the driver, its pool kept filled.
pub fn start_local(options: LocalOptions, settings: &DriverSettings) -> Result<Arc<dyn SandboxDriver>, SandboxError> {
    let driver = Arc::new(LocalDriver::new(options)?);
    driver.configure(settings);
    driver.keep_pool();
    Ok(driver)
}
