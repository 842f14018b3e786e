//! One TLS 1.3 connection in two parties (docs/protocol.md, "A TLS 1.3 connection in two
//! parties"). As in TLS 1.2, P holds the byte stream and forwards every byte the server sends
//! to V before anything else about it, and both run the same sans-IO client (here
//! [`Client13`] in its two-party mode). What differs is the handshake:
//! - the halves of the client key share were exchanged in the preparation, so the ClientHello
//!   (which carries their sum, the only group offered) goes out at once;
//! - after the ServerHello, the 2PC ECDH over the server's share gives each party an additive
//!   share of the (EC)DHE secret, P commits its share (and with AES-128-GCM its mask for the
//!   client direction's GHASH key), and the garbled key schedule reveals the handshake traffic
//!   secrets to both
//!   ([`crate::mpc::kdf13`]): each copy of the client reads and checks the server's flight
//!   (V's against its own roots and clock) and writes the client Finished itself;
//! - after the server's Finished the schedule gives the client's application key and IV on
//!   wires, and the records follow as in TLS 1.2 ([`exchange_prover`]), TLS 1.3's record layer
//!   (the nonce IV ⊕ seq, the inner content type) in place of TLS 1.2's, under the suite the
//!   server chose of the two offered ([`Suites13`]).
//!
//! Neither party ever holds an application key during the connection; the server's
//! application secret is not computed at all until the verifier publishes its share.

use super::*;
use crate::channel::Channel;
use crate::circuits::bytes_to_bits;
use crate::gc::Wire;
use crate::mpc::ecdh::{ReceiverCots, SenderCots};
use crate::mpc::ghash::{block_to_field, powers_a, powers_b};
use crate::mpc::handshake::{RecordKeys, TagKeys, INPUT_COTS};
use crate::mpc::kdf13::{self, HandshakeTraffic};
use crate::mpc::phases::Input;
use crate::mpc::poly1305::TagCots;
use crate::mpc::record::ghash_key_share;
use crate::mpc::sealing::{client_direction, ClientDirection};
use crate::tls::any_version::tls12_offer;
use crate::tls::driver::ByteIo;
use crate::tls::tls13::client::two_party::HandshakeRequest13;
use crate::tls::tls13::client::{Client13, Config13, Schedule13};
use crate::tls::tls13::key_schedule::{handshake_secret, master_secret, TrafficSecrets};
use crate::tls::tls13::HashAlg;
use crate::tls::tls13::Secret;
use crate::tls::AnyVersionClient;
use rustls_pki_types::UnixTime;
use zeroize::Zeroizing;

/// The TLS 1.3 configuration both parties use, so both write the same ClientHello: the
/// two-party suites offered, in order, and TLS 1.2 as `tls12` offers it, if at all; the
/// groups are the key shares'.
pub(crate) fn two_party_config13(roots: RootStore, suites: Suites13, tls12: Option<&ClientConfig>) -> Config13 {
    let mut c = Config13::new(roots);
    c.suites = suites.list();
    c.tls12 = tls12.map(tls12_offer);
    c
}

/// The client that writes the ClientHello, `client`, offering TLS 1.2 too when `tls12` is
/// given (the configuration it was made with, [`two_party_config13`]).
fn offering(client: Client13, tls12: Option<ClientConfig>, server_name: &str, now: UnixTime) -> AnyVersionClient {
    match tls12 {
        Some(config12) => AnyVersionClient::over(client, config12, server_name, now),
        None => AnyVersionClient::Tls13 { client: Box::new(client), undecided: None },
    }
}

/// The server has chosen its version, and in TLS 1.3 its ServerHello is read.
fn version_chosen(c: &AnyVersionClient) -> bool {
    match c {
        AnyVersionClient::Tls12(_) => true,
        AnyVersionClient::Tls13 { client, undecided: None } => hello_read(client),
        AnyVersionClient::Tls13 { undecided: Some(_), .. } => false,
    }
}

/// What the prover holds after a TLS 1.3 connection (as [`ProverConnection`] for TLS 1.2):
/// its client (the wire bytes, the request in the clear, the server's records sealed), its
/// share of the (EC)DHE secret in the group's encoding, and for the proof of the garbling its
/// committed inputs, the phases' public parameters and what they revealed.
pub struct ProverConnection13<W> {
    pub client: Client13,
    pub share: Zeroizing<[u8; 32]>,
    pub committed: CommittedInputs<W>,
    pub script: SessionScript,
    pub revealed: Vec<Vec<u8>>,
    /// The zero labels of the verifier's share's wires, and the garbling Δ.
    pub verifier_input: (Vec<Wire>, u128),
}

/// What the verifier holds after a TLS 1.3 connection (as [`VerifierConnection`]).
pub struct VerifierConnection13<W> {
    pub client: Client13,
    pub share: Zeroizing<[u8; 32]>,
    pub committed: CommittedInputs<W>,
    pub script: SessionScript,
    pub revealed: Vec<Vec<u8>>,
    pub for_verifier: Vec<Vec<u8>>,
    pub own_labels: Vec<Wire>,
    /// Its shares of each ChaCha20-Poly1305 record's Poly1305 polynomial (17 bytes each), which
    /// it publishes with its share of the (EC)DHE secret.
    pub tag_shares: Vec<u8>,
    pub connection_time: UnixTime,
}

impl<W> VerifierConnection13<W> {
    /// The bytes on the wire, sent and received, as V's copy of the client holds them.
    pub fn wire(&self) -> &[Vec<u8>; 2] {
        const NONE: &[Vec<u8>; 2] = &[Vec::new(), Vec::new()];
        self.client.wire().unwrap_or(NONE)
    }
}

fn hash32(h: Option<&Secret>) -> Result<[u8; 32], ConnectionError> {
    h.and_then(|h| h.as_bytes().try_into().ok()).ok_or(ConnectionError::Malformed("a SHA-256 transcript hash"))
}

fn secrets(traffic: &HandshakeTraffic) -> TrafficSecrets {
    TrafficSecrets { client: Secret::from_slice(&traffic.client), server: Secret::from_slice(&traffic.server) }
}

/// The ServerHello's choices: a suite offered (the client refuses others; checked again where
/// it counts), the group one of the halves'.
fn hello_of(client: &Client13, suites: Suites13) -> Result<HandshakeRequest13, ConnectionError> {
    let hello = client.handshake_request().cloned().ok_or(crate::tls::Error::InvalidState("no ServerHello"))?;
    if !suites.list().contains(&hello.suite) {
        return Err(crate::tls::Error::InvalidState("a ServerHello with another suite than offered").into());
    }
    Ok(hello)
}

fn hello_read(c: &Client13) -> bool {
    c.handshake_request().is_some()
}

/// P's connection after [`prepare_prover`] prepared for [`TwoPartyTls::Tls13`]: TLS 1.3, or
/// TLS 1.2 if it was offered too and the server chose it ([`tls12_after_hello`]).
#[allow(clippy::too_many_arguments)]
pub(super) async fn connect_prover13<C: Channel, S: ByteIo, Z: Party<C>>(
    mut prepared: PreparedProver<Bit<Z, C>>,
    ch: &mut C,
    zk: &mut Z,
    server: &mut S,
    (roots, server_name, now): (RootStore, &str, UnixTime),
    request: &[u8],
    limits: ConnectionLimits,
    quiet: Option<std::time::Duration>,
) -> Result<ProverConnected<Bit<Z, C>>, ConnectionError> {
    let TwoPartyTls::Tls13 { suites, also_tls12, .. } = prepared.tls else {
        return Err(ConnectionError::Malformed("a connection prepared for TLS 1.2 goes on in TLS 1.2"));
    };
    let delta = start(&mut prepared, ch, zk, request).await?;
    prepared.take_peer_halves(ch).await?;
    let (Some(halves), Some(shares)) = (prepared.halves.take(), prepared.client_key_shares.take()) else {
        return Err(ConnectionError::Malformed("a connection prepared for TLS 1.3 without its key shares"));
    };
    let config12 = also_tls12.then(|| two_party_config(roots.clone()));
    let client = Client13::two_party(two_party_config13(roots, suites, config12.as_ref()), server_name, now, shares)?;
    ch.send([&client.client_random()[..], client.session_id()].concat()).await?;
    let mut client = offering(client, config12, server_name, now);
    flush(&mut client, server).await?;
    let mut account = ServerBytes::new(limits);
    forward_until(ch, server, &mut client, &mut account, version_chosen).await?;
    let mut client = match client {
        AnyVersionClient::Tls12(client) => {
            let conn = tls12_after_hello(prepared, ch, zk, server, *client, request, (limits, quiet), (delta, account))
                .await?;
            return Ok(ProverConnected::Tls12(Box::new(conn)));
        }
        AnyVersionClient::Tls13 { client, .. } => *client,
    };
    let hello = hello_of(&client, suites)?;
    let half = halves.of(hello.group)?;
    let cipher = RecordCipher::of13(hello.suite);
    prepared.settle(ch).await?;
    let PreparedProver { mut gp, cots, ahead, request_len, .. } = prepared;

    let share = ecdh_prover(ch, half, &hello.server_public, delta, &cots[..ECDH_COTS]).await?;
    let h_mask: [u8; 16] = rand::random();
    let inputs = Zeroizing::new([&share[..], &h_mask[..cipher.handshake_mask()]].concat());
    let handshake_wires = commit(zk, ch, &inputs).await?;
    let mine = gp.own_inputs(ch, &bytes_to_bits(&inputs)).await?;
    let input_keys: Vec<u128> = cots[ECDH_COTS..ECDH_COTS + INPUT_COTS].iter().map(|k| k.0).collect();
    let theirs = gp.peer_inputs(ch, &input_keys).await?;
    let group = half.shared_group();
    let hello_hash = hash32(Some(&hello.hello_hash))?;
    let (traffic, ms) =
        kdf13::handshake(&mut gp, ch, group, Input::Wires(&mine[..256]), Input::Wires(&theirs), &hello_hash).await?;
    client.complete_two_party_handshake(secrets(&traffic))?;
    forward_until(ch, server, &mut client, &mut account, Client13::is_connected).await?;

    let server_finished_hash = hash32(client.server_finished_hash())?;
    let app =
        kdf13::client_application(&mut gp, ch, &ms, &server_finished_hash, cipher.key_bits(RecordLayer::Tls13).0 / 8)
            .await?;
    let d = client_direction(&mut gp, ch, cipher, RecordLayer::Tls13, &app.key, &app.iv).await?;
    let first = ECDH_COTS + INPUT_COTS;
    let tags = match &d {
        ClientDirection::AesGcm(aes) => {
            ghash_key_share(&mut gp, ch, aes, &Input::Wires(&mine[256..])).await?;
            let ole = SenderCots { delta, keys: cots_for(&cots, first, limits)?, first: first as u64 };
            let powers = powers_a(ch, block_to_field(h_mask), limits.powers(), ole.delta, ole.keys, ole.first)
                .await
                .map_err(|e| ConnectionError::Handshake(e.into()))?;
            TagKeys::Ghash(powers)
        }
        ClientDirection::ChaCha20Poly1305(_) => {
            TagKeys::Poly1305(TagCots::sender(delta, cots[first..].to_vec(), first as u64))
        }
    };
    let client_key_and_salt = [app.key, app.iv].concat();
    let mut keys =
        RecordKeys { client: d, client_key_and_salt, tags, verifier_input: theirs, verifier_values: Vec::new() };
    // the client Finished goes with the first request record
    let handshake = HandshakeScript::Tls13 { group, cipher, hello_hash, server_finished_hash };
    let (script, committed) = exchange_prover(
        &mut gp,
        ch,
        zk,
        server,
        &mut client,
        &mut keys,
        ahead,
        (request, request_len),
        &mut account,
        (limits, quiet),
        (handshake, handshake_wires),
    )
    .await?;
    let revealed = gp.revealed().to_vec();
    let verifier_input = (keys.verifier_input, gp.garbler().delta());
    Ok(ProverConnected::Tls13(Box::new(ProverConnection13 {
        client,
        share,
        committed,
        script,
        revealed,
        verifier_input,
    })))
}

/// V's side of [`connect_prover13`].
pub(super) async fn connect_verifier13<C: Channel, Z: Party<C>>(
    mut prepared: PreparedVerifier<Bit<Z, C>>,
    ch: &mut C,
    zk: &mut Z,
    (roots, server_name): (RootStore, &str),
    clock: impl FnOnce() -> UnixTime,
    limits: ConnectionLimits,
) -> Result<VerifierConnected<Bit<Z, C>>, ConnectionError> {
    let (halves, shares, suites, also_tls12) = match (prepared.tls, prepared.halves.take()) {
        (TwoPartyTls::Tls13 { suites, also_tls12, .. }, Some((halves, shares))) => (halves, shares, suites, also_tls12),
        _ => return Err(ConnectionError::Malformed("a connection prepared for TLS 1.2 goes on in TLS 1.2")),
    };
    take_ahead_commitments(zk, ch, &mut prepared.request).await?;
    let randoms = ch.recv().await?;
    let (random, session_id) = randoms
        .split_first_chunk::<32>()
        .and_then(|(r, s)| Some((*r, <[u8; 32]>::try_from(s).ok()?)))
        .ok_or(ConnectionError::Malformed("the client random and session id are 32 bytes each"))?;
    let now = clock();
    let config12 = also_tls12.then(|| two_party_config(roots.clone()));
    let config = two_party_config13(roots, suites, config12.as_ref());
    let client = Client13::two_party_with_randoms(config, server_name, now, shares, (random, session_id))?;
    let mut client = offering(client, config12, server_name, now);
    client.take_outgoing();
    let mut account = ServerBytes::new(limits);
    take_until(ch, &mut client, &mut account, version_chosen).await?;
    let mut client = match client {
        AnyVersionClient::Tls12(client) => {
            let conn = tls12_after_hello_verifier(prepared, ch, zk, *client, limits, (now, account)).await?;
            return Ok(VerifierConnected::Tls12(Box::new(conn)));
        }
        AnyVersionClient::Tls13 { client, .. } => *client,
    };
    let PreparedVerifier { mut ep, choices, macs, request: ahead, .. } = prepared;
    let hello = hello_of(&client, suites)?;
    let half = halves.of(hello.group)?;
    let cipher = RecordCipher::of13(hello.suite);

    let share = ecdh_verifier(ch, half, &hello.server_public, &choices[..ECDH_COTS], &macs[..ECDH_COTS]).await?;
    let handshake_wires = take_commitment(zk, ch, 32 + cipher.handshake_mask()).await?;
    let theirs = ep.peer_inputs(ch, 8 * (32 + cipher.handshake_mask())).await?;
    let input = ECDH_COTS..ECDH_COTS + INPUT_COTS;
    let input_macs: Vec<u128> = macs[input.clone()].iter().map(|m| m.0).collect();
    let mine = ep.own_inputs(ch, &bytes_to_bits(&share[..]), &choices[input.clone()], &input_macs).await?;
    let group = half.shared_group();
    let hello_hash = hash32(Some(&hello.hello_hash))?;
    let (traffic, ms) =
        kdf13::handshake(&mut ep, ch, group, Input::Wires(&theirs[..256]), Input::Wires(&mine), &hello_hash).await?;
    client.complete_two_party_handshake(secrets(&traffic))?;
    take_until(ch, &mut client, &mut account, Client13::is_connected).await?;
    // the client Finished, as P's copy wrote it
    client.take_outgoing();

    let server_finished_hash = hash32(client.server_finished_hash())?;
    let app =
        kdf13::client_application(&mut ep, ch, &ms, &server_finished_hash, cipher.key_bits(RecordLayer::Tls13).0 / 8)
            .await?;
    let d = client_direction(&mut ep, ch, cipher, RecordLayer::Tls13, &app.key, &app.iv).await?;
    let tags = match &d {
        ClientDirection::AesGcm(aes) => {
            let h = ghash_key_share(&mut ep, ch, aes, &Input::Wires(&theirs[256..]))
                .await?
                .ok_or(ConnectionError::Malformed("no share of the GHASH key"))?;
            let (choices, macs) = (cots_for(&choices, input.end, limits)?, cots_for(&macs, input.end, limits)?);
            let ole = ReceiverCots { choices, macs, first: input.end as u64 };
            let powers = powers_b(ch, block_to_field(h), limits.powers(), ole.choices, ole.macs, ole.first)
                .await
                .map_err(|e| ConnectionError::Handshake(e.into()))?;
            TagKeys::Ghash(powers)
        }
        ClientDirection::ChaCha20Poly1305(_) => TagKeys::Poly1305(TagCots::receiver(
            choices[input.end..].to_vec(),
            macs[input.end..].to_vec(),
            input.end as u64,
        )),
    };
    let client_key_and_salt = [app.key, app.iv].concat();
    let mut keys =
        RecordKeys { client: d, client_key_and_salt, tags, verifier_input: mine, verifier_values: Vec::new() };
    let handshake = (HandshakeScript::Tls13 { group, cipher, hello_hash, server_finished_hash }, handshake_wires);
    let (script, committed) =
        exchange_verifier(&mut ep, ch, zk, &mut client, &mut keys, ahead, &mut account, limits, handshake).await?;
    let (revealed, for_verifier) = (ep.revealed().to_vec(), ep.for_verifier().to_vec());
    Ok(VerifierConnected::Tls13(Box::new(VerifierConnection13 {
        client,
        share,
        committed,
        script,
        revealed,
        for_verifier,
        own_labels: keys.verifier_input,
        tag_shares: keys.verifier_values,
        connection_time: now,
    })))
}

impl<W> ProverConnection13<W> {
    /// The session's key schedule, natively, once the verifier has published its share (after
    /// the proof of the garbling): the secret is the sum of both shares in the group's field.
    pub fn schedule(&self, verifier_share: &[u8; 32]) -> Result<Schedule13, ConnectionError> {
        let HandshakeScript::Tls13 { group, hello_hash, server_finished_hash, .. } = &self.script.handshake else {
            return Err(ConnectionError::Malformed("a TLS 1.3 connection's script"));
        };
        let ecdhe = group
            .add(&self.share, verifier_share)
            .ok_or(ConnectionError::Malformed("a share outside its group's field"))?;
        let alg = HashAlg::Sha256;
        let handshake_secret = handshake_secret(alg, &*ecdhe);
        let (hello_hash, server_finished_hash) =
            (Secret::from_slice(hello_hash), Secret::from_slice(server_finished_hash));
        let handshake_traffic = TrafficSecrets::handshake(alg, &handshake_secret, &hello_hash);
        let application =
            TrafficSecrets::application(alg, &master_secret(alg, &handshake_secret), &server_finished_hash);
        Ok(Schedule13 {
            handshake_secret,
            hello_hash,
            handshake_traffic,
            server_finished_hash: Some(server_finished_hash),
            application_traffic: Some(application),
        })
    }
}
