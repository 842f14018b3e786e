//! Browser WebSocket client (web-sys). Works on the main thread and in Web Workers.

use super::TransportError;
use futures::channel::mpsc;
use futures::StreamExt;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{BinaryType, CloseEvent, MessageEvent, WebSocket};

/// Above this many buffered (unsent) bytes, `send` waits: the browser would otherwise queue
/// without limit.
const HIGH_WATER: u32 = 1 << 20;

enum SocketEvent {
    Open,
    Message(Vec<u8>),
    TooBig(usize),
    NonBinary,
    Error,
    Close { code: u16, reason: String },
}

pub struct WsSocket {
    ws: WebSocket,
    events: mpsc::UnboundedReceiver<SocketEvent>,
    // Keep the callbacks alive as long as the socket.
    _on_open: Closure<dyn FnMut(JsValue)>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
    _on_error: Closure<dyn FnMut(JsValue)>,
    _on_close: Closure<dyn FnMut(CloseEvent)>,
}

impl WsSocket {
    /// Opens a WebSocket to `url` and waits until it is open.
    pub async fn connect(url: &str) -> Result<WsSocket, TransportError> {
        let connect_err = |reason: String| TransportError::Connect { url: url.to_string(), reason };
        let ws = WebSocket::new(url).map_err(|e| connect_err(format!("{e:?}")))?;
        ws.set_binary_type(BinaryType::Arraybuffer);
        let (tx, events) = mpsc::unbounded();

        let t = tx.clone();
        let on_open = Closure::<dyn FnMut(JsValue)>::new(move |_| {
            let _ = t.unbounded_send(SocketEvent::Open);
        });
        let t = tx.clone();
        let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |e: MessageEvent| {
            let ev = match e.data().dyn_into::<js_sys::ArrayBuffer>() {
                // Checked before copying into wasm memory.
                Ok(buf) if buf.byte_length() as usize > super::MAX_INCOMING_MESSAGE => {
                    SocketEvent::TooBig(buf.byte_length() as usize)
                }
                Ok(buf) => SocketEvent::Message(js_sys::Uint8Array::new(&buf).to_vec()),
                Err(_) => SocketEvent::NonBinary,
            };
            let _ = t.unbounded_send(ev);
        });
        let t = tx.clone();
        let on_error = Closure::<dyn FnMut(JsValue)>::new(move |_| {
            let _ = t.unbounded_send(SocketEvent::Error);
        });
        let t = tx;
        let on_close = Closure::<dyn FnMut(CloseEvent)>::new(move |e: CloseEvent| {
            let _ = t.unbounded_send(SocketEvent::Close { code: e.code(), reason: e.reason() });
        });
        ws.set_onopen(Some(on_open.as_ref().unchecked_ref()));
        ws.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        ws.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        ws.set_onclose(Some(on_close.as_ref().unchecked_ref()));

        let mut socket = WsSocket {
            ws,
            events,
            _on_open: on_open,
            _on_message: on_message,
            _on_error: on_error,
            _on_close: on_close,
        };
        loop {
            match socket.events.next().await {
                Some(SocketEvent::Open) => return Ok(socket),
                Some(SocketEvent::Close { code, reason }) => {
                    return Err(connect_err(format!("closed with code {code}: {reason}")))
                }
                Some(SocketEvent::Error) | None => {
                    // The close event that follows carries the details, if any.
                    if let Some(SocketEvent::Close { code, reason }) = socket.events.next().await {
                        return Err(connect_err(format!("closed with code {code}: {reason}")));
                    }
                    return Err(connect_err("connection failed".into()));
                }
                Some(_) => continue,
            }
        }
    }

    /// Sends one binary message, waiting while the send buffer is full.
    pub async fn send(&mut self, data: &[u8]) -> Result<(), TransportError> {
        while self.ws.buffered_amount() > HIGH_WATER {
            sleep_ms(2).await;
        }
        if self.ws.ready_state() != WebSocket::OPEN {
            return Err(TransportError::Closed { code: 1006, reason: "socket is not open".into() });
        }
        // Wasm memory is a SharedArrayBuffer when threads are on, and WebSocket.send refuses
        // views of shared memory: copy into a fresh (unshared) buffer first.
        let copy = js_sys::Uint8Array::new_with_length(data.len() as u32);
        copy.copy_from(data);
        self.ws.send_with_array_buffer(&copy.buffer()).map_err(|e| TransportError::Io(format!("{e:?}")))
    }

    /// Next binary payload; `None` if the connection ended without a close frame.
    pub async fn recv(&mut self) -> Result<Option<Vec<u8>>, TransportError> {
        loop {
            match self.events.next().await {
                None => return Ok(None),
                Some(SocketEvent::Message(b)) => return Ok(Some(b)),
                Some(SocketEvent::TooBig(len)) => {
                    let _ = self.ws.close_with_code_and_reason(1009, "message too big");
                    return Err(TransportError::MessageTooBig { len, max: super::MAX_INCOMING_MESSAGE });
                }
                Some(SocketEvent::NonBinary) => return Err(TransportError::UnexpectedMessage),
                Some(SocketEvent::Close { code, reason }) => return Err(TransportError::Closed { code, reason }),
                Some(SocketEvent::Open | SocketEvent::Error) => continue,
            }
        }
    }

    /// Starts the closing handshake.
    pub async fn close(&mut self) -> Result<(), TransportError> {
        self.ws.close().map_err(|e| TransportError::Io(format!("{e:?}")))
    }
}

impl Drop for WsSocket {
    fn drop(&mut self) {
        self.ws.set_onopen(None);
        self.ws.set_onmessage(None);
        self.ws.set_onerror(None);
        self.ws.set_onclose(None);
        let _ = self.ws.close();
    }
}

/// Resolves after `ms` milliseconds; works in windows and workers alike.
pub(crate) async fn sleep_ms(ms: i32) {
    let promise = js_sys::Promise::new(&mut |resolve, _reject| {
        let global = js_sys::global();
        if let Ok(set_timeout) = js_sys::Reflect::get(&global, &JsValue::from_str("setTimeout")) {
            if let Ok(f) = set_timeout.dyn_into::<js_sys::Function>() {
                let _ = f.call2(&global, &resolve, &JsValue::from(ms));
                return;
            }
        }
        let _ = resolve.call0(&JsValue::NULL);
    });
    let _ = wasm_bindgen_futures::JsFuture::from(promise).await;
}
