//! IEEE 754 half precision, both ways, exactly as numpy converts (`np.float16`): the one f16
//! conversion of the crate (dequantisation reads block scales with [`to_f32`]; fixtures
//! write them with [`from_f32`]).
//!
//! ```
//! use gguf_grammar::data::f16::{from_f32, to_f32};
//!
//! assert_eq!(from_f32(0.5), 0x3800);
//! assert_eq!(to_f32(0x3800), 0.5);
//! assert_eq!(from_f32(65520.0), 0x7c00); // rounds to infinity, as numpy does
//! ```

/// The f16 with bits `h` as f32 (exact: every f16 is an f32). NaN payloads are kept and
/// signalling NaNs stay signalling, as numpy keeps them.
#[inline(always)]
pub fn to_f32(h: u16) -> f32 {
    let sign = ((h & 0x8000) as u32) << 16;
    let exp = h & 0x7c00;
    let sig = (h & 0x03ff) as u32;
    match exp {
        // zero or subnormal: sig * 2^-24, exact in f32
        0 => f32::from_bits(sign | (sig as f32 * f32::from_bits(0x3380_0000)).to_bits()),
        0x7c00 => f32::from_bits(sign | 0x7f80_0000 | (sig << 13)),
        _ => f32::from_bits(sign | (((h & 0x7fff) as u32 + 0x1_c000) << 13)),
    }
}

/// The f16 nearest to `x` (ties to even), as bits: values past the largest f16 become
/// infinities, values below the smallest subnormal's half become zeros. A NaN keeps its sign
/// and the top ten bits of its payload (or the lowest bit, if those are zero), as numpy does.
pub fn from_f32(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32;
    let mantissa = bits & 0x007f_ffff;
    if exp == 0xff {
        return match mantissa {
            0 => sign | 0x7c00,
            m => sign | 0x7c00 | ((m >> 13) as u16).max(1),
        };
    }
    // The value as an integer count of units of 2^-24 (the smallest subnormal) would need
    // 2^(exp-127+24) * (1.m): round the significand, shifted to where f16 keeps it.
    let half_exp = exp - 127 + 15;
    if half_exp >= 0x1f {
        return sign | 0x7c00;
    }
    let (significand, shift) = if half_exp <= 0 {
        // Subnormal in f16 (or zero): the implicit bit becomes explicit, shifted further.
        if half_exp < -10 {
            return sign;
        }
        (mantissa | 0x0080_0000, (14 - half_exp) as u32)
    } else {
        (mantissa, 13)
    };
    let kept = significand >> shift;
    let rest = significand & ((1 << shift) - 1);
    let halfway = 1 << (shift - 1);
    let round_up = rest > halfway || (rest == halfway && kept & 1 == 1);
    let body = if half_exp <= 0 {
        kept
    } else {
        ((half_exp as u32) << 10) | kept
    };
    // A carry out of the significand moves into the exponent, up to infinity: still right.
    sign | (body + u32::from(round_up)) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges_to_f32() {
        for (h, f) in [
            (0x0000u16, 0x0000_0000u32),
            (0x8000, 0x8000_0000),
            (0x0001, 0x3380_0000),
            (0x8001, 0xb380_0000),
            (0x03ff, 0x387f_c000),
            (0x3c00, 0x3f80_0000),
            (0x7bff, 0x477f_e000),
            (0x7c00, 0x7f80_0000),
            (0x7c01, 0x7f80_2000), // signalling NaN stays signalling, as in numpy
            (0xfc01, 0xff80_2000),
            (0x7e01, 0x7fc0_2000),
        ] {
            assert_eq!(to_f32(h).to_bits(), f, "{h:#x}");
        }
    }

    #[test]
    fn every_f16_goes_to_f32_and_back() {
        for h in 0..=u16::MAX {
            let x = to_f32(h);
            if x.is_nan() {
                assert!(to_f32(from_f32(x)).is_nan(), "{h:#06x}");
            }
            assert_eq!(from_f32(x), h, "{h:#06x}");
        }
    }

    #[test]
    fn rounding_matches_numpy() {
        // (f32 bits, np.float32(v).astype(np.float16) bits), printed by numpy 2.4.6.
        let cases: [(u32, u16); 25] = [
            (0x3f80_0000, 0x3c00), // 1.0
            (0x3f80_1000, 0x3c00), // 1 + 2^-11: a tie, to even
            (0x3f80_3000, 0x3c02), // 1 + 3 * 2^-11: a tie, to even (up)
            (0x3f80_1008, 0x3c01), // just above the tie
            (0x477f_e000, 0x7bff), // 65504, the largest f16
            (0x477f_effd, 0x7bff), // 65519.99
            (0x477f_f000, 0x7c00), // 65520: rounds to infinity
            (0x4e6e_6b28, 0x7c00), // 1e9
            (0xce6e_6b28, 0xfc00), // -1e9
            (0x3380_0000, 0x0001), // 2^-24, the smallest subnormal
            (0x3300_0000, 0x0000), // 2^-25: a tie, to even (zero)
            (0x3300_0100, 0x0001), // just above it
            (0x3340_0000, 0x0001), // 3 * 2^-26
            (0x3880_0000, 0x0400), // 2^-14, the smallest normal
            (0x387f_e000, 0x0400), // just below it: rounds up into the normals
            (0x8000_0000, 0x8000), // -0.0
            (0x3eaa_aaab, 0x3555), // 1/3
            (0x3dcc_cccd, 0x2e66), // 0.1
            (0xbffe_0000, 0xbff0), // -1.984375
            (0x7f80_0000, 0x7c00), // inf
            (0x7fc0_0000, 0x7e00), // NaN
            (0x7f80_0001, 0x7c01), // a NaN whose top payload bits are zero
            (0x7fa0_0000, 0x7d00), // a signalling NaN stays signalling
            (0xffc0_0001, 0xfe00), // -NaN
            (0x7fff_e000, 0x7fff), // the largest payload
        ];
        for (bits, expected) in cases {
            assert_eq!(
                from_f32(f32::from_bits(bits)),
                expected,
                "{bits:#010x} -> {expected:#06x}"
            );
        }
    }
}
