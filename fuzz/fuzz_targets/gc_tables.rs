//! The garbled-circuit table decoder on arbitrary input (what a verifier reads from the
//! prover's chunks): it never panics, and whatever it accepts is canonical, re-encoding to the
//! same bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tlsproof::gc::three_halves::{decode_tables, encode_tables, tables_in};

fuzz_target!(|data: &[u8]| {
    let mut tables = Vec::new();
    if let Ok(n) = decode_tables(data, &mut tables) {
        assert_eq!(Some(n), tables_in(data.len()));
        let mut again = Vec::new();
        encode_tables(&tables, &mut again);
        assert_eq!(again, data);
    }
});
