//! Run a step's code again, edited by the person (their conversation only; anyone
//! else: 404).

use axum::{
    Json,
    extract::{Path, State},
    http::StatusCode,
};
use lens_types::{RunAgainRequest, RunAgainResponse};

use crate::{AppState, Result, auth::CurrentUser, json::ApiJson};

/// Runs the code in the conversation's sandbox as a new step of its newest answer,
/// marked as the person's; the answer streams again until the run ends (follow its
/// events), and the model reads the run with the conversation from then on.
#[utoipa::path(
    post,
    path = "/chats/{cid}/runs",
    tag = "answers",
    params(
        ("cid" = String, Path, description = "The conversation's id"),
    ),
    request_body = lens_types::RunAgainRequest,
    responses(
        (status = 202, description = "Running: the answer and the new step", body = lens_types::RunAgainResponse),
        (status = 400, description = "The code is empty or too long, or the step is not a run that can run now", body = lens_types::ErrorBody),
        (status = 404, description = "No such conversation of yours, or no such step in it", body = lens_types::ErrorBody),
        (status = 409, description = "An answer is still being written in this conversation", body = lens_types::ErrorBody),
        (status = 429, description = "You have as many answers being written as one person may", body = lens_types::ErrorBody),
    ),
    security(("session" = []), ("bearer" = [])),
)]
pub async fn run_again(
    State(state): State<AppState>,
    user: CurrentUser,
    Path(cid): Path<String>,
    ApiJson(req): ApiJson<RunAgainRequest>,
) -> Result<(StatusCode, Json<RunAgainResponse>)> {
    let started = crate::chat::run_again::run_again(&state.chats, user.id(), &cid, req).await?;
    tracing::info!(chat = %cid, answer = %started.answer_id, step = %started.step_id, "a person ran a run again");
    Ok((StatusCode::ACCEPTED, Json(started)))
}
