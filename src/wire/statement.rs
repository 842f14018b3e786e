//! A statement about a hidden JSON value as text, `account.balance.amount >= 1000`: its grammar
//! and its canonical form, which the reveal plan, the verdict and attestations share
//! (docs/protocol.md, "Statements about hidden values"; docs/attestation.md). What a statement
//! asks of a response, and what can be wrong with one there, is the protocol's
//! (`protocol::disclose::statement`).
//!
//! Grammar: `PATH OP VALUE`, `PATH in [LOW, HIGH]` or `PATH in {"A", "B", …}`, where PATH is
//! object keys joined by `.`, OP is one of `< <= > >= == !=`, a number VALUE is a decimal of
//! the claims' grammar and a text VALUE is a JSON string (`"2026-01-01"`). [`Statement`]'s
//! `Display` is the canonical form: reading it back gives the same statement, and printing that
//! the same bytes.

use crate::circuits::statement::{Claim, ClaimError, Decimal, Op};

/// The longest statement read, in bytes.
pub const MAX_TEXT: usize = 4096;
/// Most statements in one session (each is a batch of its own in the proof).
pub const MAX_STATEMENTS: usize = 16;
/// Most ranges of one statement's value that an attestation carries (a value is one range but
/// where a chunk boundary of a chunked body splits it).
pub const MAX_VALUE_RANGES: usize = 64;
/// Most keys in a path.
const MAX_KEYS: usize = 16;

/// A dotted path of object keys, `account.balance.amount`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonPath(Vec<String>);

impl JsonPath {
    /// Parses `a.b.c`: 1 to 16 keys, none empty, none holding a control character.
    pub fn parse(text: &str) -> Result<JsonPath, GrammarError> {
        let keys: Vec<String> = text.split('.').map(str::to_string).collect();
        if keys.len() > MAX_KEYS || keys.iter().any(|k| k.is_empty() || k.chars().any(char::is_control)) {
            return Err(GrammarError::BadPath(text.chars().take(80).collect()));
        }
        Ok(JsonPath(keys))
    }

    /// The keys, from the document's top level down.
    pub fn keys(&self) -> &[String] {
        &self.0
    }
}

impl std::fmt::Display for JsonPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.join("."))
    }
}

/// A statement: a path and what is claimed of its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statement {
    pub path: JsonPath,
    pub claim: Claim,
}

/// Why a text is not a statement.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GrammarError {
    #[error("{0:?} is not a statement: PATH OP VALUE (OP one of < <= > >= == !=), PATH in [LOW, HIGH] or PATH in {{\"A\", …}}")]
    Syntax(String),
    #[error("{0:?} is not a path: keys joined by '.', none empty, none with a control character, at most 16")]
    BadPath(String),
    #[error("{path}: {error}")]
    Claim { path: String, error: ClaimError },
}

impl Statement {
    pub fn parse(text: &str) -> Result<Statement, GrammarError> {
        let syntax = || GrammarError::Syntax(text.chars().take(80).collect());
        if text.len() > MAX_TEXT {
            return Err(syntax());
        }
        let text = text.trim();
        let (path, rest) = text.split_once(char::is_whitespace).ok_or_else(syntax)?;
        let path = JsonPath::parse(path)?;
        let rest = rest.trim_start();
        let claim_error = |error| GrammarError::Claim { path: path.to_string(), error };
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
        let statement = Statement { path, claim };
        // the canonical text (spaces between set members) fits where the text is carried
        if statement.to_string().len() > MAX_TEXT {
            return Err(syntax());
        }
        Ok(statement)
    }
}

impl std::str::FromStr for Statement {
    type Err = GrammarError;
    fn from_str(text: &str) -> Result<Statement, GrammarError> {
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

    /// Read with the grammar and printed back, the same bytes.
    fn is_canonical(text: &str) -> bool {
        Statement::parse(text).is_ok_and(|s| s.to_string() == text)
    }

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
            "k\u{e9}y == \"\u{202e}\u{7f}\"",
        ] {
            let s = Statement::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(s.to_string(), text);
            assert_eq!(Statement::parse(&s.to_string()), Ok(s));
            assert!(is_canonical(text), "{text}");
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
            "a\u{1}b >= 1",
            "a\u{85}b >= 1",
        ] {
            assert!(Statement::parse(bad).is_err(), "{bad}");
        }
    }

    /// Texts that read as a statement but are not its canonical form, and texts that do not
    /// read at all, are not canonical.
    #[test]
    fn only_the_printed_form_is_canonical() {
        for text in [
            " a >= 1",
            "a >= 1 ",
            "a  >= 1",
            "a >=1",
            "a in [1,2]",
            "a in {\"DE\",\"FR\"}",
            "a == \"\\u0041\"",
            "a >= 1e3",
            "",
        ] {
            assert!(!is_canonical(text), "{text:?}");
        }
        let long = format!("a in {{{}}}", vec!["\"x\""; 1100].join(", "));
        assert!(long.len() > MAX_TEXT && !is_canonical(&long));
        // a text within the limit whose canonical form is not
        let member = format!("\"{}\"", "x".repeat(60));
        let compact = format!("a in {{{}}}", vec![member.as_str(); 64].join(","));
        assert!(compact.len() <= MAX_TEXT && Statement::parse(&compact).is_err());
    }

    #[test]
    fn paths_read_and_print_alike() {
        assert_eq!(JsonPath::parse("a.b.c").unwrap().keys(), ["a", "b", "c"]);
        assert_eq!(JsonPath::parse("a.b.c").unwrap().to_string(), "a.b.c");
        for bad in ["a..b", "", ".a", "a.", "a\u{0}b", "a\nb"] {
            assert!(JsonPath::parse(bad).is_err(), "{bad:?}");
        }
        let deep = vec!["k"; MAX_KEYS].join(".");
        assert!(JsonPath::parse(&deep).is_ok() && JsonPath::parse(&format!("{deep}.k")).is_err());
    }
}
