//! The OpenAPI 3.1 document of the API, built from one route table.
//!
//! The table is checked against the router by a test that calls every listed route, so
//! a route added without its entry (or an entry without a route) fails the suite.

use serde_json::{Map, Value, json};

/// One documented route.
pub struct RouteDoc {
    pub method: &'static str,
    pub path: &'static str,
    pub summary: &'static str,
    /// `none`, `user` or `admin`.
    pub auth: &'static str,
    pub request: Option<&'static str>,
    pub response: Option<&'static str>,
}

macro_rules! r {
    ($m:literal, $p:literal, $s:literal, $a:literal, $req:expr, $resp:expr) => {
        RouteDoc { method: $m, path: $p, summary: $s, auth: $a, request: $req, response: $resp }
    };
}

/// Every route the server has.
pub const ROUTES: &[RouteDoc] = &[
    r!("get", "/healthz", "Liveness: the process is up and the database answers", "none", None, Some("Health")),
    r!("get", "/api/v1/openapi.json", "This document", "none", None, None),
    r!("get", "/api/v1/setup", "Whether the first account still has to be made", "none", None, Some("SetupStatus")),
    r!(
        "post",
        "/api/v1/setup",
        "Make the first (admin) account and log in",
        "none",
        Some("CredentialsRequest"),
        Some("SessionResponse")
    ),
    r!(
        "post",
        "/api/v1/auth/login",
        "Log in; sets the session cookie",
        "none",
        Some("CredentialsRequest"),
        Some("SessionResponse")
    ),
    r!("post", "/api/v1/auth/logout", "Log out", "user", None, None),
    r!("get", "/api/v1/me", "Who is logged in, and the CSRF proof", "user", None, Some("SessionResponse")),
    r!("get", "/api/v1/users", "List accounts", "admin", None, Some("UserView[]")),
    r!("post", "/api/v1/users", "Make an account", "admin", Some("CredentialsRequest"), Some("UserView")),
    r!("get", "/api/v1/tokens", "List your API tokens", "user", None, Some("TokenView[]")),
    r!(
        "post",
        "/api/v1/tokens",
        "Make an API token (its secret is shown once)",
        "user",
        Some("CreateTokenRequest"),
        Some("CreateTokenResponse")
    ),
    r!("delete", "/api/v1/tokens/{id}", "Revoke an API token", "user", None, None),
    r!(
        "get",
        "/api/v1/chats",
        "List your conversations, most recent first (`?page=/path`: that page's assistant's only)",
        "user",
        None,
        Some("ChatView[]")
    ),
    r!(
        "post",
        "/api/v1/chats",
        "Start a conversation (`page_url` ties it to a page, for the page assistant)",
        "user",
        Some("CreateChatRequest"),
        Some("ChatView")
    ),
    r!("get", "/api/v1/chats/{cid}", "A conversation with its messages", "user", None, Some("ChatDetail")),
    r!("patch", "/api/v1/chats/{cid}", "Rename a conversation", "user", Some("RenameChatRequest"), Some("ChatView")),
    r!("delete", "/api/v1/chats/{cid}", "Delete a conversation, its messages and its sandbox", "user", None, None),
    r!(
        "post",
        "/api/v1/chats/{cid}/messages",
        "Ask; returns the ids at once while the answer runs",
        "user",
        Some("CreateMessageRequest"),
        Some("CreateMessageResponse")
    ),
    r!(
        "get",
        "/api/v1/chats/{cid}/answers/{aid}/events",
        "The answer's events (text/event-stream of StreamEvent; Last-Event-ID replays)",
        "user",
        None,
        Some("StreamEvent")
    ),
    r!("post", "/api/v1/chats/{cid}/answers/{aid}/stop", "Stop a running answer", "user", None, None),
    r!(
        "post",
        "/api/v1/approvals/{id}",
        "Approve or decline a step that asked first (once, by the owner, while its answer waits)",
        "user",
        Some("DecideApprovalRequest"),
        Some("ApprovalRef")
    ),
    r!("get", "/api/v1/library/namespaces", "The person's library namespaces", "user", None, Some("NamespaceView")),
    r!(
        "post",
        "/api/v1/library/namespaces",
        "Make a namespace",
        "user",
        Some("NamespaceRequest"),
        Some("NamespaceView")
    ),
    r!("get", "/api/v1/library/namespaces/{id}", "A namespace", "user", None, Some("NamespaceView")),
    r!(
        "patch",
        "/api/v1/library/namespaces/{id}",
        "Rename a namespace",
        "user",
        Some("NamespaceRequest"),
        Some("NamespaceView")
    ),
    r!("delete", "/api/v1/library/namespaces/{id}", "Delete a namespace and its documents", "user", None, None),
    r!(
        "get",
        "/api/v1/library/namespaces/{id}/documents",
        "A namespace's documents",
        "user",
        None,
        Some("DocumentView")
    ),
    r!("get", "/api/v1/library/documents/{id}", "A document's details", "user", None, Some("DocumentView")),
    r!("delete", "/api/v1/library/documents/{id}", "Delete a document", "user", None, None),
    r!(
        "get",
        "/api/v1/library/documents/{id}/content",
        "Download a document (?inline=true shows an image)",
        "user",
        None,
        None
    ),
    r!("delete", "/api/v1/users/{id}", "Delete an account and everything of it (admin)", "admin", None, None),
    r!(
        "post",
        "/api/v1/uploads",
        "Upload a file to attach to a message (multipart, field `file`; 50 MB by default)",
        "user",
        None,
        Some("SharedFileRef")
    ),
    r!(
        "post",
        "/api/v1/chats/{cid}/files",
        "Share a file from the conversation's workspace (the person's Share button)",
        "user",
        Some("ShareFileRequest"),
        Some("SharedFileRef")
    ),
    r!(
        "get",
        "/api/v1/chats/{cid}/files/{fid}",
        "Download a shared file (its owner only; ?inline=true shows an image)",
        "user",
        None,
        None
    ),
    r!(
        "get",
        "/api/v1/settings/model",
        "The model settings (the API key is never returned)",
        "admin",
        None,
        Some("ModelSettingsView")
    ),
    r!(
        "put",
        "/api/v1/settings/model",
        "Change the model settings",
        "admin",
        Some("UpdateModelSettingsRequest"),
        Some("ModelSettingsView")
    ),
    r!(
        "get",
        "/api/v1/admin/sandbox",
        "The code sandbox settings, the machine's check and the egress log",
        "admin",
        None,
        Some("SandboxSettingsView")
    ),
    r!(
        "put",
        "/api/v1/admin/sandbox",
        "Change the code sandbox settings (turning it on runs the check first)",
        "admin",
        Some("UpdateSandboxSettingsRequest"),
        Some("SandboxSettingsView")
    ),
    r!(
        "post",
        "/api/v1/admin/sandbox/check",
        "Run the sandbox check again",
        "admin",
        None,
        Some("SandboxSettingsView")
    ),
    r!(
        "get",
        "/api/v1/admin/storage",
        "The data directory's free space, and where Lens warns and refuses new files",
        "admin",
        None,
        Some("StorageView")
    ),
    r!(
        "get",
        "/api/v1/admin/usage",
        "Each person's model tokens in the last 30 days",
        "admin",
        None,
        Some("UsageReport")
    ),
];

fn schema_ref(name: &str) -> Value {
    match name.strip_suffix("[]") {
        Some(inner) => {
            json!({"type": "array", "items": {"$ref": format!("#/components/schemas/{inner}")}})
        }
        None => json!({"$ref": format!("#/components/schemas/{name}")}),
    }
}

/// The document.
pub fn document() -> Value {
    let mut paths = Map::new();
    let mut schemas = Map::new();
    for route in ROUTES {
        let mut op = json!({
            "summary": route.summary,
            "operationId": format!("{}_{}", route.method, route.path.trim_start_matches('/').replace(['/', '{', '}', '.'], "_")),
            "responses": {
                "default": {"description": "An error", "content": {"application/json": {"schema": schema_ref("ErrorBody")}}},
            },
        });
        let params: Vec<Value> = route
            .path
            .split('/')
            .filter_map(|seg| seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .map(|name| json!({"name": name, "in": "path", "required": true, "schema": {"type": "string"}}))
            .collect();
        if !params.is_empty() {
            op["parameters"] = Value::Array(params);
        }
        if let Some(req) = route.request {
            op["requestBody"] = json!({"required": true, "content": {"application/json": {"schema": schema_ref(req)}}});
            schemas.insert(req.to_owned(), json!({"type": "object"}));
        }
        let media = if route.path.ends_with("/events") { "text/event-stream" } else { "application/json" };
        op["responses"]["200"] = match route.response {
            Some(resp) => {
                schemas.insert(resp.trim_end_matches("[]").to_owned(), json!({"type": "object"}));
                json!({"description": "OK", "content": {media: {"schema": schema_ref(resp)}}})
            }
            None => json!({"description": "OK"}),
        };
        if route.auth != "none" {
            op["security"] = json!([{"session": []}, {"bearer": []}]);
        }
        if route.auth == "admin" {
            op["description"] = json!("Admin only.");
        }
        let entry = paths.entry(route.path.to_owned()).or_insert_with(|| json!({}));
        entry[route.method] = op;
    }
    schemas.insert(
        "ErrorBody".into(),
        json!({"type": "object", "properties": {"error": {"type": "object", "properties": {
            "code": {"type": "string"}, "message": {"type": "string"}}}}}),
    );
    json!({
        "openapi": "3.1.0",
        "info": {"title": "Lens API", "version": env!("CARGO_PKG_VERSION"),
                 "description": "Unsafe requests from a cookie session carry X-CSRF-Token (from /api/v1/me). Agents use Authorization: Bearer <token>."},
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                "session": {"type": "apiKey", "in": "cookie", "name": "lens_session"},
                "bearer": {"type": "http", "scheme": "bearer"},
            },
        },
    })
}
