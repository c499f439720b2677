//! Allow a host for a conversation's sandbox (its owner only; anyone else: 404), where
//! the admin lets people: after a run was refused it, its step offers this.

use axum::{
    Json,
    extract::{Path, State},
};
use lens_types::{AllowHostRequest, AllowedHosts, AuditAction, NetworkMode};

use crate::{AppError, AppState, Result, auth::CurrentUser, groups, json::ApiJson};

/// The most hosts one conversation's owner may allow.
pub const MOST_HOSTS: usize = 20;

/// Adds the host to the conversation's list: its sandbox reaches it from its next
/// connection (on this machine's sandboxes and on a gateway), and the egress log says
/// who allowed it. The admin's list and every other conversation stay as they are.
#[utoipa::path(
    post,
    path = "/chats/{cid}/sandbox/hosts",
    tag = "chats",
    params(
        ("cid" = String, Path, description = "The conversation's id"),
    ),
    request_body = lens_types::AllowHostRequest,
    responses(
        (status = 200, description = "The conversation's hosts now", body = lens_types::AllowedHosts),
        (status = 400, description = "Not a host name", body = lens_types::ErrorBody),
        (status = 403, description = "The person's groups may not allow hosts (or use the network or the sandbox); the message names them", body = lens_types::ErrorBody),
        (status = 409, description = "The admin does not let people allow hosts, or the sandbox has no network", body = lens_types::ErrorBody),
        (status = 429, description = "The conversation has as many hosts as it may", body = lens_types::ErrorBody),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn allow_host(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(cid): Path<String>,
    ApiJson(req): ApiJson<AllowHostRequest>,
) -> Result<Json<AllowedHosts>> {
    state.store.chat(user.id(), &cid).await?.ok_or(AppError::NotFound)?;
    let settings = state.sandbox.settings().await?;
    if !settings.people_allow_hosts {
        return Err(AppError::Conflict("the admin does not let people allow hosts for their conversations".into()));
    }
    if !settings.enabled || settings.network == NetworkMode::Off {
        return Err(AppError::Conflict("the sandbox has no network: no host can be reached from it".into()));
    }
    // Their groups, read once: whether they may, and what their sandbox may reach.
    let person = state.chats.group_rules(user.id()).await?;
    if let Some((rules, names)) = &person {
        let refused = match () {
            _ if !rules.sandbox => Some("run code in the sandbox"),
            _ if rules.network == NetworkMode::Off => Some("use the network"),
            _ if !rules.allow_hosts => Some("allow hosts for their conversations"),
            _ => None,
        };
        if let Some(what) = refused {
            return Err(AppError::NotAllowed(groups::refusal(names, what)));
        }
    }
    let host = req.host.trim().trim_end_matches('.').to_ascii_lowercase();
    if !lens_sandbox::egress::is_host_name(&host) {
        return Err(AppError::BadRequest(format!(
            "`{}` is not a host name (letters, digits, - and dots; addresses are not allowed)",
            host.chars().take(100).collect::<String>()
        )));
    }
    let note = state.audit.by(&user, AuditAction::HostAllowed).map(|n| n.chat(&cid).target(host.clone()));
    let hosts = state.store.allow_host(&cid, &host, MOST_HOSTS, note.as_slice()).await?.ok_or_else(|| {
        AppError::LimitReached(format!("this conversation has {MOST_HOSTS} hosts allowed, the most it may"))
    })?;
    if let Some((driver, Ok(run))) = state.chats.sandbox_under(Ok(person)) {
        driver.set_chat_network(&cid, lens_sandbox::ChatNetwork { hosts: hosts.clone(), within: run.within });
        driver.note_egress(&cid, &host, "allowed in this conversation by its owner");
    }
    tracing::info!(chat = %cid, host = %host, "a host was allowed for a conversation by its owner");
    Ok(Json(AllowedHosts { hosts }))
}
