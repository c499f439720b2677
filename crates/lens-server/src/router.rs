//! The only place routes are registered.

use axum::{
    Router,
    extract::DefaultBodyLimit,
    http::{HeaderName, HeaderValue},
    routing::{get, post},
};
use tower_http::{
    compression::CompressionLayer,
    services::{ServeDir, ServeFile},
    set_header::SetResponseHeaderLayer,
};
use tower_layer::Layer;

use crate::{
    AppError, AppState,
    routes::{
        answers, approvals, chat_files, chats, health, library_documents, library_namespaces, messages, model_list,
        model_settings, model_test, openapi, sandbox_settings, sessions, setup, storage, tokens, uploads, usage, users,
    },
};

/// The whole app: the API under `/api/v1`, `/healthz`, and the web app with an SPA
/// fallback to its `index.html`.
pub fn router(state: AppState) -> Router {
    let api = Router::new()
        .route("/openapi.json", get(openapi::get_openapi))
        .route("/setup", get(setup::get_setup).post(setup::create_setup))
        .route("/auth/login", post(sessions::create_session))
        .route("/auth/logout", post(sessions::delete_session))
        .route("/me", get(sessions::get_me))
        .route("/users", get(users::list_users).post(users::create_user))
        .route("/users/{id}", axum::routing::delete(users::delete_user))
        .route("/tokens", get(tokens::list_tokens).post(tokens::create_token))
        .route("/tokens/{id}", axum::routing::delete(tokens::delete_token))
        .route(
            "/uploads",
            // The file's limit plus room for the form around it.
            post(uploads::create_upload)
                .layer(DefaultBodyLimit::max((state.config.upload_max_mb as usize + 1) * 1024 * 1024)),
        )
        .route("/approvals/{id}", post(approvals::decide_approval))
        .route(
            "/library/namespaces",
            get(library_namespaces::list_namespaces).post(library_namespaces::create_namespace),
        )
        .route(
            "/library/namespaces/{id}",
            get(library_namespaces::get_namespace)
                .patch(library_namespaces::rename_namespace)
                .delete(library_namespaces::delete_namespace),
        )
        .route("/library/namespaces/{id}/documents", get(library_namespaces::list_documents))
        .route(
            "/library/documents/{id}",
            get(library_documents::get_document).delete(library_documents::delete_document),
        )
        .route("/library/documents/{id}/content", get(library_documents::get_document_content))
        .route("/chats", get(chats::list_chats).post(chats::create_chat))
        .route("/chats/{cid}", get(chats::get_chat).patch(chats::rename_chat).delete(chats::delete_chat))
        .route("/chats/{cid}/messages", post(messages::create_message))
        .route("/chats/{cid}/files", post(chat_files::share_chat_file))
        .route("/chats/{cid}/files/{fid}", get(chat_files::get_chat_file))
        .route("/chats/{cid}/answers/{aid}/events", get(answers::get_answer_events))
        .route("/chats/{cid}/answers/{aid}/stop", post(answers::stop_answer))
        .route("/settings/model", get(model_settings::get_model_settings).put(model_settings::update_model_settings))
        .route("/settings/model/models", get(model_list::list_models))
        .route("/settings/model/test", post(model_test::test_model))
        .route(
            "/admin/sandbox",
            get(sandbox_settings::get_sandbox_settings).put(sandbox_settings::update_sandbox_settings),
        )
        .route("/admin/sandbox/check", post(sandbox_settings::check_sandbox))
        .route("/admin/storage", get(storage::get_storage))
        .route("/admin/usage", get(usage::get_usage))
        .fallback(|| async { AppError::NoRoute })
        .method_not_allowed_fallback(|| async { AppError::BadRequest("this route does not take that method".into()) })
        .layer(axum::middleware::map_response(crate::error_envelope::to_envelope))
        .layer(SetResponseHeaderLayer::overriding(
            HeaderName::from_static("cache-control"),
            HeaderValue::from_static("no-store"),
        ));

    let dist = state.config.web_dist.clone();
    let csp = crate::web_shell::content_security_policy(&dist);
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

    Router::new()
        .route("/healthz", get(health::get_health))
        .nest("/api/v1", api)
        .fallback_service(web)
        .layer(DefaultBodyLimit::max(state.config.body_limit))
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
