//! Which direction of the TLS connection bytes travel in: what a reveal range, a commitment or
//! a statement's value is positioned in.

use serde::{Deserialize, Serialize};

/// Which direction of the TLS connection a range is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Client to server (the requests).
    Sent,
    /// Server to client (the responses).
    Received,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Sent => "sent",
            Direction::Received => "received",
        }
    }

    /// The HTTP message an exchange has in this direction: "request" or "response".
    pub fn message(self) -> &'static str {
        match self {
            Direction::Sent => "request",
            Direction::Received => "response",
        }
    }

    /// 0 for sent, 1 for received: the index of per-direction pairs.
    pub fn index(self) -> usize {
        self as usize
    }
}
