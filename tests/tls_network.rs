//! The async driver over real TCP on 127.0.0.1 (tokio + compat): against a rustls server in a
//! thread, and against `openssl s_server -tls1_2 -www` when the binary exists.
#![cfg(not(target_arch = "wasm32"))]
mod common;
use common::*;
use std::io::{Read, Write};
use std::net::TcpListener;
use tlsproof::http::{Limits, RequestBuilder, ResponseParser};
use tlsproof::tls::{driver, Client, Error, PeerMisbehaved};
use tokio_util::compat::TokioAsyncReadCompatExt;

/// Serve one connection with rustls over std TCP; `close_notify=false` simulates truncation.
fn spawn_rustls_server(pki: &Pki, close_notify: bool) -> (u16, std::thread::JoinHandle<()>) {
    let (cfg, _) = server_config(pki, ServerOptions::default());
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let t = std::thread::spawn(move || {
        let (tcp, _) = listener.accept().unwrap();
        let conn = rustls::ServerConnection::new(cfg).unwrap();
        let mut tls = rustls::StreamOwned::new(conn, tcp);
        let mut req = Vec::new();
        let mut buf = [0u8; 4096];
        while !req.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = tls.read(&mut buf).unwrap();
            if n == 0 {
                return;
            }
            req.extend_from_slice(&buf[..n]);
        }
        let line = String::from_utf8_lossy(&req).lines().next().unwrap().to_string();
        let path = line.split(' ').nth(1).unwrap().to_string();
        let (resp, _) = http_response(&path);
        tls.write_all(&resp).unwrap();
        if close_notify {
            tls.conn.send_close_notify();
        }
        tls.flush().unwrap();
        let _ = tls.sock.shutdown(std::net::Shutdown::Write);
        // drain until the client closes
        let _ = tls.sock.read(&mut buf);
    });
    (port, t)
}

async fn fetch(port: u16, name: &str, client: Client, path: &str) -> Result<(Client, Vec<u8>), Error> {
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let mut io = tcp.compat();
    let mut client = client;
    let req = RequestBuilder::get(name, path).build().unwrap();
    let mut parser = ResponseParser::new(Limits::default());
    let mut fed = 0;
    let got = driver::exchange(&mut client, &mut io, &req.bytes, |buf| {
        let done = parser.feed(&buf[fed..]).unwrap();
        fed = buf.len();
        done
    })
    .await?;
    Ok((client, got))
}

#[tokio::test]
async fn driver_over_tcp_with_rustls() {
    for (leaf, path) in [(LeafKey::EcdsaP256, "/len/204800"), (LeafKey::Rsa2048, "/chunked/1024")] {
        let pki = make_pki(PkiOptions { leaf, ..Default::default() });
        let (port, t) = spawn_rustls_server(&pki, true);
        let client = Client::new(client_config(&pki), "localhost", now()).unwrap();
        let (_c, got) = fetch(port, "localhost", client, path).await.unwrap();
        let (resp, _) = http_response(path);
        assert_eq!(got, resp);
        t.join().unwrap();
    }
}

/// A server that closes without close_notify ends the exchange with what it sent: the caller
/// sees no close_notify and judges the data by its own framing.
#[tokio::test]
async fn the_driver_ends_at_a_close_without_close_notify() {
    let pki = make_pki(PkiOptions::default());
    let (port, t) = spawn_rustls_server(&pki, false);
    let client = Client::new(client_config(&pki), "localhost", now()).unwrap();
    // `done` never holds: the exchange reads until the server closes.
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let mut io = tcp.compat();
    let mut client = client;
    let req = RequestBuilder::get("localhost", "/len/10").build().unwrap();
    let r = driver::exchange(&mut client, &mut io, &req.bytes, |_| false).await.expect("the data before the close");
    assert!(r.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&r));
    assert!(!client.received_close_notify());
    drop(io);
    t.join().unwrap();
}

// ----- openssl s_server interop -----

async fn openssl_get(leaf: LeafKey, no_ems: bool) {
    let pki = make_pki(PkiOptions { leaf, ..Default::default() });
    let Some(server) = start_openssl(&pki, no_ems) else {
        return;
    };
    let client = Client::new(client_config(&pki), "localhost", now()).unwrap();
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", server.port)).await.unwrap();
    let mut io = tcp.compat();
    let mut client = client;
    let req = RequestBuilder::get("localhost", "/").build().unwrap();
    // -www answers HTTP/1.0 with a body delimited by connection close.
    let res = driver::exchange(&mut client, &mut io, &req.bytes, |_| false).await;
    let got = match res {
        Ok(g) => g,
        // openssl -www may close without close_notify; the plaintext received is still valid.
        Err(Error::PeerMisbehaved(PeerMisbehaved::TruncatedWithoutCloseNotify)) => {
            client.take_plaintext();
            client.transcript().app_plaintext(tlsproof::tls::Direction::Received)
        }
        Err(e) => panic!("openssl exchange failed: {e}"),
    };
    let mut p = ResponseParser::new(Limits::default());
    p.feed(&got).unwrap();
    p.feed_eof().unwrap();
    let r = p.response().unwrap();
    assert_eq!(r.status, 200);
    let body = String::from_utf8_lossy(&r.body);
    assert!(body.contains("ECDHE"), "{body}");
    assert_eq!(client.extended_master_secret(), !no_ems);
}

#[tokio::test]
async fn openssl_interop_ecdsa_with_ems() {
    openssl_get(LeafKey::EcdsaP256, false).await;
}

#[tokio::test]
async fn openssl_interop_rsa_without_ems() {
    openssl_get(LeafKey::Rsa2048, true).await;
}

// ----- TLS 1.3: openssl s_server -tls1_3 -----

/// One GET over TCP with the TLS 1.3 client; the response bytes (s_server -www's status page).
fn tls13_get(
    pki: &Pki,
    port: u16,
    groups: Vec<tlsproof::tls::NamedGroup>,
) -> (Vec<u8>, tlsproof::tls::tls13::Client13) {
    use tlsproof::tls::tls13::{Client13, Config13};
    let mut config = Config13::new(tlsproof::tls::RootStore::from_der_certs([&pki.ca_der]).unwrap());
    config.groups = groups;
    let mut client = Client13::new(config, "localhost", now()).unwrap();
    let mut tcp = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    tcp.set_read_timeout(Some(std::time::Duration::from_secs(10))).unwrap();
    let mut sent_request = false;
    let mut response = Vec::new();
    let mut buf = vec![0u8; 32 * 1024];
    loop {
        tcp.write_all(&client.take_outgoing()).unwrap();
        if client.is_connected() && !sent_request {
            client.write_plaintext(b"GET / HTTP/1.0\r\n\r\n").unwrap();
            sent_request = true;
            continue;
        }
        let n = tcp.read(&mut buf).unwrap();
        if n == 0 {
            // -www may close without close_notify; what came before it was authenticated.
            let _ = client.feed_eof();
            break;
        }
        client.feed(&buf[..n]).unwrap_or_else(|e| panic!("TLS 1.3 with openssl: {e}"));
        response.extend(client.take_plaintext());
        if client.received_close_notify() {
            break;
        }
    }
    (response, client)
}

#[test]
fn tls13_with_openssl_every_suite_and_group_and_a_hello_retry_request() {
    use tlsproof::tls::NamedGroup;
    for leaf in [LeafKey::EcdsaP256, LeafKey::Rsa2048] {
        let pki = make_pki(PkiOptions { leaf, ..Default::default() });
        for suite in ["TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"] {
            for (name, group) in [("X25519", NamedGroup::X25519), ("P-256", NamedGroup::Secp256r1)] {
                let Some(server) = start_openssl_tls13(&pki, suite, name) else {
                    return;
                };
                let (response, client) = tls13_get(&pki, server.port, vec![group]);
                let page = String::from_utf8_lossy(&response);
                assert!(page.starts_with("HTTP/1.0 200"), "{suite} {name}: {page}");
                assert!(page.contains(suite) && page.contains("TLSv1.3"), "{suite} {name}: {page}");
                assert_eq!((client.suite().unwrap().id() & 0xff00, client.group()), (0x1300, Some(group)));
            }
        }
    }
    // The server accepts only P-256; our first share is X25519, so it asks for P-256.
    let pki = make_pki(PkiOptions::default());
    let Some(server) = start_openssl_tls13(&pki, "TLS_AES_128_GCM_SHA256", "P-256") else {
        return;
    };
    let (response, client) = tls13_get(&pki, server.port, vec![NamedGroup::X25519, NamedGroup::Secp256r1]);
    assert!(String::from_utf8_lossy(&response).starts_with("HTTP/1.0 200"));
    assert_eq!(client.group(), Some(NamedGroup::Secp256r1));
}

// ----- One ClientHello for TLS 1.3 and 1.2 against openssl -----

/// The two-version client against `openssl s_server` speaking TLS 1.2 only and TLS 1.3: it
/// continues in the server's version, and the page s_server returns names it.
#[tokio::test]
async fn offering_both_versions_to_openssl_continues_in_its_choice() {
    use tlsproof::tls::driver::SansIoClient;
    use tlsproof::tls::tls13::Config13;
    use tlsproof::tls::AnyVersionClient;
    let pki = make_pki(PkiOptions::default());
    let roots = tlsproof::tls::RootStore::from_der_certs([&pki.ca_der]).unwrap();
    for tls13 in [false, true] {
        let server = if tls13 {
            start_openssl_tls13(&pki, "TLS_AES_128_GCM_SHA256", "X25519")
        } else {
            start_openssl(&pki, false)
        };
        let Some(server) = server else {
            return;
        };
        let mut client =
            AnyVersionClient::new(Config13::new(roots.clone()), client_config(&pki), "localhost", now()).unwrap();
        let tcp = tokio::net::TcpStream::connect(("127.0.0.1", server.port)).await.unwrap();
        let mut io = tcp.compat();
        let req = RequestBuilder::get("localhost", "/").build().unwrap();
        let got =
            match driver::exchange(&mut client, &mut io, &req.bytes, |so_far| so_far.ends_with(b"</HTML>\r\n\r\n"))
                .await
            {
                Ok(g) => g,
                Err(Error::PeerMisbehaved(PeerMisbehaved::TruncatedWithoutCloseNotify)) => client.take_plaintext(),
                Err(e) => panic!("tls13 = {tls13}: {e}"),
            };
        let page = String::from_utf8_lossy(&got);
        let (want, version) = if tls13 { ("TLSv1.3", 0x0304) } else { ("TLSv1.2", 0x0303) };
        assert!(page.contains(want), "{want}: {page}");
        assert_eq!(client.version(), Some(version));
    }
}
