//! A statement about a hidden JSON value, `account.balance.amount >= 1000`, in a session: how
//! it travels in the reveal plan, and what can be wrong with one (docs/protocol.md, "Statements
//! about hidden values"). Its grammar and canonical text are [`crate::wire::statement`]'s;
//! where its value is in a response is [`super::placement`]'s.

use super::json_path::JsonError;
pub use crate::wire::direction::Direction;
pub use crate::wire::statement::{GrammarError, Statement, MAX_STATEMENTS, MAX_VALUE_RANGES};
use std::ops::Range;

/// Most hidden string runs whose content one session proves.
pub const MAX_CONTENT_RANGES: usize = 4096;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StatementError {
    #[error("{path}: a number is compared with numbers (write the constant without quotes)")]
    NumberAsText { path: String },
    #[error("{path}: the statement is false for the value {}", of_value(*.direction))]
    False { path: String, direction: Direction },
    #[error("HTTP exchange {exchange}: {problem}, so its body carries no statement")]
    Unreadable { exchange: usize, problem: &'static str },
    #[error("HTTP exchange {exchange}: {error}")]
    Json { exchange: usize, error: JsonError },
    #[error("a statement about HTTP exchange {exchange}, of which there are {count}")]
    NoSuchExchange { exchange: u64, count: usize },
    #[error("{path}: the value is elsewhere than where the prover placed it")]
    ValueElsewhere { path: String },
    #[error("the hidden string bytes proven content are not the body's hidden string bytes")]
    ContentElsewhere,
    #[error("{path}: the value is revealed; a statement is about a hidden value")]
    ValueRevealed { path: String },
    #[error("HTTP exchange {exchange}: the hidden {} byte at {at} is inside a string of the {}'s body but is a quote, a backslash or a control byte: reveal it, or state nothing about this {}", .direction.as_str(), .direction.message(), .direction.message())]
    HiddenNotContent { exchange: usize, direction: Direction, at: u64 },
    #[error("{path}: the value {} is not {form}", of_value(*.direction))]
    ValueNotOfForm { path: String, direction: Direction, form: &'static str },
    #[error(
        "{path}: the value is split into {ranges} pieces by the body's chunked framing, more than {MAX_VALUE_RANGES}"
    )]
    ValueTooSplit { path: String, ranges: usize },
    #[error("{count} statements, more than {MAX_STATEMENTS}")]
    TooMany { count: usize },
}

/// Whose a value in `direction` is, for an error about it.
fn of_value(direction: Direction) -> &'static str {
    match direction {
        Direction::Sent => "the request holds",
        Direction::Received => "the server sent",
    }
}

/// Prover → verifier, in the reveal plan: a statement, the exchange (from 1) whose request
/// (sent) or response (received) body it reads, and where the value is in that direction's
/// plaintext.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StatementPlan {
    pub exchange: u64,
    pub direction: Direction,
    pub statement: Statement,
    pub value: Vec<Range<u64>>,
}
