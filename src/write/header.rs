//! The header's writer: `header = magic version tensor_count kv_count`.

use super::{Encoder, WriteError};
use crate::grammar::header::MAGIC;

impl Encoder {
    /// `header = magic version tensor_count kv_count`
    pub(super) fn header(&mut self, tensor_count: u64, kv_count: u64) -> Result<(), WriteError> {
        self.out.extend_from_slice(&MAGIC);
        self.put(self.ctx.version.number());
        self.count(tensor_count, "tensor count")?;
        self.count(kv_count, "kv count")
    }
}

#[cfg(test)]
mod tests {
    use crate::grammar::header;
    use crate::grammar::test_bytes::all_ctx;
    use crate::write::tests::encoder;

    #[test]
    fn header_round_trips() {
        for ctx in all_ctx() {
            let mut enc = encoder(ctx);
            enc.header(3, 70_000).unwrap();
            let (rest, h) = header::header(Some(ctx.endian))(&enc.out).unwrap();
            assert!(rest.is_empty());
            assert_eq!((h.ctx, h.tensor_count, h.kv_count), (ctx, 3, 70_000));
        }
    }
}
