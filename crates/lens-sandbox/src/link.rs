//! The connection to a sandbox's agent: length-prefixed JSON frames over any byte pipe.
//!
//! Both drivers speak to the same agent the same way; only the pipe differs (bwrap's
//! stdin/stdout on this machine, one interactive exec stream on a gateway). Requests go
//! out through one writer so frames never interleave; replies are handed to whoever
//! waits for their id, and proxy frames to the driver's relay.

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::Duration,
};

use lens_sandbox_agent::protocol::{self, FailKind, MAX_FRAME, Reply, Request};
use tokio::{
    io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt},
    sync::mpsc,
};

use crate::SandboxError;

/// How long the agent may take to answer a file or listing request, or to take a frame.
pub(crate) const ANSWER_DEADLINE: Duration = Duration::from_secs(30);

/// Replies of one request that may wait for their reader; past it, the agent waits
/// (and with it the program that prints), so a flood never piles up in the server.
const REPLY_QUEUE: usize = 64;

type Writer = Box<dyn AsyncWrite + Send + Unpin>;

/// One agent's connection.
pub(crate) struct AgentLink {
    /// The agent's requests; `None` once closed (the agent ends when it reads EOF).
    writer: tokio::sync::Mutex<Option<Writer>>,
    waiting: Mutex<HashMap<u64, mpsc::Sender<Reply>>>,
    /// Set when the agent is gone (its pipe closed) or was given up on: the next call
    /// starts the sandbox afresh.
    dead: AtomicBool,
    next_id: AtomicU64,
}

/// Why [`AgentLink::ask`] got no answer.
pub(crate) enum Unanswered {
    /// The request could not be sent, or the agent went away before it answered.
    Failed(SandboxError),
    /// The agent took the request and said nothing within [`ANSWER_DEADLINE`].
    Silent,
}

impl AgentLink {
    /// Starts reading `reader`; proxy frames go to `on_net`. The agent's first frame
    /// must have been read already.
    pub(crate) fn start(
        mut reader: impl AsyncRead + Send + Unpin + 'static,
        writer: impl AsyncWrite + Send + Unpin + 'static,
        on_net: impl Fn(Reply) + Send + 'static,
    ) -> Arc<Self> {
        let link = Arc::new(Self {
            writer: tokio::sync::Mutex::new(Some(Box::new(writer))),
            waiting: Mutex::default(),
            dead: AtomicBool::new(false),
            next_id: AtomicU64::new(1),
        });
        let weak = Arc::downgrade(&link);
        tokio::spawn(async move {
            while let Some(reply) = read_reply(&mut reader).await {
                if matches!(reply, Reply::NetConnect { .. } | Reply::NetData { .. } | Reply::NetClose { .. }) {
                    on_net(reply);
                    continue;
                }
                let Some(link) = weak.upgrade() else { break };
                let id = reply_id(&reply);
                let to = link.waiting.lock().ok().and_then(|w| w.get(&id).cloned());
                drop(link);
                if let Some(to) = to {
                    // A full queue holds the agent back; a reader gone drops it.
                    let _ = to.send(reply).await;
                }
            }
            // The agent is gone: every waiter hears it, and the sandbox is marked dead.
            if let Some(link) = weak.upgrade() {
                link.dead.store(true, Ordering::SeqCst);
                if let Ok(mut w) = link.waiting.lock() {
                    w.clear();
                }
            }
        });
        link
    }

    pub(crate) fn is_dead(&self) -> bool {
        self.dead.load(Ordering::SeqCst)
    }

    pub(crate) fn mark_dead(&self) {
        self.dead.store(true, Ordering::SeqCst);
    }

    /// Writes one frame, within [`ANSWER_DEADLINE`]: an agent that takes no frame for
    /// that long (frozen) is treated as gone.
    pub(crate) async fn write(&self, request: &Request) -> Result<(), SandboxError> {
        // The agent ends on a frame it may not take, and the sandbox with it (its Python
        // names, runs in progress): refuse here instead, and the sandbox goes on.
        let frame = protocol::encode(request).map_err(|_| too_large(request))?;
        let write = async {
            let mut guard = self.writer.lock().await;
            let writer = guard.as_mut().ok_or_else(|| gone("it was stopped"))?;
            writer.write_all(&frame).await.map_err(gone)?;
            writer.flush().await.map_err(gone)
        };
        let written =
            tokio::time::timeout(ANSWER_DEADLINE, write).await.unwrap_or_else(|_| Err(gone("it takes no requests")));
        if written.is_err() {
            self.mark_dead();
        }
        written
    }

    /// Sends a request; replies for its id arrive on the receiver.
    pub(crate) async fn send(
        &self,
        make: impl FnOnce(u64) -> Request,
    ) -> Result<(u64, mpsc::Receiver<Reply>), SandboxError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::channel(REPLY_QUEUE);
        self.waiting.lock().map_err(backend)?.insert(id, tx);
        if let Err(e) = self.write(&make(id)).await {
            self.forget(id);
            return Err(e);
        }
        Ok((id, rx))
    }

    /// Stops handing replies for `id` to anyone.
    pub(crate) fn forget(&self, id: u64) {
        if let Ok(mut w) = self.waiting.lock() {
            w.remove(&id);
        }
    }

    /// One request, one reply; the agent's refusal comes back as its error.
    pub(crate) async fn ask(&self, make: impl FnOnce(u64) -> Request) -> Result<Reply, Unanswered> {
        let (id, mut rx) = self.send(make).await.map_err(Unanswered::Failed)?;
        let reply = tokio::time::timeout(ANSWER_DEADLINE, rx.recv()).await;
        self.forget(id);
        match reply {
            Ok(Some(Reply::Failed { message, kind, .. })) => Err(Unanswered::Failed(failure(kind, message))),
            Ok(Some(reply)) => Ok(reply),
            Ok(None) => Err(Unanswered::Failed(gone("it stopped; the next request starts it afresh"))),
            Err(_) => Err(Unanswered::Silent),
        }
    }

    /// Closes the agent's input, which ends the agent. A writer stuck on a frozen agent
    /// holds the pipe: then it is not waited for past a second.
    pub(crate) async fn close(&self) {
        if let Ok(mut writer) = tokio::time::timeout(Duration::from_secs(1), self.writer.lock()).await
            && let Some(mut w) = writer.take()
        {
            let _ = tokio::time::timeout(Duration::from_secs(1), w.shutdown()).await;
        }
    }
}

/// The refusal of a request larger than one frame (code of many megabytes: files move
/// in parts and never come near it).
fn too_large(request: &Request) -> SandboxError {
    const MB: usize = 1 << 20;
    let frame = serde_json::to_vec(request).map_or(0, |json| json.len()) + protocol::Message::bytes(request).len();
    SandboxError::TooLarge(format!(
        "too large for the sandbox: {} MB encoded, and it takes at most {} MB in one request",
        frame.div_ceil(MB),
        MAX_FRAME / MB
    ))
}

/// Reads one frame from the agent; `None` when it ended or sent something unreadable.
pub(crate) async fn read_reply(reader: &mut (impl AsyncRead + Unpin)) -> Option<Reply> {
    let mut head = [0u8; 8];
    reader.read_exact(&mut head).await.ok()?;
    let (json_len, bytes_len) = protocol::lengths(head).ok()?;
    let mut json = vec![0u8; json_len];
    reader.read_exact(&mut json).await.ok()?;
    let mut bytes = vec![0u8; bytes_len];
    reader.read_exact(&mut bytes).await.ok()?;
    protocol::decode(&json, bytes).ok()
}

fn reply_id(reply: &Reply) -> u64 {
    match reply {
        Reply::Output { id, .. }
        | Reply::Ended { id, .. }
        | Reply::File { id, .. }
        | Reply::Files { id, .. }
        | Reply::Done { id }
        | Reply::Ready { id, .. }
        | Reply::NetConnect { id, .. }
        | Reply::NetData { id, .. }
        | Reply::NetClose { id }
        | Reply::Failed { id, .. } => *id,
    }
}

pub(crate) fn backend(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Backend(e.to_string())
}

pub(crate) fn gone(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Backend(format!("the sandbox went away ({e})"))
}

/// The agent's refusal as the driver's error, by the kind it reported.
fn failure(kind: FailKind, message: String) -> SandboxError {
    match kind {
        FailKind::BadPath => SandboxError::BadPath(message),
        FailKind::NotFound => SandboxError::NotFound(message),
        FailKind::TooLarge => SandboxError::TooLarge(message),
        FailKind::Full => SandboxError::QuotaExceeded,
        FailKind::Other => SandboxError::Backend(message),
    }
}
