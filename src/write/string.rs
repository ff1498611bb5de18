//! The string's writer: `string = len:count bytes[len]`.

use super::{Encoder, WriteError};

impl Encoder {
    /// `string = len:count bytes[len]`
    pub(super) fn string(&mut self, bytes: &[u8]) -> Result<(), WriteError> {
        self.count(bytes.len() as u64, "string length")?;
        self.out.extend_from_slice(bytes);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::grammar::string;
    use crate::grammar::test_bytes::all_ctx;
    use crate::write::tests::encoder;

    #[test]
    fn string_round_trips() {
        for ctx in all_ctx() {
            let mut enc = encoder(ctx);
            enc.string(b"h\xc3\xa9\xff").unwrap();
            let (rest, s) = string::string(ctx)(&enc.out).unwrap();
            assert_eq!((rest, s.as_bytes()), (&b""[..], &b"h\xc3\xa9\xff"[..]));
        }
    }
}
