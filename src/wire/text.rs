//! The text forms a verdict and a presentation share: the server's bytes escaped so they cannot
//! pass for anything else, behind a prefix on every line, and times as RFC 3339.

/// Appends `text` escaped so that only `\n` and `\r\n` stay line breaks (as `\n`): control characters, invisible
/// or direction-changing formatting characters, `\\` and the redaction mark `█` itself as
/// escapes (`\r`, `\x1b`, `\u{202e}`, `\u{2588}`), so a revealed byte can pass neither for a
/// hidden one nor for anything the text around it says.
pub(crate) fn push_escaped(out: &mut String, text: &str) {
    push_escaped_with(out, text, true)
}

/// Appends `text` on one line: as [`push_escaped`], with line breaks shown as `\n`.
pub(crate) fn push_escaped_line(out: &mut String, text: &str) {
    push_escaped_with(out, text, false)
}

/// The text of a verdict or presentation around the server's bytes starts in column 0; every
/// line of the bytes themselves starts with this, so no revealed byte can print a line that
/// reads as the verdict's own (`received … fast path` in a revealed POST body).
pub(crate) const CONTENT_PREFIX: &str = "  | ";

/// `text` (already escaped) as content lines, each after [`CONTENT_PREFIX`].
pub(crate) fn content_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + CONTENT_PREFIX.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(CONTENT_PREFIX);
        out.push_str(line);
    }
    out
}

/// Unix seconds as an RFC 3339 UTC time (`2026-12-01T07:53:54Z`); the number itself where it is
/// beyond what a calendar date can show.
pub(crate) fn rfc3339(unix: u64) -> String {
    i64::try_from(unix)
        .ok()
        .and_then(|t| time::OffsetDateTime::from_unix_timestamp(t).ok())
        .and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok())
        .unwrap_or_else(|| format!("{unix} (unix)"))
}

fn push_escaped_with(out: &mut String, text: &str, line_breaks: bool) {
    use std::fmt::Write;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' if line_breaks => out.push('\n'),
            '\n' => out.push_str("\\n"),
            '\r' if line_breaks && chars.peek() == Some(&'\n') => {}
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 || (0x7f..0xa0).contains(&(c as u32)) => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            // the redaction mark, and invisible or direction-changing formatting characters
            '█' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}' => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_time_is_rfc3339_utc() {
        assert_eq!(rfc3339(1_796_101_714), "2026-12-01T05:08:34Z");
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(u64::MAX), format!("{} (unix)", u64::MAX));
    }
}
