//! Compressed response bodies decoded for the record (gzip, deflate), a few KiB at a
//! time and capped: the client gets the bytes as sent, the trace their text.

use std::io::Write as _;

/// Whether reel can decode `encoding` for the record.
pub(super) fn decodable(encoding: &str) -> bool {
    decoder(encoding).is_some()
}

/// The most decoded bytes of one compressed response recorded: past it, decoding
/// stops and a `reel.gap` event counts the compressed bytes not decoded (a gzip bomb
/// costs the recorder this much, not its expansion; the client gets every byte as sent).
pub(super) const DECODED_MAX: usize = 64 << 20;

/// How much compressed input is decoded at a time.
pub(super) const DECODE_STEP: usize = 4 << 10;

/// A decoder for a `content-encoding` reel can read for the record.
pub(super) fn decoder(encoding: &str) -> Option<Decoder> {
    let out = Capped {
        buf: Vec::new(),
        room: DECODED_MAX,
    };
    match encoding {
        "gzip" | "x-gzip" => Some(Decoder::Gzip(Box::new(flate2::write::GzDecoder::new(out)))),
        "deflate" => Some(Decoder::Deflate(Box::new(flate2::write::ZlibDecoder::new(
            out,
        )))),
        _ => None,
    }
}

/// The decoder's output: takes at most `room` bytes more, then refuses, which stops
/// the decoder within the chunk that reached the cap.
pub(super) struct Capped {
    buf: Vec<u8>,
    room: usize,
}

impl std::io::Write for Capped {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if self.room == 0 {
            return Err(std::io::Error::other("the decoded-bytes cap is reached"));
        }
        let n = bytes.len().min(self.room);
        self.buf.extend_from_slice(&bytes[..n]);
        self.room -= n;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A streaming decoder of one response body, its output capped at [`DECODED_MAX`].
pub(super) enum Decoder {
    Gzip(Box<flate2::write::GzDecoder<Capped>>),
    Deflate(Box<flate2::write::ZlibDecoder<Capped>>),
}

impl Decoder {
    /// Decodes a chunk: what it completes (up to the cap); a corrupt stream yields
    /// nothing more (the bytes still went on).
    pub(super) fn decode(&mut self, chunk: &[u8]) -> Vec<u8> {
        let written = match self {
            Decoder::Gzip(d) => d.write_all(chunk).and_then(|()| d.flush()),
            Decoder::Deflate(d) => d.write_all(chunk).and_then(|()| d.flush()),
        };
        let _ = written;
        std::mem::take(&mut self.out().buf)
    }

    /// Whether the cap stopped it.
    pub(super) fn capped(&self) -> bool {
        let out = match self {
            Decoder::Gzip(d) => d.get_ref(),
            Decoder::Deflate(d) => d.get_ref(),
        };
        out.room == 0
    }

    fn out(&mut self) -> &mut Capped {
        match self {
            Decoder::Gzip(d) => d.get_mut(),
            Decoder::Deflate(d) => d.get_mut(),
        }
    }

    /// What the decoder still holds at the end of the body.
    pub(super) fn finish(&mut self) -> Vec<u8> {
        if self.capped() {
            return Vec::new();
        }
        let _ = match self {
            Decoder::Gzip(d) => d.try_finish(),
            Decoder::Deflate(d) => d.try_finish(),
        };
        std::mem::take(&mut self.out().buf)
    }
}
