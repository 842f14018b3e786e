//! The verifier's port also answers plain HTTP: its operational endpoints (`/healthz`,
//! `/readyz`, `/metrics`) and whatever routes the embedding program adds (the demo page, the
//! verifier's key), on the connections that are not WebSocket upgrades.

use super::metrics::ServiceMetrics;
use super::Admission;
use axum::http::{header, StatusCode};
use axum::routing::get;
use axum::Router;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpStream;
use tokio::sync::mpsc;

/// `/healthz`: 200 while the process serves. `/readyz`: 200 while it takes new sessions, 503
/// once it drains (a load balancer stops sending it provers). `/metrics`: the figures.
pub(super) fn service_routes(metrics: Arc<ServiceMetrics>, admission: Arc<Admission>) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route(
            "/readyz",
            get(move || {
                let admission = admission.clone();
                async move {
                    match admission.is_draining() {
                        false => (StatusCode::OK, "ready\n"),
                        true => (StatusCode::SERVICE_UNAVAILABLE, "draining\n"),
                    }
                }
            }),
        )
        .route(
            "/metrics",
            get(move || {
                let metrics = metrics.clone();
                async move {
                    (
                        [(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")],
                        metrics.render(),
                    )
                }
            }),
        )
}

/// Serves `app` on the connections the verifier's accept loop hands over.
pub(super) async fn serve_handed_over(
    app: Router,
    connections: mpsc::UnboundedReceiver<(TcpStream, SocketAddr)>,
    addr: SocketAddr,
) {
    let _ = axum::serve(HandedOver { connections, addr }, app).await;
}

/// An axum listener fed by the verifier's accept loop.
struct HandedOver {
    connections: mpsc::UnboundedReceiver<(TcpStream, SocketAddr)>,
    addr: SocketAddr,
}

impl axum::serve::Listener for HandedOver {
    type Io = TcpStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (TcpStream, SocketAddr) {
        match self.connections.recv().await {
            Some(c) => c,
            // The verifier stopped: no more connections, ever.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        Ok(self.addr)
    }
}
