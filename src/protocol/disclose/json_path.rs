//! Where a path's value is in a JSON body of which some bytes are hidden, read as the verifier
//! reads it: from the revealed bytes alone, refusing every document whose reading could
//! differ from the real plaintext's (docs/protocol.md, "Statements about hidden values",
//! rules 2 to 6). The prover runs the same reading on its plaintext with the same hidden
//! bytes, so it refuses what the verifier would before it connects.

pub use crate::wire::statement::JsonPath;
use std::ops::Range;

/// Deepest nesting read (objects and arrays).
const MAX_DEPTH: usize = 64;

/// A path's value as the document holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathValue {
    /// A number token: its bytes.
    Number(Range<usize>),
    /// A string: the bytes between its quotes (escapes as they are).
    String(Range<usize>),
}

/// How a partly hidden document was read.
#[derive(Debug, PartialEq, Eq)]
pub struct Reading {
    /// Each path's value, in the order asked.
    pub values: Vec<PathValue>,
    /// Every hidden byte inside a string, as ranges: what must be proven string content.
    pub hidden_in_strings: Vec<Range<usize>>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonError {
    #[error("the body is not one JSON document at byte {at}: {what}")]
    Malformed { at: usize, what: &'static str },
    #[error("a hidden byte at {at} is part of the document's structure (only string contents and a stated value may be hidden)")]
    HiddenStructure { at: usize },
    #[error("the hidden value at {at} is not the value of a stated path (only string contents may be hidden besides)")]
    HiddenValueNotStated { at: usize },
    #[error("an object key at {at} has a hidden byte (keys must be revealed)")]
    HiddenKey { at: usize },
    #[error("{path}: the key {key:?} occurs twice in its object (at {first} and {second})")]
    DuplicateKey { path: String, key: String, first: usize, second: usize },
    #[error("{path}: no such member")]
    NoSuchPath { path: String },
    #[error("{path}: the value is an object, an array or a literal, not a number or a string")]
    NotAScalar { path: String },
    #[error("a number at {at} is partly hidden (a number is hidden whole or not at all)")]
    PartlyHiddenNumber { at: usize },
    #[error("the document nests deeper than {MAX_DEPTH}")]
    TooDeep,
    #[error("the top level is not an object")]
    NotAnObject,
}

/// A value in the document, as far as a path needs it.
#[derive(Debug)]
enum Node {
    /// Members: (key as unescaped, the key's offset, the value).
    Object(Vec<(String, usize, Node)>),
    Other,
    Number(Range<usize>),
    String(Range<usize>),
}

/// Reads `body` (the hidden bytes' values do not matter) with `hidden(i)` telling which bytes
/// are hidden, and finds each path's value.
pub fn read(body: &[u8], hidden: &dyn Fn(usize) -> bool, paths: &[JsonPath]) -> Result<Reading, JsonError> {
    let mut r = Reader { body, hidden, at: 0, hidden_in_strings: Vec::new(), hidden_numbers: Vec::new() };
    r.space()?;
    if r.revealed()? != Some(b'{') {
        return Err(JsonError::NotAnObject);
    }
    let root = r.value(0)?;
    r.space()?;
    if r.at != body.len() {
        return Err(JsonError::Malformed { at: r.at, what: "bytes after the document" });
    }
    let mut values = Vec::with_capacity(paths.len());
    for path in paths {
        let mut node = &root;
        for (depth, key) in path.keys().iter().enumerate() {
            let shown = || path.keys()[..=depth].join(".");
            let Node::Object(members) = node else { return Err(JsonError::NoSuchPath { path: shown() }) };
            let mut found = members.iter().filter(|(k, _, _)| k == key);
            let Some((_, first, v)) = found.next() else { return Err(JsonError::NoSuchPath { path: shown() }) };
            if let Some((_, second, _)) = found.next() {
                return Err(JsonError::DuplicateKey {
                    path: shown(),
                    key: key.clone(),
                    first: *first,
                    second: *second,
                });
            }
            node = v;
        }
        values.push(match node {
            Node::Number(range) => PathValue::Number(range.clone()),
            Node::String(range) => PathValue::String(range.clone()),
            _ => return Err(JsonError::NotAScalar { path: path.to_string() }),
        });
    }
    // a hidden number no path leads to could be anything, structure included
    for n in &r.hidden_numbers {
        if !values.contains(&PathValue::Number(n.clone())) {
            return Err(JsonError::HiddenValueNotStated { at: n.start });
        }
    }
    Ok(Reading { values, hidden_in_strings: r.hidden_in_strings })
}

struct Reader<'a> {
    body: &'a [u8],
    hidden: &'a dyn Fn(usize) -> bool,
    at: usize,
    hidden_in_strings: Vec<Range<usize>>,
    /// Hidden runs read where a value starts.
    hidden_numbers: Vec<Range<usize>>,
}

impl Reader<'_> {
    /// The byte here, for where it is known to be revealed.
    fn peek(&self) -> Option<u8> {
        self.body.get(self.at).copied()
    }

    fn revealed(&self) -> Result<Option<u8>, JsonError> {
        match self.body.get(self.at) {
            Some(_) if (self.hidden)(self.at) => Err(JsonError::HiddenStructure { at: self.at }),
            b => Ok(b.copied()),
        }
    }

    fn malformed(&self, what: &'static str) -> JsonError {
        JsonError::Malformed { at: self.at, what }
    }

    /// Skips revealed whitespace (a hidden byte stops it: what it is, is the caller's to say).
    fn space(&mut self) -> Result<(), JsonError> {
        while self.at < self.body.len() && !(self.hidden)(self.at) {
            match self.body[self.at] {
                b' ' | b'\t' | b'\n' | b'\r' => self.at += 1,
                _ => break,
            }
        }
        Ok(())
    }

    fn expect(&mut self, c: u8, what: &'static str) -> Result<(), JsonError> {
        match self.revealed()? {
            Some(b) if b == c => {
                self.at += 1;
                Ok(())
            }
            _ => Err(self.malformed(what)),
        }
    }

    fn value(&mut self, depth: usize) -> Result<Node, JsonError> {
        if depth > MAX_DEPTH {
            return Err(JsonError::TooDeep);
        }
        if self.at < self.body.len() && (self.hidden)(self.at) {
            // a hidden value: only a stated number may be one (its grammar is proven), and
            // it ends where a revealed byte does
            let start = self.at;
            while self.at < self.body.len() && (self.hidden)(self.at) {
                self.at += 1;
            }
            if let Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') = self.peek() {
                return Err(JsonError::PartlyHiddenNumber { at: start });
            }
            self.hidden_numbers.push(start..self.at);
            return Ok(Node::Number(start..self.at));
        }
        match self.revealed()?.ok_or_else(|| self.malformed("a value expected"))? {
            b'{' => self.object(depth),
            b'[' => {
                self.at += 1;
                self.space()?;
                if self.revealed()? == Some(b']') {
                    self.at += 1;
                    return Ok(Node::Other);
                }
                loop {
                    self.value(depth + 1)?;
                    self.space()?;
                    match self.revealed()? {
                        Some(b',') => {
                            self.at += 1;
                            self.space()?;
                        }
                        Some(b']') => {
                            self.at += 1;
                            return Ok(Node::Other);
                        }
                        _ => return Err(self.malformed("',' or ']' expected")),
                    }
                }
            }
            b'"' => {
                let (content, _) = self.string()?;
                Ok(Node::String(content))
            }
            b'-' | b'0'..=b'9' => self.number(),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            _ => Err(self.malformed("a value expected")),
        }
    }

    fn object(&mut self, depth: usize) -> Result<Node, JsonError> {
        self.at += 1;
        let mut members = Vec::new();
        self.space()?;
        if self.revealed()? == Some(b'}') {
            self.at += 1;
            return Ok(Node::Object(members));
        }
        loop {
            let key_at = self.at;
            if self.revealed()? != Some(b'"') {
                return Err(self.malformed("a key expected"));
            }
            let (content, any_hidden) = self.string()?;
            if any_hidden {
                return Err(JsonError::HiddenKey { at: key_at });
            }
            let key: String = serde_json::from_slice(&self.body[content.start - 1..content.end + 1])
                .map_err(|_| JsonError::Malformed { at: key_at, what: "a key that is not a JSON string" })?;
            self.space()?;
            self.expect(b':', "':' expected")?;
            self.space()?;
            let value = self.value(depth + 1)?;
            members.push((key, key_at, value));
            self.space()?;
            match self.revealed()? {
                Some(b',') => {
                    self.at += 1;
                    self.space()?;
                }
                Some(b'}') => {
                    self.at += 1;
                    return Ok(Node::Object(members));
                }
                _ => return Err(self.malformed("',' or '}' expected")),
            }
        }
    }

    /// A string from its opening quote: its content's range and whether a byte of it is
    /// hidden. A hidden byte is content (proven neither quote, backslash nor control byte),
    /// so the string ends at the first revealed quote not escaped by a revealed backslash.
    fn string(&mut self) -> Result<(Range<usize>, bool), JsonError> {
        self.at += 1;
        let start = self.at;
        let mut any_hidden = false;
        loop {
            let Some(&c) = self.body.get(self.at) else { return Err(self.malformed("a string not ended")) };
            if self.content_hidden() {
                any_hidden = true;
                continue;
            }
            match c {
                b'"' => {
                    self.at += 1;
                    return Ok((start..self.at - 1, any_hidden));
                }
                b'\\' => {
                    // the escaped byte is content (a hidden one proven so like any other)
                    self.at += 1;
                    if self.at >= self.body.len() {
                        return Err(self.malformed("a string not ended"));
                    }
                    match self.content_hidden() {
                        true => any_hidden = true,
                        false => self.at += 1,
                    }
                }
                c if c < 0x20 => return Err(self.malformed("a control byte in a string")),
                _ => self.at += 1,
            }
        }
    }

    /// If the byte here is hidden, notes it as string content to prove and moves past it.
    fn content_hidden(&mut self) -> bool {
        if !(self.hidden)(self.at) {
            return false;
        }
        match self.hidden_in_strings.last_mut() {
            Some(r) if r.end == self.at => r.end += 1,
            _ => self.hidden_in_strings.push(self.at..self.at + 1),
        }
        self.at += 1;
        true
    }

    fn number(&mut self) -> Result<Node, JsonError> {
        let start = self.at;
        while self.at < self.body.len() {
            // a hidden byte right after revealed digits may be more of them
            if (self.hidden)(self.at) {
                return Err(JsonError::PartlyHiddenNumber { at: start });
            }
            match self.body[self.at] {
                b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9' => self.at += 1,
                _ => break,
            }
        }
        Ok(Node::Number(start..self.at))
    }

    fn literal(&mut self, word: &'static [u8]) -> Result<Node, JsonError> {
        for &c in word {
            self.expect(c, "true, false or null expected")?;
        }
        Ok(Node::Other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads `doc`, whose bytes marked `█` (one byte each, standing for any hidden byte) are
    /// hidden, for `paths`.
    fn read_marked(doc: &str, paths: &[&str]) -> Result<Reading, JsonError> {
        let (body, hidden) = marked(doc);
        let paths: Vec<JsonPath> = paths.iter().map(|p| JsonPath::parse(p).unwrap()).collect();
        read(&body, &|i| hidden[i], &paths)
    }

    fn marked(doc: &str) -> (Vec<u8>, Vec<bool>) {
        let mut body = Vec::new();
        let mut hidden = Vec::new();
        for c in doc.chars() {
            let h = c == '█';
            let mut buf = [0u8; 4];
            for &b in if h { &b"?"[..] } else { c.encode_utf8(&mut buf).as_bytes() } {
                body.push(b);
                hidden.push(h);
            }
        }
        (body, hidden)
    }

    #[test]
    fn a_hidden_value_is_found_by_its_path() {
        let doc = r#"{"account":{"id":"ACC-0042","owner":"█████████████","balance":{"amount":"███████","currency":"EUR"}},"status":"ok"}"#;
        let (body, hidden) = marked(doc);
        let runs: Vec<Range<usize>> = (0..body.len())
            .filter(|&i| hidden[i] && (i == 0 || !hidden[i - 1]))
            .map(|i| i..(i..).find(|&j| j == body.len() || !hidden[j]).unwrap())
            .collect();
        let ok = body.windows(4).position(|w| w == b"\"ok\"").unwrap() + 1;
        let r = read_marked(doc, &["account.balance.amount", "status"]).unwrap();
        assert_eq!(r.values, vec![PathValue::String(runs[1].clone()), PathValue::String(ok..ok + 2)]);
        assert_eq!(r.hidden_in_strings, runs, "the owner and the amount");
        let n = read_marked(r#"{"a": {"n": ████ }, "b": [1, "x", null, true]}"#, &["a.n"]).unwrap();
        assert!(matches!(&n.values[0], PathValue::Number(r) if r.len() == 4), "{n:?}");
        assert!(n.hidden_in_strings.is_empty());
    }

    #[test]
    fn keys_are_compared_unescaped_and_a_key_twice_is_refused() {
        for doc in [
            r#"{"amount":"1","amount":"2000"}"#,
            r#"{"amount":"1","amo\u0075nt":"2000"}"#,
            r#"{"amount":"█","x":{},"amount":5}"#,
        ] {
            assert!(matches!(read_marked(doc, &["amount"]), Err(JsonError::DuplicateKey { .. })), "{doc}");
        }
        let r = read_marked(r#"{"amo\u0075nt":"██"}"#, &["amount"]).unwrap();
        assert!(matches!(&r.values[0], PathValue::String(x) if x.len() == 2));
        // elsewhere a key may repeat
        assert!(read_marked(r#"{"a":{"k":1},"b":{"k":2},"c":"█"}"#, &["c"]).is_ok());
    }

    /// The attacks docs/protocol.md names: each reading is refused, or (a quote hidden in a
    /// string) the prover's own check refuses it and the proof would.
    #[test]
    fn readings_that_could_differ_from_the_document_are_refused() {
        let cases: [(&str, &str, fn(&JsonError) -> bool); 10] = [
            (r#"{"a":"x"}{"a":"y"}"#, "a", |e| matches!(e, JsonError::Malformed { .. })),
            (r#"{"██":1}"#, "a", |e| matches!(e, JsonError::HiddenKey { .. })),
            (r#"{"a":"x"█"b":2}"#, "b", |e| matches!(e, JsonError::HiddenStructure { .. })),
            (r#"{"a":1█"b":2}"#, "b", |e| matches!(e, JsonError::PartlyHiddenNumber { .. })),
            (r#"{"a":12██}"#, "a", |e| matches!(e, JsonError::PartlyHiddenNumber { .. })),
            (r#"{"a":██12}"#, "a", |e| matches!(e, JsonError::PartlyHiddenNumber { .. })),
            (r#"{"a":███,"b":"1"}"#, "b", |e| matches!(e, JsonError::HiddenValueNotStated { .. })),
            (r#"█"a":1}"#, "a", |e| matches!(e, JsonError::HiddenStructure { .. })),
            (r#"[{"a":1}]"#, "a", |e| matches!(e, JsonError::NotAnObject)),
            (r#"{"a":{"b":1}}"#, "a", |e| matches!(e, JsonError::NotAScalar { .. })),
        ];
        for (doc, path, want) in cases {
            let got = read_marked(doc, &[path]);
            assert!(matches!(&got, Err(e) if want(e)), "{doc}: {got:?}");
        }
        assert!(matches!(read_marked(r#"{"a":1}"#, &["a.b"]), Err(JsonError::NoSuchPath { .. })));
        let deep = format!("{}{}", r#"{"a":"#.repeat(70), "1".to_string() + &"}".repeat(70));
        assert_eq!(read_marked(&deep, &["a"]).err(), Some(JsonError::TooDeep));
    }

    /// Escapes: a revealed escaped quote does not end a string; a hidden byte after a revealed
    /// backslash is content to prove.
    #[test]
    fn escapes_are_read_as_json_reads_them() {
        let r = read_marked(r#"{"a":"x\"y","b":"z"}"#, &["b"]).unwrap();
        assert!(matches!(&r.values[0], PathValue::String(x) if x.len() == 1));
        let r = read_marked(r#"{"a":"x\█y","b":"z"}"#, &["b"]).unwrap();
        assert_eq!(r.hidden_in_strings.len(), 1);
        assert!(JsonPath::parse("a..b").is_err() && JsonPath::parse("").is_err());
    }
}
