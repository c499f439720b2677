//! `GatewayDriver`: sandboxes on an OpenShell gateway, over mutual TLS.
//!
//! Each conversation's sandbox is the gateway's sandbox `lens-chat-<id>`, labelled with
//! the conversation. Lens's own agent is delivered into it through an exec's stdin once,
//! then runs in one long-lived interactive exec whose stdin and stdout carry the same
//! frames as on this machine: the Python kernel, live output, endings, Stop and files
//! are the agent's, so they behave the same on both drivers. What the gateway does
//! instead of this machine: isolation (its Landlock, seccomp and network namespace),
//! the network policy (its proxy, by host name; what a run reached is read back from
//! the sandbox's log, `network_log.rs`), and resources.

mod bridge;
mod last_used;
mod network_log;
mod policy;
mod policy_wait;
mod start;

use std::{
    collections::HashMap,
    path::PathBuf,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, SystemTime},
};

use lens_openshell::{
    GatewayAddress, GatewayError,
    proto::openshell::v1::{
        DeleteSandboxRequest, GetSandboxLogsRequest, GetSandboxRequest, ListSandboxesRequest, Sandbox, SandboxPhase,
        StopSandboxRequest, UpdateConfigRequest, open_shell_client::OpenShellClient,
    },
    workspace_scope,
};
use lens_sandbox_agent::protocol::{Reply, Request};
use tonic::transport::Channel;

use crate::{
    DriverSettings, SandboxDriver, SandboxError, SandboxInfo, SandboxState,
    admission::Admission,
    agent_core::{AgentBackend, Env},
    link::AgentLink,
    room::{self, Found, Idle, Tenancy},
    run_stream::{InUse, RunHost},
    sandbox_name,
};
use bridge::gateway_error;

/// The label every sandbox Lens makes carries, and the one naming its conversation.
const APP_LABEL: (&str, &str) = ("app", "lens");
const CHAT_LABEL: &str = "lens-chat";

/// How long a call that changes a sandbox (stop, delete) may take.
const CALL_DEADLINE: Duration = Duration::from_secs(30);

/// How long after a run its sandbox's log is read: the sandbox's supervisor pushes its
/// lines to the gateway in batches every half second, so the run's last connections
/// reach the gateway up to that long after the run. The run does not wait for it: its
/// record is added to its step when read (`NetworkSoon`).
const LOG_SETTLE: Duration = Duration::from_millis(1000);

/// How long reading a run's log may take before the run ends without its record.
const LOG_DEADLINE: Duration = Duration::from_secs(10);

/// How the gateway driver is set up.
#[derive(Debug, Clone)]
pub struct GatewayOptions {
    pub gateway: GatewayAddress,
    /// The agent binary on this machine, delivered into each sandbox.
    pub agent: PathBuf,
    /// The sandbox image; empty: the gateway's default.
    pub image: String,
    /// The folder commands start in inside the sandbox (the sandbox user's home); the
    /// workspace is `workspace/` beneath it and the agent lives in `.lens/`.
    pub home: String,
    /// Where this server keeps when each sandbox was last used (kept across restarts).
    pub last_used_file: Option<PathBuf>,
}

impl GatewayOptions {
    pub fn new(gateway: GatewayAddress, agent: PathBuf) -> Self {
        Self { gateway, agent, image: String::new(), home: "/sandbox".into(), last_used_file: None }
    }
}

/// A sandbox whose agent Lens is connected to.
pub(crate) struct Remote {
    name: String,
    link: Arc<AgentLink>,
    /// The exec stream's tasks; aborted, the gateway ends the agent.
    tasks: Vec<tokio::task::AbortHandle>,
    /// Every run's environment (the workspace's real path in it).
    env: Vec<(String, String)>,
    tenancy: Tenancy,
    client: OpenShellClient<Channel>,
    /// When the run going now began, by this server's clock.
    run_began: Mutex<Option<SystemTime>>,
    /// Whether sandboxes have a network now (the driver's, shared).
    network_on: Arc<AtomicBool>,
    /// Whether the gateway's sandbox was made anew at this start, its files lost.
    remade: bool,
    /// The policy versions sent to it and loaded by it.
    policy: policy_wait::PolicyVersions,
}

impl Remote {
    /// Lets the agent go: its input closed (it ends its runs and itself), then its
    /// stream dropped, and its room given back.
    async fn release(&self) {
        self.link.mark_dead();
        self.link.close().await;
        for task in &self.tasks {
            task.abort();
        }
        self.tenancy.release();
    }
}

impl Idle for Remote {
    fn is_dead(&self) -> bool {
        self.link.is_dead()
    }

    fn tenancy(&self) -> &Tenancy {
        &self.tenancy
    }
}

#[async_trait::async_trait]
impl RunHost for Remote {
    fn link(&self) -> &AgentLink {
        &self.link
    }

    fn restart_note(&self) -> &'static str {
        if self.remade { crate::run_stream::REMADE } else { crate::run_stream::RESTARTED }
    }

    fn run_started(&self) {
        self.tenancy.active.fetch_add(1, Ordering::SeqCst);
        if let Ok(mut began) = self.run_began.lock() {
            *began = Some(SystemTime::now());
        }
    }

    /// The gateway's proxy's decisions since the run began, from the sandbox's log
    /// once its last lines have reached the gateway (none asked for when sandboxes have
    /// no network). The gateway's clock is taken to agree with this server's, as NTP
    /// keeps them.
    fn reached_soon(&self) -> Option<crate::NetworkSoon> {
        let began = self.run_began.lock().ok().and_then(|b| *b);
        let began = began.filter(|_| self.network_on.load(Ordering::SeqCst))?;
        let ask = GetSandboxLogsRequest {
            sandbox: self.name.clone(),
            since_time: Some(began.into()),
            sources: vec!["sandbox".into()],
            workspace_scope: workspace_scope(),
            ..Default::default()
        };
        let (mut client, name) = (self.client.clone(), self.name.clone());
        Some(crate::NetworkSoon::new(async move {
            tokio::time::sleep(LOG_SETTLE).await;
            match tokio::time::timeout(LOG_DEADLINE, client.get_sandbox_logs(ask)).await {
                Ok(Ok(reply)) => network_log::reached(&reply.into_inner().logs),
                Ok(Err(status)) => {
                    tracing::warn!(sandbox = %name, error = %status.message(), "the sandbox's log could not be read");
                    Vec::new()
                }
                Err(_) => {
                    tracing::warn!(sandbox = %name, "the sandbox's log was not read in time");
                    Vec::new()
                }
            }
        }))
    }

    fn run_ended(&self) {
        self.tenancy.active.fetch_sub(1, Ordering::SeqCst);
        self.tenancy.touch();
    }

    /// The agent does not answer: its stream is dropped and the sandbox stopped, which
    /// ends every process in it; the next call starts it afresh.
    async fn kill_from_outside(&self) {
        self.link.mark_dead();
        for task in &self.tasks {
            task.abort();
        }
        let stop = StopSandboxRequest {
            name: self.name.clone(),
            workspace_scope: workspace_scope(),
            request_id: uuid::Uuid::new_v4().to_string(),
        };
        let mut client = self.client.clone();
        let _ = tokio::time::timeout(CALL_DEADLINE, client.stop_sandbox(stop)).await;
    }
}

type Slot = room::Slot<Remote>;

/// The gateway driver.
pub struct GatewayDriver {
    options: GatewayOptions,
    /// Connected on first use, and again after a failed connection.
    client: tokio::sync::Mutex<Option<OpenShellClient<Channel>>>,
    /// The agent's bytes and the name they are kept under in a sandbox.
    agent: Arc<Vec<u8>>,
    agent_file: String,
    settings: Mutex<DriverSettings>,
    admission: Admission,
    /// How much each sandbox may make the server log.
    log_budgets: crate::log_budget::LogBudgets,
    /// One slot per sandbox touched; locked while its sandbox starts or stops.
    running: tokio::sync::Mutex<HashMap<String, Slot>>,
    /// When each sandbox was last used.
    last_used: last_used::LastUsed,
    /// The hosts each conversation's owner allowed for it, by sandbox name.
    chat_hosts: crate::relay::ChatHosts,
    /// What Lens decided for conversations (the gateway's proxy logs the rest itself).
    egress_notes: crate::relay::EgressLog,
    /// Whether sandboxes have a network now: a run's record is read only then.
    network_on: Arc<AtomicBool>,
    /// Sandboxes a run waits on to load a new policy (not behind the slots' locks: asked
    /// while a sandbox starts).
    settling: Mutex<std::collections::HashSet<String>>,
    /// Stops going on in the background (`stop_later`), awaited at shutdown.
    stopping: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// Itself, for the tasks `configure` starts.
    me: std::sync::Weak<GatewayDriver>,
}

impl GatewayDriver {
    pub fn new(options: GatewayOptions, settings: &DriverSettings) -> Result<Arc<Self>, SandboxError> {
        let agent = std::fs::read(&options.agent).map_err(|_| {
            SandboxError::Unavailable(format!("the sandbox agent is missing at {}", options.agent.display()))
        })?;
        let agent_file = format!(".lens/agent-{:016x}", crate::name::fnv1a(&agent));
        let last_used = last_used::LastUsed::open(options.last_used_file.clone());
        Ok(Arc::new_cyclic(|me| Self {
            options,
            client: tokio::sync::Mutex::default(),
            agent: Arc::new(agent),
            agent_file,
            settings: Mutex::new(settings.clone()),
            admission: Admission::new(settings.admission),
            log_budgets: Default::default(),
            running: tokio::sync::Mutex::default(),
            last_used,
            chat_hosts: Default::default(),
            egress_notes: Default::default(),
            network_on: Arc::new(AtomicBool::new(settings.network.is_some())),
            settling: Mutex::default(),
            stopping: Mutex::default(),
            me: me.clone(),
        }))
    }

    /// A client, connecting first if need be (a failed connection is tried again next time).
    async fn client(&self) -> Result<OpenShellClient<Channel>, SandboxError> {
        let mut client = self.client.lock().await;
        if let Some(c) = client.as_ref() {
            return Ok(c.clone());
        }
        let c = lens_openshell::connect(&self.options.gateway).await.map_err(gateway_error)?;
        *client = Some(c.clone());
        Ok(c)
    }

    fn settings(&self) -> DriverSettings {
        self.settings.lock().map(|s| s.clone()).unwrap_or_else(|p| p.into_inner().clone())
    }

    /// The gateway's sandbox, `None` when it has none by that name.
    async fn get(&self, name: &str) -> Result<Option<Sandbox>, SandboxError> {
        let mut client = self.client().await?;
        let request = GetSandboxRequest { name: name.to_owned(), workspace_scope: workspace_scope() };
        match client.get_sandbox(request).await {
            Ok(r) => Ok(r.into_inner().sandbox),
            Err(s) if s.code() == tonic::Code::NotFound => Ok(None),
            Err(s) => Err(gateway_error(GatewayError::rpc("GetSandbox", &s))),
        }
    }

    async fn slot(&self, name: &str) -> Slot {
        self.running.lock().await.entry(name.to_owned()).or_default().clone()
    }

    /// The sandbox if its agent is connected (waiting for a start or stop in progress).
    async fn live(&self, name: &str) -> Option<Arc<Remote>> {
        let slot = self.running.lock().await.get(name).cloned()?;
        slot.lock().await.clone()
    }

    /// The connected sandbox, started if need be; `true` when its agent had gone and
    /// was started afresh over the same workspace.
    async fn remote(&self, chat_id: &str) -> Result<(Arc<Remote>, bool, InUse), SandboxError> {
        let name = sandbox_name(chat_id)?;
        let slot = self.slot(&name).await;
        let mut live = slot.lock().await;
        let healed = match room::look(&mut live) {
            Found::Live(r, hold) => return Ok((r, false, hold)),
            Found::Dead(dead) => {
                // A program may kill its agent at every run: within the sandbox's log budget.
                if self.log_budgets.may_log(chat_id) {
                    tracing::warn!(sandbox = %name, "the sandbox's agent had gone; starting it afresh");
                }
                dead.release().await;
                true
            }
            Found::Empty => false,
        };
        let remote = self.start(chat_id, &name).await?;
        *live = Some(remote.clone());
        self.used(&name);
        let hold = InUse::new(&remote.tenancy.in_use);
        Ok((remote.clone(), healed || remote.remade, hold))
    }

    fn used(&self, name: &str) {
        self.last_used.touch(name);
    }

    /// The gateway's view of a sandbox as Lens reports it.
    async fn info(&self, chat_id: &str, name: &str, sandbox: Option<&Sandbox>) -> SandboxInfo {
        let live = self.live(name).await;
        let phase = sandbox.and_then(|s| s.status.as_ref()).map(|s| s.phase()).unwrap_or(SandboxPhase::Unspecified);
        let state = match (sandbox, &live, phase) {
            (None, _, _) | (_, _, SandboxPhase::Deleting) => SandboxState::Absent,
            (_, Some(r), _) if !r.is_dead() => SandboxState::Running,
            (_, _, SandboxPhase::Provisioning | SandboxPhase::Ready | SandboxPhase::Starting) => SandboxState::Running,
            _ => SandboxState::Stopped,
        };
        let idle_secs = match &live {
            Some(r) if !r.is_dead() => r.idle_secs(),
            _ => self.idle_since(name, sandbox),
        };
        let busy = live.as_ref().is_some_and(|r| !r.is_dead() && r.tenancy.running());
        let disk_bytes = match &live {
            Some(r) if !r.is_dead() && state == SandboxState::Running => self.disk_bytes(r).await,
            _ => 0,
        };
        SandboxInfo { name: name.to_owned(), chat_id: chat_id.to_owned(), state, disk_bytes, idle_secs, busy }
    }

    /// Seconds since last use: as this server saw it, else since the gateway made it.
    fn idle_since(&self, name: &str, sandbox: Option<&Sandbox>) -> u64 {
        let seen = self.last_used.get(name);
        let created = sandbox
            .and_then(|s| s.metadata.as_ref())
            .and_then(|m| m.created_time)
            .and_then(|t| u64::try_from(t.seconds).ok())
            .map(|s| SystemTime::UNIX_EPOCH + Duration::from_secs(s));
        seen.or(created).and_then(|t| t.elapsed().ok()).map(|d| d.as_secs()).unwrap_or(0)
    }

    /// The workspace's size, as its files' sizes added up by the agent.
    async fn disk_bytes(&self, remote: &Remote) -> u64 {
        let listed = remote.link.ask(|id| Request::ListFiles { id, path: ".".into() }).await;
        let mut total = 0;
        let mut folders: Vec<String> = Vec::new();
        let mut next = listed.ok();
        // A breadth-first walk, bounded so a workspace of many folders costs little.
        for _ in 0..64 {
            let Some(Reply::Files { entries, .. }) = next.take() else { break };
            for e in entries {
                if e.is_dir {
                    folders.push(e.path);
                } else {
                    total += e.size;
                }
            }
            let Some(folder) = folders.pop() else { break };
            next = remote.link.ask(|id| Request::ListFiles { id, path: folder }).await.ok();
        }
        total
    }

    /// The network policy of sandbox `name`: the settings' and its conversation's hosts.
    fn policy_of(&self, name: &str) -> lens_openshell::proto::openshell::sandbox::v1::SandboxPolicy {
        policy::chat_policy(self.settings().network.as_ref(), &self.options.home, &self.chat_hosts.of(name))
    }

    /// Sends `policy` to sandbox `name`: the version the gateway gave it.
    async fn send_policy(
        &self,
        client: &mut OpenShellClient<Channel>,
        name: &str,
        policy: lens_openshell::proto::openshell::sandbox::v1::SandboxPolicy,
    ) -> Result<u32, GatewayError> {
        let request = UpdateConfigRequest {
            sandbox: name.to_owned(),
            policy: Some(policy),
            workspace_scope: workspace_scope(),
            request_id: uuid::Uuid::new_v4().to_string(),
        };
        match client.update_config(request).await {
            Ok(reply) => Ok(reply.into_inner().version),
            Err(s) => {
                let e = GatewayError::rpc("UpdateConfig", &s);
                tracing::warn!(sandbox = %name, error = %e, "the network policy was not applied");
                Err(e)
            }
        }
    }

    /// Sends the current network policy to every connected sandbox (or to `only`), in
    /// the background; refusals are logged.
    fn push_policy(&self, only: Option<String>) {
        let driver = self.me.clone();
        tokio::spawn(async move {
            if let Some(driver) = driver.upgrade() {
                driver.push_policy_now(only, true).await;
            }
        });
    }

    /// Sends the current network policy to every connected sandbox (or to `only`): the
    /// sandboxes that refused it, and why. Not `patient`, one starting now is left to a
    /// background push once it has started.
    async fn push_policy_now(&self, only: Option<String>, patient: bool) -> Vec<(String, String)> {
        let mut slots: Vec<(String, Slot)> =
            self.running.lock().await.iter().map(|(n, s)| (n.clone(), s.clone())).collect();
        slots.retain(|(n, _)| only.as_ref().is_none_or(|o| o == n));
        let mut refused = Vec::new();
        for (name, slot) in slots {
            // One starting now is sent it once started, in the background: an admin's
            // change does not wait on a sandbox's start.
            let live = match slot.try_lock() {
                Ok(live) => live.clone(),
                Err(_) if patient => slot.lock().await.clone(),
                Err(_) => {
                    self.push_policy(Some(name));
                    continue;
                }
            };
            let policy = self.policy_of(&name);
            let Some(remote) = live else { continue };
            let mut client = match self.client().await {
                Ok(client) => client,
                Err(e) => {
                    refused.push((name, e.to_string()));
                    continue;
                }
            };
            match self.send_policy(&mut client, &name, policy).await {
                Ok(version) => remote.policy.sent(version),
                Err(e) => refused.push((name, e.to_string())),
            }
        }
        refused
    }

    /// Takes new settings; `true` when their network differs from the old.
    fn take_settings(&self, settings: &DriverSettings) -> bool {
        let changed = self.settings().network != settings.network;
        self.admission.set_limits(settings.admission);
        if let Ok(mut s) = self.settings.lock() {
            *s = settings.clone();
        }
        self.network_on.store(settings.network.is_some(), Ordering::SeqCst);
        changed
    }
}

#[async_trait::async_trait]
impl AgentBackend for GatewayDriver {
    type Sandbox = Remote;

    async fn sandbox(&self, chat_id: &str) -> Result<(Arc<Remote>, bool, InUse), SandboxError> {
        let (remote, healed, hold) = self.remote(chat_id).await?;
        self.used(&remote.name);
        self.policy_in_force(&remote).await;
        Ok((remote, healed, hold))
    }

    fn run_env(&self, remote: &Remote) -> Env {
        remote.env.clone()
    }
}

#[async_trait::async_trait]
impl SandboxDriver for GatewayDriver {
    async fn ensure(&self, chat_id: &str) -> Result<SandboxInfo, SandboxError> {
        self.remote(chat_id).await?;
        self.status(chat_id).await
    }

    async fn let_go(&self, chat_id: &str) -> Result<(), SandboxError> {
        let name = sandbox_name(chat_id)?;
        let slot = self.running.lock().await.get(&name).cloned();
        let Some(slot) = slot else { return Ok(()) };
        // Only this server's agent and connection end: the sandbox runs on for the other.
        if let Some(remote) = slot.lock().await.take() {
            remote.release().await;
        }
        Ok(())
    }

    async fn stop(&self, chat_id: &str) -> Result<(), SandboxError> {
        let name = sandbox_name(chat_id)?;
        let slot = self.slot(&name).await;
        // Held until the gateway has stopped it: a run asked for meanwhile starts it afresh after.
        let mut live = slot.lock().await;
        if let Some(remote) = live.take() {
            remote.release().await;
        }
        self.stop_on_gateway(&name).await
    }

    async fn delete(&self, chat_id: &str) -> Result<(), SandboxError> {
        self.delete_sandbox(chat_id).await
    }

    async fn status(&self, chat_id: &str) -> Result<SandboxInfo, SandboxError> {
        let name = sandbox_name(chat_id)?;
        let sandbox = self.get(&name).await?;
        Ok(self.info(chat_id, &name, sandbox.as_ref()).await)
    }

    async fn queued(&self, chat_id: &str) -> Option<usize> {
        self.admission.place(&sandbox_name(chat_id).ok()?)
    }

    async fn settling(&self, chat_id: &str) -> bool {
        sandbox_name(chat_id).is_ok_and(|name| self.is_settling(&name))
    }

    async fn list(&self) -> Result<Vec<SandboxInfo>, SandboxError> {
        self.list_all().await
    }

    /// New limits apply to sandboxes started from now on; a new network policy is sent
    /// to the running ones at once.
    fn configure(&self, settings: &DriverSettings) {
        if self.take_settings(settings) {
            self.push_policy(None);
        }
    }

    /// The new network policy sent to every running sandbox before the answer; one that
    /// refuses it puts the old settings back everywhere.
    async fn reconfigure(&self, settings: &DriverSettings) -> Result<(), SandboxError> {
        let before = self.settings();
        if !self.take_settings(settings) {
            return Ok(());
        }
        let refused = self.push_policy_now(None, false).await;
        let Some((name, why)) = refused.into_iter().next() else { return Ok(()) };
        self.take_settings(&before);
        let still = self.push_policy_now(None, false).await;
        if !still.is_empty() {
            tracing::warn!(sandboxes = still.len(), "the old network policy could not be put back everywhere");
        }
        Err(SandboxError::Refused(format!("the gateway refused the new network policy for {name}: {why}")))
    }

    /// The gateway's proxy decides and logs egress itself (in each sandbox's log, which
    /// a run's record is read from); this log holds what Lens decided for conversations.
    fn egress_log(&self) -> Vec<crate::egress::EgressDecision> {
        self.egress_notes.recent()
    }

    /// Sent to the conversation's sandbox as its policy now, and at its next start.
    fn set_chat_network(&self, chat_id: &str, network: crate::ChatNetwork) {
        let Ok(name) = crate::name::sandbox_name(chat_id) else { return };
        if self.chat_hosts.set(&name, network) {
            self.push_policy(Some(name));
        }
    }

    async fn set_chat_network_for_run(&self, chat_id: &str, network: crate::ChatNetwork) {
        let Ok(name) = crate::name::sandbox_name(chat_id) else { return };
        if self.chat_hosts.set(&name, network) {
            self.push_policy_now(Some(name), true).await;
        }
    }

    fn note_egress(&self, chat_id: &str, target: &str, reason: &str) {
        self.egress_notes.note(chat_id, target, reason);
    }

    fn admission(&self) -> &Admission {
        &self.admission
    }

    async fn make_room(&self, only: Option<String>) {
        self.stop_idle("", only).await;
    }

    /// Lets go of every agent and stops the sandboxes, all at once (each may take the
    /// container's stop timeout); their workspaces stay on the gateway.
    async fn shutdown(&self) {
        let names: Vec<String> = self.running.lock().await.keys().cloned().collect();
        let stops = names.iter().filter_map(|n| n.strip_prefix("lens-chat-")).map(|chat_id| self.stop(chat_id));
        futures_util::future::join_all(stops).await;
        let later = self.stopping.lock().map(|mut s| std::mem::take(&mut *s)).unwrap_or_default();
        futures_util::future::join_all(later).await;
        self.last_used.write();
    }
}

impl GatewayDriver {
    /// Stops the gateway's sandbox (its processes end; its workspace stays), if it has one.
    async fn stop_on_gateway(&self, name: &str) -> Result<(), SandboxError> {
        if self.get(name).await?.is_none() {
            return Ok(());
        }
        let mut client = self.client().await?;
        let request = StopSandboxRequest {
            name: name.to_owned(),
            workspace_scope: workspace_scope(),
            request_id: uuid::Uuid::new_v4().to_string(),
        };
        match tokio::time::timeout(CALL_DEADLINE, client.stop_sandbox(request)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(s)) if s.code() == tonic::Code::NotFound => Ok(()),
            Ok(Err(s)) => Err(gateway_error(GatewayError::rpc("StopSandbox", &s))),
            Err(_) => Err(SandboxError::Unavailable("the gateway did not stop the sandbox in time".into())),
        }
    }

    /// Lets go of the agent and deletes the gateway's sandbox.
    async fn delete_sandbox(&self, chat_id: &str) -> Result<(), SandboxError> {
        let name = sandbox_name(chat_id)?;
        let slot = self.slot(&name).await;
        let mut live = slot.lock().await;
        if let Some(remote) = live.take() {
            remote.release().await;
        }
        let mut client = self.client().await?;
        self.delete_on_gateway(&mut client, &name).await?;
        self.last_used.forget(&name);
        Ok(())
    }

    /// Deletes the gateway's sandbox, if it has one. An ACCEPTED delete finishes on the
    /// gateway; a start meanwhile waits for it.
    async fn delete_on_gateway(&self, client: &mut OpenShellClient<Channel>, name: &str) -> Result<(), SandboxError> {
        let request = DeleteSandboxRequest {
            name: name.to_owned(),
            workspace_scope: workspace_scope(),
            allow_missing: true,
            request_id: uuid::Uuid::new_v4().to_string(),
        };
        match tokio::time::timeout(CALL_DEADLINE, client.delete_sandbox(request)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(s)) => Err(gateway_error(GatewayError::rpc("DeleteSandbox", &s))),
            Err(_) => Err(SandboxError::Unavailable("the gateway did not delete the sandbox in time".into())),
        }
    }

    /// Lens's sandboxes on the gateway (those labelled for a conversation).
    async fn list_all(&self) -> Result<Vec<SandboxInfo>, SandboxError> {
        let mut client = self.client().await?;
        let mut out = Vec::new();
        let mut page_token = String::new();
        loop {
            let request = ListSandboxesRequest {
                page_size: 100,
                page_token: page_token.clone(),
                label_selector: format!("{}={}", APP_LABEL.0, APP_LABEL.1),
                workspace_scope: workspace_scope(),
            };
            let page = client
                .list_sandboxes(request)
                .await
                .map_err(|s| gateway_error(GatewayError::rpc("ListSandboxes", &s)))?
                .into_inner();
            for sandbox in &page.sandboxes {
                let Some(meta) = sandbox.metadata.as_ref() else { continue };
                let Some(chat_id) = meta.labels.get(CHAT_LABEL) else { continue };
                if sandbox_name(chat_id).ok().as_deref() == Some(meta.name.as_str()) {
                    out.push(self.info(chat_id, &meta.name, Some(sandbox)).await);
                }
            }
            if page.next_page_token.is_empty() {
                break;
            }
            page_token = page.next_page_token;
        }
        out.retain(|s| s.state != SandboxState::Absent);
        out.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(out)
    }
}

/// Starts the gateway backend with these settings. Nothing is asked of the gateway yet:
/// the first sandbox connects (use [`check_gateway`] to know at once).
pub fn start_gateway(
    options: GatewayOptions,
    settings: &DriverSettings,
) -> Result<Arc<dyn SandboxDriver>, SandboxError> {
    Ok(GatewayDriver::new(options, settings)?)
}

/// What a check of a gateway found: its version, and how long a test sandbox took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayCheck {
    pub version: String,
    /// Connecting and `Health`, in milliseconds.
    pub round_trip_ms: u64,
    /// A test sandbox created, run once and deleted, in milliseconds.
    pub sandbox_ms: u64,
}

/// Connects, asks `Health`, and creates, runs and deletes a test sandbox.
pub async fn check_gateway(options: &GatewayOptions) -> Result<GatewayCheck, SandboxError> {
    start::check(options).await
}
