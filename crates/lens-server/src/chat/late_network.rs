//! Runs' network records that come after their runs have ended (an OpenShell gateway's
//! proxy logs its decisions, pushed up to a second late): the answer goes on meanwhile,
//! each record is added to its run's step when it comes, and the answer's ending waits
//! for those still coming, up to [`LATE_MAX`].

use std::time::Duration;

use futures_util::{FutureExt, StreamExt, future::BoxFuture, stream::FuturesUnordered};

use super::machine::Input;

/// The longest an answer's ending waits for its runs' records (the gateway driver gives
/// up reading a log after ten seconds).
pub const LATE_MAX: Duration = Duration::from_secs(15);

/// The records still coming, by step.
#[derive(Default)]
pub(super) struct LateNetwork(FuturesUnordered<BoxFuture<'static, Input>>);

impl LateNetwork {
    /// Takes a finished run's record to come out of its outcome, to wait for it here.
    pub fn take_from(&mut self, input: &mut Input) {
        let Input::ToolDone { step_id, outcome } = input else { return };
        let Some(soon) = outcome.network_soon.take() else { return };
        let step_id = step_id.clone();
        self.0.push(async move { Input::NetworkCame { step_id, network: soon.get().await } }.boxed());
    }

    /// The next record that comes; never, while none is coming.
    pub async fn next(&mut self) -> Input {
        match self.0.next().await {
            Some(came) => came,
            None => std::future::pending().await,
        }
    }

    /// The records still coming, as they come, for at most [`LATE_MAX`] in all.
    pub async fn rest(&mut self) -> Vec<Input> {
        let mut came = Vec::new();
        let deadline = tokio::time::Instant::now() + LATE_MAX;
        while let Ok(Some(input)) = tokio::time::timeout_at(deadline, self.0.next()).await {
            came.push(input);
        }
        came
    }
}
