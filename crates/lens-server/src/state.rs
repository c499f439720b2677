//! `AppState`: everything a handler needs, built once at start (or by a test).

use std::sync::Arc;

use crate::{
    Config, auth::LoginLimiter, chat::AnswerHub, model_settings::ModelSource, secret::ServerSecret,
    store::Store, tools::ToolRegistry,
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
}

impl AppState {
    /// Opens the data directory (made if absent), the database and the secret, and
    /// marks answers left streaming by a previous run as interrupted.
    pub async fn open(
        config: Config,
        models: ModelSource,
        tools: ToolRegistry,
    ) -> anyhow::Result<Self> {
        use anyhow::Context;
        std::fs::create_dir_all(&config.data_dir).with_context(|| {
            format!("creating the data directory {}", config.data_dir.display())
        })?;
        let secret = ServerSecret::load(config.secret.as_deref(), &config.data_dir)?;
        let store = Store::open(&config.db_path())
            .await
            .with_context(|| format!("opening {}", config.db_path().display()))?;
        let interrupted = store.mark_interrupted().await?;
        if interrupted > 0 {
            tracing::warn!(
                interrupted,
                "answers left streaming by the last run are marked interrupted"
            );
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
        })
    }
}
