//! The `lens` binary: parse the command line, then serve or administer.

use anyhow::Context;
use clap::Parser;
use lens_server::{
    AppState,
    auth::{check_password_rules, hash_password},
    config::{AdminCommand, Cli, Command, SandboxCommand},
    model_settings::ModelSource,
    serve::{serve, shutdown_signal},
    tools::ToolRegistry,
};

/// How often the sandbox routines look for idle, unused and orphaned sandboxes.
const ROUTINES_EVERY: std::time::Duration = std::time::Duration::from_secs(30);

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("LENS_LOG")
                .unwrap_or_else(|_| "info,sqlx=warn,tower_http=warn".into()),
        )
        .init();
    match Cli::parse().command {
        Command::Serve(config) => {
            let addr = config.addr;
            let state = AppState::open(config, ModelSource::Settings, ToolRegistry::default()).await?;
            let backend = state.sandbox.settings().await.map_err(|e| anyhow::anyhow!("{e}"))?.backend;
            if let Err(refused) = state.cluster.check_sandboxes_shared(&state.config, backend).await {
                state.cluster.leave().await;
                return Err(refused);
            }
            state.cluster.clone().spawn();
            lens_server::chat::relay::listen(state.chats.clone());
            if state.chats.shared {
                lens_server::chat::placement::spawn_adopter(state.chats.clone());
            }
            lens_server::sandbox::start(&state.sandbox).await?;
            lens_server::routines::spawn(state.clone(), ROUTINES_EVERY);
            let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| format!("listening on {addr}"))?;
            if let Some(previews) = lens_server::serve::bind_preview(&state.config, listener.local_addr()?).await? {
                lens_server::serve::spawn_preview(previews, state.clone(), shutdown_signal());
            }
            tracing::info!("Lens is serving on http://{addr}");
            serve(listener, state.clone(), shutdown_signal()).await.context("serving")?;
            lens_server::sandbox::shutdown(&state.sandbox).await;
            state.cluster.leave().await;
        }
        Command::Admin { command: AdminCommand::Create { config, username, password, admin } } => {
            lens_server::checks::check_username(&username).map_err(|e| anyhow::anyhow!("{e}"))?;
            check_password_rules(password.expose()).map_err(|e| anyhow::anyhow!("{e}"))?;
            let state = AppState::open(config, ModelSource::Settings, ToolRegistry::default()).await?;
            let hash = hash_password(password.expose()).map_err(|e| anyhow::anyhow!("{e}"))?;
            let note = state.audit.note(lens_types::AuditAction::AccountMade).map(|n| {
                n.target(username.trim()).detail("admin", admin).detail("how", "the `lens admin create` command")
            });
            let user = state
                .store
                .create_user(username.trim(), &hash, admin, note.as_slice())
                .await?
                .with_context(|| format!("the username `{username}` is taken"))?;
            println!("created {} (id {}{})", user.username, user.id, if user.is_admin { ", admin" } else { "" });
            state.cluster.leave().await;
        }
        Command::MoveData(args) => {
            let moved = lens_server::move_data::move_data(&args).await?;
            print!("{}", moved.report());
            if !moved.same() {
                anyhow::bail!("the target differs from the source (above); run again to go on");
            }
            println!("Moved. Start lens serve with LENS_DATABASE_URL and LENS_FILE_STORE set to the targets.");
        }
        Command::Openapi => println!("{}", serde_json::to_string_pretty(&lens_server::router::openapi_document())?),
        Command::Sandbox { command: SandboxCommand::Check { config } } => {
            let state = AppState::open(config, ModelSource::Settings, ToolRegistry::default()).await?;
            let settings = state.sandbox.settings().await.map_err(|e| anyhow::anyhow!("{e}"))?;
            let check = state.sandbox.run_check(&settings).await;
            for item in &check.items {
                println!("{} {}: {}", if item.ok { "ok  " } else { "FAIL" }, item.name, item.detail);
            }
            if !check.ok {
                println!("The code sandbox cannot run here until the pieces marked FAIL are fixed.");
                std::process::exit(1);
            }
            println!("The code sandbox can run here.");
        }
    }
    Ok(())
}
