//! A statement about a hidden JSON value, `account.balance.amount >= 1000`: its grammar (the
//! CLI's `--prove-json`, the verdict's text), and the prover's check of it against its own
//! plaintext before it connects (docs/protocol.md, "Statements about hidden values").
//!
//! Grammar: `PATH OP VALUE`, `PATH in [LOW, HIGH]` or `PATH in {"A", "B", …}`, where OP is one
//! of `< <= > >= == !=`, a number VALUE is a decimal of the claims' grammar and a text VALUE
//! is a JSON string (`"2026-01-01"`).

use super::json_path::{self, JsonError, JsonPath, PathValue};
use crate::circuits::statement::{Claim, ClaimError, Decimal, Op};
use std::ops::Range;

/// The longest statement read, in bytes.
const MAX_TEXT: usize = 4096;

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

    /// Where the value is in `body` (whose bytes `hidden(i)` hides), if the statement holds for
    /// it: the prover's check before it connects, which refuses what the verifier or the proof
    /// would.
    pub fn check(&self, body: &[u8], hidden: &dyn Fn(usize) -> bool) -> Result<Range<usize>, StatementError> {
        let reading = json_path::read(body, hidden, std::slice::from_ref(&self.path))?;
        json_path::check_hidden_content(body, &reading)?;
        let path = self.path.to_string();
        let range = match (&reading.values[0], &self.claim) {
            (PathValue::Number(_), Claim::Text(..) | Claim::TextIn(_)) => {
                return Err(StatementError::NumberAsText { path })
            }
            (PathValue::Number(r) | PathValue::String(r), _) => r.clone(),
        };
        match self.claim.holds(&body[range.clone()]) {
            Ok(true) => Ok(range),
            Ok(false) => Err(StatementError::False { path }),
            Err(error) => Err(StatementError::Claim { path, error }),
        }
    }
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

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::fixture::http::JSON_BODY;

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

    /// Against the fixture's `/json` with the amount hidden: true statements give the value's
    /// range, a false one and ill-formed ones are refused by the prover's own check.
    #[test]
    fn the_prover_checks_a_statement_against_its_plaintext() {
        let body = JSON_BODY.as_bytes();
        let at = JSON_BODY.find("1234.56").unwrap();
        let hidden = |i: usize| (at..at + 7).contains(&i);
        let check = |t: &str| Statement::parse(t).unwrap().check(body, &hidden);
        assert_eq!(check("account.balance.amount >= 1000"), Ok(at..at + 7));
        assert_eq!(check("account.balance.amount in [1000, 1234.56]"), Ok(at..at + 7));
        assert!(matches!(check("account.balance.amount >= 2000"), Err(StatementError::False { .. })));
        assert!(check("account.balance.currency == \"EUR\"").is_ok());
        assert!(matches!(check("account.balance.currency >= 10"), Err(StatementError::Claim { .. })));
        assert!(matches!(check("account.nothing >= 1"), Err(StatementError::Path(JsonError::NoSuchPath { .. }))));
        // a hidden byte outside any string nor stated value: the status's closing quote
        let q = JSON_BODY.rfind('"').unwrap();
        let outside = |i: usize| hidden(i) || i == q;
        assert!(Statement::parse("account.balance.amount >= 1000").unwrap().check(body, &outside).is_err());
    }
}
