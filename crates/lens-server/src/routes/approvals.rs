//! `POST /api/v1/approvals/{id}`: the person approves or declines a step that asked
//! first. Once, by the conversation's owner only (anyone else: 404), and only while the
//! answer still waits for it.

use axum::{
    Json,
    extract::{Path, State},
};
use lens_types::{ApprovalRef, AuditAction, DecideApprovalRequest};

use crate::{AppError, AppState, Result, auth::Approver, json::ApiJson, store::Decided};

/// Approve or decline a step that asked first.
#[utoipa::path(
    post,
    path = "/approvals/{id}",
    tag = "answers",
    params(
        ("id" = String, Path, description = "The approval's id"),
    ),
    request_body = lens_types::DecideApprovalRequest,
    responses(
        (status = 200, description = "The decision, recorded", body = lens_types::ApprovalRef),
        (status = 403, description = "The API token lacks the `approve` scope", body = lens_types::ErrorBody),
        (status = 409, description = "It was decided already, or its answer has ended", body = lens_types::ErrorBody),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn decide_approval(
    State(state): State<AppState>,
    Approver(user): Approver,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<DecideApprovalRequest>,
) -> Result<Json<ApprovalRef>> {
    // Waited for here, or (with other replicas) by an answer another replica writes.
    let waiting = state.chats.approvals.is_waiting(&id)
        || (state.chats.shared && state.store.approval_waits(user.id(), &id).await?);
    if !waiting {
        // Unknown, someone else's, decided, or its answer is over: recording now would
        // change nothing, so nothing is recorded.
        return Err(match state.store.decide_approval_allowed(user.id(), &id).await? {
            None => AppError::NotFound,
            Some(true) => AppError::Conflict("this was decided already".into()),
            Some(false) => {
                AppError::Conflict("the answer that asked has ended; nothing waits for this decision".into())
            }
        });
    }
    let note = state
        .audit
        .by(&user, AuditAction::ApprovalDecided)
        .map(|n| n.target(id.clone()).detail("decision", if req.approve { "approved" } else { "denied" }));
    match state.store.decide_approval(user.id(), &id, req.approve, note.as_slice()).await? {
        Decided::NotFound => Err(AppError::NotFound),
        Decided::AlreadyDecided => Err(AppError::Conflict("this was decided already".into())),
        Decided::Recorded => {
            crate::chat::relay::decided(&state.chats, &id, req.approve).await;
            Ok(Json(ApprovalRef { id, question: String::new(), approved: Some(req.approve) }))
        }
    }
}
