//! Records put into a server's byte stream: what a hostile prover in MPC mode forwards to the
//! verifier as if the server had sent it. Tests and `tlsproof bench load` use it to show that
//! the verifier's copy of the client refuses such a stream within its limits.

/// Where [`RecordInjector`] puts its records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum InjectAt {
    /// Before the server's first record: right after the client random.
    Start,
    /// Before the server's ChangeCipherSpec: after the client Finished (the tests' place;
    /// `bench load` floods the other two).
    #[cfg_attr(not(test), allow(dead_code))]
    BeforeCcs,
    /// After the server's Finished: where its application data goes.
    AfterFinished,
}

/// Passes a server's stream on with `extra` bytes (whole records) put in at one place. Sans-IO:
/// [`push`](Self::push) what the server sent, send on what it returns.
pub(crate) struct RecordInjector {
    at: InjectAt,
    extra: Option<Vec<u8>>,
    /// Server bytes not yet passed on, while the place is still ahead.
    seen: Vec<u8>,
    /// The content type of the last whole server record passed on.
    previous: Option<u8>,
}

impl RecordInjector {
    pub(crate) fn new(at: InjectAt, extra: Vec<u8>) -> Self {
        RecordInjector { at, extra: Some(extra), seen: Vec::new(), previous: None }
    }

    /// Takes the server's next bytes; returns what to pass on. Until the place is reached,
    /// bytes are held back to whole records.
    pub(crate) fn push(&mut self, server: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        if self.extra.is_none() {
            out.extend_from_slice(server);
            return out;
        }
        self.seen.extend_from_slice(server);
        while let Some(h) = self.seen.get(..5) {
            let end = 5 + u16::from_be_bytes([h[3], h[4]]) as usize;
            if self.seen.len() < end || self.extra.is_none() {
                break;
            }
            let typ = h[0];
            let before = match self.at {
                InjectAt::Start => true,
                InjectAt::BeforeCcs => typ == 20,
                InjectAt::AfterFinished => false,
            };
            if before {
                out.extend(self.extra.take().into_iter().flatten());
            }
            out.extend(self.seen.drain(..end));
            if self.at == InjectAt::AfterFinished && self.previous == Some(20) {
                out.extend(self.extra.take().into_iter().flatten());
            }
            self.previous = Some(typ);
        }
        if self.extra.is_none() {
            out.append(&mut self.seen);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(typ: u8, body: &[u8]) -> Vec<u8> {
        [&[typ, 3, 3][..], &(body.len() as u16).to_be_bytes(), body].concat()
    }

    /// Each place, with the server's stream cut at every byte: the records land where named,
    /// and nothing of the server's is lost or reordered.
    #[test]
    fn records_land_where_named_however_the_stream_is_cut() {
        let (hello, ccs, fin, app) =
            (record(22, b"hello"), record(20, &[1]), record(22, b"finished"), record(23, b"data"));
        let stream = [hello.clone(), ccs.clone(), fin.clone(), app.clone()].concat();
        let x = record(21, &[1, 112]);
        let cases = [
            (InjectAt::Start, [x.clone(), hello.clone(), ccs.clone(), fin.clone(), app.clone()].concat()),
            (InjectAt::BeforeCcs, [hello.clone(), x.clone(), ccs.clone(), fin.clone(), app.clone()].concat()),
            (InjectAt::AfterFinished, [hello, ccs, fin, x.clone(), app].concat()),
        ];
        for (at, want) in cases {
            for cut in 0..=stream.len() {
                let mut inj = RecordInjector::new(at, x.clone());
                let got = [inj.push(&stream[..cut]), inj.push(&stream[cut..])].concat();
                assert_eq!(got, want, "{at:?}, cut at {cut}");
            }
        }
    }
}
