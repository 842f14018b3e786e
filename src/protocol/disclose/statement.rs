//! A statement about a hidden JSON value, `account.balance.amount >= 1000`: its grammar (the
//! CLI's `--prove-json`, the verdict's text), how it travels in the reveal plan, and what can
//! be wrong with one (docs/protocol.md, "Statements about hidden values"). Where its value is
//! in a response is [`super::placement`]'s.
//!
//! Grammar: `PATH OP VALUE`, `PATH in [LOW, HIGH]` or `PATH in {"A", "B", …}`, where OP is one
//! of `< <= > >= == !=`, a number VALUE is a decimal of the claims' grammar and a text VALUE
//! is a JSON string (`"2026-01-01"`).

use super::json_path::{JsonError, JsonPath};
use crate::circuits::statement::{Claim, ClaimError, Decimal, Op};
use std::ops::Range;

/// The longest statement read, in bytes.
const MAX_TEXT: usize = 4096;
/// Most statements in one session (each is a batch of its own in the proof).
pub const MAX_STATEMENTS: usize = 16;
/// Most hidden string runs whose content one session proves.
pub const MAX_CONTENT_RANGES: usize = 4096;

/// A statement: a path and what is claimed of its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statement {
    pub path: JsonPath,
    pub claim: Claim,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StatementError {
    #[error("{0:?} is not a statement: PATH OP VALUE (OP one of < <= > >= == !=), PATH in [LOW, HIGH] or PATH in {{\"A\", …}}")]
    Syntax(String),
    #[error(transparent)]
    Path(#[from] JsonError),
    #[error("{path}: {error}")]
    Claim { path: String, error: ClaimError },
    #[error("{path}: a number is compared with numbers (write the constant without quotes)")]
    NumberAsText { path: String },
    #[error("{path}: the statement is false for the value the server sent")]
    False { path: String },
    #[error("HTTP exchange {exchange}: {problem}, so its body carries no statement")]
    Response { exchange: usize, problem: &'static str },
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
    #[error("HTTP exchange {exchange}: the hidden byte at {at} of the response is inside a string of its body but is a quote, a backslash or a control byte: reveal it, or state nothing about this response")]
    HiddenNotContent { exchange: usize, at: u64 },
    #[error("{path}: the server's value is not {form}")]
    ValueNotOfForm { path: String, form: &'static str },
    #[error("{count} statements, more than {MAX_STATEMENTS}")]
    TooMany { count: usize },
}

impl Statement {
    pub fn parse(text: &str) -> Result<Statement, StatementError> {
        let syntax = || StatementError::Syntax(text.chars().take(80).collect());
        if text.len() > MAX_TEXT {
            return Err(syntax());
        }
        let text = text.trim();
        let (path, rest) = text.split_once(char::is_whitespace).ok_or_else(syntax)?;
        let path = JsonPath::parse(path)?;
        let rest = rest.trim_start();
        let claim_error = |error| StatementError::Claim { path: path.to_string(), error };
        let claim = if let Some(set) = rest.strip_prefix("in") {
            let set = set.trim();
            if let Some(range) = set.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
                let (lo, hi) = range.split_once(',').ok_or_else(syntax)?;
                Claim::NumberIn(number(lo).map_err(claim_error)?, number(hi).map_err(claim_error)?)
            } else if set.starts_with('{') && set.ends_with('}') {
                let members: Vec<String> =
                    serde_json::from_str(&format!("[{}]", &set[1..set.len() - 1])).map_err(|_| syntax())?;
                Claim::TextIn(members.into_iter().map(String::into_bytes).collect())
            } else {
                return Err(syntax());
            }
        } else {
            let end = rest.find(|c| !"<>=!".contains(c)).ok_or_else(syntax)?;
            let op = Op::from_symbol(&rest[..end]).ok_or_else(syntax)?;
            let value = rest[end..].trim();
            match value.starts_with('"') {
                true => Claim::Text(op, serde_json::from_str::<String>(value).map_err(|_| syntax())?.into_bytes()),
                false => Claim::Number(op, number(value).map_err(claim_error)?),
            }
        };
        let claim = claim.checked().map_err(claim_error)?;
        Ok(Statement { path, claim })
    }
}

impl std::str::FromStr for Statement {
    type Err = StatementError;
    fn from_str(text: &str) -> Result<Statement, StatementError> {
        Statement::parse(text)
    }
}

impl serde::Serialize for Statement {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Read with the grammar, and its limits, from untrusted text.
impl<'de> serde::Deserialize<'de> for Statement {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Statement::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// Prover → verifier, in the reveal plan: a statement, the exchange (from 1) whose response
/// body it reads, and where the value is in the received direction's plaintext.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StatementPlan {
    pub exchange: u64,
    pub statement: Statement,
    pub value: Vec<Range<u64>>,
}

fn number(text: &str) -> Result<Decimal, ClaimError> {
    Decimal::parse(text.trim().as_bytes())
}

impl std::fmt::Display for Statement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text = |t: &[u8]| serde_json::to_string(&String::from_utf8_lossy(t)).unwrap_or_default();
        match &self.claim {
            Claim::Number(op, c) => write!(f, "{} {} {c}", self.path, op.symbol()),
            Claim::NumberIn(lo, hi) => write!(f, "{} in [{lo}, {hi}]", self.path),
            Claim::Text(op, t) => write!(f, "{} {} {}", self.path, op.symbol(), text(t)),
            Claim::TextIn(set) => {
                let members: Vec<String> = set.iter().map(|t| text(t)).collect();
                write!(f, "{} in {{{}}}", self.path, members.join(", "))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_read_and_print_alike() {
        for text in [
            "account.balance.amount >= 1000",
            "a.b < -0.5",
            "age in [18, 130]",
            "country in {\"DE\", \"FR\"}",
            "date >= \"2026-01-01\"",
            "status != \"closed\"",
            "x == 0",
        ] {
            let s = Statement::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(s.to_string(), text);
            assert_eq!(Statement::parse(&s.to_string()), Ok(s));
        }
        assert_eq!(Statement::parse("  a   >=   1.50 ").unwrap().to_string(), "a >= 1.50");
        for bad in [
            "",
            "a",
            "a >=",
            "a => 1",
            "a >= 1e3",
            "a >= +1",
            "a.. >= 1",
            "a in [2, 1]",
            "a in {DE}",
            "a in (1, 2)",
            "a >= \"x\\\"\"",
            "a ~ 1",
        ] {
            assert!(Statement::parse(bad).is_err(), "{bad}");
        }
    }
}
