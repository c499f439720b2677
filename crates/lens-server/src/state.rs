//! `AppState`: everything a handler needs, built once at start (or by a test).

use std::{os::unix::fs::PermissionsExt, sync::Arc};

use crate::{
    Config, auth::LoginLimiter, chat::AnswerHub, config::Hidden, model_settings::ModelSource, secret::ServerSecret,
    store::Store, tools::ToolRegistry,
};

/// Shared by every handler. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub config: Arc<Config>,
    pub store: Store,
    pub secret: Arc<ServerSecret>,
    pub answers: Arc<AnswerHub>,
    /// Answers waiting for the person's decision.
    pub approvals: Arc<crate::chat::approvals::ApprovalHub>,
    pub models: ModelSource,
    pub tools: ToolRegistry,
    pub login_limiter: Arc<LoginLimiter>,
    /// The reverse proxies whose forwarding headers name the client (`LENS_TRUSTED_PROXIES`).
    pub trusted_proxies: Arc<Vec<lens_sandbox::egress::Cidr>>,
    /// The names and scheme Lens is reached under (`LENS_PUBLIC_URL`, `LENS_ALLOWED_HOSTS`).
    pub site: Arc<crate::site::Site>,
    /// The one-time code setup needs while Lens listens beyond loopback with no account yet.
    pub setup_code: Arc<crate::auth::SetupCode>,
    /// The HTTP client the model providers share.
    pub http: reqwest::Client,
    /// Files that left a sandbox, encrypted.
    pub vault: crate::vault::Vault,
    /// The person's uploads, encrypted.
    pub uploads: crate::vault::Vault,
    /// The person's library documents, encrypted.
    pub library: crate::vault::Vault,
    /// The code sandbox's switch, driver and settings in force.
    pub sandbox: Arc<crate::sandbox::SandboxHub>,
    /// The data directory's free space and the thresholds Lens keeps.
    pub disk: Arc<crate::disk::DiskSpace>,
    /// Answers that ended but could not be saved yet.
    pub endings: Arc<crate::chat::endings::UnsavedEndings>,
    /// Answers' event streams open per person.
    pub streams: Arc<crate::open_streams::OpenStreams>,
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
        let trusted_proxies =
            crate::auth::client_addr::parse_trusted(&config.trusted_proxies).map_err(anyhow::Error::msg)?;
        let site = crate::site::Site::from_config(&config).map_err(anyhow::Error::msg)?;
        let secret = ServerSecret::load(config.secret.as_ref().map(Hidden::expose), &config.data_dir)?;
        let store =
            Store::open(&config.db_path()).await.with_context(|| format!("opening {}", config.db_path().display()))?;
        std::fs::set_permissions(config.db_path(), std::fs::Permissions::from_mode(0o600))
            .with_context(|| format!("securing {}", config.db_path().display()))?;
        let interrupted = store.mark_interrupted().await?;
        if interrupted > 0 {
            tracing::warn!(interrupted, "answers left streaming by the last run are marked interrupted");
        }
        let _ = store.delete_expired_sessions().await;
        let setup_code = crate::auth::SetupCode::at_start(&site, store.count_users().await? == 0);
        if !site.loopback_only() && !site.names_configured() {
            tracing::warn!(
                "LENS_PUBLIC_URL is not set: Lens answers to any host name; set it to the address people use"
            );
        }
        // Admission shares the sandboxes between people: it asks whose a conversation is.
        let owners_of = store.clone();
        let owners: lens_sandbox::OwnerOf = Arc::new(move |chat: String| {
            let store = owners_of.clone();
            Box::pin(async move { store.chat_owner(&chat).await.ok().flatten().map(|id| id.to_string()) })
        });
        let sandbox = Arc::new(crate::sandbox::SandboxHub::new(&config, owners));
        let secret = Arc::new(secret);
        let vault = crate::vault::Vault::new(&config.data_dir, secret.clone());
        let uploads = crate::vault::Vault::uploads(&config.data_dir, secret.clone());
        let library = crate::vault::Vault::library(&config.data_dir, secret.clone());
        let disk = Arc::new(crate::disk::DiskSpace::new(&config.data_dir, config.disk_warn_mb, config.disk_floor_mb));
        disk.check();
        Ok(Self {
            disk,
            endings: Arc::default(),
            streams: Arc::default(),
            config: Arc::new(config),
            store,
            secret,
            vault,
            uploads,
            library,
            answers: Arc::new(AnswerHub::default()),
            approvals: Arc::default(),
            models,
            tools,
            login_limiter: Arc::new(LoginLimiter::default()),
            trusted_proxies: Arc::new(trusted_proxies),
            site: Arc::new(site),
            setup_code: Arc::new(setup_code),
            http: lens_llm::http_client(),
            sandbox,
        })
    }

    /// The tools on offer for an answer starting now: the sandbox's when it is on.
    pub fn tools_now(&self) -> ToolRegistry {
        let mut tools = match self.sandbox.current() {
            Some((driver, settings)) => ToolRegistry::sandbox(self.clone(), driver, settings),
            None => ToolRegistry::default(),
        };
        tools.extend(self.tools.clone());
        tools
    }
}
