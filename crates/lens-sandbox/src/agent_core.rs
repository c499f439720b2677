//! What every driver that runs Lens's agent shares, written once: a run started (a
//! sandbox found dead is started afresh, also when it dies between the check and the
//! request, and the run's first output then says so), and one request answered (an
//! agent that stays silent is ended from outside). A driver says only how it gets a
//! conversation's sandbox and what environment its runs get ([`AgentBackend`]); the
//! requests themselves are `calls.rs`, and [`crate::SandboxDriver`]'s runs and file
//! calls are made of these two.

use std::{sync::Arc, time::Duration};

use lens_sandbox_agent::protocol::{Reply, Request};

use crate::{
    RunStream, SandboxError,
    link::{Unanswered, gone},
    run_stream::{InUse, RunHost, run_stream},
};

/// A run's environment.
pub type Env = Vec<(String, String)>;

/// Builds a run's request from its id and environment.
pub type RunRequest = Box<dyn Fn(u64, Env) -> Request + Send + Sync>;

/// Builds a one-reply request from its id.
pub type OneRequest = Box<dyn FnOnce(u64) -> Request + Send>;

/// How a driver gives its agent-run sandboxes.
#[async_trait::async_trait]
pub(crate) trait AgentBackend: Send + Sync {
    /// A running sandbox with its agent.
    type Sandbox: RunHost;

    /// The conversation's sandbox, started if need be, held while the hold lives; `true`
    /// when it had died and was started afresh over the same workspace.
    async fn sandbox(&self, chat_id: &str) -> Result<(Arc<Self::Sandbox>, bool, InUse), SandboxError>;

    /// The environment a run in `sandbox` gets.
    fn run_env(&self, sandbox: &Self::Sandbox) -> Env;
}

/// The two calls every agent driver answers the same way, written once for every
/// [`AgentBackend`]: a run started, and one request answered. [`crate::SandboxDriver`]'s
/// runs and file calls are made of them.
#[doc(hidden)]
#[async_trait::async_trait]
pub trait AgentCalls: Send + Sync {
    /// Starts a run in the sandbox's agent.
    async fn start_agent_run(
        &self,
        chat_id: &str,
        timeout: Duration,
        make: RunRequest,
    ) -> Result<RunStream, SandboxError>;

    /// Asks the sandbox's agent one request.
    async fn ask_agent(&self, chat_id: &str, make: OneRequest) -> Result<Reply, SandboxError>;
}

#[async_trait::async_trait]
impl<B: AgentBackend> AgentCalls for B {
    async fn start_agent_run(
        &self,
        chat_id: &str,
        timeout: Duration,
        make: RunRequest,
    ) -> Result<RunStream, SandboxError> {
        start_run(self, chat_id, timeout, make).await
    }

    async fn ask_agent(&self, chat_id: &str, make: OneRequest) -> Result<Reply, SandboxError> {
        ask(self, chat_id, make).await
    }
}

/// Starts a run whose request `make` builds.
async fn start_run<B: AgentBackend + ?Sized>(
    backend: &B,
    chat_id: &str,
    timeout: Duration,
    make: RunRequest,
) -> Result<RunStream, SandboxError> {
    let (mut sandbox, mut healed, mut hold) = backend.sandbox(chat_id).await?;
    let mut sent = sandbox.link().send(|id| make(id, backend.run_env(&sandbox))).await;
    if sent.is_err() && sandbox.link().is_dead() {
        (sandbox, healed, hold) = backend.sandbox(chat_id).await?;
        sent = sandbox.link().send(|id| make(id, backend.run_env(&sandbox))).await;
    }
    let (id, rx) = sent?;
    Ok(run_stream(sandbox, id, rx, timeout, healed, hold))
}

/// One request, one reply; the agent's refusal comes back as its error.
async fn ask<B: AgentBackend + ?Sized>(backend: &B, chat_id: &str, make: OneRequest) -> Result<Reply, SandboxError> {
    let (sandbox, _, _hold) = backend.sandbox(chat_id).await?;
    match sandbox.link().ask(make).await {
        Ok(reply) => Ok(reply),
        Err(Unanswered::Failed(e)) => Err(e),
        Err(Unanswered::Silent) => {
            sandbox.kill_from_outside().await;
            Err(gone("it stopped answering and was ended; the next request starts it afresh"))
        }
    }
}
