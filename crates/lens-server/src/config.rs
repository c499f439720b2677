//! The server's configuration: one clap `Config` from flags and `LENS_*` variables.

use std::{net::SocketAddr, path::PathBuf};

use clap::{Args, Parser, Subcommand};

mod hidden;
mod sandbox_numbers;
mod sign_in;

pub use hidden::Hidden;
pub use sandbox_numbers::SandboxNumbers;
pub use sign_in::{LocalPasswords, SignInConfig};

/// Lens: a self-hosted chat assistant that runs code.
#[derive(Debug, Parser)]
#[command(name = "lens", version)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the web app and the API.
    Serve(Config),
    /// Administration from the command line.
    Admin {
        #[command(subcommand)]
        command: AdminCommand,
    },
    /// Print the OpenAPI document of the API.
    Openapi,
    /// Copy this machine's records into PostgreSQL and its files into an S3-compatible
    /// bucket, leaving the data directory as it is; safe to run again (it goes on where
    /// it stopped). Counts and checksums are compared at the end.
    MoveData(MoveData),
    /// The code sandbox.
    Sandbox {
        #[command(subcommand)]
        command: SandboxCommand,
    },
}

/// `lens move-data`: from the data directory to the engines that share Lens across machines.
#[derive(Debug, Clone, Args)]
pub struct MoveData {
    /// The data directory to copy from (lens.db, chat-files/, uploads/, library/).
    #[arg(long, env = "LENS_DATA", default_value = "./data")]
    pub data_dir: PathBuf,
    /// The PostgreSQL database to copy the records into (postgres://user:password@host/db).
    #[arg(long, hide_env_values = true)]
    pub to_database: Option<Hidden>,
    /// The bucket to copy the files into (s3://bucket/prefix; the endpoint and keys from
    /// the AWS_* variables).
    #[arg(long)]
    pub to_files: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum SandboxCommand {
    /// Check that this machine can run the local sandbox: bubblewrap, cgroups, the disk
    /// quota, Landlock, seccomp, and Python with its data stack inside. Exits 1 if not.
    Check {
        #[command(flatten)]
        config: Config,
    },
}

#[derive(Debug, Subcommand)]
pub enum AdminCommand {
    /// Create an account (the first one made is the admin).
    Create {
        #[command(flatten)]
        config: Config,
        /// The new account's username.
        #[arg(long)]
        username: String,
        /// Its password (at least 8 characters); read from LENS_NEW_PASSWORD if unset.
        #[arg(long, env = "LENS_NEW_PASSWORD", hide_env_values = true)]
        password: Hidden,
        /// Make the account an admin.
        #[arg(long)]
        admin: bool,
    },
}

/// Everything `lens serve` reads; each flag also has a `LENS_*` variable.
#[derive(Debug, Clone, Args)]
pub struct Config {
    /// Address to listen on.
    #[arg(long, env = "LENS_ADDR", default_value = "127.0.0.1:8080")]
    pub addr: SocketAddr,
    /// Data directory: lens.db, secret.key, chat-files/, uploads/, sandboxes/.
    #[arg(long, env = "LENS_DATA", default_value = "./data")]
    pub data_dir: PathBuf,
    /// Keep everything in PostgreSQL (15 or newer) at this URL
    /// (`postgres://user:password@host/database`) instead of <data>/lens.db.
    #[arg(long, env = "LENS_DATABASE_URL", hide_env_values = true)]
    pub database_url: Option<Hidden>,
    /// Keep files (shared, uploads, library, run logs) in an S3-compatible bucket
    /// (`s3://bucket/prefix`) instead of the data directory; the endpoint, region and
    /// keys come from the usual AWS_* variables.
    #[arg(long, env = "LENS_FILE_STORE")]
    pub file_store: Option<String>,
    /// Several replicas on one database may keep local (bubblewrap) sandboxes only when
    /// they all run on this one host and say so with this flag.
    #[arg(long, env = "LENS_REPLICAS_ON_ONE_HOST")]
    pub replicas_on_one_host: bool,
    /// The built web app (trunk's dist/).
    #[arg(long, env = "LENS_WEB_DIST", default_value = "./dist")]
    pub web_dist: PathBuf,
    /// The server secret (overrides <data>/secret.key); at least 32 characters.
    #[arg(long, env = "LENS_SECRET", hide_env_values = true)]
    pub secret: Option<Hidden>,
    /// Model provider: direct, openai_compatible or anthropic. Set here, it is locked in Settings.
    #[arg(long, env = "LENS_MODEL_PROVIDER")]
    pub model_provider: Option<String>,
    /// The model endpoint's base URL (e.g. http://127.0.0.1:11434/v1).
    #[arg(long, env = "LENS_MODEL_BASE_URL")]
    pub model_base_url: Option<String>,
    /// The model's name at that endpoint.
    #[arg(long, env = "LENS_MODEL_NAME")]
    pub model_name: Option<String>,
    /// The model endpoint's API key.
    #[arg(long, env = "LENS_MODEL_API_KEY", hide_env_values = true)]
    pub model_api_key: Option<Hidden>,
    /// Model turns with tool calls an answer may take before it stops.
    #[arg(long, env = "LENS_MAX_STEPS", default_value_t = 8)]
    pub max_steps: usize,
    /// Seconds an answer waits for the person to approve a step before it goes on without it.
    #[arg(long, env = "LENS_APPROVAL_WAIT_SECS", default_value_t = 600)]
    pub approval_wait_secs: u64,
    /// Largest file a person may upload, MB.
    #[arg(long, env = "LENS_UPLOAD_MAX_MB", default_value_t = 50)]
    pub upload_max_mb: u64,
    /// Largest file a conversation may share out of its sandbox, MB.
    #[arg(long, env = "LENS_SHARE_MAX_MB", default_value_t = 25)]
    pub share_max_mb: u64,
    /// Most files one conversation may keep: shared files, run images and run logs together.
    #[arg(long, env = "LENS_SHARES_PER_CHAT", default_value_t = 20)]
    pub shares_per_chat: u64,
    /// Workspace files one zip holds and one fork copies, at most (past it: a 400 that says so).
    #[arg(long, env = "LENS_WORKSPACE_MAX_FILES", default_value_t = 10_000)]
    pub workspace_max_files: usize,
    /// Days the audit trail keeps its entries; 0 turns the trail off.
    #[arg(long, env = "LENS_AUDIT_DAYS", default_value_t = 365)]
    pub audit_days: u32,
    /// Conversations one person may keep.
    #[arg(long, env = "LENS_CHATS_PER_PERSON", default_value_t = 5000)]
    pub chats_per_person: u64,
    /// Uploads one person may keep (those not yet sent are forgotten after a day).
    #[arg(long, env = "LENS_UPLOADS_PER_PERSON", default_value_t = 1000)]
    pub uploads_per_person: u64,
    /// Bytes of uploads one person may keep, MB.
    #[arg(long, env = "LENS_UPLOAD_MB_PER_PERSON", default_value_t = 10_240)]
    pub upload_mb_per_person: u64,
    /// API tokens one person may have.
    #[arg(long, env = "LENS_TOKENS_PER_PERSON", default_value_t = 100)]
    pub tokens_per_person: u64,
    /// Library documents one person may keep.
    #[arg(long, env = "LENS_DOCUMENTS_PER_PERSON", default_value_t = 5000)]
    pub documents_per_person: u64,
    /// Answers' event streams one person may have open at once (each open tab follows one or two).
    #[arg(long, env = "LENS_STREAMS_PER_PERSON", default_value_t = 32)]
    pub streams_per_person: usize,
    /// Answers one person may have being written at once, across their conversations.
    #[arg(long, env = "LENS_ANSWERS_PER_PERSON", default_value_t = 4)]
    pub answers_per_person: u64,
    /// Largest request body accepted, in bytes.
    #[arg(long, env = "LENS_BODY_LIMIT", default_value_t = 1024 * 1024)]
    pub body_limit: usize,
    /// Longest a single answer-events response stays open, in seconds; the browser then
    /// reconnects with Last-Event-ID and misses nothing (proxies cut long responses anyway).
    #[arg(long, env = "LENS_SSE_MAX_SECS", default_value_t = 300)]
    pub sse_max_secs: u64,
    /// Turn the code sandbox on (bubblewrap on this machine): run_python, run_bash and
    /// sandbox_files join the tools, and Direct mode runs fenced code. Each `--sandbox-*`
    /// option, when given, fixes that setting (Settings > Code sandbox shows it locked).
    #[arg(long, env = "LENS_SANDBOX", num_args = 0..=1, default_missing_value = "true")]
    pub sandbox: Option<bool>,
    /// Where sandboxes run: local (this machine) or gateway (an OpenShell gateway) [default local].
    #[arg(long, env = "LENS_SANDBOX_BACKEND")]
    pub sandbox_backend: Option<String>,
    /// The OpenShell gateway's host:port (port 17670 when left out).
    #[arg(long, env = "LENS_SANDBOX_GATEWAY")]
    pub sandbox_gateway: Option<String>,
    /// The folder with the gateway's ca.crt and client/tls.crt, client/tls.key.
    #[arg(long, env = "LENS_SANDBOX_GATEWAY_CERTS")]
    pub sandbox_gateway_certs: Option<String>,
    /// The name the gateway's certificate carries, when it is not the address's host.
    #[arg(long, env = "LENS_SANDBOX_GATEWAY_SERVER_NAME")]
    pub sandbox_gateway_server_name: Option<String>,
    /// A host helper's URL that may start Compose services (`POST <url>/v1/compose/up`):
    /// "Run the gateway on this machine" then asks it instead of showing the command.
    #[arg(long, env = "LENS_HOST_HELPER")]
    pub host_helper: Option<String>,
    /// The sandbox agent binary; by default the one beside the `lens` binary.
    #[arg(long, env = "LENS_SANDBOX_AGENT")]
    pub sandbox_agent: Option<PathBuf>,
    /// Where workspaces are mounted while their sandboxes run: a folder the sandbox's user can
    /// pass through [default: /run/lens/sandboxes-<hash> as root, else the data directory].
    #[arg(long, env = "LENS_SANDBOX_MOUNTS")]
    pub sandbox_mounts: Option<PathBuf>,
    /// The sandbox's numbers (`--sandbox-timeout-secs`, `LENS_SANDBOX_MEMORY_MB`, ...), as
    /// lens-types declares them.
    #[command(flatten)]
    pub sandbox_numbers: SandboxNumbers,
    /// What sandboxes may reach: off, registries or hosts [default off].
    #[arg(long, env = "LENS_SANDBOX_NETWORK")]
    pub sandbox_network: Option<String>,
    /// Host names the `hosts` network mode allows besides the registries (comma-separated).
    #[arg(long, env = "LENS_SANDBOX_HOSTS", value_delimiter = ',')]
    pub sandbox_hosts: Option<Vec<String>>,
    /// CIDR ranges egress may reach besides public addresses (comma-separated) [default none].
    #[arg(long, env = "LENS_SANDBOX_TRUSTED_EGRESS", value_delimiter = ',')]
    pub sandbox_trusted_egress: Option<Vec<String>>,
    /// Package index URLs for `registries` mode (comma-separated); by default what the
    /// host's pip and npm report at start.
    #[arg(long, env = "LENS_SANDBOX_REGISTRIES", value_delimiter = ',')]
    pub sandbox_registries: Option<Vec<String>>,
    /// An extra certificate authority (PEM file) the registries' certificates may come
    /// from, for a mirror with its own; the host's bundle is always trusted.
    #[arg(long, env = "LENS_SANDBOX_REGISTRY_CA")]
    pub sandbox_registry_ca: Option<PathBuf>,
    /// Under this much free space in the data directory (MiB) Lens warns, in its log
    /// and in the admin's Settings.
    #[arg(long, env = "LENS_DISK_WARN_MB", default_value_t = 1024)]
    pub disk_warn_mb: u64,
    /// Under this much free space (MiB) new uploads, shares and imports are refused, so
    /// the database keeps room to record answers.
    #[arg(long, env = "LENS_DISK_FLOOR_MB", default_value_t = 100)]
    pub disk_floor_mb: u64,
    /// Days a login session lasts.
    #[arg(long, env = "LENS_SESSION_DAYS", default_value_t = 30)]
    pub session_days: i64,
    /// Mark cookies Secure (set this behind HTTPS); an https LENS_PUBLIC_URL, or
    /// `X-Forwarded-Proto: https` from a trusted proxy, does so too.
    #[arg(long, env = "LENS_SECURE_COOKIES")]
    pub secure_cookies: bool,
    /// Where people reach Lens (e.g. https://lens.example.org): requests for another host
    /// name are refused (421), and an https URL makes the session cookie Secure.
    #[arg(long, env = "LENS_PUBLIC_URL")]
    pub public_url: Option<String>,
    /// Where the preview origin listens: HTML and PDF files open in the page from there,
    /// never from Lens's own origin [default: Lens's address, port plus one].
    #[arg(long, env = "LENS_PREVIEW_ADDR")]
    pub preview_addr: Option<SocketAddr>,
    /// Where people reach the preview origin (e.g. https://preview.lens.example.org, a host
    /// name of its own behind your proxy) [default: the host name Lens was reached under,
    /// on the preview port].
    #[arg(long, env = "LENS_PREVIEW_URL")]
    pub preview_url: Option<String>,
    /// More host names Lens answers to (comma-separated), besides LENS_PUBLIC_URL's; loopback
    /// names are allowed while Lens listens on loopback only.
    #[arg(long, env = "LENS_ALLOWED_HOSTS", value_delimiter = ',')]
    pub allowed_hosts: Vec<String>,
    /// Reverse proxies whose `Forwarded` / `X-Forwarded-For` name the client (addresses or
    /// CIDR ranges, comma-separated) [default none: the peer is the client].
    #[arg(long, env = "LENS_TRUSTED_PROXIES", value_delimiter = ',')]
    pub trusted_proxies: Vec<String>,
    /// Single sign-on and local passwords (`LENS_OIDC_*`, `LENS_LOCAL_PASSWORDS`).
    #[command(flatten)]
    pub sign_in: SignInConfig,
}

impl Config {
    /// Defaults with the given data directory (tests and tools build it in code).
    pub fn with_data_dir(data_dir: impl Into<PathBuf>) -> Self {
        let mut config = Config::try_parse_from_empty().expect("defaults parse");
        config.data_dir = data_dir.into();
        config
    }

    fn try_parse_from_empty() -> Result<Self, clap::Error> {
        #[derive(Parser)]
        struct Wrapper {
            #[command(flatten)]
            config: Config,
        }
        // Only the defaults: environment variables are not read here.
        Wrapper::try_parse_from(["lens"]).map(|w| Config {
            model_provider: None,
            model_base_url: None,
            model_name: None,
            model_api_key: None,
            secret: None,
            sandbox: None,
            sandbox_backend: None,
            sandbox_gateway: None,
            sandbox_gateway_certs: None,
            sandbox_gateway_server_name: None,
            host_helper: None,
            sandbox_network: None,
            sandbox_numbers: SandboxNumbers::default(),
            sandbox_hosts: None,
            sandbox_trusted_egress: None,
            sandbox_registries: None,
            sandbox_registry_ca: None,
            public_url: None,
            allowed_hosts: Vec::new(),
            trusted_proxies: Vec::new(),
            sign_in: SignInConfig::default(),
            ..w.config
        })
    }

    /// The sandbox agent to use: configured, or beside this executable.
    pub fn sandbox_agent_path(&self) -> PathBuf {
        self.sandbox_agent.clone().unwrap_or_else(|| {
            let exe = std::env::current_exe().unwrap_or_default();
            exe.with_file_name("lens-sandbox-agent")
        })
    }

    pub fn db_path(&self) -> PathBuf {
        self.data_dir.join("lens.db")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_configurations_debug_shows_no_secret() {
        #[derive(Parser)]
        struct Wrapper {
            #[command(flatten)]
            config: Config,
        }
        let parsed = Wrapper::try_parse_from([
            "lens",
            "--secret",
            "server-secret-that-is-long-enough-1234",
            "--model-api-key",
            "sk-model-key",
        ])
        .unwrap();
        let printed = format!("{:?}", parsed.config);
        assert!(!printed.contains("server-secret") && !printed.contains("sk-model-key"), "{printed}");
        assert_eq!(parsed.config.model_api_key.as_ref().map(Hidden::expose), Some("sk-model-key"));
    }

    #[test]
    fn the_sandbox_numbers_are_options_named_by_their_declaration() {
        use clap::CommandFactory;
        use lens_types::SandboxNumber;
        #[derive(Parser)]
        struct Wrapper {
            #[command(flatten)]
            config: Config,
        }
        let parsed =
            Wrapper::try_parse_from(["lens", "--sandbox-memory-mb", "512", "--sandbox-max-running-per-person", "3"])
                .unwrap();
        let numbers = &parsed.config.sandbox_numbers;
        assert_eq!(numbers.get(SandboxNumber::MemoryMb), Some(512));
        assert_eq!(numbers.get(SandboxNumber::MaxRunningPerPerson), Some(3));
        assert_eq!(numbers.get(SandboxNumber::TimeoutSecs), None, "unset is the stored setting's");
        assert!(Wrapper::try_parse_from(["lens", "--sandbox-pool-size", "many"]).is_err(), "numbers only");
        let help = Wrapper::command().render_long_help().to_string();
        for number in SandboxNumber::ALL {
            assert!(help.contains(number.spec().env), "{} is documented in --help", number.spec().env);
        }
    }
}
