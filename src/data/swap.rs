//! Byte-order conversion of tensor data: every multi-byte field of every block (from
//! [`super::layout`]) reversed, for the types gguf-py 0.19.0's `gguf-convert-endian`
//! converts; it refuses the others, and so does this module.
//!
//! ```
//! use gguf_grammar::data::swap::swap_blocks;
//! use gguf_grammar::GgmlType;
//!
//! // q8_0: the f16 scale is swapped, the 32 one-byte quants are not.
//! let mut block: Vec<u8> = (0..34).collect();
//! swap_blocks(GgmlType::Q8_0, &mut block).unwrap();
//! assert_eq!(&block[..4], &[1, 0, 2, 3]);
//! assert!(swap_blocks(GgmlType::Q4_1, &mut [0; 20]).is_err()); // gguf-py refuses q4_1 too
//! ```

use super::layout::layout;
use super::DataError;
use crate::GgmlType;

/// Whether `gguf-convert-endian` (gguf-py 0.19.0) converts tensors of type `ty`: `f32`,
/// `f16`, `bf16`, `q4_0`, `q8_0`, `q4_K`, `q6_K`, `mxfp4`, `nvfp4`. It refuses `q1_0` (a type
/// gguf-py knows, but not in its byte-swap table) as it refuses `q4_1`; its reader does not
/// know `q2_0` (id 42) at all.
pub fn convertible(ty: GgmlType) -> bool {
    matches!(
        ty,
        GgmlType::F32
            | GgmlType::F16
            | GgmlType::BF16
            | GgmlType::Q4_0
            | GgmlType::Q8_0
            | GgmlType::Q4_K
            | GgmlType::Q6_K
            | GgmlType::MXFP4
            | GgmlType::NVFP4
    )
}

/// Reverses, in place, the bytes of every multi-byte field of every block in `bytes` (a
/// whole number of blocks of `ty`). Doing it twice restores the input.
pub fn swap_blocks(ty: GgmlType, bytes: &mut [u8]) -> Result<(), DataError> {
    let l = match layout(ty) {
        Some(l) if convertible(ty) => l,
        _ => return Err(DataError::CannotSwap(ty)),
    };
    let size = l.byte_len();
    if bytes.len() % size != 0 {
        return Err(DataError::Mismatch {
            ggml_type: ty,
            bytes: bytes.len(),
            values: bytes.len() / size * l.values,
            block: l.values,
            size,
        });
    }
    for block in bytes.chunks_exact_mut(size) {
        let mut at = 0;
        for f in l.fields {
            let w = f.scalar.width();
            if w > 1 {
                block[at..at + w * f.count]
                    .chunks_exact_mut(w)
                    .for_each(<[u8]>::reverse);
            }
            at += w * f.count;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twice_is_identity_and_fields_follow_the_layout() {
        for id in 0..GgmlType::COUNT {
            let ty = GgmlType(id);
            let Some(size) = ty.type_size() else { continue };
            let original: Vec<u8> = (0..3 * size as usize).map(|i| (i * 7) as u8).collect();
            let mut bytes = original.clone();
            if !convertible(ty) {
                assert_eq!(swap_blocks(ty, &mut bytes), Err(DataError::CannotSwap(ty)));
                assert_eq!(bytes, original);
                continue;
            }
            swap_blocks(ty, &mut bytes).unwrap();
            let changed = bytes != original;
            swap_blocks(ty, &mut bytes).unwrap();
            assert_eq!(bytes, original, "{ty}");
            // mxfp4 and nvfp4 have no multi-byte field; every other convertible type does
            assert_eq!(
                changed,
                ![GgmlType::MXFP4, GgmlType::NVFP4].contains(&ty),
                "{ty}"
            );
        }
        // q6_K: only the f16 scale at 208 (as gguf-convert-endian's byteswap_q6_k)
        let mut b: Vec<u8> = (0..210).map(|i| i as u8).collect();
        swap_blocks(GgmlType::Q6_K, &mut b).unwrap();
        assert_eq!((b[207], b[208], b[209]), (207, 209, 208));
        assert!(swap_blocks(GgmlType::Q8_0, &mut [0; 35]).is_err());
        for ty in [GgmlType::Q1_0, GgmlType::Q2_0] {
            assert_eq!(
                swap_blocks(ty, &mut [0; 18]),
                Err(DataError::CannotSwap(ty))
            );
        }
    }
}
