//! `POST /api/v1/admin/sandbox/gateway-start`: asks the host helper Lens was given to
//! start the Compose `sandbox` profile (the gateway), instead of a person running it.

use axum::{extract::State, http::StatusCode};
use lens_types::AuditAction;

use crate::{AppError, AppState, Result, auth::AdminUser};

/// Starts the gateway on this machine through the host helper (`LENS_HOST_HELPER`).
/// Lens then waits for it as after running the command: `PUT /admin/sandbox` with the
/// preflight's address and certificate folder.
#[utoipa::path(
    post,
    path = "/admin/sandbox/gateway-start",
    tag = "settings",
    responses(
        (status = 204, description = "The helper started the Compose `sandbox` profile"),
        (status = 409, description = "Lens was given no host helper: run the command instead", body = lens_types::ErrorBody),
        (status = 502, description = "The helper could not start it, or could not be reached; the message says why", body = lens_types::ErrorBody),
    ),
    security(("session" = ["admin"]), ("bearer" = ["admin"])),
)]
pub async fn start_gateway(State(state): State<AppState>, AdminUser(admin): AdminUser) -> Result<StatusCode> {
    let Some(url) = state.config.host_helper.as_deref() else {
        return Err(AppError::Conflict(
            "Lens was given no host helper (LENS_HOST_HELPER): run the command on the server instead".into(),
        ));
    };
    crate::gateway_preflight::start_with_helper(&state.http, url).await?;
    tracing::info!("the host helper started the gateway's Compose profile");
    // The machine changed, not a setting: recorded after the helper did it.
    let note = state
        .audit
        .by(&admin, AuditAction::SettingsChanged)
        .map(|n| n.target("gateway").detail("started", "the Compose `sandbox` profile, through the host helper"));
    state.store.append_audit(note.as_slice()).await?;
    Ok(StatusCode::NO_CONTENT)
}
