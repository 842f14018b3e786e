//! `benchZk` and `benchMpc`: the engine benchmarks (`tlsproof::bench::engines::zk`,
//! `tlsproof::bench::engines::gc`) in the browser, for `tlsproof bench zk|mpc --target browser`. Call
//! them from a Web Worker (they block while they run).

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

/// Runs the engine benchmark (`only`: one section, named as `tlsproof bench zk --only` names
/// it); resolves to a JSON array of `{name, value, unit}`.
#[wasm_bindgen(js_name = benchZk)]
pub fn bench_zk(quick: bool, only: Option<String>) -> Result<String, JsError> {
    use crate::bench::engines::zk::{run, Platform, Section, Sizes};
    let platform = Platform { now: || js_sys::Date::now() / 1e3, peak_memory: wasm_memory };
    let mut sizes = if quick { Sizes::QUICK } else { Sizes::FULL };
    if let Some(name) = only {
        let section = Section::from_name(&name).ok_or_else(|| JsError::new(&format!("no bench section {name:?}")))?;
        sizes = sizes.only(section);
    }
    let figures = run(&platform, sizes, &mut |_| {}).map_err(|e| JsError::new(&e))?;
    Ok(serde_json::to_string(&figures)?)
}

/// Runs the garbled-circuit benchmark (`tlsproof bench mpc --target browser`); resolves to a
/// JSON array of `{name, value, unit}`. Needs the thread pool (two of its workers run the two
/// parties).
#[wasm_bindgen(js_name = benchMpc)]
pub fn bench_mpc(quick: bool) -> Result<String, JsError> {
    use crate::bench::engines::gc::{run, Sizes};
    use crate::bench::engines::zk::Platform;
    let platform = Platform { now: || js_sys::Date::now() / 1e3, peak_memory: wasm_memory };
    let figures =
        run(&platform, if quick { Sizes::QUICK } else { Sizes::FULL }, &mut |_| {}).map_err(|e| JsError::new(&e))?;
    Ok(serde_json::to_string(&figures)?)
}

/// The wasm linear memory's size: it never shrinks, so this is its high-water mark.
fn wasm_memory() -> Option<u64> {
    let memory: js_sys::WebAssembly::Memory = wasm_bindgen::memory().dyn_into().ok()?;
    let buffer = memory.buffer();
    let len = js_sys::Reflect::get(&buffer, &JsValue::from_str("byteLength")).ok()?.as_f64()?;
    Some(len as u64)
}
