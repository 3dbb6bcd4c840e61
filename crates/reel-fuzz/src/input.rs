//! How a target reads its input: a choice byte taken off the front, and the rest cut
//! into chunks the way a pipe or a socket delivers a stream.

/// Splits an input into a choice byte (0 for an empty input) and the rest.
pub fn choice(data: &[u8]) -> (u8, &[u8]) {
    match data.split_first() {
        Some((&c, rest)) => (c, rest),
        None => (0, data),
    }
}

/// `data` cut into chunks whose lengths follow a pattern seeded by `seed` (1 to 16
/// bytes, or the whole input at once for seed 0): how a stream arrives from a pipe or a
/// socket, split anywhere.
pub fn chunks(data: &[u8], seed: u8) -> Vec<&[u8]> {
    if seed == 0 {
        return vec![data];
    }
    let mut state = u32::from(seed).wrapping_mul(0x9E37_79B9) | 1;
    let mut out = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let n = (state % 16 + 1) as usize;
        let (chunk, tail) = rest.split_at(n.min(rest.len()));
        out.push(chunk);
        rest = tail;
    }
    out
}

/// A reader handing out `data` in [`chunks`] (a `Read` that returns short reads).
pub struct ChunkedReader<'a> {
    chunks: std::vec::IntoIter<&'a [u8]>,
    current: &'a [u8],
}

impl<'a> ChunkedReader<'a> {
    /// The reader over `data`, split by `seed`.
    pub fn new(data: &'a [u8], seed: u8) -> Self {
        ChunkedReader {
            chunks: chunks(data, seed).into_iter(),
            current: &[],
        }
    }
}

impl std::io::Read for ChunkedReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.current.is_empty() {
            match self.chunks.next() {
                Some(c) => self.current = c,
                None => return Ok(0),
            }
        }
        let n = buf.len().min(self.current.len());
        buf[..n].copy_from_slice(&self.current[..n]);
        self.current = &self.current[n..];
        Ok(n)
    }
}
