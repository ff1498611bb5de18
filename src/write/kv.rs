//! A key/value pair to write, and its writer: `kv = key:string value_type value(value_type)`.

use super::{Encoder, OwnedValue, WriteError};

/// A key/value pair to write.
#[derive(Clone, Debug, PartialEq)]
pub struct OwnedKv {
    /// The key's bytes.
    pub key: Vec<u8>,
    /// The value.
    pub value: OwnedValue,
}

impl Encoder {
    /// `kv = key:string value_type value(value_type)`
    pub(super) fn kv(&mut self, key: &[u8], value: &OwnedValue) -> Result<(), WriteError> {
        self.string(key)?;
        self.put(value.value_type().tag());
        self.value(value, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::kv;
    use crate::grammar::test_bytes::all_ctx;
    use crate::write::tests::encoder;
    use crate::Value;

    #[test]
    fn kv_round_trips() {
        for ctx in all_ctx() {
            let mut enc = encoder(ctx);
            enc.kv(b"general.alignment", &OwnedValue::U32(64)).unwrap();
            let (rest, pair) = kv::kv(ctx)(&enc.out).unwrap();
            assert!(rest.is_empty());
            assert_eq!(pair.key.as_bytes(), b"general.alignment");
            assert_eq!(pair.value, Value::U32(64));
            assert_eq!(pair.raw, &enc.out[..]);
        }
    }
}
