/// A session's future is built on the caller's stack and moved into the executor; in wasm
/// the main thread's stack is small (an MPC session's future of 160 KB, moved a few times,
/// overflowed it). Its big parts are boxed, which keeps it small.
#[test]
fn a_sessions_future_stays_small() {
    struct Idle;
    impl crate::transport::MessageSocket for Idle {
        async fn send(&mut self, _: &[u8]) -> Result<(), crate::transport::TransportError> {
            Ok(())
        }
        async fn recv(&mut self) -> Result<Option<Vec<u8>>, crate::transport::TransportError> {
            Ok(None)
        }
        async fn close(&mut self) -> Result<(), crate::transport::TransportError> {
            Ok(())
        }
    }
    let config = || super::ProverConfig {
        server: "a:1".into(),
        server_name: "a".into(),
        roots: crate::tls::RootStore::mozilla(),
        max_sent: 1,
        max_recv: 1,
        now: 0,
        step_timeout: std::time::Duration::from_secs(1),
        prg: Default::default(),
        mode: super::ProverMode::Mpc { proxy_url: "ws://p/".into() },
        tls_versions: vec![Default::default()],
        tls13_suites: crate::tls::tls13::Suite13::PROVER_DEFAULT.to_vec(),
    };
    let session = super::notarize_with_progress(Idle, config(), vec![], Default::default(), |_| {});
    assert!(std::mem::size_of_val(&session) < 16 * 1024, "{} bytes", std::mem::size_of_val(&session));
    let sizing = super::Sizing {
        request_len: 1,
        request_whole: false,
        request_hidden: 1,
        response: super::RevealExtent::Nothing,
    };
    let preparing = super::prepare(Idle, config(), sizing, |_| {});
    assert!(std::mem::size_of_val(&preparing) < 16 * 1024, "{} bytes", std::mem::size_of_val(&preparing));
}
