//! A run as the server sees it: the agent's replies turned into output events and one
//! ending, with the server's own clock on it. The same for every driver that runs the
//! agent; what differs (how a sandbox is killed from outside, whether the kernel killed
//! for memory) is the driver's [`RunHost`].

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use lens_sandbox_agent::protocol::{Reply, Request};
use lens_types::RunEnding;
use tokio::sync::mpsc;

use crate::{FileEntry, RunEvent, RunStream, link::AgentLink};

/// How long past its own time limit a run may go before the server ends it and kills
/// the sandbox from outside: the agent's own time-out, the kernel's interrupt grace
/// (2 s) and the pipes' (0.5 s) fit inside it on a busy machine.
pub const RUN_GRACE: Duration = Duration::from_secs(5);

/// What the step says when a sandbox had to be started afresh.
pub(crate) const RESTARTED: &str = "[Lens restarted this conversation's sandbox: it had stopped (its processes were \
                                    killed, it ran out of memory or stopped answering). Files in /workspace are kept; \
                                    Python names and imports are gone.]\n";

/// What the step says when a gateway's sandbox had to be made anew, its files lost.
pub(crate) const REMADE: &str = "[Lens made this conversation's sandbox anew: the gateway had lost it (its container \
                                 was ended from outside). Files in /workspace are gone, and so are Python names and \
                                 imports.]\n";

/// A hold on a running sandbox while a call uses it: making room for another sandbox
/// never stops one a call has been handed and not yet used (a run counts as active only
/// once it is sent). Dropped, the hold is let go.
pub(crate) struct InUse(Arc<AtomicUsize>);

impl InUse {
    pub(crate) fn new(count: &Arc<AtomicUsize>) -> Self {
        count.fetch_add(1, Ordering::SeqCst);
        Self(count.clone())
    }
}

impl Drop for InUse {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A running sandbox as a run sees it.
#[async_trait::async_trait]
pub(crate) trait RunHost: Send + Sync + 'static {
    fn link(&self) -> &AgentLink;

    /// Out-of-memory kills so far, where the driver can count them.
    fn oom_kills(&self) -> u64 {
        0
    }

    fn run_started(&self);

    /// What a run says when its sandbox had to be started afresh.
    fn restart_note(&self) -> &'static str {
        RESTARTED
    }

    /// What the run reached on the network, where the driver can say (asked once, as
    /// the run ends).
    async fn reached(&self) -> Vec<lens_types::NetReach> {
        Vec::new()
    }

    /// What the run reached on the network, where the driver learns it only after the
    /// run's ending (asked once, as the run ends, in place of [`reached`](Self::reached)).
    fn reached_soon(&self) -> Option<crate::NetworkSoon> {
        None
    }

    /// The run is over (ended, or its reader let go).
    fn run_ended(&self);

    /// Ends a sandbox that does not answer, whatever state its agent is in.
    async fn kill_from_outside(&self);
}

/// The events of one run; dropping the stream before its end kills the run. The run
/// ends by `timeout` plus [`RUN_GRACE`] whatever the agent does: past that the sandbox
/// is killed from outside and the run ends as timed out.
pub(crate) fn run_stream<H: RunHost>(
    running: Arc<H>,
    id: u64,
    rx: mpsc::Receiver<Reply>,
    timeout: Duration,
    healed: bool,
    hold: InUse,
) -> RunStream {
    struct Guard<H: RunHost> {
        running: Arc<H>,
        id: u64,
        ended: bool,
        /// Events to hand out before reading more: a note, or an ending held back while
        /// the run's files are handed out first.
        queued: std::collections::VecDeque<RunEvent>,
        /// The host's out-of-memory kills when the run began.
        oom_kills: u64,
        deadline: tokio::time::Instant,
        timeout: Duration,
        /// Held for as long as the run's events are read.
        _hold: InUse,
        /// Whether what the run reached on the network was handed out.
        network_told: bool,
    }
    impl<H: RunHost> Guard<H> {
        /// A run that failed while the kernel killed for memory ran out of memory.
        fn ending(&self, ending: RunEnding) -> RunEnding {
            let failed = !matches!(ending, RunEnding::Exited { code: 0 } | RunEnding::CutShort);
            if failed && self.running.oom_kills() > self.oom_kills { RunEnding::OutOfMemory } else { ending }
        }

        /// Before the ending, what the run reached on the network, once, if anything.
        async fn with_network(&mut self, event: RunEvent) -> RunEvent {
            if !matches!(event, RunEvent::Ended(_)) || self.network_told {
                return event;
            }
            self.network_told = true;
            if let Some(soon) = self.running.reached_soon() {
                self.queued.push_front(event);
                return RunEvent::NetworkSoon(soon);
            }
            let reached = self.running.reached().await;
            if reached.is_empty() {
                return event;
            }
            self.queued.push_front(event);
            RunEvent::Network(reached)
        }

        /// Ends the run with a note on stderr, then `ending`.
        fn end_with(&mut self, note: &str, ending: RunEnding) -> RunEvent {
            self.ended = true;
            self.queued.push_back(RunEvent::Ended(ending));
            note_event(note)
        }
    }
    impl<H: RunHost> Drop for Guard<H> {
        fn drop(&mut self) {
            self.running.link().forget(self.id);
            self.running.run_ended();
            if !self.ended {
                let running = self.running.clone();
                let id = self.id;
                tokio::spawn(async move {
                    let _ = running.link().write(&Request::Kill { id }).await;
                });
            }
        }
    }
    let oom_kills = running.oom_kills();
    running.run_started();
    let deadline = tokio::time::Instant::now() + timeout + RUN_GRACE;
    let mut queued = std::collections::VecDeque::new();
    if healed {
        queued.push_back(note_event(running.restart_note()));
    }
    let guard =
        Guard { running, id, ended: false, queued, oom_kills, deadline, timeout, _hold: hold, network_told: false };
    Box::pin(futures_util::stream::unfold((rx, guard), |(mut rx, mut guard)| async move {
        if let Some(event) = guard.queued.pop_front() {
            let event = guard.with_network(event).await;
            return Some((event, (rx, guard)));
        }
        if guard.ended {
            return None;
        }
        let event = loop {
            let Ok(reply) = tokio::time::timeout_at(guard.deadline, rx.recv()).await else {
                // The agent did not end the run in time: frozen, flooding or gone quiet.
                guard.running.kill_from_outside().await;
                let after_ms = guard.timeout.as_millis() as u64;
                break guard.end_with(
                    "\n[the sandbox did not end this run at its time limit, so Lens ended the sandbox; the next run \
                     starts it afresh]\n",
                    RunEnding::TimedOut { after_ms },
                );
            };
            match reply {
                Some(Reply::Output { stream, data, .. }) => {
                    break RunEvent::Output { stream, bytes: data };
                }
                Some(Reply::Ended { ending, files, .. }) => {
                    guard.ended = true;
                    let ending = guard.ending(ending);
                    if files.is_empty() {
                        break RunEvent::Ended(ending);
                    }
                    guard.queued.push_back(RunEvent::Ended(ending));
                    break RunEvent::Files(
                        files
                            .into_iter()
                            .map(|e| FileEntry {
                                path: e.path,
                                size: e.size,
                                is_dir: false,
                                modified_ms: None,
                                special: None,
                                inode: None,
                            })
                            .collect(),
                    );
                }
                Some(Reply::Failed { message, .. }) => {
                    guard.ended = true;
                    break RunEvent::Failed(message);
                }
                // A run gets only output and its ending; anything else is not for it.
                Some(_) => {}
                // The sandbox died under the run.
                None => {
                    let ending = guard.ending(RunEnding::Killed { signal: 9 });
                    break guard.end_with("\n[the sandbox stopped during this run]\n", ending);
                }
            }
        };
        let event = guard.with_network(event).await;
        Some((event, (rx, guard)))
    }))
}

/// A note from Lens in a run's stderr, where the person and the model read it.
fn note_event(note: &str) -> RunEvent {
    RunEvent::Output { stream: lens_types::OutputStream::Stderr, bytes: note.as_bytes().to_vec() }
}
