//! A fake OpenShell gateway: a tonic server from the same `.proto`, on `127.0.0.1:0`,
//! behind real mutual TLS, for tests and benches where the real gateway (Docker) cannot run.
//!
//! It keeps the gateway's lifecycle and refusals: a sandbox is PROVISIONING, then READY;
//! a second create is ALREADY_EXISTS, a missing sandbox NOT_FOUND, an exec on a sandbox
//! that is not ready FAILED_PRECONDITION, a call without `workspace_scope` is refused, an
//! exec `request_id` is never run twice, every exec ends with exactly one exit event, and
//! a timeout with exit 124. Commands run for real, in the sandbox's own temporary folder
//! (its home, `/sandbox`): as this machine's user, isolating nothing, or, with
//! [`FakeOptions::contain`], each sandbox in a container of its own (a cgroup with its
//! memory limit, bubblewrap around every command; see `container.rs`). Either way it
//! keeps the network policy it was given. Uncontained, each sandbox's programs go out
//! through a proxy of its own that enforces the policy's hosts and logs each decision
//! as the gateway's sandbox does (`proxy.rs`), read back with `GetSandboxLogs`
//! (`logs.rs`); contained, a sandbox has no network. [`Faults`] makes it misbehave.

mod certs;
mod container;
mod error;
mod exec;
mod landlock;
mod logs;
mod policy_checks;
mod proxy;
mod remote_command;
mod roles;

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    net::SocketAddr,
    path::{Path, PathBuf},
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

pub use certs::{CLIENT_ROLE, DEFAULT_SERVER_NAMES, write_certs, write_certs_with_role};
pub use error::FakeError;
pub use logs::PUSH_DELAY;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{
    Request, Response, Status, Streaming,
    transport::{Certificate, Identity, Server, ServerTlsConfig},
};

use crate::{
    client::MAX_MESSAGE,
    proto::openshell::{
        datamodel::v1::{ObjectMeta, WorkspaceSelector},
        sandbox::v1::SandboxPolicy,
        v1::{
            CreateSandboxRequest, DeleteSandboxRequest, DeleteSandboxResponse, DeletionOutcome, ExecSandboxEvent,
            ExecSandboxInput, ExecSandboxRequest, GetSandboxLogsRequest, GetSandboxLogsResponse, GetSandboxRequest,
            HealthRequest, HealthResponse, ListSandboxesRequest, ListSandboxesResponse, Sandbox, SandboxCondition,
            SandboxPhase, SandboxResponse, SandboxSpec, SandboxStatus, ServiceStatus, StartSandboxRequest,
            StopSandboxRequest, UpdateConfigRequest, UpdateConfigResponse, exec_sandbox_input,
            open_shell_server::{OpenShell, OpenShellServer},
        },
    },
};

/// The version the fake reports.
pub const VERSION: &str = "0.1.4";

/// The gateway's page size when a list asks for none, and the most it gives at once.
const DEFAULT_PAGE_SIZE: usize = 100;
const MAX_PAGE_SIZE: usize = 1000;

/// How the fake misbehaves; each switch takes effect on the next call.
#[derive(Default)]
pub struct Faults {
    /// Every call answers UNAVAILABLE.
    pub unavailable: AtomicBool,
    /// A create stays PROVISIONING this many milliseconds (0: the normal short while).
    pub slow_create_ms: AtomicU64,
    /// A delete answers ACCEPTED and finishes a little later.
    pub delete_accepted: AtomicBool,
    /// A stop answers after this many milliseconds, as the Docker driver's does after
    /// its container's stop timeout (10 s).
    pub slow_stop_ms: AtomicU64,
    /// Stops being answered now.
    pub stopping: AtomicU64,
    /// Every `UpdateConfig` is refused, as the gateway refuses a policy its checks find
    /// unsafe or a change a live sandbox may not take (INVALID_ARGUMENT).
    pub refuse_policy: AtomicBool,
    /// Bumped to drop every exec stream open now, mid-run.
    drops: tokio::sync::watch::Sender<u64>,
}

impl Faults {
    /// Ends every open exec stream with UNAVAILABLE, as a relay that went away would;
    /// their commands are killed.
    pub fn drop_streams(&self) {
        self.drops.send_modify(|n| *n += 1);
    }
}

/// Where a fake sandbox is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Life {
    /// Provisioning or starting until its supervisor stand-in connects (the number tells
    /// one start from the next, so a late connection never readies a later life).
    Coming(SandboxPhase, u64),
    Ready,
    /// Its supervisor stand-in could not run in it.
    Failed,
    /// Its container was ended from outside: the gateway holds it in ERROR ("Container
    /// exited") and will neither stop nor start it, only delete it.
    Exited,
    Stopped,
    /// Deleted (ACCEPTED) and gone at the instant.
    Deleting(Instant),
}

struct FakeSandbox {
    id: String,
    labels: HashMap<String, String>,
    spec: Option<SandboxSpec>,
    life: Life,
    /// Its home folder (`/sandbox` inside).
    dir: PathBuf,
    /// The newest policy version the gateway gave it, and that policy: a revision of its
    /// own, as the gateway keeps them; the spec keeps the policy it was created with.
    policy_version: u32,
    latest: Option<SandboxPolicy>,
    /// What its supervisor stand-in has loaded: the proxy decides by this one.
    loaded: (u32, Option<SandboxPolicy>),
    /// When the newest policy is loaded: the real supervisor asks for it only every
    /// `OPENSHELL_POLICY_POLL_INTERVAL_SECS` (10 s), and at its start.
    loads_at: Option<Instant>,
    /// The policy it was created with: what a live sandbox may not change is held to it.
    baseline: Option<SandboxPolicy>,
    /// Its container, when the fake contains.
    container: Option<Arc<container::Container>>,
    /// Its network proxy, when the fake does not contain.
    proxy: Option<proxy::Proxy>,
}

impl FakeSandbox {
    /// Loads the newest policy once its poll has come (a stopped sandbox's supervisor
    /// loads it when it starts again).
    fn settle(&mut self) {
        let due = self.loads_at.is_some_and(|at| Instant::now() >= at);
        if due && self.life == Life::Ready {
            self.loaded = (self.policy_version, self.latest.clone());
            self.loads_at = None;
        }
    }

    fn phase(&mut self) -> SandboxPhase {
        match self.life {
            Life::Coming(phase, _) => phase,
            Life::Ready => SandboxPhase::Ready,
            Life::Failed | Life::Exited => SandboxPhase::Error,
            Life::Stopped => SandboxPhase::Stopped,
            Life::Deleting(_) => SandboxPhase::Deleting,
        }
    }

    fn view(&mut self, name: &str) -> Sandbox {
        self.settle();
        let phase = self.phase();
        Sandbox {
            metadata: Some(ObjectMeta {
                id: self.id.clone(),
                name: name.to_owned(),
                labels: self.labels.clone(),
                workspace: crate::client::WORKSPACE.to_owned(),
                ..Default::default()
            }),
            spec: self.spec.clone(),
            status: Some(SandboxStatus {
                phase: phase as i32,
                current_policy_version: self.loaded.0,
                conditions: match self.life {
                    Life::Exited => vec![SandboxCondition {
                        r#type: "Ready".into(),
                        status: "False".into(),
                        reason: "ContainerExited".into(),
                        message: "Container exited".into(),
                    }],
                    _ => Vec::new(),
                },
                ..Default::default()
            }),
        }
    }
}

/// What the fake holds.
pub(crate) struct State {
    root: tempfile::TempDir,
    sandboxes: Mutex<BTreeMap<String, FakeSandbox>>,
    /// Exec request ids seen: never run twice.
    request_ids: Mutex<HashSet<String>>,
    /// Process groups of commands running, by sandbox.
    groups: Mutex<HashMap<String, HashSet<i32>>>,
    provision: Duration,
    /// How long a pushed policy waits for the supervisor's next poll.
    policy_poll: Duration,
    max_page: usize,
    /// Roots (PEM) the proxies trust beside the system's when they reach a host.
    upstream_roots: Vec<u8>,
    pub(crate) faults: Faults,
    next_id: AtomicU64,
    pub(crate) execs: AtomicU64,
    /// Where containers' cgroups live, when the fake contains (after `sandboxes`: a
    /// container goes before the folder that holds it).
    containers: Option<container::Containers>,
    /// Every sandbox's log lines.
    logs: logs::Logs,
}

impl State {
    /// A name for a sandbox created without one, two words as the gateway's are.
    fn new_name(&self) -> String {
        const FIRST: &[&str] = &["brave", "calm", "eager", "keen", "quiet", "swift"];
        const SECOND: &[&str] = &["otter", "heron", "lynx", "finch", "marten", "wren"];
        let n = self.next_id.fetch_add(1, Ordering::Relaxed) as usize;
        format!("{}-{}-{n}", FIRST[n % FIRST.len()], SECOND[n / FIRST.len() % SECOND.len()])
    }

    /// Kills every command running in `name`.
    fn kill_all(&self, name: &str) {
        let groups = self.groups.lock().map(|mut g| g.remove(name).unwrap_or_default()).unwrap_or_default();
        for pgid in groups {
            exec::kill_group(pgid);
        }
        let container = self.sandboxes.lock().ok().and_then(|all| all.get(name).and_then(|s| s.container.clone()));
        if let Some(container) = container {
            container.kill_all();
        }
    }

    /// Sandbox `name`'s policy now and its id, for its proxy's decisions.
    /// The policy its supervisor has loaded, and its id.
    fn policy_and_id(&self, name: &str) -> (Option<SandboxPolicy>, String) {
        let Ok(mut all) = self.sandboxes.lock() else { return (None, String::new()) };
        let Some(s) = all.get_mut(name) else { return (None, String::new()) };
        s.settle();
        (s.loaded.1.clone(), s.id.clone())
    }

    /// Forgets deleted sandboxes whose time has come.
    fn reap(&self) {
        let Ok(mut all) = self.sandboxes.lock() else { return };
        let gone: Vec<String> = all
            .iter()
            .filter(|(_, s)| matches!(s.life, Life::Deleting(at) if Instant::now() >= at))
            .map(|(n, _)| n.clone())
            .collect();
        for name in gone {
            self.logs.forget(&name);
            if let Some(s) = all.remove(&name) {
                let _ = std::fs::remove_dir_all(&s.dir);
            }
        }
    }
}

/// A running fake gateway; dropping it stops the server and deletes its folders.
pub struct FakeGateway {
    pub address: SocketAddr,
    certs: tempfile::TempDir,
    state: Arc<State>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

/// How to start a fake gateway.
#[derive(Debug, Clone)]
pub struct FakeOptions {
    /// Names in the server certificate.
    pub server_names: Vec<String>,
    /// How long a sandbox stays PROVISIONING (or STARTING).
    pub provision: Duration,
    /// Runs each sandbox in a container (needs root and bubblewrap).
    pub contain: bool,
    /// The role the client certificate carries (its OU), as `generate-certs` gives it;
    /// `None` makes a certificate the gateway authenticates but lets call nothing.
    pub client_role: Option<String>,
    /// The most sandboxes one list page holds (the gateway's 1000; fewer to test paging).
    pub max_page: usize,
    /// How long a policy pushed to a running sandbox takes to be loaded and decide its
    /// connections (`current_policy_version` tells when): the real supervisor polls for
    /// it every 10 s. Short by default, never none, so Lens's wait for it is always met.
    pub policy_poll: Duration,
    /// Certificate authorities (PEM) the sandboxes' proxies trust beside the system's
    /// roots when they end a program's TLS and reach the host: a test's own host.
    pub upstream_roots: Vec<u8>,
}

impl Default for FakeOptions {
    fn default() -> Self {
        Self {
            server_names: DEFAULT_SERVER_NAMES.iter().map(|s| s.to_string()).collect(),
            provision: Duration::from_millis(50),
            contain: false,
            client_role: Some(CLIENT_ROLE.to_owned()),
            max_page: MAX_PAGE_SIZE,
            policy_poll: Duration::from_millis(300),
            upstream_roots: Vec::new(),
        }
    }
}

impl FakeGateway {
    pub async fn start() -> Result<Self, FakeError> {
        Self::start_with(FakeOptions::default()).await
    }

    pub async fn start_with(options: FakeOptions) -> Result<Self, FakeError> {
        crate::client::use_ring();
        let certs = tempfile::tempdir().map_err(FakeError::io("a temporary folder"))?;
        let names: Vec<&str> = options.server_names.iter().map(String::as_str).collect();
        write_certs_with_role(certs.path(), &names, options.client_role.as_deref())?;
        let read = |rel: &str| std::fs::read(certs.path().join(rel)).map_err(FakeError::io(rel));
        let tls = ServerTlsConfig::new()
            .identity(Identity::from_pem(read("server/tls.crt")?, read("server/tls.key")?))
            .client_ca_root(Certificate::from_pem(read("ca.crt")?));
        let state = Arc::new(State {
            root: tempfile::tempdir().map_err(FakeError::io("a temporary folder"))?,
            sandboxes: Mutex::default(),
            request_ids: Mutex::default(),
            groups: Mutex::default(),
            provision: options.provision,
            policy_poll: options.policy_poll,
            upstream_roots: options.upstream_roots.clone(),
            max_page: options.max_page.max(1),
            faults: Faults::default(),
            next_id: AtomicU64::new(1),
            execs: AtomicU64::new(0),
            containers: match options.contain {
                true => Some(container::Containers::new(&format!("{}-{}", std::process::id(), next_fake()))?),
                false => None,
            },
            logs: Default::default(),
        });
        // Without nodelay, each small reply waits for the client's delayed ACK (40 ms).
        let loopback = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
        let incoming = tonic::transport::server::TcpIncoming::bind(loopback)
            .map_err(|e| FakeError::Io { what: "binding 127.0.0.1".into(), source: std::io::Error::other(e) })?
            .with_nodelay(Some(true));
        let address = incoming.local_addr().map_err(FakeError::io("the listener's address"))?;
        let service = OpenShellServer::new(Gateway { state: state.clone() })
            .max_decoding_message_size(MAX_MESSAGE)
            .max_encoding_message_size(MAX_MESSAGE);
        let (shutdown, stop) = tokio::sync::oneshot::channel::<()>();
        let server = Server::builder().tls_config(tls)?.add_service(service);
        tokio::spawn(async move {
            if let Err(e) = server
                .serve_with_incoming_shutdown(incoming, async {
                    let _ = stop.await;
                })
                .await
            {
                tracing::warn!(error = %e, "the fake gateway stopped");
            }
        });
        Ok(Self { address, certs, state, shutdown: Some(shutdown) })
    }

    /// The certificate folder, in the gateway's layout (Lens reads `ca.crt` and `client/`).
    pub fn cert_dir(&self) -> &Path {
        self.certs.path()
    }

    /// `127.0.0.1:<port>`.
    pub fn address_string(&self) -> String {
        self.address.to_string()
    }

    pub fn faults(&self) -> &Faults {
        &self.state.faults
    }

    /// The sandboxes it holds: (name, phase name).
    pub fn sandboxes(&self) -> Vec<(String, String)> {
        self.state.reap();
        let Ok(mut all) = self.state.sandboxes.lock() else { return Vec::new() };
        all.iter_mut().map(|(n, s)| (n.clone(), s.phase().as_str_name().to_owned())).collect()
    }

    /// The address of sandbox `name`'s network proxy (none when the fake contains).
    pub fn proxy_address(&self, name: &str) -> Option<SocketAddr> {
        let all = self.state.sandboxes.lock().ok()?;
        Some(all.get(name)?.proxy.as_ref()?.address)
    }

    /// The policy the gateway holds for a sandbox now: the one it was created with or
    /// its newest revision (which a supervisor loads at its start and its polls).
    pub fn policy(&self, name: &str) -> Option<SandboxPolicy> {
        let all = self.state.sandboxes.lock().ok()?;
        all.get(name)?.latest.clone()
    }

    /// The create request's spec and labels of a sandbox.
    pub fn created(&self, name: &str) -> Option<(SandboxSpec, HashMap<String, String>)> {
        let all = self.state.sandboxes.lock().ok()?;
        let s = all.get(name)?;
        Some((s.spec.clone().unwrap_or_default(), s.labels.clone()))
    }

    /// Execs started so far.
    pub fn execs(&self) -> u64 {
        self.state.execs.load(Ordering::Relaxed)
    }

    /// Kills every command running in sandbox `name` with SIGKILL, as the kernel's OOM
    /// killer or a crash would: each stream ends as the gateway ends it for a command
    /// that reports no exit status.
    pub fn kill_commands(&self, name: &str) {
        self.state.kill_all(name);
    }

    /// Ends sandbox `name`'s container from outside, as `docker kill` would: its commands
    /// die, its files go, and the gateway holds it in ERROR.
    pub fn kill_container(&self, name: &str) {
        self.state.kill_all(name);
        if let Ok(mut all) = self.state.sandboxes.lock()
            && let Some(s) = all.get_mut(name)
        {
            s.life = Life::Exited;
            if let Ok(entries) = std::fs::read_dir(&s.dir) {
                for e in entries.flatten() {
                    let _ = std::fs::remove_dir_all(e.path()).or_else(|_| std::fs::remove_file(e.path()));
                }
            }
        }
    }

    /// Commands running now, in every sandbox.
    pub fn running_commands(&self) -> usize {
        self.state.groups.lock().map(|g| g.values().map(HashSet::len).sum()).unwrap_or(0)
    }
}

impl Drop for FakeGateway {
    fn drop(&mut self) {
        let names: Vec<String> =
            self.state.sandboxes.lock().map(|all| all.keys().cloned().collect()).unwrap_or_default();
        for name in names {
            self.state.kill_all(&name);
        }
        if let Some(stop) = self.shutdown.take() {
            let _ = stop.send(());
        }
    }
}

/// Fake gateways started by this process: each contains its sandboxes in cgroups of its own.
fn next_fake() -> u64 {
    static STARTED: AtomicU64 = AtomicU64::new(0);
    STARTED.fetch_add(1, Ordering::Relaxed)
}

/// The memory limit of a spec's resources (`limits.memory`), in bytes.
fn memory_limit(spec: &SandboxSpec) -> Option<u64> {
    use prost_types::value::Kind;
    let resources = spec.template.as_ref()?.resources.as_ref()?;
    let Some(Kind::StructValue(limits)) = resources.fields.get("limits")?.kind.as_ref() else { return None };
    let Some(Kind::StringValue(memory)) = limits.fields.get("memory")?.kind.as_ref() else { return None };
    container::quantity(memory)
}

/// The Docker driver's refusal of resource requests: it takes `limits` only (ported
/// from its `docker_resource_limits`).
fn no_requests(spec: &SandboxSpec) -> Result<(), Status> {
    use prost_types::value::Kind;
    let Some(resources) = spec.template.as_ref().and_then(|t| t.resources.as_ref()) else { return Ok(()) };
    let Some(Kind::StructValue(requests)) = resources.fields.get("requests").and_then(|r| r.kind.as_ref()) else {
        return Ok(());
    };
    for what in ["cpu", "memory"] {
        if matches!(requests.fields.get(what).and_then(|v| v.kind.as_ref()), Some(Kind::StringValue(v)) if !v.trim().is_empty())
        {
            return Err(Status::failed_precondition(format!(
                "docker compute driver does not support resources.requests.{what}"
            )));
        }
    }
    Ok(())
}

struct Gateway {
    state: Arc<State>,
}

/// The gateway's refusal of a call without a workspace.
fn scoped(scope: &Option<WorkspaceSelector>) -> Result<(), Status> {
    match scope.as_ref().and_then(|s| s.selection.as_ref()) {
        Some(_) => Ok(()),
        None => Err(Status::invalid_argument("workspace_scope is required")),
    }
}

/// A DNS-1123 label of at most 19 characters.
fn valid_name(name: &str) -> bool {
    (1..=19).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
}

impl Gateway {
    fn up(&self) -> Result<(), Status> {
        if self.state.faults.unavailable.load(Ordering::SeqCst) {
            return Err(Status::unavailable("the gateway is unavailable (fault injected)"));
        }
        self.state.reap();
        Ok(())
    }

    fn with<T>(&self, name: &str, f: impl FnOnce(&mut FakeSandbox) -> Result<T, Status>) -> Result<T, Status> {
        let mut all = self.state.sandboxes.lock().map_err(|_| Status::internal("poisoned"))?;
        let sandbox = all.get_mut(name).ok_or_else(|| Status::not_found(format!("sandbox {name} not found")))?;
        f(sandbox)
    }

    fn respond(&self, name: &str) -> Result<Response<SandboxResponse>, Status> {
        let sandbox = self.with(name, |s| Ok(s.view(name)))?;
        Ok(Response::new(SandboxResponse { sandbox: Some(sandbox), service_urls: HashMap::new() }))
    }
}

type EventStream = ReceiverStream<Result<ExecSandboxEvent, Status>>;

#[tonic::async_trait]
impl OpenShell for Gateway {
    type ExecSandboxStream = EventStream;
    type ExecSandboxInteractiveStream = EventStream;

    async fn health(&self, _: Request<HealthRequest>) -> Result<Response<HealthResponse>, Status> {
        self.up()?;
        Ok(Response::new(HealthResponse { status: ServiceStatus::Healthy as i32, version: VERSION.to_owned() }))
    }

    async fn create_sandbox(&self, r: Request<CreateSandboxRequest>) -> Result<Response<SandboxResponse>, Status> {
        self.up()?;
        roles::check(&r)?;
        let mut r = r.into_inner();
        scoped(&r.workspace_scope)?;
        if r.name.is_empty() {
            // As the gateway does: a create without a name gets one.
            r.name = self.state.new_name();
        }
        if !valid_name(&r.name) {
            return Err(Status::invalid_argument("name must be a DNS-1123 label of at most 19 characters"));
        }
        let baseline = r.spec.as_ref().and_then(|spec| spec.policy.clone());
        baseline.as_ref().map(policy_checks::check).transpose()?;
        r.spec.as_ref().map(no_requests).transpose()?;
        let slow = self.state.faults.slow_create_ms.load(Ordering::SeqCst);
        let wait = if slow > 0 { Duration::from_millis(slow) } else { self.state.provision };
        let proxy = match self.state.containers {
            Some(_) => None,
            None => Some(
                proxy::Proxy::start(self.state.clone(), r.name.clone())
                    .await
                    .map_err(|e| Status::internal(e.to_string()))?,
            ),
        };
        {
            let mut all = self.state.sandboxes.lock().map_err(|_| Status::internal("poisoned"))?;
            if all.contains_key(&r.name) {
                return Err(Status::already_exists(format!("sandbox {} already exists", r.name)));
            }
            let dir = self.state.root.path().join(&r.name);
            std::fs::create_dir_all(&dir).map_err(|e| Status::internal(e.to_string()))?;
            let container = match &self.state.containers {
                Some(containers) => {
                    container::hand_over(&dir).map_err(|e| Status::internal(e.to_string()))?;
                    let memory = r.spec.as_ref().and_then(memory_limit);
                    Some(Arc::new(containers.create(&r.name, memory).map_err(|e| Status::internal(e.to_string()))?))
                }
                None => None,
            };
            let id = format!("sbx-{}", self.state.next_id.fetch_add(1, Ordering::Relaxed));
            let life = Life::Coming(SandboxPhase::Provisioning, self.state.next_id.fetch_add(1, Ordering::Relaxed));
            let (home, inside) = (dir.clone(), container.clone());
            let loaded = (1, r.spec.as_ref().and_then(|s| s.policy.clone()));
            all.insert(
                r.name.clone(),
                FakeSandbox {
                    id,
                    labels: r.labels,
                    spec: r.spec,
                    life,
                    dir,
                    policy_version: 1,
                    latest: loaded.1.clone(),
                    loaded,
                    loads_at: None,
                    baseline,
                    container,
                    proxy,
                },
            );
            self.state.clone().connect_later(&r.name, life, wait, home, inside);
        }
        self.respond(&r.name)
    }

    async fn get_sandbox(&self, r: Request<GetSandboxRequest>) -> Result<Response<SandboxResponse>, Status> {
        self.up()?;
        roles::check(&r)?;
        let r = r.into_inner();
        scoped(&r.workspace_scope)?;
        self.respond(&r.name)
    }

    async fn list_sandboxes(
        &self,
        r: Request<ListSandboxesRequest>,
    ) -> Result<Response<ListSandboxesResponse>, Status> {
        self.up()?;
        roles::check(&r)?;
        let r = r.into_inner();
        scoped(&r.workspace_scope)?;
        let wanted: Vec<(String, String)> = r
            .label_selector
            .split(',')
            .filter(|p| !p.trim().is_empty())
            .filter_map(|p| p.split_once('=').map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned())))
            .collect();
        // Pages in name order, as many as asked (the gateway's default 100 when not
        // said, at most its limit); the token is the last name given.
        let size = match usize::try_from(r.page_size) {
            Ok(0) | Err(_) => DEFAULT_PAGE_SIZE,
            Ok(n) => n,
        }
        .min(self.state.max_page);
        let mut all = self.state.sandboxes.lock().map_err(|_| Status::internal("poisoned"))?;
        let mut matching = all
            .iter_mut()
            .filter(|(n, _)| r.page_token.is_empty() || n.as_str() > r.page_token.as_str())
            .filter(|(_, s)| wanted.iter().all(|(k, v)| s.labels.get(k) == Some(v)))
            .peekable();
        let mut sandboxes = Vec::new();
        while sandboxes.len() < size
            && let Some((n, s)) = matching.next()
        {
            sandboxes.push(s.view(n));
        }
        let more = matching.peek().is_some();
        let next_page_token = match sandboxes.last().and_then(|s| s.metadata.as_ref()) {
            Some(last) if more => last.name.clone(),
            _ => String::new(),
        };
        Ok(Response::new(ListSandboxesResponse { sandboxes, next_page_token }))
    }

    async fn stop_sandbox(&self, r: Request<StopSandboxRequest>) -> Result<Response<SandboxResponse>, Status> {
        self.up()?;
        roles::check(&r)?;
        let r = r.into_inner();
        scoped(&r.workspace_scope)?;
        self.with(&r.name, |s| match s.phase() {
            SandboxPhase::Error => {
                Err(Status::failed_precondition("sandbox must be Ready to stop (current phase: Error)"))
            }
            _ => Ok(()),
        })?;
        let slow = self.state.faults.slow_stop_ms.load(Ordering::SeqCst);
        if slow > 0 {
            self.state.faults.stopping.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(slow)).await;
            self.state.faults.stopping.fetch_sub(1, Ordering::SeqCst);
        }
        self.state.kill_all(&r.name);
        self.with(&r.name, |s| {
            if !matches!(s.life, Life::Deleting(_)) {
                s.life = Life::Stopped;
            }
            Ok(())
        })?;
        self.respond(&r.name)
    }

    async fn start_sandbox(&self, r: Request<StartSandboxRequest>) -> Result<Response<SandboxResponse>, Status> {
        self.up()?;
        roles::check(&r)?;
        let r = r.into_inner();
        scoped(&r.workspace_scope)?;
        let provision = self.state.provision;
        let generation = self.state.next_id.fetch_add(1, Ordering::Relaxed);
        let state = self.state.clone();
        self.with(&r.name, |s| match s.life {
            Life::Stopped => {
                s.life = Life::Coming(SandboxPhase::Starting, generation);
                // Its supervisor's first poll, at its start, loads the newest policy.
                s.loads_at = s.loads_at.map(|_| Instant::now());
                state.connect_later(&r.name, s.life, provision, s.dir.clone(), s.container.clone());
                Ok(())
            }
            Life::Deleting(_) => Err(Status::failed_precondition("the sandbox is being deleted")),
            Life::Failed | Life::Exited => {
                Err(Status::failed_precondition("sandbox must be Stopped to start (current phase: Error)"))
            }
            _ => Ok(()),
        })?;
        self.respond(&r.name)
    }

    async fn delete_sandbox(
        &self,
        r: Request<DeleteSandboxRequest>,
    ) -> Result<Response<DeleteSandboxResponse>, Status> {
        self.up()?;
        roles::check(&r)?;
        let r = r.into_inner();
        scoped(&r.workspace_scope)?;
        let exists = self.state.sandboxes.lock().map(|all| all.contains_key(&r.name)).unwrap_or(false);
        if !exists {
            if r.allow_missing {
                return Ok(Response::new(DeleteSandboxResponse {
                    outcome: DeletionOutcome::AlreadyAbsent as i32,
                    sandbox_id: String::new(),
                }));
            }
            return Err(Status::not_found(format!("sandbox {} not found", r.name)));
        }
        self.state.kill_all(&r.name);
        let later = self.state.faults.delete_accepted.load(Ordering::SeqCst);
        let mut all = self.state.sandboxes.lock().map_err(|_| Status::internal("poisoned"))?;
        let id = all.get(&r.name).map(|s| s.id.clone()).unwrap_or_default();
        let outcome = if later {
            if let Some(s) = all.get_mut(&r.name)
                && !matches!(s.life, Life::Deleting(_))
            {
                s.life = Life::Deleting(Instant::now() + Duration::from_millis(300));
            }
            DeletionOutcome::Accepted
        } else {
            self.state.logs.forget(&r.name);
            if let Some(s) = all.remove(&r.name) {
                let _ = std::fs::remove_dir_all(&s.dir);
                // A container waits for its processes to be reaped before it goes.
                tokio::task::spawn_blocking(move || drop(s));
            }
            DeletionOutcome::Completed
        };
        Ok(Response::new(DeleteSandboxResponse { outcome: outcome as i32, sandbox_id: id }))
    }

    async fn exec_sandbox(&self, r: Request<ExecSandboxRequest>) -> Result<Response<EventStream>, Status> {
        self.up()?;
        roles::check(&r)?;
        let r = r.into_inner();
        let stdin = r.stdin.clone();
        let (input_tx, input) = tokio::sync::mpsc::channel(1);
        if !stdin.is_empty() {
            let _ = input_tx.send(stdin).await;
        }
        drop(input_tx);
        // The request's input, then EOF: the command runs on to its exit.
        self.exec(r, input, false).await
    }

    async fn exec_sandbox_interactive(
        &self,
        r: Request<Streaming<ExecSandboxInput>>,
    ) -> Result<Response<EventStream>, Status> {
        self.up()?;
        roles::check(&r)?;
        let mut inputs = r.into_inner();
        let first = inputs.message().await?.and_then(|m| m.payload);
        let Some(exec_sandbox_input::Payload::Start(start)) = first else {
            return Err(Status::invalid_argument("the first frame must be `start`"));
        };
        let (input_tx, input) = tokio::sync::mpsc::channel(4);
        tokio::spawn(async move {
            // Half-close (or a broken stream) is EOF on the command's stdin, and then the
            // end of the command: the gateway closes its channel right after the EOF.
            while let Ok(Some(frame)) = inputs.message().await {
                if let Some(exec_sandbox_input::Payload::Stdin(bytes)) = frame.payload
                    && input_tx.send(bytes).await.is_err()
                {
                    break;
                }
            }
        });
        self.exec(start, input, true).await
    }

    async fn update_config(&self, r: Request<UpdateConfigRequest>) -> Result<Response<UpdateConfigResponse>, Status> {
        self.up()?;
        roles::check(&r)?;
        let r = r.into_inner();
        scoped(&r.workspace_scope)?;
        let new = r.policy.clone().unwrap_or_default();
        policy_checks::check(&new)?;
        if self.state.faults.refuse_policy.load(Ordering::SeqCst) {
            return Err(Status::invalid_argument("policy contains unsafe content: refused by the test"));
        }
        let policy_poll = self.state.policy_poll;
        let version = self.with(&r.sandbox, |s| {
            if let Some(baseline) = &s.baseline {
                policy_checks::check_update(baseline, &new)?;
            }
            // The newest revision unchanged: its version, and nothing new to load.
            if s.latest.as_ref() == Some(&new) {
                return Ok(s.policy_version);
            }
            s.policy_version += 1;
            s.loads_at = Some(Instant::now() + policy_poll);
            s.latest = Some(new.clone());
            // The spec keeps the policy the sandbox was created with; one created without
            // is given this one, as the gateway backfills it.
            match s.spec.as_mut() {
                Some(spec) if spec.policy.is_some() => {}
                Some(spec) => spec.policy = Some(new.clone()),
                None => s.spec = Some(SandboxSpec { policy: Some(new.clone()), ..Default::default() }),
            }
            Ok(s.policy_version)
        })?;
        Ok(Response::new(UpdateConfigResponse { version, policy_hash: format!("v{version}") }))
    }

    async fn get_sandbox_logs(
        &self,
        r: Request<GetSandboxLogsRequest>,
    ) -> Result<Response<GetSandboxLogsResponse>, Status> {
        self.up()?;
        roles::check(&r)?;
        let r = r.into_inner();
        scoped(&r.workspace_scope)?;
        if r.sandbox.is_empty() {
            return Err(Status::invalid_argument("sandbox is required"));
        }
        self.with(&r.sandbox, |_| Ok(()))?;
        let (logs, buffer_total) = self.state.logs.tail(&r);
        Ok(Response::new(GetSandboxLogsResponse { logs, buffer_total }))
    }
}

impl Gateway {
    /// Checks an exec against the sandbox's state and starts it.
    async fn exec(
        &self,
        r: ExecSandboxRequest,
        input: tokio::sync::mpsc::Receiver<Vec<u8>>,
        input_end_kills: bool,
    ) -> Result<Response<EventStream>, Status> {
        scoped(&r.workspace_scope)?;
        let (dir, env, container) = self.with(&r.sandbox, |s| {
            if s.phase() != SandboxPhase::Ready {
                return Err(Status::failed_precondition(format!(
                    "sandbox {} is not ready ({})",
                    r.sandbox,
                    s.phase().as_str_name()
                )));
            }
            let mut env = s.spec.as_ref().map(|sp| sp.environment.clone()).unwrap_or_default();
            env.extend(s.proxy.iter().flat_map(proxy::Proxy::env));
            // The filesystem policy cannot change on a live sandbox: the baseline's holds.
            let landlock = s.container.as_ref().and_then(|_| landlock::wrap(s.baseline.as_ref(), "/sandbox"));
            Ok((s.dir.clone(), env, (s.container.clone(), landlock)))
        })?;
        let (container, landlock) = container;
        // Contained, the sandbox sees its home at /sandbox; otherwise it is the fake's folder.
        let workdir = if container.is_some() { r.workdir.clone() } else { exec::on_host(&dir, &r.workdir) };
        let line = remote_command::build(&r, &workdir)?;
        if !r.request_id.is_empty() {
            let mut seen = self.state.request_ids.lock().map_err(|_| Status::internal("poisoned"))?;
            if !seen.insert(r.request_id.clone()) {
                return Err(Status::already_exists(format!("request {} was already run", r.request_id)));
            }
        }
        self.state.execs.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = tokio::sync::mpsc::channel(16);
        exec::spawn(
            self.state.clone(),
            exec::Job {
                sandbox: r.sandbox.clone(),
                home: dir,
                line,
                env,
                container,
                landlock,
                request: r,
                input_end_kills,
            },
            input,
            tx,
        )?;
        Ok(Response::new(ReceiverStream::new(rx)))
    }
}

impl State {
    /// After `wait` (the container's start), runs the supervisor stand-in in the sandbox:
    /// once a command has run inside, the sandbox is READY, as the gateway's is once its
    /// supervisor's session is up; a stand-in that cannot run leaves it in ERROR.
    fn connect_later(
        self: Arc<Self>,
        name: &str,
        life: Life,
        wait: Duration,
        home: PathBuf,
        container: Option<Arc<container::Container>>,
    ) {
        let name = name.to_owned();
        tokio::spawn(async move {
            tokio::time::sleep(wait).await;
            let connected = exec::supervisor_connects(&home, container.as_deref()).await;
            if let Ok(mut all) = self.sandboxes.lock()
                && let Some(s) = all.get_mut(&name)
                && s.life == life
            {
                s.life = if connected { Life::Ready } else { Life::Failed };
            }
        });
    }

    pub(crate) fn track(&self, sandbox: &str, pgid: i32, on: bool) {
        if let Ok(mut groups) = self.groups.lock() {
            let set = groups.entry(sandbox.to_owned()).or_default();
            if on {
                set.insert(pgid);
            } else {
                set.remove(&pgid);
            }
        }
    }

    pub(crate) fn drops(&self) -> tokio::sync::watch::Receiver<u64> {
        self.faults.drops.subscribe()
    }
}
