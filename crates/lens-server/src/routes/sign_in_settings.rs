//! Admin Settings > Sign-in: the organisation's identity provider and local passwords.

use axum::{Json, extract::State, http::HeaderMap};
use lens_types::{AuditAction, SignInSettingsView, UpdateSignInSettingsRequest};

use crate::{
    AppState, Result,
    auth::{AdminUser, Https},
    json::ApiJson,
    routes::oidc_start::callback_address,
};

/// The sign-in settings (the client secret is never returned), with the redirect address
/// to register at the provider.
#[utoipa::path(
    get,
    path = "/settings/sign-in",
    tag = "settings",
    responses(
        (status = 200, description = "The sign-in settings", body = lens_types::SignInSettingsView),
    ),
    security(("session" = ["admin"]), ("bearer" = ["admin"])),
)]
pub async fn get_sign_in_settings(
    State(state): State<AppState>,
    Https(https): Https,
    headers: HeaderMap,
    _admin: AdminUser,
) -> Result<Json<SignInSettingsView>> {
    let settings = state.accounts.sign_ins.settings().await?;
    Ok(Json(settings.view(callback_address(&state, &headers, https))))
}

/// Change the sign-in settings; the next sign-in uses them, on every replica.
#[utoipa::path(
    put,
    path = "/settings/sign-in",
    tag = "settings",
    request_body = lens_types::UpdateSignInSettingsRequest,
    responses(
        (status = 200, description = "The settings, changed", body = lens_types::SignInSettingsView),
        (status = 400, description = "A field is not valid (an issuer that is no http(s) address, a scope of two words, a field too long)", body = lens_types::ErrorBody),
        (status = 409, description = "A field is set by the environment (locked), or local passwords would go off without single sign-on", body = lens_types::ErrorBody),
        (status = 507, description = "The server's disk is full; nothing was saved", body = lens_types::ErrorBody),
    ),
    security(("session" = ["admin"]), ("bearer" = ["admin"])),
)]
pub async fn update_sign_in_settings(
    State(state): State<AppState>,
    Https(https): Https,
    headers: HeaderMap,
    AdminUser(admin): AdminUser,
    ApiJson(req): ApiJson<UpdateSignInSettingsRequest>,
) -> Result<Json<SignInSettingsView>> {
    let note = state.audit.by(&admin, AuditAction::SettingsChanged);
    let settings = state.accounts.sign_ins.update(req, note).await?;
    Ok(Json(settings.view(callback_address(&state, &headers, https))))
}
