//! The pool of pre-started sandboxes (their kernel warm) that new conversations claim.

use super::*;

impl LocalDriver {
    /// How many pre-started sandboxes to keep ready for new conversations (0: none);
    /// they count against admission like any other. Takes effect with [`Self::keep_pool`].
    pub fn set_pool_size(&self, size: usize) {
        self.pool_size.store(size, Ordering::SeqCst);
        self.pool_wake.notify_one();
    }

    /// Pre-started sandboxes ready now.
    pub fn pooled(&self) -> usize {
        self.pool.lock().map(|p| p.len()).unwrap_or(0)
    }

    /// How many the pool keeps ready now: its size, more while new conversations come
    /// (the rule is in `demand.rs`).
    pub fn pool_target(&self) -> usize {
        let size = self.pool_size.load(Ordering::SeqCst);
        super::demand::target(size, self.demand.recent(), self.admission.limits().max_running)
    }

    /// Keeps the pool filled from a background task for as long as the driver lives.
    pub fn keep_pool(self: &Arc<Self>) {
        let (driver, wake) = (Arc::downgrade(self), self.pool_wake.clone());
        tokio::spawn(async move {
            loop {
                let Some(d) = driver.upgrade() else { return };
                d.refill().await;
                d.trim().await;
                // Not held while waiting: the driver may go away meanwhile.
                drop(d);
                // Now and then too: room may have been given back without a word.
                let woken = tokio::time::timeout(Duration::from_secs(5), wake.notified()).await.is_ok();
                // A conversation just took one: its first runs have the CPU before the
                // next one starts (starting a sandbox costs tens of milliseconds of it).
                if woken {
                    tokio::time::sleep(REFILL_PAUSE).await;
                }
            }
        });
    }

    /// Starts pre-started sandboxes until the pool is full or there is no spare room:
    /// only room nothing waits for, so the pool never holds a start up.
    pub(super) async fn refill(&self) {
        let _turn = self.refilling.lock().await;
        while self.pooled() < self.pool_target() {
            let limits = self.limits();
            let Some(ticket) = self.admission.try_admit(limits.memory_bytes) else { return };
            let name = format!("{POOL_PREFIX}{}", self.next_pool.fetch_add(1, Ordering::Relaxed));
            let running = match self.launch("", &name, limits, ticket).await {
                Ok(r) => r,
                Err(e) => {
                    tracing::warn!(error = %e, "a sandbox could not be pre-started");
                    return;
                }
            };
            // Its Python kernel starts now too, so a first `run_python` does not wait for it.
            let warm = running.link.send(|id| Request::Python {
                id,
                code: String::new(),
                env: self.run_env(&running),
                timeout_ms: START_TIMEOUT.as_millis() as u64,
            });
            if let Ok((id, rx)) = warm.await {
                let hold = InUse::new(&running.tenancy.in_use);
                let _ = crate::run_to_end(run_stream(running.clone(), id, rx, START_TIMEOUT, false, hold)).await;
            }
            if running.is_dead() {
                tear_down(running).await;
                return;
            }
            if let Ok(mut pool) = self.pool.lock() {
                pool.push(running);
            }
        }
    }

    /// Ends the ready sandboxes past the target, once new conversations stopped coming.
    async fn trim(&self) {
        while self.pooled() > self.pool_target() {
            let Some(spare) = self.pool.lock().ok().and_then(|mut p| p.pop()) else { return };
            spare.end();
            tear_down(spare).await;
        }
    }

    /// A pre-started sandbox for a conversation that has no workspace yet: its image
    /// takes the conversation's name. `None` when the pool is empty or the
    /// conversation has files of its own.
    pub(super) async fn claim(&self, chat_id: &str, name: &str) -> Option<Arc<Running>> {
        let own = self.workspace(name);
        if own.exists() {
            return None;
        }
        // A new conversation: the pool grows with them.
        self.demand.note();
        self.pool_wake.notify_one();
        loop {
            let running = self.pool.lock().ok()?.pop()?;
            // Its room counts to the conversation's person from now: not when that
            // person already runs their share (the start then waits its turn).
            let mut ticket = running.tenancy.ticket.lock().ok().and_then(|mut t| t.take())?;
            if !self.admission.hand_over(&mut ticket, chat_id).await {
                running.tenancy.ticket.lock().ok()?.replace(ticket);
                self.pool.lock().ok()?.push(running);
                return None;
            }
            running.tenancy.ticket.lock().ok()?.replace(ticket);
            self.pool_wake.notify_one();
            let fresh = !running.is_dead() && running.limits == self.limits();
            let renamed = fresh && running.workspace().is_some_and(|w| std::fs::rename(&w.image, &own.image).is_ok());
            if !renamed {
                running.end();
                tear_down(running).await;
                continue;
            }
            if let Ok(mut w) = running.workspace.lock() {
                w.image = own.image.clone();
            }
            running.relay.set_chat(chat_id);
            running.tenancy.touch();
            return Some(running);
        }
    }

    /// Ends the pool's sandboxes (the server goes down, or room is needed).
    pub(super) async fn drain_pool(&self) {
        let pooled: Vec<Arc<Running>> = self.pool.lock().map(|mut p| std::mem::take(&mut *p)).unwrap_or_default();
        for running in pooled {
            running.end();
            tear_down(running).await;
        }
    }

    /// Removes what pre-started sandboxes of an earlier server left (unmounted by then):
    /// they belong to no conversation.
    pub(super) fn forget_pool_leftovers(&self) {
        for entry in std::fs::read_dir(&self.root).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Some(stem) = name.strip_prefix(POOL_PREFIX) {
                let _ = Workspace::new(
                    &self.root,
                    &self.mounts,
                    &format!("{POOL_PREFIX}{}", stem.trim_end_matches(".img")),
                )
                .delete();
            }
        }
    }
}
