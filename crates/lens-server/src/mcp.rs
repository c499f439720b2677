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

use crate::{AppError, AppState, auth::CurrentUser};

pub use tools::LensMcp;

/// The person an MCP request acts for, put beside the request by [`require_token`].
#[derive(Clone)]
pub struct McpCaller(pub CurrentUser);

/// The `/mcp` route: rmcp's streamable HTTP service behind the token check.
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
    Router::new().nest_service("/mcp", service).layer(axum::middleware::from_fn_with_state(state, require_token))
}

/// Lets a request through only with a valid API token, and records whose it is.
async fn require_token(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let (mut parts, body) = request.into_parts();
    let has_bearer = parts
        .headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("Bearer "));
    let user = if has_bearer { CurrentUser::from_request_parts(&mut parts, &state).await.ok() } else { None };
    let Some(user) = user else {
        let mut refused = AppError::Unauthorized.into_response();
        refused.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return refused;
    };
    parts.extensions.insert(McpCaller(user));
    next.run(Request::from_parts(parts, body)).await
}
