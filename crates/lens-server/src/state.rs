//! `AppState`: the services, built once at start (or by a test) and handed to the
//! routes. Each service takes only what it needs; this file is the wiring.

use std::{os::unix::fs::PermissionsExt, sync::Arc};

use crate::{
    Config,
    audit::Audit,
    auth::Accounts,
    chat::{AnswerLimits, Chats},
    cluster::Cluster,
    config::Hidden,
    files::Files,
    model_settings::{ModelSource, Models},
    sandbox::SandboxHub,
    secret::ServerSecret,
    store::Store,
    tools::ToolRegistry,
};

/// Shared by every handler. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub config: Arc<Config>,
    pub store: Store,
    pub secret: Arc<ServerSecret>,
    /// Conversations and their answers.
    pub chats: Chats,
    /// The answers' model and its settings.
    pub models: Models,
    /// The vaults (shared files, uploads, library documents) and the disk under them.
    pub files: Files,
    /// The code sandbox's switch, driver and settings in force.
    pub sandbox: Arc<SandboxHub>,
    /// Accounts, sessions and tokens, the login limit and the setup code.
    pub accounts: Accounts,
    /// The reverse proxies whose forwarding headers name the client (`LENS_TRUSTED_PROXIES`).
    pub trusted_proxies: Arc<Vec<lens_sandbox::egress::Cidr>>,
    /// The names and scheme Lens is reached under (`LENS_PUBLIC_URL`, `LENS_ALLOWED_HOSTS`).
    pub site: Arc<crate::site::Site>,
    /// The HTTP client Lens's own calls share (the model providers', the host helper's).
    pub http: reqwest::Client,
    /// This server among the replicas on its database.
    pub cluster: Arc<Cluster>,
    /// Answers' event streams open per person.
    pub streams: Arc<crate::open_streams::OpenStreams>,
    /// Where HTML and PDF previews are served from.
    pub preview: Arc<crate::preview_address::PreviewOrigin>,
    /// The audit trail's switch and retention (`LENS_AUDIT_DAYS`).
    pub audit: Audit,
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
        let trusted_proxies = crate::auth::client_addr::parse_trusted(&config.trusted_proxies)?;
        let site = crate::site::Site::from_config(&config)?;
        let secret = Arc::new(ServerSecret::load(config.secret.as_ref().map(Hidden::expose), &config.data_dir)?);
        let store = match &config.database_url {
            Some(url) => Store::connect(url.expose()).await.context("opening the PostgreSQL database")?,
            None => {
                let store = Store::open(&config.db_path())
                    .await
                    .with_context(|| format!("opening {}", config.db_path().display()))?;
                std::fs::set_permissions(config.db_path(), std::fs::Permissions::from_mode(0o600))
                    .with_context(|| format!("securing {}", config.db_path().display()))?;
                store
            }
        };
        let cluster = Arc::new(Cluster::new(store.clone(), &config));
        cluster.join().await?;
        let _ = store.delete_expired_sessions().await;
        let audit = Audit::new(config.audit_days);
        audit.keep_pruning(store.clone());
        let setup_code = crate::auth::SetupCode::at_start(&site, store.count_users().await? == 0);
        if !site.loopback_only() && !site.names_configured() {
            tracing::warn!(
                "LENS_PUBLIC_URL is not set: Lens answers to any host name; set it to the address people use"
            );
        }
        let config = Arc::new(config);
        let sandbox = Arc::new(SandboxHub::new(config.clone(), store.clone()));
        if config.database_url.is_some() {
            sandbox.share_with(Arc::new(crate::capacity::OtherReplicas::new(store.clone(), cluster.id())));
        }
        let holds = sandbox.clone();
        cluster.report_sandboxes(Box::new(move || serde_json::to_string(&holds.held()).unwrap_or_default()));
        let files = Files::open(&config, store.clone(), secret.clone()).context("opening the file store")?;
        let models = Models::new(models, config.clone(), store.clone(), secret.clone());
        let chats = Chats {
            store: store.clone(),
            answers: Arc::default(),
            approvals: Arc::default(),
            endings: Arc::default(),
            models: models.clone(),
            files: files.clone(),
            sandbox: sandbox.clone(),
            tools,
            limits: AnswerLimits::from_config(&config),
            replica: cluster.id().into(),
            shared: config.database_url.is_some(),
            relay: Arc::default(),
            audit,
        };
        let accounts = Accounts::new(&config, store.clone(), setup_code, secret.clone())?;
        let streams = Arc::new(match config.database_url {
            Some(_) => crate::open_streams::OpenStreams::shared(store.clone(), chats.replica.clone()),
            None => crate::open_streams::OpenStreams::local(),
        });
        let preview = crate::preview_address::PreviewOrigin::from_config(&config)?;
        Ok(Self {
            accounts,
            preview,
            http: models.http.clone(),
            chats,
            cluster,
            models,
            files,
            sandbox,
            streams,
            config,
            store,
            secret,
            trusted_proxies: Arc::new(trusted_proxies),
            site: Arc::new(site),
            audit,
        })
    }
}
