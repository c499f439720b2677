//! A run as the server sees it: the agent's replies turned into output events and one
//! ending, with the server's own clock on it.

use super::*;

/// The events of one run; dropping the stream before its end kills the run. The run
/// ends by `timeout` plus [`RUN_GRACE`] whatever the agent does: past that the sandbox
/// is killed from outside and the run ends as timed out.
pub(super) fn run_stream(
    running: Arc<Running>,
    id: u64,
    rx: mpsc::Receiver<Reply>,
    timeout: Duration,
    healed: bool,
) -> RunStream {
    struct Guard {
        running: Arc<Running>,
        id: u64,
        ended: bool,
        /// Events to hand out before reading more: a note, or an ending held back while
        /// the run's files are handed out first.
        queued: std::collections::VecDeque<RunEvent>,
        /// The cgroup's out-of-memory kills when the run began.
        oom_kills: u64,
        deadline: tokio::time::Instant,
        timeout: Duration,
    }
    impl Guard {
        /// A run that failed while the kernel killed for memory ran out of memory.
        fn ending(&self, ending: RunEnding) -> RunEnding {
            let failed = !matches!(ending, RunEnding::Exited { code: 0 } | RunEnding::CutShort);
            if failed && self.running.cgroup.oom_kills() > self.oom_kills { RunEnding::OutOfMemory } else { ending }
        }

        /// Ends the run with a note on stderr, then `ending`.
        fn end_with(&mut self, note: &str, ending: RunEnding) -> RunEvent {
            self.ended = true;
            self.queued.push_back(RunEvent::Ended(ending));
            note_event(note)
        }
    }
    impl Drop for Guard {
        fn drop(&mut self) {
            if let Ok(mut w) = self.running.waiting.lock() {
                w.remove(&self.id);
            }
            // The network is open only while a run is: what an earlier run left behind
            // (a thread in the kernel) loses its connections when the last run ends.
            if self.running.active.fetch_sub(1, Ordering::SeqCst) == 1 {
                self.running.relay.close_all();
            }
            self.running.touch();
            if !self.ended {
                let running = self.running.clone();
                let id = self.id;
                tokio::spawn(async move {
                    let _ = write_request(&running, &Request::Kill { id }).await;
                });
            }
        }
    }
    let oom_kills = running.cgroup.oom_kills();
    running.active.fetch_add(1, Ordering::SeqCst);
    let deadline = tokio::time::Instant::now() + timeout + RUN_GRACE;
    let mut queued = std::collections::VecDeque::new();
    if healed {
        queued.push_back(note_event(RESTARTED));
    }
    let guard = Guard { running, id, ended: false, queued, oom_kills, deadline, timeout };
    Box::pin(futures_util::stream::unfold((rx, guard), |(mut rx, mut guard)| async move {
        if let Some(event) = guard.queued.pop_front() {
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
                    break RunEvent::Output { stream, bytes: B64.decode(data).unwrap_or_default() };
                }
                Some(Reply::Ended { ending, files, .. }) => {
                    guard.ended = true;
                    let ending = guard.ending(ending);
                    if files.is_empty() {
                        break RunEvent::Ended(ending);
                    }
                    guard.queued.push_back(RunEvent::Ended(ending));
                    break RunEvent::Files(
                        files.into_iter().map(|e| FileEntry { path: e.path, size: e.size, is_dir: false }).collect(),
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
        Some((event, (rx, guard)))
    }))
}

/// A note from Lens in a run's stderr, where the person and the model read it.
fn note_event(note: &str) -> RunEvent {
    RunEvent::Output { stream: lens_types::OutputStream::Stderr, bytes: note.as_bytes().to_vec() }
}
