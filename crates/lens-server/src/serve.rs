//! Serving the app on a listener until a shutdown signal.

use std::{future::Future, net::SocketAddr};

use tokio::net::TcpListener;

use crate::{AppState, router::router};

/// Serves `state` on `listener` until `shutdown` completes. Client addresses reach the
/// handlers (the login rate limit needs them).
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    use axum::serve::ListenerExt;
    let app = router(state).into_make_service_with_connect_info::<SocketAddr>();
    // Without Nagle's algorithm: a stream's small events go out at once, instead of each
    // waiting for the client's delayed acknowledgement of the one before (40 ms here).
    let listener = listener.tap_io(|stream| {
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, "TCP_NODELAY could not be set");
        }
    });
    axum::serve(listener, app).with_graceful_shutdown(shutdown).await
}

/// Completes on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("shutting down");
}
