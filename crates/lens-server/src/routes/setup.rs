//! First-run setup: the first visitor makes the first account, which is the admin.

use axum::{Json, extract::State};
use axum_extra::extract::CookieJar;
use lens_types::{AuditAction, SessionResponse, SetupRequest, SetupStatus};

use crate::{
    AppError, AppState, Result,
    auth::{ClientAddr, Https, check_password_rules, hash_password},
    checks::check_username,
    json::ApiJson,
};

/// Whether the first account still has to be made.
#[utoipa::path(
    get,
    path = "/setup",
    tag = "accounts",
    responses(
        (status = 200, description = "Whether setup is needed", body = lens_types::SetupStatus),
    ),
)]
pub async fn get_setup(State(state): State<AppState>) -> Result<Json<SetupStatus>> {
    let needed = state.store.count_users().await? == 0;
    Ok(Json(SetupStatus {
        needed,
        code_required: needed && state.accounts.setup_code.required(),
        sign_in: state.accounts.options().await?,
    }))
}

/// Makes the admin account and logs it in; 409 once any account exists.
#[utoipa::path(
    post,
    path = "/setup",
    tag = "accounts",
    request_body = lens_types::SetupRequest,
    responses(
        (status = 200, description = "The admin account, logged in (sets the session cookie)", body = lens_types::SessionResponse),
        (status = 403, description = "The setup code is missing or wrong (Lens listens beyond loopback)", body = lens_types::ErrorBody),
        (status = 409, description = "Lens is set up already", body = lens_types::ErrorBody),
        (status = 507, description = "The server's disk is full; nothing was saved", body = lens_types::ErrorBody),
    ),
)]
pub async fn create_setup(
    State(state): State<AppState>,
    Https(https): Https,
    ClientAddr(client): ClientAddr,
    jar: CookieJar,
    ApiJson(req): ApiJson<SetupRequest>,
) -> Result<(CookieJar, Json<SessionResponse>)> {
    if state.store.count_users().await? > 0 {
        return Err(AppError::AlreadySetUp);
    }
    state.accounts.setup_code.check(req.setup_code.as_deref())?;
    check_username(&req.username)?;
    check_password_rules(&req.password)?;
    let hash = hash_password(&req.password)?;
    let name = req.username.trim();
    let made = state
        .audit
        .note(AuditAction::AccountMade)
        .map(|n| n.named(name).client(client).target(name).detail("admin", true).detail("how", "setup"));
    let user = state.store.create_first_user(name, &hash, made.as_slice()).await?.ok_or(AppError::AlreadySetUp)?;
    tracing::info!(user = %user.username, "first account created");
    state.accounts.start_session(jar, https, (user, None), (client, "password")).await
}
