//! Statements about a hidden value, as circuits over its bytes: that they are of the value's
//! grammar (a decimal number, or string content that cannot end a JSON string), and how they
//! compare with a public constant (docs/protocol.md, "Statements about hidden values").
//!
//! [`Claim::holds`] is the native reading (the prover's check before it connects, and the
//! reference the circuit is tested against); [`claim_circuit`] gives the bits that are all 1
//! exactly when the same claim holds for the bytes behind the wires.

use super::Circuit;
use std::cmp::Ordering;

/// The longest number a claim reads (bytes, sign and point included): at most 19 digits,
/// scaled to 19 fraction digits, stay below 10^38 < 2^127.
pub const MAX_NUMBER_LEN: usize = 19;
/// Bits of a scaled magnitude.
const WIDTH: usize = 127;
/// The longest text a claim compares, and the most members of a set.
pub const MAX_TEXT_LEN: usize = 256;
pub const MAX_SET: usize = 64;

/// Why a claim cannot be stated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClaimError {
    #[error("{0:?} is not a number of the accepted form: -?(0|[1-9][0-9]*)(.[0-9]+)?, at most {MAX_NUMBER_LEN} bytes (no +, exponent or leading zero)")]
    NotANumber(String),
    #[error("{0}: a text claim compares with a public string of the value's length ({1} bytes), byte by byte")]
    TextLength(String, usize),
    #[error("a range [{0}, {1}] whose start is above its end")]
    EmptyRange(String, String),
    #[error("a text of {0} bytes, more than {MAX_TEXT_LEN}")]
    TextTooLong(usize),
    #[error("a set of {0} members: 1 to {MAX_SET}")]
    SetSize(usize),
    #[error("text holds a quote, a backslash or a control byte, which a hidden string value cannot")]
    NotStringContent,
}

/// A comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Op {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl Op {
    pub const ALL: [Op; 6] = [Op::Lt, Op::Le, Op::Gt, Op::Ge, Op::Eq, Op::Ne];

    pub fn symbol(self) -> &'static str {
        match self {
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Eq => "==",
            Op::Ne => "!=",
        }
    }

    pub fn from_symbol(s: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|o| o.symbol() == s)
    }

    fn holds(self, o: Ordering) -> bool {
        match self {
            Op::Lt => o.is_lt(),
            Op::Le => o.is_le(),
            Op::Gt => o.is_gt(),
            Op::Ge => o.is_ge(),
            Op::Eq => o.is_eq(),
            Op::Ne => o.is_ne(),
        }
    }
}

/// A decimal of the claims' grammar, `-?(0|[1-9][0-9]*)(\.[0-9]+)?`, at most
/// [`MAX_NUMBER_LEN`] bytes: its sign, its digits as an integer, and how many of them follow the
/// point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decimal {
    negative: bool,
    digits: u128,
    fraction: u32,
}

impl Decimal {
    pub fn parse(text: &[u8]) -> Result<Decimal, ClaimError> {
        let bad = || ClaimError::NotANumber(String::from_utf8_lossy(text).chars().take(40).collect());
        if text.is_empty() || text.len() > MAX_NUMBER_LEN {
            return Err(bad());
        }
        let (negative, rest) = match text.split_first() {
            Some((b'-', rest)) => (true, rest),
            _ => (false, text),
        };
        let (int, frac) = match rest.iter().position(|&c| c == b'.') {
            Some(p) => (&rest[..p], Some(&rest[p + 1..])),
            None => (rest, None),
        };
        let all_digits = |s: &[u8]| !s.is_empty() && s.iter().all(u8::is_ascii_digit);
        if !all_digits(int) || (int.len() > 1 && int[0] == b'0') || frac.is_some_and(|f| !all_digits(f)) {
            return Err(bad());
        }
        let digits = int.iter().chain(frac.unwrap_or(&[])).fold(0u128, |v, &c| v * 10 + u128::from(c - b'0'));
        Ok(Decimal { negative, digits, fraction: frac.map_or(0, |f| f.len() as u32) })
    }

    /// Its magnitude scaled to `scale` fraction digits (`scale` ≥ its own).
    fn scaled(&self, scale: u32) -> u128 {
        self.digits * 10u128.pow(scale - self.fraction)
    }

    fn is_negative(&self) -> bool {
        self.negative && self.digits != 0
    }

    fn cmp(&self, other: &Decimal) -> Ordering {
        let scale = self.fraction.max(other.fraction);
        let signed = |d: &Decimal| (d.is_negative(), d.scaled(scale));
        match (signed(self), signed(other)) {
            ((false, a), (false, b)) => a.cmp(&b),
            ((true, a), (true, b)) => b.cmp(&a),
            ((n, _), _) => {
                if n {
                    Ordering::Less
                } else {
                    Ordering::Greater
                }
            }
        }
    }
}

/// As it was written: sign, digits, and as many fraction digits.
impl std::fmt::Display for Decimal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let digits = format!("{:0>width$}", self.digits, width = self.fraction as usize + 1);
        let (int, frac) = digits.split_at(digits.len() - self.fraction as usize);
        let sign = if self.negative { "-" } else { "" };
        match frac.is_empty() {
            true => write!(f, "{sign}{int}"),
            false => write!(f, "{sign}{int}.{frac}"),
        }
    }
}

/// What is claimed of a hidden value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Claim {
    /// The value, read as a decimal, compared with a public one.
    Number(Op, Decimal),
    /// The value, read as a decimal, within a closed range.
    NumberIn(Decimal, Decimal),
    /// The value's bytes compared with a public string of their length (`==`, `!=` with any).
    Text(Op, Vec<u8>),
    /// The value's bytes are one of a public set.
    TextIn(Vec<Vec<u8>>),
}

impl Claim {
    /// A claim whose constants are of its form (a range not empty, texts that a hidden string
    /// value could be).
    pub fn checked(self) -> Result<Claim, ClaimError> {
        let text_ok = |t: &[u8]| match t.len() > MAX_TEXT_LEN {
            true => Err(ClaimError::TextTooLong(t.len())),
            false if t.iter().any(|&c| !is_content(c)) => Err(ClaimError::NotStringContent),
            false => Ok(()),
        };
        match &self {
            Claim::NumberIn(a, b) if a.cmp(b).is_gt() => {
                return Err(ClaimError::EmptyRange(format!("{a:?}"), format!("{b:?}")))
            }
            Claim::Text(_, t) => text_ok(t)?,
            Claim::TextIn(set) => {
                if set.is_empty() || set.len() > MAX_SET {
                    return Err(ClaimError::SetSize(set.len()));
                }
                set.iter().try_for_each(|t| text_ok(t))?;
            }
            _ => {}
        }
        Ok(self)
    }

    /// Whether the claim holds for `value` (its bytes as the document has them); an error if
    /// the value is not of the claim's form (not a number of the grammar, or text of another
    /// length for an ordering).
    pub fn holds(&self, value: &[u8]) -> Result<bool, ClaimError> {
        match self {
            Claim::Number(op, c) => Ok(op.holds(Decimal::parse(value)?.cmp(c))),
            Claim::NumberIn(a, b) => {
                let v = Decimal::parse(value)?;
                Ok(v.cmp(a).is_ge() && v.cmp(b).is_le())
            }
            Claim::Text(op, t) => {
                if value.iter().any(|&c| !is_content(c)) {
                    return Err(ClaimError::NotStringContent);
                }
                match op {
                    Op::Eq => Ok(value == t.as_slice()),
                    Op::Ne => Ok(value != t.as_slice()),
                    _ if value.len() != t.len() => Err(ClaimError::TextLength(op.symbol().into(), value.len())),
                    _ => Ok(op.holds(value.cmp(t))),
                }
            }
            Claim::TextIn(set) => match value.iter().all(|&c| is_content(c)) {
                true => Ok(set.iter().any(|t| t == value)),
                false => Err(ClaimError::NotStringContent),
            },
        }
    }
}

/// A byte a hidden JSON string may hold: not a quote, a backslash or a control byte.
pub fn is_content(c: u8) -> bool {
    c != b'"' && c != b'\\' && c >= 0x20
}

/// The bits that are all 1 iff `claim` holds for the bytes of `value` (8 bits each, least
/// significant first) and they are of its form: the grammar of a number, or string content.
/// The value's length is public; a text ordering with a constant of another length, or a
/// number longer than [`MAX_NUMBER_LEN`], gives a constant 0.
pub fn claim_circuit<B: Circuit>(b: &mut B, value: &[B::Bit], claim: &Claim) -> Vec<B::Bit> {
    let bytes: Vec<&[B::Bit]> = value.chunks(8).collect();
    let whole = value.len().is_multiple_of(8);
    let mut out = vec![b.constant(whole)];
    let number_claim = matches!(claim, Claim::Number(..) | Claim::NumberIn(..));
    if number_claim && (bytes.is_empty() || bytes.len() > MAX_NUMBER_LEN || !whole) {
        out.push(b.constant(false));
        return out;
    }
    match claim {
        Claim::Number(op, c) => {
            let n = number(b, &bytes);
            out.extend(n.valid.iter().copied());
            let (lt, eq) = compare_number(b, &n, c);
            out.push(apply(b, *op, lt, eq));
        }
        Claim::NumberIn(lo, hi) => {
            let n = number(b, &bytes);
            out.extend(n.valid.iter().copied());
            let (lt, _) = compare_number(b, &n, lo);
            let (lt_hi, eq_hi) = compare_number(b, &n, hi);
            out.push(b.not(lt));
            out.push(or(b, lt_hi, eq_hi));
        }
        Claim::Text(op, t) => {
            out.extend(bytes.iter().map(|x| content(b, x)));
            let same_length = t.len() == bytes.len();
            match op {
                Op::Eq | Op::Ne if !same_length => out.push(b.constant(*op == Op::Ne)),
                _ if !same_length => out.push(b.constant(false)),
                _ => {
                    let (lt, eq) = compare_msb_first(b, &msb_first(&bytes), &msb_first_const(t));
                    out.push(apply(b, *op, lt, eq));
                }
            }
        }
        Claim::TextIn(set) => {
            out.extend(bytes.iter().map(|x| content(b, x)));
            let mut any = b.constant(false);
            for t in set.iter().filter(|t| t.len() == bytes.len()) {
                let (_, eq) = compare_msb_first(b, &msb_first(&bytes), &msb_first_const(t));
                any = or(b, any, eq);
            }
            out.push(any);
        }
    }
    out
}

fn apply<B: Circuit>(b: &mut B, op: Op, lt: B::Bit, eq: B::Bit) -> B::Bit {
    match op {
        Op::Lt => lt,
        Op::Le => or(b, lt, eq),
        Op::Gt => {
            let le = or(b, lt, eq);
            b.not(le)
        }
        Op::Ge => b.not(lt),
        Op::Eq => eq,
        Op::Ne => b.not(eq),
    }
}

fn or<B: Circuit>(b: &mut B, x: B::Bit, y: B::Bit) -> B::Bit {
    let (nx, ny) = (b.not(x), b.not(y));
    let n = b.and(nx, ny);
    b.not(n)
}

/// 1 iff the byte is `c`.
fn byte_is<B: Circuit>(b: &mut B, x: &[B::Bit], c: u8) -> B::Bit {
    let bits: Vec<B::Bit> = (0..8).map(|i| if (c >> i) & 1 == 1 { x[i] } else { b.not(x[i]) }).collect();
    all(b, &bits)
}

fn all<B: Circuit>(b: &mut B, bits: &[B::Bit]) -> B::Bit {
    let first = bits.first().copied().unwrap_or_else(|| b.constant(true));
    bits.iter().skip(1).fold(first, |acc, &x| b.and(acc, x))
}

/// 1 iff the byte is an ASCII digit: 0011 above, at most 9 below (not 8 + 2 or 8 + 4).
fn is_digit<B: Circuit>(b: &mut B, x: &[B::Bit]) -> B::Bit {
    let two_or_four = or(b, x[1], x[2]);
    let over_nine = b.and(x[3], two_or_four);
    let terms = [b.not(x[7]), b.not(x[6]), x[5], x[4], b.not(over_nine)];
    all(b, &terms)
}

/// 1 iff the byte may be content of a hidden string ([`is_content`]).
pub(crate) fn content<B: Circuit>(b: &mut B, x: &[B::Bit]) -> B::Bit {
    let high = or(b, x[5], x[6]);
    let not_control = or(b, high, x[7]);
    let quote = byte_is(b, x, b'"');
    let backslash = byte_is(b, x, b'\\');
    let special = or(b, quote, backslash);
    let not_special = b.not(special);
    b.and(not_control, not_special)
}

/// A number read from its bytes: the grammar's conditions (each must be 1), its sign (1 only
/// for a nonzero magnitude) and its magnitude scaled to [`MAX_NUMBER_LEN`] fraction digits,
/// least significant bit first.
struct Number<B: Circuit> {
    valid: Vec<B::Bit>,
    negative: B::Bit,
    magnitude: Vec<B::Bit>,
}

/// Fraction digits every magnitude is scaled to: more than any number of the grammar has.
const SCALE: u32 = MAX_NUMBER_LEN as u32;

fn number<B: Circuit>(b: &mut B, x: &[&[B::Bit]]) -> Number<B> {
    let n = x.len();
    let digit: Vec<B::Bit> = x.iter().map(|c| is_digit(b, c)).collect();
    let point: Vec<B::Bit> = x.iter().map(|c| byte_is(b, c, b'.')).collect();
    let minus = byte_is(b, x[0], b'-');
    let zero: Vec<B::Bit> = x.iter().take(2).map(|c| byte_is(b, c, b'0')).collect();
    let mut valid = Vec::new();
    // every byte a digit or the point; the first a digit or the sign
    valid.push(or(b, digit[0], minus));
    for i in 1..n {
        valid.push(or(b, digit[i], point[i]));
    }
    // a point follows a digit and precedes one (so neither first nor last), and comes once
    let mut seen = vec![point[0]];
    for i in 1..n {
        let after_nondigit = {
            let nd = b.not(digit[i - 1]);
            b.and(point[i], nd)
        };
        valid.push(b.not(after_nondigit));
        let twice = b.and(seen[i - 1], point[i]);
        valid.push(b.not(twice));
        let s = or(b, seen[i - 1], point[i]);
        seen.push(s);
    }
    valid.push(b.not(point[n - 1]));
    // the sign is followed by a digit
    match n {
        1 => valid.push(b.not(minus)),
        _ => {
            let nd = b.not(digit[1]);
            let bare = b.and(minus, nd);
            valid.push(b.not(bare));
        }
    }
    // no leading zero: "0" then a digit, or "-0" then a digit
    if n >= 2 {
        let unsigned = b.not(minus);
        let z = b.and(zero[0], digit[1]);
        let lead = b.and(unsigned, z);
        valid.push(b.not(lead));
    }
    if n >= 3 {
        let z = b.and(zero[1], digit[2]);
        let lead = b.and(minus, z);
        valid.push(b.not(lead));
    }

    // Horner over the digits (the sign and the point leave the value as it is), each step's
    // width what its value may need
    let mut v: Vec<B::Bit> = Vec::new();
    for i in 0..n {
        let width = bits_for_digits(i as u32 + 1);
        let ten_v = times_ten(b, &v, width);
        let d: Vec<B::Bit> = x[i][..4].to_vec();
        let next = add(b, &ten_v, &d, width);
        v = mux(b, digit[i], &next, &v, width);
    }
    // then ×10 for each fraction digit it lacks of SCALE: "at least k fraction digits" is "a
    // point at n−1−k or before"
    let mut digits = n as u32;
    for j in 0..SCALE as usize {
        digits += 1;
        let width = bits_for_digits(digits);
        let ten_v = times_ten(b, &v, width);
        let k = j + 1;
        v = match (n - 1).checked_sub(k) {
            Some(at) => {
                let has_k = seen[at];
                mux(b, has_k, &pad(b, &v, width), &ten_v, width)
            }
            None => ten_v,
        };
    }
    let magnitude = pad(b, &v, WIDTH);
    let nonzero = {
        let bits: Vec<B::Bit> = magnitude.iter().map(|&m| b.not(m)).collect();
        let z = all(b, &bits);
        b.not(z)
    };
    let negative = b.and(minus, nonzero);
    Number { valid, negative, magnitude }
}

/// Bits enough for any integer of `digits` decimal digits.
fn bits_for_digits(digits: u32) -> usize {
    let max = 10f64.powi(digits as i32);
    (max.log2().ceil() as usize + 1).min(WIDTH)
}

fn pad<B: Circuit>(b: &B, x: &[B::Bit], width: usize) -> Vec<B::Bit> {
    (0..width).map(|i| x.get(i).copied().unwrap_or_else(|| b.constant(false))).collect()
}

/// x + y mod 2^width, one AND a bit (none where both are public).
fn add<B: Circuit>(b: &mut B, x: &[B::Bit], y: &[B::Bit], width: usize) -> Vec<B::Bit> {
    let (x, y) = (pad(b, x, width), pad(b, y, width));
    let mut out = Vec::with_capacity(width);
    let mut c = b.constant(false);
    for i in 0..width {
        let xc = b.xor(x[i], c);
        out.push(b.xor(xc, y[i]));
        if i + 1 < width {
            let yc = b.xor(y[i], c);
            let t = b.and(xc, yc);
            c = b.xor(c, t);
        }
    }
    out
}

/// 10·x = 8x + 2x mod 2^width.
fn times_ten<B: Circuit>(b: &mut B, x: &[B::Bit], width: usize) -> Vec<B::Bit> {
    let zero = b.constant(false);
    let shifted = |s: usize| -> Vec<B::Bit> { std::iter::repeat_n(zero, s).chain(x.iter().copied()).collect() };
    add(b, &shifted(3), &shifted(1), width)
}

/// `s ? x : y`, bit by bit.
fn mux<B: Circuit>(b: &mut B, s: B::Bit, x: &[B::Bit], y: &[B::Bit], width: usize) -> Vec<B::Bit> {
    let (x, y) = (pad(b, x, width), pad(b, y, width));
    x.iter()
        .zip(&y)
        .map(|(&p, &q)| {
            let d = b.xor(p, q);
            let t = b.and(s, d);
            b.xor(q, t)
        })
        .collect()
}

/// (value < c, value == c) for a number and a public decimal, with their signs.
fn compare_number<B: Circuit>(b: &mut B, n: &Number<B>, c: &Decimal) -> (B::Bit, B::Bit) {
    let k = c.scaled(SCALE);
    let k_bits: Vec<bool> = (0..WIDTH).rev().map(|i| (k >> i) & 1 == 1).collect();
    let m: Vec<B::Bit> = n.magnitude.iter().rev().copied().collect();
    let (m_lt, m_eq) = compare_msb_first(b, &m, &k_bits);
    let positive = b.not(n.negative);
    if c.is_negative() {
        // value < c: negative and a larger magnitude; value == c: negative and equal
        let m_le = or(b, m_lt, m_eq);
        let m_gt = b.not(m_le);
        (b.and(n.negative, m_gt), b.and(n.negative, m_eq))
    } else {
        // value < c: negative, or not and a smaller magnitude
        (or(b, n.negative, m_lt), b.and(positive, m_eq))
    }
}

/// (x < k, x == k) for bits most significant first and a public constant of their length.
fn compare_msb_first<B: Circuit>(b: &mut B, x: &[B::Bit], k: &[bool]) -> (B::Bit, B::Bit) {
    let mut lt = b.constant(false);
    let mut eq = b.constant(true);
    for (&xi, &ki) in x.iter().zip(k) {
        if ki {
            // below here while equal above: x has 0 where k has 1
            let nx = b.not(xi);
            let t = b.and(eq, nx);
            lt = or(b, lt, t);
            eq = b.and(eq, xi);
        } else {
            let nx = b.not(xi);
            eq = b.and(eq, nx);
        }
    }
    if x.len() != k.len() {
        eq = b.constant(false);
    }
    (lt, eq)
}

fn msb_first<T: Copy>(bytes: &[&[T]]) -> Vec<T> {
    bytes.iter().flat_map(|x| x.iter().rev().copied()).collect()
}

fn msb_first_const(t: &[u8]) -> Vec<bool> {
    t.iter().flat_map(|c| (0..8).rev().map(move |i| (c >> i) & 1 == 1)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zk::bytes::commit_bytes;
    use crate::zk::PlainBackend;

    fn dec(s: &str) -> Decimal {
        Decimal::parse(s.as_bytes()).unwrap()
    }

    /// The circuit's verdict on `value`: every bit it gives is 1; and its AND gates.
    fn circuit_holds(value: &[u8], claim: &Claim) -> (bool, usize) {
        let mut b = PlainBackend::new();
        let x = commit_bytes(&mut b, Some(value), value.len());
        let bits = claim_circuit(&mut b, &x, claim);
        (bits.iter().all(|x| x.v), b.stats().and_gates)
    }

    #[test]
    fn numbers_of_the_grammar_alone_are_read() {
        for ok in ["0", "-0", "7", "1234.56", "0.5", "-0.001", "10", "1234567890123456789", "-123456789012345678"] {
            assert!(Decimal::parse(ok.as_bytes()).is_ok(), "{ok}");
        }
        let long = "12345678901234567890";
        for bad in [
            "", "+1", "1e3", "1E3", "1.2.3", "01", "-01", "00", ".5", "5.", "-", "-.5", "1,000", " 1", "1 ", "--1",
            "0x10", "١", long, "\"1\"",
        ] {
            assert!(matches!(Decimal::parse(bad.as_bytes()), Err(ClaimError::NotANumber(_))), "{bad}");
        }
    }

    #[test]
    fn decimals_print_as_written() {
        for s in ["0", "-0", "0.005", "-0.50", "1234.56", "1234567890123456789", "10.0"] {
            assert_eq!(dec(s).to_string(), s);
        }
    }

    #[test]
    fn decimals_compare_as_numbers() {
        use Ordering::*;
        let cases = [
            ("1234.56", "1000", Greater),
            ("1234.56", "1234.56", Equal),
            ("1234.560", "1234.56", Equal),
            ("0.10", "0.1", Equal),
            ("-0", "0", Equal),
            ("-0.0", "0", Equal),
            ("-0.5", "0", Less),
            ("-2", "-10", Greater),
            ("-10.5", "-10.4", Less),
            ("99999999999999999.9", "100000000000000000", Less),
            ("0.00000000000000001", "0", Greater),
        ];
        for (a, b, o) in cases {
            assert_eq!(dec(a).cmp(&dec(b)), o, "{a} vs {b}");
            assert_eq!(dec(b).cmp(&dec(a)), o.reverse(), "{b} vs {a}");
        }
    }

    /// The circuit agrees with the native reading for every operator, on values of every form
    /// the grammar takes and many it refuses: a value not of the grammar never satisfies it.
    #[test]
    fn number_claims_in_the_circuit_agree_with_the_native_reading() {
        let values = [
            "1234.56",
            "1000",
            "999.99",
            "1000.00",
            "0",
            "-0",
            "-0.5",
            "0.5",
            "-1234.56",
            "7",
            "10",
            "1e3",
            "+5",
            "01",
            "1.2.3",
            ".5",
            "5.",
            "-",
            "--1",
            "-.5",
            "1234567890123456789",
            "0.0000000000000000001",
            "12a4",
            "1 2",
            "\"12\"",
            "1\\u0",
            "-0.0",
            "00.5",
            "-00",
        ];
        let constants = ["1000", "-0.5", "0", "1234.56", "0.001", "-100000000000000000", "1234567890123456789"];
        for v in values {
            for c in constants {
                for op in Op::ALL {
                    let claim = Claim::Number(op, dec(c));
                    let native = claim.holds(v.as_bytes()) == Ok(true);
                    assert_eq!(circuit_holds(v.as_bytes(), &claim).0, native, "{v} {} {c}", op.symbol());
                }
            }
            let range = Claim::NumberIn(dec("999.99"), dec("1234.56"));
            assert_eq!(circuit_holds(v.as_bytes(), &range).0, range.holds(v.as_bytes()) == Ok(true), "{v} in range");
        }
    }

    /// Random strings over the grammar's alphabet (most of them not numbers), against random
    /// constants: the circuit and the native reading agree on all.
    #[test]
    fn random_number_claims_agree() {
        use rand::Rng;
        let mut rng = rand::rng();
        let alphabet = b"0123456789.-0";
        for _ in 0..3000 {
            let len = rng.random_range(1..=8);
            let v: Vec<u8> = (0..len).map(|_| alphabet[rng.random_range(0..alphabet.len())]).collect();
            let c = format!(
                "{}{}.{}",
                if rng.random() { "-" } else { "" },
                rng.random_range(0..2000),
                rng.random_range(0..100)
            );
            let op = Op::ALL[rng.random_range(0..6)];
            let claim = Claim::Number(op, dec(&c));
            let native = claim.holds(&v) == Ok(true);
            assert_eq!(circuit_holds(&v, &claim).0, native, "{} {} {c}", String::from_utf8_lossy(&v), op.symbol());
        }
    }

    #[test]
    fn text_claims_in_the_circuit_agree_with_the_native_reading() {
        let values: [&[u8]; 9] =
            [b"2026-03-01", b"2025-12-31", b"2026-03-02", b"DE", b"FR", b"de", b"a\"b", b"a\\b", b"tab\there"];
        let constants: [&[u8]; 4] = [b"2026-03-01", b"DE", b"2026-13-01", b""];
        for v in values {
            for c in constants {
                for op in Op::ALL {
                    let claim = Claim::Text(op, c.to_vec());
                    let native = claim.holds(v) == Ok(true);
                    assert_eq!(circuit_holds(v, &claim).0, native, "{:?} {} {:?}", v, op.symbol(), c);
                }
            }
            let set = Claim::TextIn(vec![b"DE".to_vec(), b"FR".to_vec(), b"2026-03-01".to_vec()]);
            assert_eq!(circuit_holds(v, &set).0, set.holds(v) == Ok(true), "{v:?} in set");
        }
        // a quote, a backslash or a control byte is no string content, whatever is claimed
        for bad in [&b"a\"b"[..], b"a\\b", b"a\x1fb", b"\n"] {
            assert_eq!(Claim::Text(Op::Ne, b"zzz".to_vec()).holds(bad), Err(ClaimError::NotStringContent));
            assert!(!circuit_holds(bad, &Claim::Text(Op::Ne, b"zzz".to_vec())).0);
        }
        assert!(circuit_holds("€ ok".as_bytes(), &Claim::Text(Op::Ne, b"x".to_vec())).0, "UTF-8 is content");
    }

    #[test]
    fn claims_with_constants_of_the_wrong_form_are_refused() {
        assert!(matches!(Claim::NumberIn(dec("2"), dec("1")).checked(), Err(ClaimError::EmptyRange(..))));
        assert_eq!(Claim::Text(Op::Eq, b"a\"".to_vec()).checked(), Err(ClaimError::NotStringContent));
        assert_eq!(Claim::TextIn(vec![]).checked(), Err(ClaimError::SetSize(0)));
        assert_eq!(Claim::Text(Op::Eq, vec![b'a'; 257]).checked(), Err(ClaimError::TextTooLong(257)));
        assert_eq!(Claim::Text(Op::Lt, b"2026".to_vec()).holds(b"20260"), Err(ClaimError::TextLength("<".into(), 5)));
    }

    /// What a claim costs in AND gates (committed bits in the ZK engine), as docs/benchmarks.md
    /// gives it.
    #[test]
    fn the_cost_of_a_claim() {
        let (_, amount) = circuit_holds(b"1234.56", &Claim::Number(Op::Ge, dec("1000")));
        let (_, longest) = circuit_holds(b"1234567890123456789", &Claim::Number(Op::Ge, dec("1000")));
        let (_, date) = circuit_holds(b"2026-03-01", &Claim::Text(Op::Ge, b"2026-01-01".to_vec()));
        let mut b = PlainBackend::new();
        let x = commit_bytes(&mut b, Some(b"x"), 1);
        content(&mut b, &x);
        let content_byte = b.stats().and_gates;
        println!("AND gates: 7-byte number {amount}, 19-byte number {longest}, 10-byte date {date}, a hidden string byte's content check {content_byte}");
        assert!(amount < 12_000 && longest < 20_000 && date < 1_000, "{amount} {longest} {date}");
        assert!(content_byte <= 20, "{content_byte}");
    }

    /// In the engine: a true claim passes; a false one fails the verifier's check whatever the
    /// prover does with its own bits.
    #[test]
    fn a_false_claim_fails_the_proof() {
        use crate::zk::tests::zk_run;
        use crate::zk::{Backend, ProofError};
        let run = |value: &'static [u8], claim: Claim| {
            let c2 = claim.clone();
            let prove = move |b: &mut crate::zk::ProverBackend| {
                let x = commit_bytes(b, Some(value), value.len());
                let bits = claim_circuit(b, &x, &claim);
                b.assert_constant(&bits, &vec![true; bits.len()]);
            };
            let verify = move |b: &mut crate::zk::VerifierBackend| {
                let x = commit_bytes(b, None, value.len());
                let bits = claim_circuit(b, &x, &c2);
                b.assert_constant(&bits, &vec![true; bits.len()]);
            };
            zk_run(Default::default(), prove, verify).1
        };
        assert!(run(b"1234.56", Claim::Number(Op::Ge, dec("1000"))).is_ok());
        assert!(matches!(run(b"1234.56", Claim::Number(Op::Ge, dec("2000"))), Err(ProofError::ConstantMismatch)));
        assert!(matches!(run(b"1e9", Claim::Number(Op::Ge, dec("2000"))), Err(ProofError::ConstantMismatch)));
        assert!(run(b"DE", Claim::TextIn(vec![b"FR".to_vec(), b"DE".to_vec()])).is_ok());
        assert!(matches!(
            run(b"US", Claim::TextIn(vec![b"FR".to_vec(), b"DE".to_vec()])),
            Err(ProofError::ConstantMismatch)
        ));
    }
}
