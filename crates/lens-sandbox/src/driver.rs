//! The `SandboxDriver` trait: the only way the server touches a sandbox.

use std::{collections::BTreeMap, pin::Pin, time::Duration};

use futures_util::{
    FutureExt, Stream,
    future::{BoxFuture, Shared},
};
use lens_types::{OutputStream, RunEnding};
use serde::{Deserialize, Serialize};

use lens_sandbox_agent::protocol::{FILE_PART, Special};

use crate::{AdmissionLimits, Limits, Network, SandboxError, calls, egress::EgressDecision};

/// Where a conversation's sandbox stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SandboxState {
    /// Never made, or deleted.
    Absent,
    /// Processes alive.
    Running,
    /// No process; the workspace is kept.
    Stopped,
}

/// One sandbox, as `list` and `status` report it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxInfo {
    pub name: String,
    pub chat_id: String,
    pub state: SandboxState,
    /// Bytes the workspace holds.
    pub disk_bytes: u64,
    /// Seconds since it was last used (a run, a file); for a stopped sandbox, since it stopped.
    pub idle_secs: u64,
    /// Whether a run is in progress.
    pub busy: bool,
}

/// A command to run in a sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecRequest {
    pub argv: Vec<String>,
    /// Added to the sandbox's own clean environment.
    pub env: BTreeMap<String, String>,
    pub timeout: Duration,
}

/// What a run yields: output chunks as they come, then exactly one ending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunEvent {
    Output {
        stream: OutputStream,
        bytes: Vec<u8>,
    },
    /// Files the run created or changed in `/workspace` (hidden ones aside); comes just
    /// before `Ended`, and only when there are some.
    Files(Vec<FileEntry>),
    /// What the run reached on the network, host by host; comes just before `Ended`
    /// (after `Files`), and only when the run made connections and the driver can say.
    Network(Vec<lens_types::NetReach>),
    /// In place of `Network` where the driver learns it only after the run's ending.
    NetworkSoon(NetworkSoon),
    Ended(RunEnding),
    /// The run could not start (no such program, ...); nothing more comes.
    Failed(String),
}

/// What a run reached on the network, where the driver learns it only after the run
/// has ended (an OpenShell gateway's proxy logs its decisions, and its sandbox pushes
/// the lines up to a second late): the run ends without waiting, and whoever keeps the
/// run's record adds this to it when it comes (empty: nothing to add).
#[derive(Clone)]
pub struct NetworkSoon(Shared<BoxFuture<'static, Vec<lens_types::NetReach>>>);

impl NetworkSoon {
    pub fn new(reached: impl Future<Output = Vec<lens_types::NetReach>> + Send + 'static) -> Self {
        Self(reached.boxed().shared())
    }

    /// The record, when it has come.
    pub async fn get(self) -> Vec<lens_types::NetReach> {
        self.0.await
    }

    /// The same record, changed as it comes (what a person may allow, say).
    pub fn map(
        self,
        change: impl FnOnce(Vec<lens_types::NetReach>) -> Vec<lens_types::NetReach> + Send + 'static,
    ) -> Self {
        Self::new(async move { change(self.get().await) })
    }
}

/// The same record, not an equal one: a record to come has no value to compare yet.
impl PartialEq for NetworkSoon {
    fn eq(&self, other: &Self) -> bool {
        self.0.ptr_eq(&other.0)
    }
}

impl Eq for NetworkSoon {}

impl std::fmt::Debug for NetworkSoon {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NetworkSoon(..)")
    }
}

/// A run in progress. Dropping it stops the run and kills its processes.
pub type RunStream = Pin<Box<dyn Stream<Item = RunEvent> + Send>>;

/// A file or folder in a workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    /// Relative to `/workspace`.
    pub path: String,
    pub size: u64,
    pub is_dir: bool,
    /// When it last changed, Unix milliseconds, where the listing says.
    pub modified_ms: Option<i64>,
    /// What it is when neither a regular file nor a folder (a link is never a folder here).
    pub special: Option<Special>,
    /// For a file of several names (hard links): its device and inode, one per file.
    pub inode: Option<[u64; 2]>,
}

/// What an admin sets that a driver puts into force while it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverSettings {
    /// What one sandbox may use, for sandboxes started from now on.
    pub limits: Limits,
    /// Sandboxes at once and their memory together.
    pub admission: AdmissionLimits,
    /// Sandboxes kept started for new conversations.
    pub pool_size: usize,
    /// What sandboxes may reach; `None`: loopback only.
    pub network: Option<Network>,
}

/// Where a part goes in the file being written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FilePart {
    /// Bytes of the file before this part.
    pub offset: u64,
    /// Whether this part ends the file.
    pub last: bool,
}

/// A sandbox backend. Held as `Arc<dyn SandboxDriver>`; every implementation passes the
/// same behavioural story.
#[async_trait::async_trait]
pub trait SandboxDriver: crate::agent_core::AgentCalls + Send + Sync {
    /// Makes the conversation's sandbox if absent and starts it if stopped.
    async fn ensure(&self, chat_id: &str) -> Result<SandboxInfo, SandboxError>;

    /// Runs a command in the running sandbox.
    async fn exec(&self, chat_id: &str, request: ExecRequest) -> Result<RunStream, SandboxError> {
        self.start_agent_run(chat_id, request.timeout, calls::exec(&request)).await
    }

    /// Runs Python in the conversation's one kernel, where names persist between runs.
    async fn run_python(&self, chat_id: &str, code: &str, timeout: Duration) -> Result<RunStream, SandboxError> {
        self.start_agent_run(chat_id, timeout, calls::python(code, timeout)).await
    }

    /// Writes one part of a file under `/workspace` (at most [`FILE_PART`] bytes): the
    /// part at `offset` (0 begins it afresh); `last` puts the whole file in place.
    /// [`crate::copy_in`] moves a file of any size this way.
    async fn write_part(&self, chat_id: &str, path: &str, part: FilePart, bytes: Vec<u8>) -> Result<(), SandboxError> {
        self.ask_agent(chat_id, calls::write_part(path, part, bytes)).await.map(|_| ())
    }

    /// Forgets a write begun and not finished.
    async fn drop_write(&self, chat_id: &str, path: &str) -> Result<(), SandboxError> {
        self.ask_agent(chat_id, calls::drop_write(path)).await.map(|_| ())
    }

    /// Ends the conversation's Python kernel, keeping every file and every other
    /// program: the next Python run starts with no names.
    async fn restart_python(&self, chat_id: &str) -> Result<(), SandboxError> {
        self.ask_agent(chat_id, calls::restart_python()).await.map(|_| ())
    }

    /// Reads one part (at most [`FILE_PART`] bytes) of a file under `/workspace` from
    /// `offset`, refusing a file larger than `max_bytes`: the part and the file's size.
    /// [`crate::copy_out`] moves a file of any size this way.
    async fn read_part(
        &self,
        chat_id: &str,
        path: &str,
        max_bytes: u64,
        offset: u64,
    ) -> Result<(Vec<u8>, u64), SandboxError> {
        calls::file_part(self.ask_agent(chat_id, calls::read_part(path, max_bytes, offset)).await?)
    }

    /// Writes a file under `/workspace` (folders made as needed), in parts.
    async fn put_file(&self, chat_id: &str, path: &str, bytes: Vec<u8>) -> Result<(), SandboxError> {
        let parts = futures_util::stream::iter(bytes.chunks(FILE_PART).map(|c| Ok(c.to_vec())).collect::<Vec<_>>());
        crate::copy_in(self, chat_id, path, parts).await.map(|_| ())
    }

    /// Reads a file under `/workspace`, refusing more than `max_bytes`, in parts.
    async fn get_file(&self, chat_id: &str, path: &str, max_bytes: u64) -> Result<Vec<u8>, SandboxError> {
        let mut whole = Vec::new();
        crate::copy_out(self, chat_id, path, max_bytes, |part| {
            whole.extend_from_slice(&part);
            std::future::ready(Ok(()))
        })
        .await?;
        Ok(whole)
    }

    /// Lists a folder under `/workspace`.
    async fn list_files(&self, chat_id: &str, path: &str) -> Result<Vec<FileEntry>, SandboxError> {
        calls::listing(self.ask_agent(chat_id, calls::list_files(path)).await?)
    }

    /// Ends every process; keeps the workspace.
    async fn stop(&self, chat_id: &str) -> Result<(), SandboxError>;

    /// Lets go of the conversation's sandbox for another server (a replica) that drives
    /// it now: this server's agent in it ends, and with it the Python names it held; the
    /// sandbox and its files stay for the other. Nothing when this server has none.
    async fn let_go(&self, chat_id: &str) -> Result<(), SandboxError>;

    /// Ends every process and deletes the workspace.
    async fn delete(&self, chat_id: &str) -> Result<(), SandboxError>;

    async fn status(&self, chat_id: &str) -> Result<SandboxInfo, SandboxError>;

    /// While the conversation's sandbox waits for room to start: its place in line
    /// (1 = next). `None` when it does not wait.
    async fn queued(&self, _chat_id: &str) -> Option<usize> {
        None
    }

    /// While a run waits for the conversation's sandbox to put new network settings
    /// into force (an OpenShell sandbox loads a new policy at its next poll).
    async fn settling(&self, _chat_id: &str) -> bool {
        false
    }

    async fn list(&self) -> Result<Vec<SandboxInfo>, SandboxError>;

    /// Puts new settings into force: limits and admission for sandboxes started from now
    /// on, the pool's size and the network at once.
    fn configure(&self, settings: &DriverSettings);

    /// [`configure`](Self::configure), then waits until a new network policy has reached
    /// the sandboxes running now. `Err` when the backend refused it: the settings before
    /// are put back, on the driver and on the sandboxes, so nothing of the change stays.
    async fn reconfigure(&self, settings: &DriverSettings) -> Result<(), SandboxError> {
        self.configure(settings);
        Ok(())
    }

    /// The egress proxy's latest decisions, newest last.
    fn egress_log(&self) -> Vec<EgressDecision>;

    /// What the conversation's sandbox may reach besides the admin's list (the hosts its
    /// owner allowed) and within it (its owner's groups' ceiling), from its next connection.
    fn set_chat_network(&self, chat_id: &str, network: crate::ChatNetwork);

    /// [`Self::set_chat_network`] before a run: returns once the change is in force for
    /// that run (on a gateway, once the sandbox's policy was sent, which the run then
    /// waits for the supervisor to load), so a narrowed network holds from this run on.
    async fn set_chat_network_for_run(&self, chat_id: &str, network: crate::ChatNetwork) {
        self.set_chat_network(chat_id, network);
    }

    /// Puts a change made for a conversation (a host its owner allowed) in the egress log.
    fn note_egress(&self, chat_id: &str, target: &str, reason: &str);

    /// What decides which of this driver's sandboxes may start.
    fn admission(&self) -> &crate::admission::Admission;

    /// How to find a conversation's person, so admission shares the sandboxes fairly
    /// between people; until then each conversation counts as its own person.
    fn set_owners(&self, owners: crate::admission::OwnerOf) {
        self.admission().set_owners(owners);
    }

    /// The sandboxes this server runs, for the other servers sharing their capacity.
    fn held(&self) -> crate::admission::Held {
        self.admission().held()
    }

    /// How to learn what the other servers sharing this capacity run, so the limits
    /// count theirs too.
    fn set_elsewhere(&self, elsewhere: std::sync::Arc<dyn crate::admission::Elsewhere>) {
        self.admission().set_elsewhere(elsewhere);
    }

    /// Stops one idle sandbox (of person `only`, when named) for a start on another
    /// server sharing this capacity.
    async fn make_room(&self, only: Option<String>);

    /// Stops every sandbox as the server goes down; the workspaces stay.
    async fn shutdown(&self);
}

/// A whole run's output, for callers that do not need it live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WholeRun {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub ending: RunEnding,
}

impl WholeRun {
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
}

/// Follows a run to its end; `Err` with the reason when it could not start.
pub async fn run_to_end(mut run: RunStream) -> Result<WholeRun, SandboxError> {
    use futures_util::StreamExt;
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    while let Some(event) = run.next().await {
        match event {
            RunEvent::Output { stream: OutputStream::Stdout, bytes } => stdout.extend(bytes),
            RunEvent::Output { stream: OutputStream::Stderr, bytes } => stderr.extend(bytes),
            RunEvent::Files(_) | RunEvent::Network(_) | RunEvent::NetworkSoon(_) => {}
            RunEvent::Ended(ending) => return Ok(WholeRun { stdout, stderr, ending }),
            RunEvent::Failed(message) => return Err(SandboxError::Backend(message)),
        }
    }
    Err(SandboxError::Backend("the run ended without an ending".into()))
}
