//! Serving the demo page (www/ and the npm package) next to the verifier, on its port: the
//! page needs COOP/COEP for threads, and one origin for page and WebSocket keeps it simple.

use axum::extract::State;
use axum::http::{header, HeaderValue};
use axum::routing::{get, post};
use axum::{Json, Router};
use std::path::Path;
use tokio::sync::mpsc;
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeaderLayer;

#[derive(Clone)]
struct PageState {
    config: serde_json::Value,
    results: Option<mpsc::UnboundedSender<serde_json::Value>>,
}

/// The page's routes: `/demo-config.json` (what the form starts with), `/pkg/*` (the npm
/// package), everything else from `www`; with `results`, the page may POST its outcome to
/// `/demo-result` (the headless run of `tlsproof demo`).
pub fn page_router(
    www: &Path,
    pkg: &Path,
    config: serde_json::Value,
    results: Option<mpsc::UnboundedSender<serde_json::Value>>,
) -> Router {
    let header = |name: &'static str, value: &'static str| {
        SetResponseHeaderLayer::overriding(header::HeaderName::from_static(name), HeaderValue::from_static(value))
    };
    Router::new()
        .route("/demo-config.json", get(|State(s): State<PageState>| async move { Json(s.config) }))
        .route(
            "/demo-result",
            post(|State(s): State<PageState>, Json(v): Json<serde_json::Value>| async move {
                match &s.results {
                    Some(tx) => {
                        let _ = tx.send(v);
                        axum::http::StatusCode::NO_CONTENT
                    }
                    None => axum::http::StatusCode::NOT_FOUND,
                }
            }),
        )
        .nest_service("/pkg", ServeDir::new(pkg))
        .fallback_service(ServeDir::new(www))
        .with_state(PageState { config, results })
        // Cross-origin isolation, which SharedArrayBuffer (wasm threads) requires.
        .layer(header("cross-origin-opener-policy", "same-origin"))
        .layer(header("cross-origin-embedder-policy", "require-corp"))
        .layer(header("cross-origin-resource-policy", "same-origin"))
        .layer(SetResponseHeaderLayer::overriding(header::CACHE_CONTROL, HeaderValue::from_static("no-store")))
}

/// `/.well-known/tlsproof-verifier-key`: the verifier's public key as JSON
/// (`{"verifierKey": "secp256k1:0x…"}`), readable from any origin: it is public, and a page
/// or backend that checks presentations may fetch it. A relying party should still pin the
/// key it trusts rather than fetch it each time from the verifier it means to check.
pub fn verifier_key_router(key: tlsproof::attestation::VerifyingKey) -> Router {
    let body = serde_json::json!({ "verifierKey": key.to_string() });
    Router::new()
        .route("/.well-known/tlsproof-verifier-key", get(move || async move { Json(body) }))
        .layer(SetResponseHeaderLayer::overriding(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*")))
}

/// Defaults for the page's form when the verifier serves it: the first allowed server's
/// `/json` (the local fixture's document), with the roots the verifier trusts.
pub fn verifier_page_config(allow: &str, roots_pem: Option<&str>) -> serde_json::Value {
    let first = allow.split(',').map(str::trim).find(|e| !e.is_empty() && !e.starts_with('*'));
    let url = first.map(|e| format!("https://{e}/json")).unwrap_or_else(|| "https://example.com/".into());
    serde_json::json!({
        "verifierUrl": null,
        "url": url,
        "caPem": roots_pem,
    })
}
