//! `AppState`: everything a handler needs, built once at start (or by a test).

use std::{os::unix::fs::PermissionsExt, sync::Arc};

use crate::{
    Config, auth::LoginLimiter, chat::AnswerHub, model_settings::ModelSource, secret::ServerSecret, store::Store,
    tools::ToolRegistry,
};

/// Shared by every handler. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub config: Arc<Config>,
    pub store: Store,
    pub secret: Arc<ServerSecret>,
    pub answers: Arc<AnswerHub>,
    pub models: ModelSource,
    pub tools: ToolRegistry,
    pub login_limiter: Arc<LoginLimiter>,
    /// The HTTP client the model providers share.
    pub http: reqwest::Client,
    /// The code sandbox, when it is on.
    pub sandbox: Option<Arc<dyn lens_sandbox::SandboxDriver>>,
}

impl AppState {
    /// Opens the data directory (made if absent), the database and the secret, and
    /// marks answers left streaming by a previous run as interrupted.
    pub async fn open(config: Config, models: ModelSource, tools: ToolRegistry) -> anyhow::Result<Self> {
        use anyhow::Context;
        std::fs::create_dir_all(&config.data_dir)
            .with_context(|| format!("creating the data directory {}", config.data_dir.display()))?;
        // Other host users (the sandbox's among them) may pass through to their own
        // workspaces, never list or read Lens's files.
        std::fs::set_permissions(&config.data_dir, std::fs::Permissions::from_mode(0o711))
            .with_context(|| format!("securing {}", config.data_dir.display()))?;
        let secret = ServerSecret::load(config.secret.as_deref(), &config.data_dir)?;
        let store =
            Store::open(&config.db_path()).await.with_context(|| format!("opening {}", config.db_path().display()))?;
        std::fs::set_permissions(config.db_path(), std::fs::Permissions::from_mode(0o600))
            .with_context(|| format!("securing {}", config.db_path().display()))?;
        let interrupted = store.mark_interrupted().await?;
        if interrupted > 0 {
            tracing::warn!(interrupted, "answers left streaming by the last run are marked interrupted");
        }
        let _ = store.delete_expired_sessions().await;
        Ok(Self {
            config: Arc::new(config),
            store,
            secret: Arc::new(secret),
            answers: Arc::new(AnswerHub::default()),
            models,
            tools,
            login_limiter: Arc::new(LoginLimiter::default()),
            http: lens_llm::http_client(),
            sandbox: None,
        })
    }

    /// Turns the sandbox on: its tools join the registry.
    pub fn with_sandbox(mut self, driver: Arc<dyn lens_sandbox::SandboxDriver>) -> Self {
        let settings = crate::tools::RunSettings {
            timeout: std::time::Duration::from_secs(self.config.sandbox_timeout_secs),
            shown: self.config.sandbox_shown,
        };
        let mut tools = crate::tools::ToolRegistry::sandbox(driver.clone(), settings);
        tools.extend(std::mem::take(&mut self.tools));
        self.tools = tools;
        self.sandbox = Some(driver);
        self
    }

    /// Opens the local sandbox driver the configuration names; the reason if it cannot.
    pub fn local_sandbox(config: &Config) -> anyhow::Result<Arc<dyn lens_sandbox::SandboxDriver>> {
        use anyhow::Context;
        let options = lens_sandbox::LocalOptions::new(&config.data_dir.join("sandboxes"), &config.sandbox_agent_path());
        let driver = lens_sandbox::LocalDriver::new(options).context("the code sandbox cannot be turned on")?;
        Ok(Arc::new(driver))
    }
}
