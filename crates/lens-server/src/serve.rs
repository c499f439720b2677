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

/// Binds the preview origin's listener: `LENS_PREVIEW_ADDR`, else the port after Lens's
/// own. A configured address that cannot be bound stops the start; the default one only
/// leaves HTML and PDF previews out (said in the log).
pub async fn bind_preview(config: &crate::Config, bound: SocketAddr) -> anyhow::Result<Option<TcpListener>> {
    let (addr, configured) = match config.preview_addr {
        Some(addr) => (addr, true),
        None if bound.port() == u16::MAX => return Ok(None),
        None => (SocketAddr::new(bound.ip(), bound.port() + 1), false),
    };
    match TcpListener::bind(addr).await {
        Ok(listener) => Ok(Some(listener)),
        Err(e) if configured => Err(anyhow::anyhow!("listening for previews on {addr} (LENS_PREVIEW_ADDR): {e}")),
        Err(e) => {
            tracing::warn!(%addr, error = %e, "HTML and PDF previews are off: their listener could not start; set LENS_PREVIEW_ADDR");
            Ok(None)
        }
    }
}

/// Serves the preview origin on `listener` until `shutdown` completes; records its port
/// first, so that the pages' policy and the previews' addresses name it.
pub fn spawn_preview(listener: TcpListener, state: AppState, shutdown: impl Future<Output = ()> + Send + 'static) {
    if let Ok(addr) = listener.local_addr() {
        state.preview.listening_on(addr.port());
        tracing::info!("previews are served on http://{addr}");
    }
    let app = crate::preview_origin::router(state);
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).with_graceful_shutdown(shutdown).await {
            tracing::error!(error = %e, "the preview listener stopped");
        }
    });
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_preview_listener_takes_the_next_port_gives_way_by_default_and_not_when_set() {
        let lens = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let bound = lens.local_addr().unwrap();
        let mut config = crate::Config::with_data_dir("unused");
        // The port after Lens's, when free.
        if let Ok(Some(previews)) = bind_preview(&config, bound).await {
            assert_eq!(previews.local_addr().unwrap().port(), bound.port() + 1);
        }
        // Taken: no previews, and Lens still starts.
        let taken = TcpListener::bind("127.0.0.1:0").await.unwrap().local_addr().unwrap();
        let _holder = TcpListener::bind(taken).await.unwrap();
        let before = SocketAddr::new(taken.ip(), taken.port() - 1);
        assert!(bind_preview(&config, before).await.unwrap().is_none());
        // Set to a taken address: a sentence, and no start.
        config.preview_addr = Some(taken);
        let refused = bind_preview(&config, bound).await.unwrap_err().to_string();
        assert!(refused.contains("LENS_PREVIEW_ADDR"), "{refused}");
        // Port 0: the kernel's choice.
        config.preview_addr = Some("127.0.0.1:0".parse().unwrap());
        assert!(bind_preview(&config, bound).await.unwrap().is_some());
    }
}
