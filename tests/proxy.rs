//! The WebSocket-to-TCP proxy against real servers on 127.0.0.1: the fixture (TLS through the
//! proxy), an echo server (half-close), and every refusal with its close code and reason.
#![cfg(not(target_arch = "wasm32"))]

use futures::{SinkExt, StreamExt};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tlsproof::fixture::{http::JSON_BODY, FixtureServer, KeyType};
use tlsproof::proxy::{close_code, AllowList, ProxyConfig, ProxyServer};
use tlsproof::transport::{TransportError, WsStream};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::Message;

async fn start_echo() -> SocketAddr {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let a = l.local_addr().unwrap();
    tokio::spawn(tlsproof::fixture::run_echo(l));
    a
}

async fn start_proxy(config: ProxyConfig) -> SocketAddr {
    let p = ProxyServer::bind("127.0.0.1:0".parse().unwrap(), config).await.unwrap();
    let a = p.local_addr().unwrap();
    tokio::spawn(p.run());
    a
}

fn allow(list: &str) -> ProxyConfig {
    ProxyConfig { allow: AllowList::parse(list).unwrap(), ..ProxyConfig::default() }
}

/// Expects the proxy to close the connection with `code` and a reason containing `needle`.
async fn expect_close(url: &str, code: u16, needle: &str) {
    let mut s = WsStream::connect(url).await.expect("websocket handshake");
    let mut buf = [0u8; 16];
    match s.read(&mut buf).await {
        Err(TransportError::Closed { code: c, reason }) => {
            assert_eq!(c, code, "reason: {reason}");
            assert!(reason.contains(needle), "reason {reason:?} lacks {needle:?}");
        }
        other => panic!("expected close {code}, got {other:?}"),
    }
}

async fn echo_roundtrip(proxy: SocketAddr, echo: impl std::fmt::Display, data: &[u8]) {
    let mut s = WsStream::connect(&format!("ws://{proxy}/?target={echo}")).await.unwrap();
    s.write_all(data).await.unwrap();
    s.shutdown_write().await.unwrap();
    assert_eq!(s.read_to_end(1 << 24).await.unwrap(), data);
}

#[tokio::test]
async fn tls_handshake_through_proxy_gets_json_unchanged() {
    for key_type in [KeyType::EcdsaP256, KeyType::Rsa2048] {
        let fixture = FixtureServer::bind("127.0.0.1:0".parse().unwrap(), key_type, 30).await.unwrap();
        let faddr = fixture.local_addr().unwrap();
        let ca = fixture.certs.ca_der.clone();
        tokio::spawn(fixture.run());
        let proxy = start_proxy(allow(&faddr.to_string())).await;

        // Bridge the WebSocket stream to an in-memory duplex so rustls (a TLS stack we did not
        // write) can run its handshake over it.
        let (app, mut bridge) = tokio::io::duplex(1 << 16);
        let mut ws = WsStream::connect(&format!("ws://{proxy}/?target={faddr}")).await.unwrap();
        tokio::spawn(async move {
            let (mut up, mut down) = (vec![0u8; 16384], vec![0u8; 16384]);
            loop {
                tokio::select! {
                    n = bridge.read(&mut up) => match n {
                        Ok(0) | Err(_) => { let _ = ws.shutdown_write().await; }
                        Ok(n) => { if ws.write_all(&up[..n]).await.is_err() { return; } }
                    },
                    n = ws.read(&mut down) => match n {
                        Ok(0) | Err(_) => { let _ = bridge.shutdown().await; return; }
                        Ok(n) => { if bridge.write_all(&down[..n]).await.is_err() { return; } }
                    },
                }
            }
        });

        let mut roots = rustls::RootCertStore::empty();
        roots.add(ca).unwrap();
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_protocol_versions(&[&rustls::version::TLS12])
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
        let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
        let mut tls = connector.connect(name, app).await.expect("TLS 1.2 handshake through the proxy");
        tls.write_all(b"GET /json HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").await.unwrap();
        let mut resp = Vec::new();
        let _ = tls.read_to_end(&mut resp).await;
        let text = String::from_utf8(resp).unwrap();
        assert!(text.starts_with("HTTP/1.1 200 OK"), "{text}");
        assert!(text.ends_with(JSON_BODY), "{text}");
    }
}

#[tokio::test]
async fn echo_with_half_close_and_large_payload() {
    let echo = start_echo().await;
    let proxy = start_proxy(allow(&echo.to_string())).await;
    echo_roundtrip(proxy, echo, b"hello through the proxy").await;
    let big: Vec<u8> = (0..1_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
    echo_roundtrip(proxy, echo, &big).await;
}

#[tokio::test]
async fn refuses_targets_not_on_the_allow_list_and_keeps_serving() {
    let echo = start_echo().await;
    let other = start_echo().await;
    let proxy = start_proxy(allow(&echo.to_string())).await;
    expect_close(&format!("ws://{proxy}/?target={other}"), close_code::POLICY, "the proxy refused: target").await;
    expect_close(&format!("ws://{proxy}/"), close_code::POLICY, "expected ?target=HOST:PORT").await;
    expect_close(&format!("ws://{proxy}/?target=nonsense"), close_code::POLICY, "expected ?target=HOST:PORT").await;
    echo_roundtrip(proxy, echo, b"still serving").await;

    // The default configuration allows nothing at all.
    let closed = start_proxy(ProxyConfig::default()).await;
    expect_close(&format!("ws://{closed}/?target={echo}"), close_code::POLICY, "the proxy refused: target").await;
}

#[tokio::test]
async fn refuses_loopback_unless_listed_explicitly() {
    let echo = start_echo().await;
    let port = echo.port();
    let wildcard = start_proxy(allow(&format!("*:{port},localhost.:{port}"))).await;
    expect_close(
        &format!("ws://{wildcard}/?target=127.0.0.1:{port}"),
        close_code::POLICY,
        "non-public address 127.0.0.1",
    )
    .await;
    let explicit = start_proxy(allow(&format!("localhost:{port}"))).await;
    echo_roundtrip(explicit, format!("localhost:{port}"), b"ok").await;
}

#[tokio::test]
async fn oversized_message_is_closed_with_1009() {
    let echo = start_echo().await;
    let proxy = start_proxy(ProxyConfig { max_message: 1024, ..allow(&echo.to_string()) }).await;
    let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{proxy}/?target={echo}")).await.unwrap();
    ws.send(Message::binary(vec![0u8; 2048])).await.unwrap();
    let mut saw = None;
    while let Some(m) = ws.next().await {
        if let Ok(Message::Close(f)) = m {
            saw = f;
            break;
        }
    }
    let f = saw.expect("close frame");
    assert_eq!(u16::from(f.code), close_code::TOO_BIG);
    assert!(f.reason.contains("message too big (limit 1024 bytes)"), "{}", f.reason);
    echo_roundtrip(proxy, echo, &[7u8; 1000]).await;
}

#[tokio::test]
async fn idle_connection_is_closed_with_reason() {
    let echo = start_echo().await;
    let proxy = start_proxy(ProxyConfig { idle_timeout: Duration::from_millis(300), ..allow(&echo.to_string()) }).await;
    let started = std::time::Instant::now();
    expect_close(&format!("ws://{proxy}/?target={echo}"), close_code::IDLE_TIMEOUT, "idle timeout").await;
    assert!(started.elapsed() >= Duration::from_millis(300));
    echo_roundtrip(proxy, echo, b"fresh connection works").await;
}

#[tokio::test]
async fn connection_limit_refuses_extra_clients_with_1013() {
    let echo = start_echo().await;
    let proxy = start_proxy(ProxyConfig { max_connections: 1, ..allow(&echo.to_string()) }).await;
    let mut first = WsStream::connect(&format!("ws://{proxy}/?target={echo}")).await.unwrap();
    first.write_all(b"x").await.unwrap();
    let mut b = [0u8; 1];
    assert_eq!(first.read(&mut b).await.unwrap(), 1); // the first holds its slot
    expect_close(
        &format!("ws://{proxy}/?target={echo}"),
        close_code::TRY_AGAIN_LATER,
        "too many connections (limit 1)",
    )
    .await;
    first.shutdown_write().await.unwrap();
    assert!(first.read_to_end(10).await.unwrap().is_empty());
    drop(first);
    // The slot is released once the first client has gone.
    let mut ok = false;
    for _ in 0..50 {
        let mut s = WsStream::connect(&format!("ws://{proxy}/?target={echo}")).await.unwrap();
        if s.write_all(b"y").await.is_ok() && s.read(&mut b).await.is_ok_and(|n| n == 1) {
            ok = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(ok, "slot never released");
}

#[tokio::test]
async fn unreachable_target_is_bad_gateway() {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let dead = l.local_addr().unwrap();
    drop(l);
    let proxy = start_proxy(allow(&dead.to_string())).await;
    expect_close(&format!("ws://{proxy}/?target={dead}"), close_code::BAD_GATEWAY, "cannot connect").await;
}

#[tokio::test]
async fn our_tls_client_through_proxy_gets_json() {
    use tlsproof::tls::{driver, unix_time, Client, ClientConfig, RootStore};
    let fixture = FixtureServer::bind("127.0.0.1:0".parse().unwrap(), KeyType::EcdsaP256, 30).await.unwrap();
    let faddr = fixture.local_addr().unwrap();
    let roots = RootStore::from_pem(&fixture.certs.ca_pem).unwrap();
    tokio::spawn(fixture.run());
    let proxy = start_proxy(allow(&faddr.to_string())).await;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let mut client = Client::new(ClientConfig::new(roots), "localhost", unix_time(now)).unwrap();
    let mut ws = WsStream::connect(&format!("ws://{proxy}/?target={faddr}")).await.unwrap();
    let request = tlsproof::http::RequestBuilder::get("localhost", "/json").build().unwrap();
    let resp = driver::http_exchange(&mut client, &mut ws, &request.bytes, Default::default()).await.unwrap();
    let text = String::from_utf8(resp).unwrap();
    assert!(text.starts_with("HTTP/1.1 200 OK") && text.ends_with(JSON_BODY), "{text}");
    assert!(client.master_secret().is_some());
}
