//! One replica drives a conversation's sandbox at a time: an answer takes the
//! conversation's lease before its first sandbox tool runs and keeps it, renewed every
//! [`HEARTBEAT`], until the answer ends. A second replica waits while the holder lives,
//! and takes over a lease that lapsed (its holder killed) after [`LAPSE`]. A replica
//! taking the sandbox from another lets go of any agent of its own in it first: the
//! Python names are the last holder's, and a stale kernel must not answer instead.
//! One server (SQLite) takes no lease.

use std::{sync::Arc, time::Duration};

use lens_types::StreamEvent;
use tokio::{sync::watch, task::JoinHandle};

use super::{AnswerLog, Chats};
use crate::{
    cluster::{HEARTBEAT, LAPSE, SANDBOX_LEASES, sandbox_lease},
    store::Store,
};

/// How often a waiting replica asks for the lease again.
const ASK_EVERY: Duration = Duration::from_millis(500);
/// How long a run waits for another replica to let go of the sandbox.
pub const WAIT_MAX: Duration = Duration::from_secs(300);

/// The conversation's sandbox, held by this replica until dropped.
pub struct SandboxHold {
    store: Store,
    name: String,
    holder: Arc<str>,
    keeper: JoinHandle<()>,
}

impl Drop for SandboxHold {
    fn drop(&mut self) {
        self.keeper.abort();
        let (store, name, holder) = (self.store.clone(), std::mem::take(&mut self.name), self.holder.clone());
        // Let go at once, so the next answer on another replica need not wait for it to lapse.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Err(e) = store.release_lease(&name, &holder).await {
                    tracing::warn!(lease = %name, error = %e, "letting go of a sandbox lease failed; it lapses");
                }
            });
        }
    }
}

/// Why the sandbox could not be had.
#[derive(Debug, PartialEq, Eq)]
pub enum NotHeld {
    /// The answer was stopped while it waited.
    Stopped,
    /// Another replica kept it for [`WAIT_MAX`].
    Busy,
}

/// Takes conversation `chat_id`'s sandbox for this replica, waiting (with a notice in
/// the answer) while another live replica drives it. `Ok(None)` where no lease is
/// needed (one server) or the database could not be asked (the run goes ahead).
pub async fn hold(
    chats: &Chats,
    chat_id: &str,
    log: &AnswerLog,
    stop: &mut watch::Receiver<bool>,
) -> Result<Option<SandboxHold>, NotHeld> {
    if !chats.shared {
        return Ok(None);
    }
    let name = sandbox_lease(chat_id);
    let me = chats.replica.clone();
    let give_up = tokio::time::Instant::now() + WAIT_MAX;
    let mut told = false;
    loop {
        let before = chats.store.lease(&name).await.ok().flatten();
        let until = crate::now_ms() + LAPSE.as_millis() as i64;
        match chats.store.take_lease(&name, &me, until).await {
            Ok(true) => {
                if before.is_some_and(|l| *l.holder != *me)
                    && let Some(driver) = chats.sandbox.driver()
                    && let Err(e) = driver.let_go(chat_id).await
                {
                    tracing::warn!(chat = %chat_id, error = %e, "ending this replica's old agent in a sandbox failed");
                }
                let keeper = keep(chats.store.clone(), name.clone(), me.clone());
                return Ok(Some(SandboxHold { store: chats.store.clone(), name, holder: me, keeper }));
            }
            Ok(false) if !told => {
                log.push(StreamEvent::Notice {
                    text: "Another Lens server is using this conversation's sandbox; this run waits for it.".into(),
                });
                told = true;
            }
            Ok(false) => {}
            Err(e) => {
                tracing::warn!(lease = %name, error = %e, "taking a sandbox lease failed; running without it");
                return Ok(None);
            }
        }
        if tokio::time::Instant::now() >= give_up {
            return Err(NotHeld::Busy);
        }
        tokio::select! {
            _ = tokio::time::sleep(ASK_EVERY) => {}
            _ = stop.wait_for(|s| *s) => return Err(NotHeld::Stopped),
        }
    }
}

/// Renews the lease every [`HEARTBEAT`] until aborted.
fn keep(store: Store, name: String, holder: Arc<str>) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(HEARTBEAT);
        tick.tick().await;
        loop {
            tick.tick().await;
            let until = crate::now_ms() + LAPSE.as_millis() as i64;
            match store.take_lease(&name, &holder, until).await {
                Ok(true) => {}
                // Taken by another after a pause longer than the lapse: theirs now.
                Ok(false) => tracing::warn!(lease = %name, "a sandbox lease was taken over by another replica"),
                Err(e) => tracing::warn!(lease = %name, error = %e, "renewing a sandbox lease failed"),
            }
        }
    })
}

/// Lets go of this replica's agents in sandboxes another replica took since `since`
/// (ms): called by the routines, so an idle stale kernel does not hold a sandbox's memory.
pub async fn let_go_of_taken(chats: &Chats, since: i64) {
    let (Some(driver), true) = (chats.sandbox.driver(), chats.shared) else { return };
    for (name, lease) in chats.store.leases(SANDBOX_LEASES).await.unwrap_or_default() {
        if *lease.holder == *chats.replica || lease.expires_at < since {
            continue;
        }
        if let Some(chat_id) = name.strip_prefix(SANDBOX_LEASES)
            && let Err(e) = driver.let_go(chat_id).await
        {
            tracing::warn!(chat = %chat_id, error = %e, "ending this replica's old agent in a sandbox failed");
        }
    }
}
