//! The only place routes are registered: each from its handler's `#[utoipa::path]`, so
//! the OpenAPI document (`openapi.rs`) lists exactly what is served.

use axum::{
    Router,
    extract::DefaultBodyLimit,
    http::{HeaderName, HeaderValue},
};
use tower_http::{
    compression::CompressionLayer,
    services::{ServeDir, ServeFile},
    set_header::SetResponseHeaderLayer,
};
use tower_layer::Layer;
use utoipa::OpenApi;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    AppError, AppState,
    openapi::ApiDoc,
    routes::{
        answers, approvals, audit_entries, audit_export, chat_files, chat_fork, chat_notebook, chat_sandbox, chats,
        file_preview, file_rows, gateway_preflight, gateway_start, groups, health, library_documents,
        library_namespaces, messages, model_list, model_settings, model_test, my_rules, oidc_callback, oidc_start,
        openapi, python_restart, run_again, sandbox_hosts, sandbox_settings, sessions, setup, sign_in_settings,
        storage, tokens, uploads, usage, users, workspace_files, workspace_zip,
    },
};

/// The routes and their OpenAPI document, made from the same handler annotations.
pub struct DocumentedRoutes {
    /// Routes at the server's root (`/healthz`).
    pub root: Router<AppState>,
    /// Routes under `/api/v1`.
    pub api: Router<AppState>,
    /// The document of both, `/api/v1` prefixed.
    pub doc: utoipa::openapi::OpenApi,
}

/// Every route the server has, each registered from its handler's `#[utoipa::path]`.
/// `upload_max_bytes` bounds the upload route's body (the file's limit plus room for the
/// form around it).
pub fn documented_routes(upload_max_bytes: usize) -> DocumentedRoutes {
    let (root, root_doc) =
        OpenApiRouter::with_openapi(ApiDoc::openapi()).routes(routes!(health::get_health)).split_for_parts();
    let (upload_schemas, upload_paths, upload_route) = routes!(uploads::create_upload);
    let (api, api_doc) = OpenApiRouter::new()
        .routes(routes!(openapi::get_openapi))
        .routes(routes!(setup::get_setup, setup::create_setup))
        .routes(routes!(sessions::create_session))
        .routes(routes!(sessions::delete_session))
        .routes(routes!(sessions::get_me))
        .routes(routes!(oidc_start::start_sign_in))
        .routes(routes!(oidc_callback::finish_sign_in))
        .routes(routes!(users::list_users, users::create_user))
        .routes(routes!(users::delete_user))
        .routes(routes!(tokens::list_tokens, tokens::create_token))
        .routes(routes!(tokens::delete_token))
        .routes((upload_schemas, upload_paths, upload_route.layer(DefaultBodyLimit::max(upload_max_bytes))))
        .routes(routes!(approvals::decide_approval))
        .routes(routes!(library_namespaces::list_namespaces, library_namespaces::create_namespace))
        .routes(routes!(
            library_namespaces::get_namespace,
            library_namespaces::rename_namespace,
            library_namespaces::delete_namespace
        ))
        .routes(routes!(library_namespaces::list_documents))
        .routes(routes!(library_documents::get_document, library_documents::delete_document))
        .routes(routes!(library_documents::get_document_content))
        .routes(routes!(chats::list_chats, chats::create_chat))
        .routes(routes!(chats::get_chat, chats::rename_chat, chats::delete_chat))
        .routes(routes!(messages::create_message))
        .routes(routes!(chat_files::share_chat_file))
        .routes(routes!(chat_files::get_chat_file))
        .routes(routes!(file_preview::get_file_preview))
        .routes(routes!(chat_notebook::get_chat_notebook))
        .routes(routes!(chat_fork::fork_chat))
        .routes(routes!(run_again::run_again))
        .routes(routes!(sandbox_hosts::allow_host))
        .routes(routes!(file_rows::count_file_rows))
        .routes(routes!(chat_sandbox::get_chat_sandbox, chat_sandbox::delete_chat_sandbox))
        .routes(routes!(workspace_files::list_workspace_files))
        .routes(routes!(workspace_zip::get_workspace_zip))
        .routes(routes!(python_restart::restart_python))
        .routes(routes!(answers::get_answer_events))
        .routes(routes!(answers::stop_answer))
        .routes(routes!(model_settings::get_model_settings, model_settings::update_model_settings))
        .routes(routes!(sign_in_settings::get_sign_in_settings, sign_in_settings::update_sign_in_settings))
        .routes(routes!(model_list::list_models))
        .routes(routes!(model_test::test_model))
        .routes(routes!(sandbox_settings::get_sandbox_settings, sandbox_settings::update_sandbox_settings))
        .routes(routes!(sandbox_settings::check_sandbox))
        .routes(routes!(gateway_preflight::get_gateway_preflight))
        .routes(routes!(gateway_start::start_gateway))
        .routes(routes!(storage::get_storage))
        .routes(routes!(usage::get_usage))
        .routes(routes!(groups::list_groups))
        .routes(routes!(groups::put_group, groups::delete_group))
        .routes(routes!(my_rules::get_my_rules))
        .routes(routes!(audit_entries::list_audit))
        .routes(routes!(audit_export::export_audit))
        .split_for_parts();
    DocumentedRoutes { root, api, doc: root_doc.nest("/api/v1", api_doc) }
}

/// The whole OpenAPI document, as served at `/api/v1/openapi.json` and printed by
/// `lens openapi`: the routes' own, completed with what every route can answer.
pub fn openapi_document() -> &'static serde_json::Value {
    static DOCUMENT: std::sync::LazyLock<serde_json::Value> = std::sync::LazyLock::new(|| {
        let doc = documented_routes(0).doc;
        crate::openapi::complete(serde_json::to_value(doc).unwrap_or_else(|_| serde_json::json!({})))
    });
    &DOCUMENT
}

/// The whole app: the API under `/api/v1`, `/healthz`, and the web app with an SPA
/// fallback to its `index.html`.
pub fn router(state: AppState) -> Router {
    let DocumentedRoutes { root, api, .. } = documented_routes((state.config.upload_max_mb as usize + 1) * 1024 * 1024);
    let api = api
        .fallback(|| async { AppError::NoRoute })
        // 405 with `Allow` (axum sets it) naming the methods the route takes.
        .method_not_allowed_fallback(|| async { AppError::MethodNotAllowed })
        .layer(axum::middleware::map_response(crate::error_envelope::to_envelope))
        // The document's own route serves it from here: it is built from these routes.
        .layer(axum::Extension(crate::routes::openapi::Document(openapi_document())))
        .layer(SetResponseHeaderLayer::overriding(
            HeaderName::from_static("cache-control"),
            HeaderValue::from_static("no-store"),
        ));

    let dist = state.config.web_dist.clone();
    let csp = crate::web_shell::content_security_policy(&dist, state.preview.frame_source().as_deref());
    let csp = HeaderValue::from_str(&csp).unwrap_or_else(|_| HeaderValue::from_static("default-src 'self'"));
    // The app's files go out gzipped to browsers that take it (the `.wasm` is a third of
    // its size): the `.gz` the build put beside a file as it is, else compressed here. The
    // API is left alone, so answer events are never held in a compressor.
    let files = ServeDir::new(&dist)
        .precompressed_gzip()
        .fallback(ServeFile::new(dist.join("index.html")).precompressed_gzip());
    let web = CompressionLayer::new().gzip(true).layer(
        SetResponseHeaderLayer::overriding(HeaderName::from_static("content-security-policy"), csp).layer(files),
    );

    root.nest("/api/v1", api)
        .merge(crate::mcp::routes(state.clone()))
        .fallback_service(web)
        .layer(DefaultBodyLimit::max(state.config.body_limit))
        .layer(axum::middleware::from_fn_with_state(state.site.clone(), crate::site::guard))
        .layer(SetResponseHeaderLayer::overriding(
            HeaderName::from_static("x-content-type-options"),
            HeaderValue::from_static("nosniff"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            HeaderName::from_static("x-frame-options"),
            HeaderValue::from_static("DENY"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            HeaderName::from_static("referrer-policy"),
            HeaderValue::from_static("same-origin"),
        ))
        .with_state(state)
}
