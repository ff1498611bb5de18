//! Whole GGUF documents from `arbitrary` bytes: every version and byte order, all 13 value
//! types, nested arrays, tensors of known, removed and unknown types with and without data,
//! explicit and sequential offsets, and `general.alignment` values including odd ones.

use std::borrow::Cow;

use arbitrary::{Result, Unstructured};
use gguf_grammar::write::{GgufBuilder, OwnedArray, OwnedValue, TensorSpec};
use gguf_grammar::{Ctx, Endian, GgmlType, ValueType, Version};

/// Arrays nest at most this deep in generated documents.
const MAX_DEPTH: u32 = 3;

/// Any value type but the array.
fn scalar(u: &mut Unstructured<'_>) -> Result<ValueType> {
    let scalars: Vec<ValueType> = ValueType::ALL
        .into_iter()
        .filter(|&ty| ty != ValueType::Array)
        .collect();
    Ok(*u.choose(&scalars)?)
}

/// A version and byte order.
pub fn ctx(u: &mut Unstructured<'_>) -> Result<Ctx> {
    let version = *u.choose(&[Version::V1, Version::V2, Version::V3])?;
    let endian = if u.arbitrary()? {
        Endian::Big
    } else {
        Endian::Little
    };
    Ok(Ctx { version, endian })
}

/// A whole document: key/values, then tensors.
pub fn document(u: &mut Unstructured<'_>) -> Result<GgufBuilder<'static>> {
    let mut builder = GgufBuilder::new(ctx(u)?);
    for _ in 0..u.int_in_range(0..=8)? {
        let key = key(u)?;
        let value = value(u, 0)?;
        builder.kv(key, value);
    }
    // A generated `general.alignment` may say anything; the layout uses a small one, so
    // that files stay small.
    if u.ratio(1, 3)? || builder.layout_alignment() > 4096 {
        let alignment = *u.choose(&[0u32, 1, 3, 8, 32, 48, 64, 4096])?;
        builder.alignment(alignment);
    }
    let v1 = builder.ctx.version == Version::V1;
    for _ in 0..u.int_in_range(0..=5)? {
        let name = key(u)?;
        let dims = (0..u.int_in_range(0..=4)?)
            .map(|_| dim(u, v1))
            .collect::<Result<Vec<_>>>()?;
        let ggml_type = GgmlType(match u.int_in_range(0..=9)? {
            0 => u.arbitrary()?,
            1..=3 => u.int_in_range(0..=45)?,
            _ => *u.choose(&[0, 1, 2, 8, 12, 30])?,
        });
        let sequential = u.ratio(3, 4)?;
        let offset = if sequential {
            None
        } else {
            Some(u.arbitrary()?)
        };
        let data = if sequential {
            let len = u.int_in_range(0..=96)?;
            u.bytes(len)?.to_vec()
        } else {
            Vec::new()
        };
        builder.tensors.push(TensorSpec {
            name,
            dims,
            ggml_type,
            offset,
            data: Cow::Owned(data),
        });
    }
    Ok(builder)
}

/// A dim: mostly small, sometimes anything the version can hold.
fn dim(u: &mut Unstructured<'_>, v1: bool) -> Result<u64> {
    Ok(match (u.ratio(1, 8)?, v1) {
        (true, true) => u.arbitrary::<u32>()?.into(),
        (true, false) => u.arbitrary()?,
        (false, _) => u.int_in_range(0..=64)?,
    })
}

/// A key or name: usually dotted ASCII, sometimes any bytes (invalid UTF-8 included).
fn key(u: &mut Unstructured<'_>) -> Result<Vec<u8>> {
    if u.ratio(1, 4)? {
        let len = u.int_in_range(0..=12)?;
        return Ok(u.bytes(len)?.to_vec());
    }
    let words = [
        "general",
        "llama",
        "tokenizer",
        "ggml",
        "block_count",
        "alignment",
        "name",
    ];
    let n = u.int_in_range(1..=3)?;
    let parts = (0..n)
        .map(|_| u.choose(&words).map(|w| w.to_string()))
        .collect::<Result<Vec<_>>>()?;
    Ok(parts.join(".").into_bytes())
}

/// A value of any of the 13 types; arrays nest up to [`MAX_DEPTH`].
pub fn value(u: &mut Unstructured<'_>, depth: u32) -> Result<OwnedValue> {
    let ty = if depth >= MAX_DEPTH {
        scalar(u)?
    } else {
        *u.choose(&ValueType::ALL)?
    };
    value_of(u, ty, depth)
}

fn value_of(u: &mut Unstructured<'_>, ty: ValueType, depth: u32) -> Result<OwnedValue> {
    Ok(match ty {
        ValueType::U8 => OwnedValue::U8(u.arbitrary()?),
        ValueType::I8 => OwnedValue::I8(u.arbitrary()?),
        ValueType::U16 => OwnedValue::U16(u.arbitrary()?),
        ValueType::I16 => OwnedValue::I16(u.arbitrary()?),
        ValueType::U32 => OwnedValue::U32(u.arbitrary()?),
        ValueType::I32 => OwnedValue::I32(u.arbitrary()?),
        // From bits: every NaN payload, infinities, subnormals, -0.
        ValueType::F32 => OwnedValue::F32(f32::from_bits(u.arbitrary()?)),
        ValueType::Bool => OwnedValue::Bool(if u.ratio(1, 8)? {
            u.arbitrary()?
        } else {
            u.int_in_range(0..=1)?
        }),
        ValueType::String => {
            let len = u.int_in_range(0..=24)?;
            OwnedValue::String(u.bytes(len)?.to_vec())
        }
        ValueType::Array => {
            let element_type = if depth + 1 >= MAX_DEPTH {
                scalar(u)?
            } else {
                *u.choose(&ValueType::ALL)?
            };
            let elements = (0..u.int_in_range(0..=6)?)
                .map(|_| value_of(u, element_type, depth + 1))
                .collect::<Result<Vec<_>>>()?;
            OwnedValue::Array(OwnedArray {
                element_type: element_type.into(),
                elements,
            })
        }
        ValueType::U64 => OwnedValue::U64(u.arbitrary()?),
        ValueType::I64 => OwnedValue::I64(u.arbitrary()?),
        ValueType::F64 => OwnedValue::F64(f64::from_bits(u.arbitrary()?)),
    })
}
