//! Dequantisation: blocks of a ggml type to `f32`, bit-identical to gguf-py 0.19.0's
//! `gguf.quants.dequantize` for every type it supports, and to llama.cpp 0.3.36's ggml
//! (`ggml_get_type_traits(type)->to_float`) for `q1_0` and `q2_0`, which gguf-py does not
//! dequantise (and for `mxfp4` and `nvfp4`, which both do).
//!
//! Each value is computed with the same `f32` operations in the same order as gguf-py's
//! numpy code (for example `q4_1` is `d * q + m`, rounded after the product, never fused),
//! so NaN, infinite and subnormal scales give the same bits too. Bytes are read as ggml
//! stores them on a little-endian machine, as gguf-py does.
//!
//! Supported: `f32`, `f16`, `bf16`, `q4_0`, `q4_1`, `q5_0`, `q5_1`, `q8_0`, `q2_K`,
//! `q3_K`, `q4_K`, `q5_K`, `q6_K`, `tq1_0`, `tq2_0`, `mxfp4`, `nvfp4`, `iq4_nl`, `iq4_xs`,
//! `iq2_xxs`, `iq2_xs`, `iq2_s`, `iq3_xxs`, `iq3_s`, `iq1_s`, `iq1_m` (the lattice grids are
//! in `grids.rs`, generated from gguf-py), `q1_0`, `q2_0`.
//! Other types give [`DataError::Unsupported`].
//!
//! ```
//! use gguf_grammar::data::dequant::{dequantize, dequantize_into};
//! use gguf_grammar::GgmlType;
//!
//! // Two q4_0 blocks (scale 1.0 = f16 0x3c00, every nibble 9 → value 1.0).
//! let block: Vec<u8> = [&[0x00u8, 0x3c][..], &[0x99; 16]].concat();
//! let bytes = [block.clone(), block].concat();
//! assert_eq!(dequantize(GgmlType::Q4_0, &bytes, 64).unwrap(), vec![1.0; 64]);
//!
//! // Streaming: one row (here one block) at a time into a caller's buffer.
//! let mut row = [0f32; 32];
//! for chunk in bytes.chunks(18) {
//!     dequantize_into(GgmlType::Q4_0, chunk, &mut row).unwrap();
//!     assert_eq!(row, [1.0; 32]);
//! }
//! // Sizes must agree: no silent truncation.
//! assert!(dequantize(GgmlType::Q4_0, &bytes, 32).is_err());
//! ```

use super::{grids, DataError};
use crate::GgmlType;

/// Whether [`dequantize`] supports `ty`.
pub fn supported(ty: GgmlType) -> bool {
    kernel(ty).is_some()
}

/// Dequantises `n` values of type `ty` from `bytes`, which must hold exactly
/// `n / block_size` blocks.
pub fn dequantize(ty: GgmlType, bytes: &[u8], n: usize) -> Result<Vec<f32>, DataError> {
    // Checked before allocating: `n` is never trusted beyond what `bytes` holds.
    let (block, size, _) = kernel(ty).ok_or(DataError::Unsupported(ty))?;
    check(ty, bytes.len(), n, block, size)?;
    let mut out = vec![0f32; n];
    dequantize_into(ty, bytes, &mut out)?;
    Ok(out)
}

/// Dequantises `bytes` into `out`: `out.len()` values from exactly
/// `out.len() / block_size` blocks. Call it row by row (or block by block) to stream a
/// tensor through a fixed buffer.
pub fn dequantize_into(ty: GgmlType, bytes: &[u8], out: &mut [f32]) -> Result<(), DataError> {
    let (block, size, run) = kernel(ty).ok_or(DataError::Unsupported(ty))?;
    check(ty, bytes.len(), out.len(), block, size)?;
    run(bytes, out);
    Ok(())
}

fn check(
    ty: GgmlType,
    bytes: usize,
    values: usize,
    block: usize,
    size: usize,
) -> Result<(), DataError> {
    if values % block == 0 && bytes % size == 0 && values / block == bytes / size {
        Ok(())
    } else {
        Err(DataError::Mismatch {
            ggml_type: ty,
            bytes,
            values,
            block,
            size,
        })
    }
}

type Run = fn(&[u8], &mut [f32]);

/// Applies `f` to each block of `S` bytes and its `V` output values.
#[inline(always)]
fn each<const S: usize, const V: usize, F: Fn(&[u8; S], &mut [f32; V])>(
    bytes: &[u8],
    out: &mut [f32],
    f: F,
) {
    for (b, y) in bytes.chunks_exact(S).zip(out.chunks_exact_mut(V)) {
        // chunks_exact yields exactly S and V elements
        if let (Ok(b), Ok(y)) = (b.try_into(), y.try_into()) {
            f(b, y)
        }
    }
}

macro_rules! kernel {
    ($values:expr, $bytes:expr, $f:expr) => {
        (
            $values,
            $bytes,
            (|b: &[u8], y: &mut [f32]| each::<$bytes, $values, _>(b, y, $f)) as Run,
        )
    };
}

/// Values per block, bytes per block, and the loop over blocks.
fn kernel(ty: GgmlType) -> Option<(usize, usize, Run)> {
    Some(match ty {
        GgmlType::F32 => kernel!(1, 4, |b: &[u8; 4], y: &mut [f32; 1]| y[0] =
            f32::from_le_bytes(*b)),
        GgmlType::F16 => kernel!(1, 2, |b: &[u8; 2], y: &mut [f32; 1]| y[0] = f16(b, 0)),
        GgmlType::BF16 => kernel!(1, 2, |b: &[u8; 2], y: &mut [f32; 1]| y[0] =
            f32::from_bits((u16::from_le_bytes(*b) as u32) << 16)),
        GgmlType::Q4_0 => kernel!(32, 18, q4_0),
        GgmlType::Q4_1 => kernel!(32, 20, q4_1),
        GgmlType::Q5_0 => kernel!(32, 22, q5_0),
        GgmlType::Q5_1 => kernel!(32, 24, q5_1),
        GgmlType::Q8_0 => kernel!(32, 34, q8_0),
        GgmlType::Q2_K => kernel!(256, 84, q2_k),
        GgmlType::Q3_K => kernel!(256, 110, q3_k),
        GgmlType::Q4_K => kernel!(256, 144, q4_k),
        GgmlType::Q5_K => kernel!(256, 176, q5_k),
        GgmlType::Q6_K => kernel!(256, 210, q6_k),
        GgmlType::TQ1_0 => kernel!(256, 54, tq1_0),
        GgmlType::TQ2_0 => kernel!(256, 66, tq2_0),
        GgmlType::MXFP4 => kernel!(32, 17, mxfp4),
        GgmlType::NVFP4 => kernel!(64, 36, nvfp4),
        GgmlType::IQ4_NL => kernel!(32, 18, iq4_nl),
        GgmlType::IQ4_XS => kernel!(256, 136, iq4_xs),
        GgmlType::IQ2_XXS => kernel!(256, 66, iq2_xxs),
        GgmlType::IQ2_XS => kernel!(256, 74, iq2_xs),
        GgmlType::IQ2_S => kernel!(256, 82, iq2_s),
        GgmlType::IQ3_XXS => kernel!(256, 98, iq3_xxs),
        GgmlType::IQ3_S => kernel!(256, 110, iq3_s),
        GgmlType::IQ1_S => kernel!(256, 50, iq1_s),
        GgmlType::IQ1_M => kernel!(256, 56, iq1_m),
        GgmlType::Q1_0 => kernel!(128, 18, q1_0),
        GgmlType::Q2_0 => kernel!(64, 18, q2_0),
        _ => return None,
    })
}

/// The f16 at `b[i..i + 2]` (little-endian) as f32, exactly as numpy converts it.
#[inline(always)]
fn f16(b: &[u8], i: usize) -> f32 {
    super::f16::to_f32(u16::from_le_bytes([b[i], b[i + 1]]))
}

/// The f16 at `b[i..i + 2]` as ggml 0.3.36's `GGML_FP16_TO_FP32` converts it: as [`f16`],
/// except that a signalling NaN comes out quiet (ggml scales the shifted bits by 2^-112).
#[inline(always)]
fn f16_ggml(b: &[u8], i: usize) -> f32 {
    let d = f16(b, i);
    if d.is_nan() {
        f32::from_bits(d.to_bits() | 0x0040_0000)
    } else {
        d
    }
}

/// Value `j` of 32 stored as q4_0 packs them: low nibbles first, then high nibbles.
#[inline(always)]
fn nibble(qs: &[u8], j: usize) -> u8 {
    if j < 16 {
        qs[j] & 0x0f
    } else {
        qs[j - 16] >> 4
    }
}

fn q4_0(b: &[u8; 18], y: &mut [f32; 32]) {
    let d = f16(b, 0);
    for (j, y) in y.iter_mut().enumerate() {
        *y = d * (nibble(&b[2..], j) as i8 - 8) as f32;
    }
}

fn q4_1(b: &[u8; 20], y: &mut [f32; 32]) {
    let (d, m) = (f16(b, 0), f16(b, 2));
    for (j, y) in y.iter_mut().enumerate() {
        *y = d * nibble(&b[4..], j) as f32 + m;
    }
}

/// The 5-bit value `j` of a q5 block: `qh` is a little-endian u32 of high bits.
#[inline(always)]
fn five_bits(qh: u32, qs: &[u8], j: usize) -> u8 {
    nibble(qs, j) | ((((qh >> j) & 1) as u8) << 4)
}

fn q5_0(b: &[u8; 22], y: &mut [f32; 32]) {
    let d = f16(b, 0);
    let qh = u32::from_le_bytes([b[2], b[3], b[4], b[5]]);
    for (j, y) in y.iter_mut().enumerate() {
        *y = d * (five_bits(qh, &b[6..], j) as i8 - 16) as f32;
    }
}

fn q5_1(b: &[u8; 24], y: &mut [f32; 32]) {
    let (d, m) = (f16(b, 0), f16(b, 2));
    let qh = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
    for (j, y) in y.iter_mut().enumerate() {
        *y = d * five_bits(qh, &b[8..], j) as f32 + m;
    }
}

fn q8_0(b: &[u8; 34], y: &mut [f32; 32]) {
    let d = f16(b, 0);
    for (y, &q) in y.iter_mut().zip(&b[2..]) {
        *y = q as i8 as f32 * d;
    }
}

/// Value `e` of 256 packed 2 bits at a time: byte `l` of each 32-byte half `h` holds
/// values `128h + 32s + l` in bits `2s..2s+2`.
#[inline(always)]
fn crumb(qs: &[u8], e: usize) -> u8 {
    let (h, s, l) = (e / 128, (e / 32) % 4, e % 32);
    (qs[h * 32 + l] >> (2 * s)) & 3
}

fn q2_k(b: &[u8; 84], y: &mut [f32; 256]) {
    let (scales, qs) = (&b[..16], &b[16..80]);
    let (d, dmin) = (f16(b, 80), f16(b, 82));
    for (g, y) in y.chunks_exact_mut(16).enumerate() {
        let dl = d * (scales[g] & 0x0f) as f32;
        let ml = dmin * (scales[g] >> 4) as f32;
        for (i, y) in y.iter_mut().enumerate() {
            *y = dl * crumb(qs, g * 16 + i) as f32 - ml;
        }
    }
}

fn q3_k(b: &[u8; 110], y: &mut [f32; 256]) {
    let (hmask, qs, sc) = (&b[..32], &b[32..96], &b[96..108]);
    let d = f16(b, 108);
    for (g, y) in y.chunks_exact_mut(16).enumerate() {
        let low = if g < 8 { sc[g] & 0x0f } else { sc[g - 8] >> 4 };
        let high = (sc[8 + g % 4] >> (2 * (g / 4))) & 3;
        let dl = d * ((low | (high << 4)) as i8 - 32) as f32;
        for (i, y) in y.iter_mut().enumerate() {
            let e = g * 16 + i;
            let h = ((hmask[e % 32] >> (e / 32)) & 1) ^ 1;
            *y = dl * (crumb(qs, e) as i8 - (h << 2) as i8) as f32;
        }
    }
}

/// q4_K's and q5_K's 8 6-bit scales and 8 6-bit minimums from their 12 packed bytes.
#[inline(always)]
fn scale_min_k4(s: &[u8]) -> ([u8; 8], [u8; 8]) {
    let (mut sc, mut m) = ([0u8; 8], [0u8; 8]);
    for j in 0..4 {
        sc[j] = s[j] & 0x3f;
        m[j] = s[4 + j] & 0x3f;
        sc[4 + j] = (s[8 + j] & 0x0f) | ((s[j] >> 2) & 0x30);
        m[4 + j] = (s[8 + j] >> 4) | ((s[4 + j] >> 2) & 0x30);
    }
    (sc, m)
}

fn q4_k(b: &[u8; 144], y: &mut [f32; 256]) {
    let (d, dmin) = (f16(b, 0), f16(b, 2));
    let (sc, m) = scale_min_k4(&b[4..16]);
    let qs = &b[16..];
    for (j, y) in y.chunks_exact_mut(32).enumerate() {
        let (dl, ml) = (d * sc[j] as f32, dmin * m[j] as f32);
        let chunk = &qs[(j / 2) * 32..][..32];
        let shift = 4 * (j % 2);
        for (y, &q) in y.iter_mut().zip(chunk) {
            *y = dl * ((q >> shift) & 0x0f) as f32 - ml;
        }
    }
}

fn q5_k(b: &[u8; 176], y: &mut [f32; 256]) {
    let (d, dmin) = (f16(b, 0), f16(b, 2));
    let (sc, m) = scale_min_k4(&b[4..16]);
    let (qh, qs) = (&b[16..48], &b[48..]);
    for (j, y) in y.chunks_exact_mut(32).enumerate() {
        let (dl, ml) = (d * sc[j] as f32, dmin * m[j] as f32);
        let chunk = &qs[(j / 2) * 32..][..32];
        let shift = 4 * (j % 2);
        for (l, y) in y.iter_mut().enumerate() {
            let q = ((chunk[l] >> shift) & 0x0f) | (((qh[l] >> j) & 1) << 4);
            *y = dl * q as f32 - ml;
        }
    }
}

fn q6_k(b: &[u8; 210], y: &mut [f32; 256]) {
    let (ql, qh, scales) = (&b[..128], &b[128..192], &b[192..208]);
    let d = f16(b, 208);
    for (g, y) in y.chunks_exact_mut(16).enumerate() {
        let dl = d * scales[g] as i8 as f32;
        for (i, y) in y.iter_mut().enumerate() {
            let e = g * 16 + i;
            let (h, r) = (e / 128, e % 128);
            let low = (ql[h * 64 + r % 64] >> (4 * (r / 64))) & 0x0f;
            let high = (qh[h * 32 + r % 32] >> (2 * (r / 32))) & 3;
            *y = dl * ((low | (high << 4)) as i8 - 32) as f32;
        }
    }
}

fn tq1_0(b: &[u8; 54], y: &mut [f32; 256]) {
    const POW3: [u8; 5] = [1, 3, 9, 27, 81];
    let (qs, qh) = (&b[..48], &b[48..52]);
    let d = f16(b, 52);
    // gguf-py's order: 5 digits of qs[0..32], of qs[32..48], then 4 of qh, each digit-major.
    let digit = |byte: u8, p: usize| {
        (((byte.wrapping_mul(POW3[p]) as u16 * 3) >> 8) as u8 as i8 - 1) as f32
    };
    let mut e = 0;
    for (bytes, digits) in [(&qs[..32], 5), (&qs[32..], 5), (qh, 4)] {
        for p in 0..digits {
            for &byte in bytes {
                y[e] = d * digit(byte, p);
                e += 1;
            }
        }
    }
}

fn tq2_0(b: &[u8; 66], y: &mut [f32; 256]) {
    let d = f16(b, 64);
    for (e, y) in y.iter_mut().enumerate() {
        *y = d * (crumb(&b[..64], e) as i8 - 1) as f32;
    }
}

/// ggml 0.3.36's `dequantize_row_q1_0`: bit `j % 8` of byte `j / 8` set gives `d`, clear
/// gives `-d` (a negation: a NaN `d` has its sign flipped).
fn q1_0(b: &[u8; 18], y: &mut [f32; 128]) {
    let d = f16_ggml(b, 0);
    for (j, y) in y.iter_mut().enumerate() {
        *y = if (b[2 + j / 8] >> (j % 8)) & 1 == 1 {
            d
        } else {
            -d
        };
    }
}

/// ggml 0.3.36's `dequantize_row_q2_0`: bits `2(j % 4)..` of byte `j / 4` hold `q`; value
/// `(q - 1) * d`.
fn q2_0(b: &[u8; 18], y: &mut [f32; 64]) {
    let d = f16_ggml(b, 0);
    for (j, y) in y.iter_mut().enumerate() {
        let q = (b[2 + j / 4] >> (2 * (j % 4))) & 3;
        *y = (q as i8 - 1) as f32 * d;
    }
}

/// The E2M1 values doubled, as ggml's `kvalues_mxfp4`.
const E2M1: [i8; 16] = [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12];

fn mxfp4(b: &[u8; 17], y: &mut [f32; 32]) {
    let e = b[0] as u32;
    // ggml_e8m0_to_fp32_half: 2^(e-128)
    let d = f32::from_bits(if e < 2 {
        0x0020_0000 << e
    } else {
        (e - 1) << 23
    });
    for (j, y) in y.iter_mut().enumerate() {
        *y = d * E2M1[nibble(&b[1..], j) as usize] as f32;
    }
}

/// ggml's UE4M3 scale, halved (the E2M1 values are doubled).
fn ue4m3_half(x: u8) -> f32 {
    if x == 0 || x == 0x7f {
        return 0.0;
    }
    let (exp, man) = ((x >> 3) & 0x0f, (x & 7) as f32);
    let raw = if exp == 0 {
        man * f32::from_bits(0x3b00_0000) // 2^-9
    } else {
        (1.0 + man / 8.0) * (2f32).powi(exp as i32 - 7)
    };
    raw * 0.5
}

fn nvfp4(b: &[u8; 36], y: &mut [f32; 64]) {
    for (g, y) in y.chunks_exact_mut(16).enumerate() {
        let d = ue4m3_half(b[g]);
        let qs = &b[4 + 8 * g..][..8];
        for (i, y) in y.iter_mut().enumerate() {
            let q = if i < 8 { qs[i] & 0x0f } else { qs[i - 8] >> 4 };
            *y = d * E2M1[q as usize] as f32;
        }
    }
}

/// ggml's `kvalues_iq4nl`.
const IQ4NL: [i8; 16] = [
    -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113,
];

fn iq4_nl(b: &[u8; 18], y: &mut [f32; 32]) {
    let d = f16(b, 0);
    for (j, y) in y.iter_mut().enumerate() {
        *y = d * IQ4NL[nibble(&b[2..], j) as usize] as f32;
    }
}

fn iq4_xs(b: &[u8; 136], y: &mut [f32; 256]) {
    let d = f16(b, 0);
    let scales_h = u16::from_le_bytes([b[2], b[3]]);
    let (scales_l, qs) = (&b[4..8], &b[8..]);
    for (j, y) in y.chunks_exact_mut(32).enumerate() {
        let low = (scales_l[j / 2] >> (4 * (j % 2))) & 0x0f;
        let high = (scales_h >> (2 * j)) as u8 & 3;
        let dl = d * ((low | (high << 4)) as i8 - 32) as f32;
        for (i, y) in y.iter_mut().enumerate() {
            *y = dl * IQ4NL[nibble(&qs[16 * j..], i) as usize] as f32;
        }
    }
}

/// Value `j` (0..8 or 0..4) of grid row `row`.
#[inline(always)]
fn grid8(grid: &[u64], row: usize, j: usize) -> f32 {
    (grid[row] >> (8 * j)) as u8 as f32
}

#[inline(always)]
fn grid4(grid: &[u32], row: usize, j: usize) -> f32 {
    (grid[row] >> (8 * j)) as u8 as f32
}

/// ggml's `ksigns_iq2xs`: 7 sign bits and their parity as the 8th.
#[inline(always)]
fn ksigns(i: u32) -> u32 {
    let i = i & 0x7f;
    i | ((i.count_ones() & 1) << 7)
}

/// `v` times the sign in bit `j` of `bits`, as numpy's multiplication by ±1.0 gives it: a
/// NaN keeps its sign (a compiler may turn a multiplication by -1.0 into a negation, which
/// would flip it, so the negation is written out).
#[inline(always)]
fn signed(v: f32, bits: u32, j: usize) -> f32 {
    if (bits >> j) & 1 == 1 && !v.is_nan() {
        -v
    } else {
        v
    }
}

#[inline(always)]
fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

#[inline(always)]
fn u16_at(b: &[u8], i: usize) -> u16 {
    u16::from_le_bytes([b[i], b[i + 1]])
}

fn iq2_xxs(b: &[u8; 66], y: &mut [f32; 256]) {
    let d = f16(b, 0);
    for (ib, y) in y.chunks_exact_mut(32).enumerate() {
        let (aux0, aux1) = (&b[2 + 8 * ib..][..4], u32_at(b, 6 + 8 * ib));
        let db = d * (0.5 + (aux1 >> 28) as f32) * 0.25;
        for (l, y) in y.chunks_exact_mut(8).enumerate() {
            let signs = ksigns(aux1 >> (7 * l));
            for (j, y) in y.iter_mut().enumerate() {
                *y = signed(db * grid8(&grids::IQ2XXS, aux0[l] as usize, j), signs, j);
            }
        }
    }
}

/// The 16 4-bit scales of iq2_xs / iq2_s as `d * (0.5 + s) * 0.25`.
#[inline(always)]
fn iq2_scale(d: f32, scales: &[u8], k: usize) -> f32 {
    d * (0.5 + ((scales[k / 2] >> (4 * (k % 2))) & 0x0f) as f32) * 0.25
}

fn iq2_xs(b: &[u8; 74], y: &mut [f32; 256]) {
    let d = f16(b, 0);
    for (m, y) in y.chunks_exact_mut(8).enumerate() {
        let db = iq2_scale(d, &b[66..], m / 2);
        let q = u16_at(b, 2 + 2 * m) as u32;
        let signs = ksigns(q >> 9);
        for (j, y) in y.iter_mut().enumerate() {
            *y = signed(db * grid8(&grids::IQ2XS, (q & 511) as usize, j), signs, j);
        }
    }
}

fn iq2_s(b: &[u8; 82], y: &mut [f32; 256]) {
    let d = f16(b, 0);
    let (qs, signs, qh) = (&b[2..34], &b[34..66], &b[66..74]);
    for (m, y) in y.chunks_exact_mut(8).enumerate() {
        let db = iq2_scale(d, &b[74..], m / 2);
        let row = qs[m] as usize | ((((qh[m / 4] >> (2 * (m % 4))) & 3) as usize) << 8);
        for (j, y) in y.iter_mut().enumerate() {
            *y = signed(db * grid8(&grids::IQ2S, row, j), signs[m] as u32, j);
        }
    }
}

fn iq3_xxs(b: &[u8; 98], y: &mut [f32; 256]) {
    let d = f16(b, 0);
    let qs = &b[2..66];
    for (ib, y) in y.chunks_exact_mut(32).enumerate() {
        let aux = u32_at(b, 66 + 4 * ib);
        let db = d * (0.5 + (aux >> 28) as f32) * 0.5;
        for (l, y) in y.chunks_exact_mut(8).enumerate() {
            let signs = ksigns(aux >> (7 * l));
            for (j, y) in y.iter_mut().enumerate() {
                let row = qs[ib * 8 + l * 2 + j / 4] as usize;
                *y = signed(db * grid4(&grids::IQ3XXS, row, j % 4), signs, j);
            }
        }
    }
}

fn iq3_s(b: &[u8; 110], y: &mut [f32; 256]) {
    let d = f16(b, 0);
    let (qs, qh, signs, scales) = (&b[2..66], &b[66..74], &b[74..106], &b[106..110]);
    for (k, y) in y.chunks_exact_mut(32).enumerate() {
        let db = d * (1 + 2 * ((scales[k / 2] >> (4 * (k % 2))) & 0x0f)) as f32;
        for (l, y) in y.chunks_exact_mut(8).enumerate() {
            for (j, y) in y.iter_mut().enumerate() {
                let m = k * 8 + l * 2 + j / 4;
                let row = qs[m] as usize | ((((qh[m / 8] >> (m % 8)) & 1) as usize) << 8);
                *y = signed(
                    db * grid4(&grids::IQ3S, row, j % 4),
                    signs[k * 4 + l] as u32,
                    j,
                );
            }
        }
    }
}

/// ggml's `IQ1S_DELTA`.
const IQ1_DELTA: f32 = 0.125;

/// The iq1 grid value `j` of `row`, as f32 (-1, 0 or 1).
#[inline(always)]
fn grid_iq1(row: usize, j: usize) -> f32 {
    (grids::IQ1S[row] >> (8 * j)) as u8 as i8 as f32
}

fn iq1_s(b: &[u8; 50], y: &mut [f32; 256]) {
    let d = f16(b, 0);
    let qs = &b[2..34];
    for (ib, y) in y.chunks_exact_mut(32).enumerate() {
        let qh = u16_at(b, 34 + 2 * ib);
        let dl = d * (2 * ((qh >> 12) & 7) + 1) as f32;
        let delta = if qh & 0x8000 == 0 {
            IQ1_DELTA
        } else {
            -IQ1_DELTA
        };
        for (l, y) in y.chunks_exact_mut(8).enumerate() {
            let row = qs[ib * 4 + l] as usize | ((((qh >> (3 * l)) & 7) as usize) << 8);
            for (j, y) in y.iter_mut().enumerate() {
                *y = dl * (grid_iq1(row, j) + delta);
            }
        }
    }
}

fn iq1_m(b: &[u8; 56], y: &mut [f32; 256]) {
    let (qs, qh) = (&b[..32], &b[32..48]);
    let sc = [u16_at(b, 48), u16_at(b, 50), u16_at(b, 52), u16_at(b, 54)];
    let d = super::f16::to_f32(
        (sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000),
    );
    for (m, y) in y.chunks_exact_mut(8).enumerate() {
        let k = m / 2;
        let dl = d * (2 * ((sc[k / 4] >> (3 * (k % 4))) & 7) + 1) as f32;
        let nibble = qh[m / 2] >> (4 * (m % 2));
        let row = qs[m] as usize | (((nibble & 7) as usize) << 8);
        let delta = if nibble & 8 == 0 {
            IQ1_DELTA
        } else {
            -IQ1_DELTA
        };
        for (j, y) in y.iter_mut().enumerate() {
            *y = dl * (grid_iq1(row, j) + delta);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_supported_type_has_a_matching_layout() {
        for id in 0..GgmlType::COUNT {
            let t = GgmlType(id);
            if let Some((values, bytes, _)) = kernel(t) {
                let l = super::super::layout::layout(t).unwrap();
                assert_eq!((l.values, l.byte_len()), (values, bytes), "{t}");
            }
        }
    }

    #[test]
    fn mismatched_sizes_are_errors() {
        assert!(dequantize(GgmlType::Q8_0, &[0; 34], 31).is_err());
        assert!(dequantize(GgmlType::Q8_0, &[0; 33], 32).is_err());
        assert!(dequantize(GgmlType::Q8_0, &[0; 34], usize::MAX).is_err());
        assert_eq!(dequantize(GgmlType::Q8_0, &[], 0), Ok(vec![]));
        assert_eq!(
            dequantize(GgmlType::Q8_1, &[0; 36], 32),
            Err(DataError::Unsupported(GgmlType::Q8_1))
        );
        let err = dequantize(GgmlType::Q4_K, &[0; 144], 255).unwrap_err();
        assert_eq!(
            err.to_string(),
            "type q4_K: 144 bytes do not hold 255 values (256 values per 144-byte block)"
        );
    }
}
