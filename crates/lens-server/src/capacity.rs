//! The sandboxes' capacity shared by replicas (on one gateway, or one host): each
//! replica's admission counts what the others' sandboxes hold, as each says with its
//! heartbeat, and asks them by a signal to stop an idle one when theirs stand in the way.

use lens_sandbox::Held;

use crate::{cluster::LAPSE, store::Store};

/// The replicas other than this one, as admission sees them.
pub struct OtherReplicas {
    store: Store,
    me: String,
}

impl OtherReplicas {
    pub fn new(store: Store, me: &str) -> Self {
        Self { store, me: me.to_owned() }
    }
}

#[async_trait::async_trait]
impl lens_sandbox::Elsewhere for OtherReplicas {
    /// Summed over the live ones: a replica not heard from for [`LAPSE`] holds nothing.
    async fn held(&self) -> Held {
        let since = crate::now_ms() - LAPSE.as_millis() as i64;
        let replicas = match self.store.live_replicas(since).await {
            Ok(replicas) => replicas,
            Err(e) => {
                tracing::warn!(error = %e, "reading what the other replicas' sandboxes hold failed");
                Vec::new()
            }
        };
        let mut held = Held::default();
        for replica in replicas.iter().filter(|r| r.id != self.me) {
            // A replica that never said ("{}") holds nothing.
            if let Ok(theirs) = serde_json::from_str::<Held>(&replica.sandboxes) {
                held.add(&theirs);
            }
        }
        held
    }

    async fn make_room(&self, only: Option<String>) {
        crate::chat::relay::make_room(&self.store, only).await;
    }
}
