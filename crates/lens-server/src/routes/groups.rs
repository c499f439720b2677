//! Admin Settings > Groups: `GET /admin/groups`, `PUT` and `DELETE /admin/groups/{name}`.
//! A change reaches each member's next run, on every replica (rules are read at each check).

use axum::{
    Json,
    extract::{Path, State},
    http::StatusCode,
};
use lens_types::{AuditAction, AuditChange, GroupView, PutGroupRequest};

use crate::{AppError, AppState, Result, auth::AdminUser, groups, json::ApiJson};

/// Every group, with its rules and members.
#[utoipa::path(
    get,
    path = "/admin/groups",
    tag = "settings",
    responses(
        (status = 200, description = "The groups, by name", body = Vec<lens_types::GroupView>),
    ),
    security(("session" = ["admin"]), ("bearer" = ["admin"])),
)]
pub async fn list_groups(State(state): State<AppState>, _admin: AdminUser) -> Result<Json<Vec<GroupView>>> {
    Ok(Json(groups::list(&state.store).await?))
}

/// Makes or replaces a group: its rules and the accounts an admin makes its members (a
/// group the provider names needs no members here).
#[utoipa::path(
    put,
    path = "/admin/groups/{name}",
    tag = "settings",
    params(("name" = String, Path, description = "The group's name, as the provider names it")),
    request_body = lens_types::PutGroupRequest,
    responses(
        (status = 200, description = "The group as saved", body = lens_types::GroupView),
        (status = 400, description = "A bad name, an unknown account, or rules out of range", body = lens_types::ErrorBody),
        (status = 507, description = "The server's disk is full; nothing was saved", body = lens_types::ErrorBody),
    ),
    security(("session" = ["admin"]), ("bearer" = ["admin"])),
)]
pub async fn put_group(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    Path(name): Path<String>,
    ApiJson(req): ApiJson<PutGroupRequest>,
) -> Result<Json<GroupView>> {
    let name = groups::checked_name(&name)?.to_owned();
    groups::checked_rules(&req.rules)?;
    let mut members = Vec::new();
    let mut ids = Vec::new();
    for username in &req.members {
        let user = state.store.user_by_name(username).await?.ok_or_else(|| {
            AppError::BadRequest(format!(
                "there is no account named `{}`",
                username.chars().take(100).collect::<String>()
            ))
        })?;
        if !ids.contains(&user.id) {
            ids.push(user.id);
            members.push(user.username);
        }
    }
    let before = groups::list(&state.store).await?.into_iter().find(|g| g.name == name);
    let rules = serde_json::to_string(&req.rules).map_err(|e| AppError::Internal(e.to_string()))?;
    let change = |field: &str, was: Option<String>, now: String| {
        (was.as_deref() != Some(now.as_str())).then(|| AuditChange {
            field: field.into(),
            before: was,
            after: Some(now),
        })
    };
    let changes: Vec<AuditChange> = [
        change("rules", before.as_ref().and_then(|g| serde_json::to_string(&g.rules).ok()), rules.clone()),
        change("members", before.as_ref().map(|g| g.members.join(", ")), members.join(", ")),
    ]
    .into_iter()
    .flatten()
    .collect();
    let note = state
        .audit
        .by(&admin, AuditAction::SettingsChanged)
        .filter(|_| !changes.is_empty())
        .map(|n| n.target(format!("group {name}")).changes(changes));
    state.store.put_group(&name, &rules, &ids, note.as_slice()).await?;
    let saved = groups::list(&state.store).await?.into_iter().find(|g| g.name == name);
    Ok(Json(saved.ok_or(AppError::NotFound)?))
}

/// Deletes a group: its people keep what their other groups allow.
#[utoipa::path(
    delete,
    path = "/admin/groups/{name}",
    tag = "settings",
    params(("name" = String, Path, description = "The group's name")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 404, description = "No such group", body = lens_types::ErrorBody),
    ),
    security(("session" = ["admin"]), ("bearer" = ["admin"])),
)]
pub async fn delete_group(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    Path(name): Path<String>,
) -> Result<StatusCode> {
    let before = groups::list(&state.store).await?.into_iter().find(|g| g.name == name).ok_or(AppError::NotFound)?;
    let was = serde_json::to_string(&before.rules).ok();
    let note = state.audit.by(&admin, AuditAction::SettingsChanged).map(|n| {
        n.target(format!("group {name}")).changes(vec![AuditChange { field: "rules".into(), before: was, after: None }])
    });
    match state.store.delete_group(&name, note.as_slice()).await? {
        true => Ok(StatusCode::NO_CONTENT),
        false => Err(AppError::NotFound),
    }
}
