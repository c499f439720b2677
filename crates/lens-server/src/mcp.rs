//! `/mcp`: Lens as an MCP server (streamable HTTP, rmcp) for agents. An agent proves who
//! it is with an API token as `Authorization: Bearer`; a browser's session cookie is not
//! taken here (a cross-site page could send it). Every tool acts as the token's person:
//! their conversations and files only, and the sandbox settings only for an admin.

mod tools;

use axum::{
    Router,
    extract::{FromRequestParts, Request, State},
    http::{HeaderValue, header},
    middleware::Next,
    response::{IntoResponse, Response},
};
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use tower_http::limit::RequestBodyLimitLayer;

use crate::{
    AppError, AppState,
    auth::{AnyScope, CurrentUser},
    ids::token_hash,
};

pub use tools::LensMcp;

/// The person an MCP request acts for, put beside the request by [`require_token`].
#[derive(Clone)]
pub struct McpCaller(pub CurrentUser);

/// Which token opened each MCP session (the token's hash): a session answers to it only.
#[derive(Clone, Default)]
struct SessionOwners(Arc<Mutex<HashMap<String, String>>>);

/// rmcp's session header.
const SESSION_HEADER: &str = "mcp-session-id";

/// The `/mcp` route: rmcp's streamable HTTP service behind the token check, with the
/// API's body limit (rmcp reads bodies itself, past axum's `DefaultBodyLimit`).
pub fn routes(state: AppState) -> Router<AppState> {
    let tools_state = state.clone();
    // Host checks guard servers a browser could reach without credentials (DNS
    // rebinding); every request here carries a token no rebinding page has.
    let config = StreamableHttpServerConfig::default().disable_allowed_hosts();
    let service = StreamableHttpService::new(
        move || Ok(LensMcp::new(tools_state.clone())),
        LocalSessionManager::default().into(),
        config,
    );
    let limit = state.config.body_limit;
    Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state((state, SessionOwners::default()), require_token))
        .layer(RequestBodyLimitLayer::new(limit))
}

/// Lets a request through only with a valid API token, records whose it is, and keeps
/// each session to the token that opened it (another token's request is 404, as for a
/// session that does not exist).
async fn require_token(
    State((state, owners)): State<(AppState, SessionOwners)>,
    request: Request,
    next: Next,
) -> Response {
    let (mut parts, body) = request.into_parts();
    let bearer = crate::auth::bearer(&parts.headers).map(|token| token_hash(token.trim()));
    let user = match &bearer {
        // Any scope opens a session; each tool asks for the scope it needs.
        Some(_) => AnyScope::from_request_parts(&mut parts, &state).await.ok().map(|AnyScope(user)| user),
        None => None,
    };
    let (Some(user), Some(bearer)) = (user, bearer) else {
        let mut refused = AppError::Unauthorized.into_response();
        refused.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return refused;
    };
    let session = parts.headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok()).map(str::to_owned);
    if let Some(id) = &session {
        let owner = owners.0.lock().ok().and_then(|o| o.get(id).cloned());
        if owner.is_some_and(|owner| owner != bearer) {
            return AppError::NotFound.into_response();
        }
    }
    let closing = parts.method == axum::http::Method::DELETE;
    parts.extensions.insert(McpCaller(user));
    let response = next.run(Request::from_parts(parts, body)).await;
    if let Ok(mut o) = owners.0.lock() {
        match (&session, response.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok())) {
            (Some(id), _) if closing && response.status().is_success() => {
                o.remove(id);
            }
            (None, Some(opened)) => {
                o.insert(opened.to_owned(), bearer);
            }
            _ => {}
        }
    }
    response
}
