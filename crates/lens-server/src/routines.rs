//! The server's routines, every `ROUTINES_EVERY`: the sandboxes' tidying, uploads that
//! no message carried forgotten after a day (once per cluster, by the replica holding
//! the `routines` lease), and a look at the data directory's free space (logged when it
//! falls under the thresholds).

use std::time::Duration;

use lens_types::SandboxBackend;

use crate::{AppState, files::Files};

/// How long an ended answer's events stay for followers on other replicas.
const EVENTS_KEEP: Duration = Duration::from_secs(600);

/// How long an upload waits for a message to carry it.
pub const UNSENT_UPLOAD_KEEP: Duration = Duration::from_secs(24 * 3600);

/// Deletes the uploads made before `created_before` (Unix milliseconds: the clock is the
/// caller's) that no message carried, rows and bytes; returns how many.
pub async fn forget_unsent_uploads(files: &Files, created_before: i64) -> usize {
    let taken = match files.store.take_unsent_uploads(created_before).await {
        Ok(taken) => taken,
        Err(e) => {
            tracing::warn!(error = %e, "listing unsent uploads failed");
            return 0;
        }
    };
    for (id, user_id) in &taken {
        if let Err(e) = files.uploads.delete(&user_id.to_string(), id).await {
            tracing::warn!(upload = %id, error = %e, "deleting an unsent upload's bytes failed");
        }
    }
    if !taken.is_empty() {
        tracing::info!(count = taken.len(), "forgot uploads no message carried");
    }
    taken.len()
}

/// Runs the routines every `every` until the server ends.
pub fn spawn(state: AppState, every: Duration) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            // Once per cluster: the replica holding the lease. Local sandboxes are each
            // replica's own (one host's replicas), so each tidies its own.
            let lead = state.cluster.lead("routines", every * 3).await;
            let local = state.sandbox.settings().await.is_ok_and(|s| s.backend == SandboxBackend::Local);
            // Sandbox settings an admin changed through another replica (a lost signal).
            state.sandbox.follow_settings().await;
            // Agents of this replica in sandboxes another took lately end (idle kernels).
            let lately = crate::now_ms() - (every * 3 + crate::cluster::LAPSE).as_millis() as i64;
            crate::chat::sandbox_lease::let_go_of_taken(&state.chats, lately).await;
            if lead || local {
                crate::sandbox::tidy(&state.sandbox).await;
            }
            if lead {
                forget_unsent_uploads(&state.files, crate::now_ms() - UNSENT_UPLOAD_KEEP.as_millis() as i64).await;
                let _ = state.store.forget_events(crate::now_ms() - EVENTS_KEEP.as_millis() as i64).await;
                let _ = state.store.forget_stale_leases().await;
                let _ = state
                    .store
                    .forget_open_streams(crate::now_ms() - 6 * crate::cluster::LAPSE.as_millis() as i64)
                    .await;
                state.accounts.login_limiter.tidy().await;
            }
            state.files.disk.check();
        }
    });
}
