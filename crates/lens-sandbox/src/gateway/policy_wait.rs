//! A run after a network settings change meets the change: the gateway takes a new
//! policy at once and gives it a version, but the sandbox's supervisor loads it only at
//! its next poll (every ten seconds by default), and reports the version it loaded in the
//! sandbox's status (`current_policy_version`). A run waits for that, at most
//! [`POLICY_WAIT`], while the person is told why.

use std::sync::atomic::AtomicU32;

use super::*;

/// The longest a run waits for its sandbox to load a new policy (two of the supervisor's
/// polls and some): past it the run goes ahead, and the log says so.
const POLICY_WAIT: Duration = Duration::from_secs(25);

/// How often the sandbox's status is asked while waiting.
const ASK_EVERY: Duration = Duration::from_millis(250);

/// A sandbox's policy versions: the newest Lens sent, and the newest its supervisor was
/// seen to have loaded.
#[derive(Debug, Default)]
pub(crate) struct PolicyVersions {
    sent: AtomicU32,
    loaded: AtomicU32,
}

impl PolicyVersions {
    /// The gateway gave a policy Lens sent this version.
    pub fn sent(&self, version: u32) {
        self.sent.fetch_max(version, Ordering::SeqCst);
    }

    /// The newest sent when the supervisor has not yet loaded it.
    fn waiting_for(&self) -> Option<u32> {
        let sent = self.sent.load(Ordering::SeqCst);
        (sent > self.loaded.load(Ordering::SeqCst)).then_some(sent)
    }
}

impl GatewayDriver {
    /// Waits until the sandbox's supervisor has loaded the newest policy Lens sent it.
    pub(super) async fn policy_in_force(&self, remote: &Remote) {
        let Some(wanted) = remote.policy.waiting_for() else { return };
        self.mark_settling(&remote.name, true);
        let deadline = tokio::time::Instant::now() + POLICY_WAIT;
        loop {
            let status = self.get(&remote.name).await.ok().flatten().and_then(|s| s.status);
            let loaded = status.map_or(0, |s| s.current_policy_version);
            if loaded >= wanted {
                remote.policy.loaded.fetch_max(loaded, Ordering::SeqCst);
                break;
            }
            if tokio::time::Instant::now() >= deadline {
                tracing::warn!(
                    sandbox = %remote.name, wanted, loaded,
                    "the sandbox has not loaded its new network policy in time; the run goes ahead"
                );
                break;
            }
            tokio::time::sleep(ASK_EVERY).await;
        }
        self.mark_settling(&remote.name, false);
    }

    fn mark_settling(&self, name: &str, on: bool) {
        if let Ok(mut settling) = self.settling.lock() {
            if on {
                settling.insert(name.to_owned());
            } else {
                settling.remove(name);
            }
        }
    }

    /// Whether sandbox `name` has a run waiting for it to load a new policy.
    pub(super) fn is_settling(&self, name: &str) -> bool {
        self.settling.lock().is_ok_and(|s| s.contains(name))
    }
}
