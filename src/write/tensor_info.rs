//! A tensor descriptor to write, and its writer: `tensor_info = name:string n_dims:u32 dims:count[n_dims] ggml_type:u32 offset:u64`.

use std::borrow::Cow;

use super::{Encoder, WriteError};
use crate::ggml_type::GgmlType;

/// A tensor descriptor to write, with the data it brings (if any).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorSpec<'a> {
    /// The name's bytes.
    pub name: Vec<u8>,
    /// Dimensions, ne0 first.
    pub dims: Vec<u64>,
    /// The ggml type id written.
    pub ggml_type: GgmlType,
    /// Offset relative to the data start; `None`: after the previous tensor's data, aligned.
    pub offset: Option<u64>,
    /// Bytes to place at the offset (empty for tensors whose data is in the kept region of
    /// a source file, or when only the descriptor is wanted).
    pub data: Cow<'a, [u8]>,
}

impl Encoder {
    /// `tensor_info = name:string n_dims:u32 dims:count[n_dims] ggml_type:u32 offset:u64`
    pub(super) fn tensor_info(
        &mut self,
        name: &[u8],
        dims: &[u64],
        ggml_type: GgmlType,
        offset: u64,
    ) -> Result<(), WriteError> {
        self.string(name)?;
        let n_dims = u32::try_from(dims.len()).map_err(|_| WriteError::TooLarge {
            what: "n_dims",
            value: dims.len() as u64,
            width: 4,
            version: self.ctx.version.number(),
        })?;
        self.put(n_dims);
        for &dim in dims {
            self.count(dim, "dim")?;
        }
        self.put(ggml_type.0);
        self.put(offset);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::ggml_type::GgmlType;
    use crate::grammar::tensor_info;
    use crate::grammar::test_bytes::all_ctx;
    use crate::write::tests::encoder;

    #[test]
    fn tensor_info_round_trips() {
        for ctx in all_ctx() {
            let mut enc = encoder(ctx);
            enc.tensor_info(
                b"blk.0.attn_q.weight",
                &[4096, 1, 7],
                GgmlType::Q4_K,
                1 << 33,
            )
            .unwrap();
            let (rest, info) = tensor_info::tensor_info(ctx)(&enc.out).unwrap();
            assert!(rest.is_empty());
            assert_eq!(info.name.as_bytes(), b"blk.0.attn_q.weight");
            assert_eq!(
                (info.dims.as_slice(), info.ggml_type),
                (&[4096, 1, 7][..], GgmlType::Q4_K)
            );
            assert_eq!((info.offset, info.raw), (1 << 33, &enc.out[..]));
        }
    }
}
