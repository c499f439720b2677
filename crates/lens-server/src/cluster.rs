//! Lens on several machines: this server as one replica among any number on one
//! database. It says it is alive every [`HEARTBEAT`], takes a lease for the work done
//! once per cluster (the routines), and marks interrupted the answers of a replica not
//! heard from for [`LAPSE`] (one killed mid-answer), with the step's output so far.
//!
//! On SQLite there is one server: its start marks every answer left streaming, as a
//! restart always did.

use std::time::Duration;

use anyhow::bail;
use lens_types::SandboxBackend;

use crate::{
    Config,
    store::{ReplicaRow, Store, StoreError},
};

/// How often a replica says it is alive.
pub const HEARTBEAT: Duration = Duration::from_secs(2);
/// A replica not heard from this long is gone: its answers are interrupted and its
/// leases may be taken. Generous against a busy machine's pauses.
pub const LAPSE: Duration = Duration::from_secs(10);

/// The leases that say which replica drives a conversation's sandbox are named this and
/// the conversation's id (the stores' `forget_stale_leases` reads the same).
pub const SANDBOX_LEASES: &str = "sandbox:";

/// The lease of conversation `chat_id`'s sandbox.
pub fn sandbox_lease(chat_id: &str) -> String {
    format!("{SANDBOX_LEASES}{chat_id}")
}

/// What this replica's sandboxes hold, in JSON, said with each heartbeat.
pub type Report = Box<dyn Fn() -> String + Send + Sync>;

/// This replica and what it knows of the others.
pub struct Cluster {
    store: Store,
    me: ReplicaRow,
    /// The database is shared (PostgreSQL): other replicas may be running.
    shared: bool,
    report: std::sync::OnceLock<Report>,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster").field("me", &self.me).field("shared", &self.shared).finish_non_exhaustive()
    }
}

impl Cluster {
    pub fn new(store: Store, config: &Config) -> Self {
        let now = crate::now_ms();
        let me = ReplicaRow {
            id: crate::ids::random_id(12),
            host: host_name(),
            addr: config.addr.to_string(),
            started_at: now,
            seen_at: now,
            sandboxes: "{}".into(),
        };
        Self { store, me, shared: config.database_url.is_some(), report: std::sync::OnceLock::new() }
    }

    /// How to say what this replica's sandboxes hold, with every heartbeat from now on.
    pub fn report_sandboxes(&self, report: Report) {
        let _ = self.report.set(report);
    }

    /// This replica's row as of now.
    fn row(&self) -> ReplicaRow {
        let sandboxes = self.report.get().map(|r| r()).unwrap_or_else(|| self.me.sandboxes.clone());
        ReplicaRow { sandboxes, ..self.me.clone() }
    }

    /// This replica's id, which its answers carry.
    pub fn id(&self) -> &str {
        &self.me.id
    }

    /// Registers this replica and marks the answers no live replica is writing
    /// interrupted; how many.
    pub async fn join(&self) -> Result<u64, StoreError> {
        self.store.heartbeat(&self.me).await?;
        let since = crate::now_ms() - LAPSE.as_millis() as i64;
        self.sweep(if self.shared { since } else { i64::MAX }).await
    }

    /// Refuses to serve beside other replicas when this one's sandboxes are local and
    /// theirs cannot be the same (another host, or one host that did not say so).
    pub async fn check_sandboxes_shared(&self, config: &Config, backend: SandboxBackend) -> anyhow::Result<()> {
        let since = crate::now_ms() - LAPSE.as_millis() as i64;
        let others: Vec<ReplicaRow> = self
            .store
            .live_replicas(since)
            .await?
            .into_iter()
            // Its own earlier run (the same host and address: killed, restarted at once).
            .filter(|r| r.id != self.me.id && (r.host != self.me.host || r.addr != self.me.addr))
            .collect();
        if self.shared && backend == SandboxBackend::Local && !others.is_empty() {
            let elsewhere = others.iter().any(|r| r.host != self.me.host);
            if elsewhere || !config.replicas_on_one_host {
                bail!(
                    "{} other replica(s) use this database ({}), and this one's sandboxes are local \
                     (bubblewrap on this machine): replicas must share their sandboxes, on an OpenShell \
                     gateway (LENS_SANDBOX_BACKEND=openshell). Replicas that all run on this one host may \
                     share its sandboxes: say so with --replicas-on-one-host.",
                    others.len(),
                    others.iter().map(|r| format!("{} on {}", r.addr, r.host)).collect::<Vec<_>>().join(", ")
                );
            }
        }
        Ok(())
    }

    /// Answers left streaming by replicas not seen since `since`: interrupted.
    async fn sweep(&self, since: i64) -> Result<u64, StoreError> {
        let interrupted = self.store.interrupt_orphans(since).await?;
        if interrupted > 0 {
            tracing::warn!(interrupted, "answers whose server stopped are marked interrupted");
        }
        Ok(interrupted)
    }

    /// Says this replica is alive every [`HEARTBEAT`] and, with others about, sweeps up
    /// the answers of those that stopped; until the server ends.
    pub fn spawn(self: std::sync::Arc<Self>) {
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(HEARTBEAT);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                if let Err(e) = self.store.heartbeat(&self.row()).await {
                    tracing::warn!(error = %e, "saying this replica is alive failed");
                }
                if self.shared {
                    let _ = self.sweep(crate::now_ms() - LAPSE.as_millis() as i64).await;
                }
            }
        });
    }

    /// Whether this replica does the work named `name` for the next `term`: it holds its
    /// lease (taken now, or kept), and no other replica does meanwhile.
    pub async fn lead(&self, name: &str, term: Duration) -> bool {
        let until = crate::now_ms() + term.as_millis() as i64;
        match self.store.take_lease(name, &self.me.id, until).await {
            Ok(held) => held,
            Err(e) => {
                tracing::warn!(lease = name, error = %e, "taking a lease failed");
                false
            }
        }
    }

    /// Leaves the cluster as the server stops: its leases are free at once.
    pub async fn leave(&self) {
        if let Err(e) = self.store.forget_replica(&self.me.id).await {
            tracing::warn!(error = %e, "leaving the cluster failed");
        }
    }
}

/// This machine's name, as the kernel has it.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}
