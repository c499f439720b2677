//! The egress proxy's outside half. The agent asks for each connection a program makes to
//! its proxy; here the [`EgressPolicy`] decides, the decision is logged, and an allowed
//! connection is opened from the server and relayed both ways over the agent's frames.

use std::{
    collections::{HashMap, VecDeque},
    net::SocketAddr,
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use lens_sandbox_agent::protocol::Request;
use tokio::{
    io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt},
    net::TcpStream,
    sync::mpsc,
};

use crate::{
    egress::{EgressDecision, EgressPolicy, host_of},
    reached::{Bytes, Reached},
    read_only::{Interception, SandboxCa, UpstreamTrust},
    shown::shown,
};

/// What the sandboxes may reach now, and what their programs are told about it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Network {
    pub policy: EgressPolicy,
    /// Added to every run's environment (the proxy, the package indexes).
    pub env: Vec<(String, String)>,
    /// Registries mode: connections end in the read-only proxy, which checks the real
    /// hosts against this trust. `None`: a plain tunnel (the `hosts` mode).
    pub read_only: Option<UpstreamTrust>,
}

/// What one conversation's sandbox may reach, beside and within the admin's settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChatNetwork {
    /// Hosts its owner allowed for it, besides the admin's list.
    pub hosts: Vec<String>,
    /// When its owner may reach less than the site allows (their groups' rules): the
    /// only hosts of the admin's list it may reach (none: no network), and why.
    pub within: Option<(Vec<String>, String)>,
}

impl ChatNetwork {
    /// The site's `network` as this conversation may use it: narrowed to its owner's
    /// hosts, or none, with the reason for none.
    pub fn narrow(&self, network: Option<Network>) -> Result<Network, Option<String>> {
        let mut network = network.ok_or(None)?;
        if let Some((only, why)) = &self.within {
            network.policy.hosts.retain(|h| only.contains(h));
            if network.policy.hosts.is_empty() {
                return Err(Some(why.clone()));
            }
        }
        Ok(network)
    }

    /// The hosts its owner allowed, when their groups still let them reach any.
    pub fn owner_hosts(&self) -> &[String] {
        match &self.within {
            Some(_) => &[],
            None => &self.hosts,
        }
    }
}

/// Each conversation's [`ChatNetwork`].
#[derive(Debug, Default)]
pub struct ChatHosts(Mutex<HashMap<String, ChatNetwork>>);

impl ChatHosts {
    /// Sets `chat_id`'s network; `true` when it changed.
    pub fn set(&self, chat_id: &str, network: ChatNetwork) -> bool {
        let Ok(mut all) = self.0.lock() else { return false };
        if all.get(chat_id).map_or(network == ChatNetwork::default(), |n| *n == network) {
            return false;
        }
        if network == ChatNetwork::default() {
            all.remove(chat_id);
        } else {
            all.insert(chat_id.to_owned(), network);
        }
        true
    }

    pub fn of(&self, chat_id: &str) -> ChatNetwork {
        self.0.lock().ok().and_then(|all| all.get(chat_id).cloned()).unwrap_or_default()
    }
}

/// How much of a program's bytes wait between it and the read-only proxy.
const INTERCEPT_BUFFER: usize = 64 * 1024;

/// The latest decisions, newest last; and how much each sandbox may make the server log.
#[derive(Debug, Default)]
pub struct EgressLog {
    decisions: Mutex<VecDeque<EgressDecision>>,
    budgets: crate::log_budget::LogBudgets,
}

const LOG_SIZE: usize = 200;

impl EgressLog {
    /// Records a decision (the sandbox's text cut), and logs it within the conversation's budget.
    fn record(&self, chat_id: String, target: &str, allowed: bool, reason: &str) {
        let decision = EgressDecision { chat_id, target: shown(target), allowed, reason: shown(reason), count: 1 };
        if self.may_log(&decision.chat_id) {
            let d = &decision;
            if d.allowed {
                tracing::info!(chat = %d.chat_id, target = %d.target, reason = %d.reason, "sandbox egress allowed");
            } else {
                tracing::warn!(chat = %d.chat_id, target = %d.target, reason = %d.reason, "sandbox egress refused");
            }
        }
        if let Ok(mut d) = self.decisions.lock() {
            // The same decision again (a program retrying): one record, counted.
            if let Some(last) = d.back_mut().filter(|l| {
                l.chat_id == decision.chat_id
                    && l.target == decision.target
                    && l.allowed == decision.allowed
                    && l.reason == decision.reason
            }) {
                last.count += 1;
                return;
            }
            if d.len() == LOG_SIZE {
                d.pop_front();
            }
            d.push_back(decision);
        }
    }

    /// Records something decided for a conversation outside its runs (a host its owner
    /// allowed), as allowed.
    pub fn note(&self, chat_id: &str, target: &str, reason: &str) {
        self.record(chat_id.to_owned(), target, true, reason);
    }

    /// Whether a line the conversation's sandbox causes may go to the log now.
    pub(crate) fn may_log(&self, chat_id: &str) -> bool {
        self.budgets.may_log(chat_id)
    }

    pub fn recent(&self) -> Vec<EgressDecision> {
        self.decisions.lock().map(|d| d.iter().cloned().collect()).unwrap_or_default()
    }
}

/// One sandbox's open proxy connections.
pub(crate) struct Relay {
    /// The conversation, for the egress log (set when a pre-started sandbox is given one).
    chat_id: Mutex<String>,
    /// Frames to the agent, written in order; bounded, so a fast remote host waits.
    pub outbox: mpsc::Sender<Request>,
    pub network: Arc<Mutex<Option<Network>>>,
    pub log: Arc<EgressLog>,
    /// Runs in progress in the sandbox: connections are let out only while one is.
    active: Arc<AtomicUsize>,
    conns: Mutex<HashMap<u64, Conn>>,
    /// The sandbox's own authority, which the read-only proxy signs with.
    ca: Arc<SandboxCa>,
    /// What the run in progress reached.
    pub reached: Arc<Reached>,
    chat_hosts: Arc<ChatHosts>,
}

/// What a sandbox's proxy shares with its driver (and, for `active`, its sandbox).
pub(crate) struct RelayShared {
    pub network: Arc<Mutex<Option<Network>>>,
    pub log: Arc<EgressLog>,
    pub active: Arc<AtomicUsize>,
    pub ca: Arc<SandboxCa>,
    pub chat_hosts: Arc<ChatHosts>,
}

/// One open proxy connection.
struct Conn {
    /// What the program sends, on its way to the remote host; `None` once the program
    /// closed its end (the remote host's answer may still come).
    to_remote: Option<mpsc::Sender<Vec<u8>>>,
    /// The task relaying the remote host's bytes in; aborted when Lens closes it.
    from_remote: Option<tokio::task::AbortHandle>,
    /// Where the bytes each way are counted, for the run's record.
    bytes: Arc<Bytes>,
}

/// Chunks a program sent that may wait for a slow remote host, per connection; past
/// that the connection is closed rather than held in the server's memory.
const TO_REMOTE_QUEUE: usize = 64;

impl Relay {
    /// The proxy of conversation `chat_id`'s sandbox, with what the driver shares.
    pub fn new(chat_id: String, outbox: mpsc::Sender<Request>, shared: RelayShared) -> Arc<Self> {
        Arc::new(Self {
            chat_id: Mutex::new(chat_id),
            outbox,
            network: shared.network,
            log: shared.log,
            active: shared.active,
            conns: Mutex::default(),
            ca: shared.ca,
            reached: Arc::default(),
            chat_hosts: shared.chat_hosts,
        })
    }

    fn chat(&self) -> String {
        self.chat_id.lock().map(|c| c.clone()).unwrap_or_default()
    }

    /// The conversation a pre-started sandbox now belongs to.
    pub fn set_chat(&self, chat_id: &str) {
        if let Ok(mut c) = self.chat_id.lock() {
            *c = chat_id.to_owned();
        }
    }

    /// Closes every open connection (the last run ended, or the sandbox is gone).
    pub fn close_all(&self) {
        let conns: Vec<(u64, Conn)> = self.conns.lock().map(|mut c| c.drain().collect()).unwrap_or_default();
        for (id, conn) in conns {
            conn.from_remote.inspect(|task| task.abort());
            let _ = self.outbox.try_send(Request::NetClose { id });
        }
    }

    /// Closes one connection from Lens's side.
    fn cut(&self, id: u64) {
        let conn = self.conns.lock().ok().and_then(|mut c| c.remove(&id));
        if let Some(conn) = conn {
            conn.from_remote.inspect(|task| task.abort());
            let _ = self.outbox.try_send(Request::NetClose { id });
        }
    }

    /// A program asked for `target`: decide, log, and connect.
    pub fn connect(self: &Arc<Self>, id: u64, method: String, target: String) {
        let relay = self.clone();
        tokio::spawn(async move {
            let chat = relay.chat_hosts.of(&relay.chat());
            let network = chat.narrow(relay.network.lock().ok().and_then(|n| n.clone()));
            let read_only = network.as_ref().ok().and_then(|n| n.read_only.clone());
            let running = relay.active.load(Ordering::SeqCst) > 0;
            let also = chat.owner_hosts().to_vec();
            let (policy, narrowed) = match network {
                Ok(n) => (Some(n.policy), None),
                Err(why) => (None, why),
            };
            // A host the conversation's owner allowed is a plain tunnel, in every mode:
            // the read-only proxy is for the registries.
            let host = host_of(&target);
            let by_owner = policy.as_ref().is_some_and(|p| !p.hosts.contains(&host)) && also.contains(&host);
            let read_only = read_only.filter(|_| !by_owner);
            let mut unlisted = false;
            let decided = match (policy, method.as_str()) {
                (None, _) => Err(narrowed.unwrap_or_else(|| {
                    "the sandbox has no network (an admin can allow package registries or hosts)".into()
                })),
                (Some(_), _) if !running => {
                    Err("no run is in progress: what an earlier run left running has no network".to_string())
                }
                (Some(_), m) if m != "CONNECT" => {
                    Err("plain HTTP is not allowed: only HTTPS (CONNECT) goes through the proxy".to_string())
                }
                (Some(policy), _) => match policy.decide_with(&target, &also).await {
                    Ok(addr) => Ok(addr),
                    Err(refusal) => {
                        unlisted = matches!(refusal, crate::egress::Refusal::NotListed(_));
                        Err(refusal.to_string())
                    }
                },
            };
            if let (Ok(addr), Some(trust)) = (&decided, read_only) {
                relay.intercept(id, target, *addr, trust).await;
                return;
            }
            let stream = match decided {
                Ok(addr) => match tokio::time::timeout(Duration::from_secs(10), TcpStream::connect(addr)).await {
                    Ok(Ok(stream)) => Ok((addr, stream)),
                    Ok(Err(e)) => Err(format!("connecting to {addr} failed: {e}")),
                    Err(_) => Err(format!("connecting to {addr} timed out")),
                },
                Err(reason) => Err(reason),
            };
            let reason = match &stream {
                Ok((addr, _)) if by_owner => format!("connected to {addr} (allowed in this conversation)"),
                Ok((addr, _)) => format!("connected to {addr}"),
                Err(reason) => reason.clone(),
            };
            let allowed = stream.is_ok();
            relay.log.record(relay.chat(), &target, allowed, &reason);
            let bytes = relay.reached.record_why(&target, allowed, &reason, unlisted);
            let Ok((_, stream)) = stream else {
                let _ = relay.outbox.send(Request::NetOpen { id, ok: false, message: reason }).await;
                return;
            };
            relay.open(id, stream, bytes).await;
        });
    }

    /// A registry connection in registries mode: the program's TLS ends in the read-only
    /// proxy, which lets downloads through and refuses the rest, each refusal logged.
    async fn intercept(self: &Arc<Self>, id: u64, target: String, addr: SocketAddr, trust: UpstreamTrust) {
        let host = target.rsplit_once(':').map(|(h, _)| h).unwrap_or(&target).trim_matches(['[', ']']).to_owned();
        let reason = format!("reading from {addr} (downloads only)");
        self.log.record(self.chat(), &target, true, &reason);
        let bytes = self.reached.record(&target, true, &reason);
        let (program, proxy) = tokio::io::duplex(INTERCEPT_BUFFER);
        let (log, chat, ca, reached) = (self.log.clone(), self.chat(), self.ca.clone(), self.reached.clone());
        let refused = Arc::new(move |reason: String| {
            log.record(chat.clone(), &target, false, &reason);
            reached.record(&target, false, &reason);
        });
        tokio::spawn(async move {
            if let Err(e) = crate::read_only::serve(proxy, Interception { host, addr, ca, trust, refused }).await {
                tracing::debug!(error = %e, "a read-only registry connection ended");
            }
        });
        self.open(id, program, bytes).await;
    }

    async fn open<S>(self: &Arc<Self>, id: u64, stream: S, bytes: Arc<Bytes>)
    where
        S: AsyncRead + AsyncWrite + Send + 'static,
    {
        let (mut reader, mut writer) = tokio::io::split(stream);
        let (tx, mut rx) = mpsc::channel::<Vec<u8>>(TO_REMOTE_QUEUE);
        // Known before the program hears it is open, so its first bytes find their way.
        if let Ok(mut c) = self.conns.lock() {
            c.insert(id, Conn { to_remote: Some(tx), from_remote: None, bytes: bytes.clone() });
        }
        let _ = self.outbox.send(Request::NetOpen { id, ok: true, message: String::new() }).await;
        tokio::spawn(async move {
            while let Some(bytes) = rx.recv().await {
                if writer.write_all(&bytes).await.is_err() {
                    break;
                }
            }
            let _ = writer.shutdown().await;
        });
        let relay = self.clone();
        let from_remote = tokio::spawn(async move {
            let mut buf = vec![0u8; 32 * 1024];
            // Waiting on a full outbox leaves the rest in the socket: TCP slows the sender.
            while let Ok(n @ 1..) = reader.read(&mut buf).await {
                bytes.received.fetch_add(n as u64, Ordering::Relaxed);
                if relay.outbox.send(Request::NetData { id, data: buf[..n].to_vec() }).await.is_err() {
                    break;
                }
            }
            let _ = relay.outbox.send(Request::NetClose { id }).await;
            if let Ok(mut c) = relay.conns.lock() {
                c.remove(&id);
            }
        });
        match self
            .conns
            .lock()
            .map(|mut c| c.get_mut(&id).map(|conn| conn.from_remote = Some(from_remote.abort_handle())))
        {
            Ok(Some(())) => {}
            // Closed meanwhile (the last run ended): the relay in goes too.
            _ => from_remote.abort(),
        }
    }

    /// Bytes the program sent. A remote host that takes them slower than the program
    /// sends loses the connection once its queue is full.
    pub fn data(&self, id: u64, data: Vec<u8>) {
        let to = self.conns.lock().ok().and_then(|c| {
            let conn = c.get(&id)?;
            conn.bytes.sent.fetch_add(data.len() as u64, Ordering::Relaxed);
            conn.to_remote.clone()
        });
        if let Some(to) = to
            && to.try_send(data).is_err()
        {
            if self.log.may_log(&self.chat()) {
                tracing::warn!(chat = %self.chat(), "a sandbox connection closed: the remote host reads too slowly");
            }
            self.cut(id);
        }
    }

    /// The program closed its end: the far end is closed once what it sent is written,
    /// and its answer still comes in until it closes too.
    pub fn close(&self, id: u64) {
        if let Ok(mut c) = self.conns.lock()
            && let Some(conn) = c.get_mut(&id)
        {
            conn.to_remote = None;
        }
    }
}
