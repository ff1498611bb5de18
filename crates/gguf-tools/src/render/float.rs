//! Finite floats printed exactly as Rust's `{:?}` prints them, several times faster.
//!
//! `{:?}` prints the shortest digits that read back as the same float, choosing the closer
//! one when two candidates of that length are equally short, and rounding an exact tie up. A
//! fast shortest-digits algorithm (`zmij`, Schubfach) gives the same digits except on such
//! ties, where it rounds to even; [`shortest`] detects the tie exactly, in integers, and
//! rounds up instead. Then the digits are laid out as `{:?}` lays them out: plain decimal
//! with at least one fractional digit, or `d.ddde-x` below 1e-4 and from 1e16 on.
//!
//! Integral values below 2^24 (f32) or 2^53 (f64), such as most vocabulary scores, skip all
//! that: their digits are the integer's. `tests::every_f32_prints_as_debug_does` (ignored;
//! run by hand) compares every f32, and every f32 widened to f64, with `{:?}`.

use std::io::{self, Write};

/// A float type this module prints.
pub(crate) trait Float: Copy + std::fmt::Debug + zmij::Float + Into<f64> {
    /// Integral values of smaller magnitude print as integers (2^24 or 2^53).
    const EXACT_INTEGERS: f64;
    /// `{:?}` prints magnitudes from 1e16 on and below 1e-4 (in this type) exponentially.
    const EXPONENTIAL_FROM: f64;
    const EXPONENTIAL_BELOW: f64;
    /// Bits of the stored significand, and the exponent bias plus those bits.
    const SIGNIFICAND_BITS: u32;
    const BIAS: i32;
    /// The most significant digits a shortest round-trip form takes (9 or 17).
    const MAX_DIGITS: u32;

    /// The bits of the magnitude (sign cleared).
    fn magnitude_bits(self) -> u64;
}

impl Float for f32 {
    const EXACT_INTEGERS: f64 = 16_777_216.0;
    const EXPONENTIAL_FROM: f64 = 1e16f32 as f64;
    const EXPONENTIAL_BELOW: f64 = 1e-4f32 as f64;
    const SIGNIFICAND_BITS: u32 = 23;
    const BIAS: i32 = 127 + 23;
    const MAX_DIGITS: u32 = 9;

    fn magnitude_bits(self) -> u64 {
        self.abs().to_bits().into()
    }
}

impl Float for f64 {
    const EXACT_INTEGERS: f64 = 9_007_199_254_740_992.0;
    const EXPONENTIAL_FROM: f64 = 1e16;
    const EXPONENTIAL_BELOW: f64 = 1e-4;
    const SIGNIFICAND_BITS: u32 = 52;
    const BIAS: i32 = 1023 + 52;
    const MAX_DIGITS: u32 = 17;

    fn magnitude_bits(self) -> u64 {
        self.abs().to_bits()
    }
}

/// The longest text [`format`] writes: `-1.7976931348623157e308`, `-0.00012345678901234567`.
pub(crate) const MAX_LEN: usize = 32;

/// Writes finite `v` into `dst` as `format!("{v:?}")` would and returns the length.
pub(crate) fn format<F: Float>(v: F, dst: &mut [u8; MAX_LEN]) -> usize {
    let wide: f64 = v.into();
    let abs = wide.abs();
    let sign = usize::from(wide.is_sign_negative());
    dst[0] = b'-';
    // Integral: the integer's digits and `.0`. Adding and subtracting 2^52 rounds a
    // magnitude below 2^52 to an integer (three instructions, where `trunc` is a library
    // call without SSE4.1); from 2^52 on, odd integers fail the test and take zmij's path.
    const ROUNDS_TO_INTEGER: f64 = 4_503_599_627_370_496.0;
    if abs < F::EXACT_INTEGERS && (abs + ROUNDS_TO_INTEGER) - ROUNDS_TO_INTEGER == abs {
        let mut itoa = itoa::Buffer::new();
        let digits = itoa.format(abs as u64).as_bytes();
        let end = sign + digits.len();
        super::copy::copy_short(&mut dst[sign..], digits);
        dst[end..end + 2].copy_from_slice(b".0");
        return end + 2;
    }
    let mut zmij = zmij::Buffer::new();
    let signed = zmij.format_finite(v).as_bytes();
    let text = &signed[sign..];
    let exponential = abs >= F::EXPONENTIAL_FROM || abs < F::EXPONENTIAL_BELOW;
    // Where both print plain decimals and no tie can arise, zmij's text is `{:?}`'s. (An
    // exponent, when zmij writes one, is in the last five bytes: `e-5`, `e+13`.)
    let n = text.len();
    let plain = !exponential && !(2..=5).any(|k| n >= k && text[n - k] == b'e');
    if plain && !may_tie(v, || plain_significant_digits(text)) {
        super::copy::copy_short(dst, signed);
        return signed.len();
    }
    let mut itoa = itoa::Buffer::new();
    let mut laid_out = io::Cursor::new(&mut dst[sign..]);
    match shortest(v, text) {
        Some((digits, exponent))
            if layout(
                itoa.format(digits).as_bytes(),
                exponential,
                exponent,
                &mut laid_out,
            )
            .is_ok() =>
        {
            sign + laid_out.position() as usize
        }
        // Not reached for finite values (see `shortest`; `{:?}` text fits `MAX_LEN`).
        _ => {
            let debug = format!("{v:?}");
            let len = debug.len().min(MAX_LEN);
            dst[..len].copy_from_slice(&debug.as_bytes()[..len]);
            len
        }
    }
}

/// The shortest round-trip digits of finite, non-zero `v` as `{:?}` chooses them, as an
/// integer without trailing zeros and its power of ten, from zmij's `text` for `v`; `None`
/// only if that text cannot be read (it always can).
fn shortest<F: Float>(v: F, text: &[u8]) -> Option<(u64, i32)> {
    let (digits, exponent) = without_trailing_zeros(read_decimal(text)?);
    if is_tie(v, digits, exponent) {
        return Some(without_trailing_zeros((digits + 1, exponent)));
    }
    Some((digits, exponent))
}

fn without_trailing_zeros((mut digits, mut exponent): (u64, i32)) -> (u64, i32) {
    while digits % 10 == 0 && digits != 0 {
        digits /= 10;
        exponent += 1;
    }
    (digits, exponent)
}

/// `[-]DIGITS[.DIGITS][e[+-]DIGITS]` as (all digits as one integer, power of ten).
fn read_decimal(text: &[u8]) -> Option<(u64, i32)> {
    let (mut digits, mut exponent) = (0u64, 0i32);
    let mut fraction = false;
    let mut rest = text;
    while let Some((&c, tail)) = rest.split_first() {
        match c {
            b'0'..=b'9' => {
                digits = digits.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
                exponent -= i32::from(fraction);
            }
            b'.' => fraction = true,
            b'e' | b'E' => {
                let tail = tail.strip_prefix(b"+").unwrap_or(tail);
                let written: i32 = std::str::from_utf8(tail).ok()?.parse().ok()?;
                return Some((digits, exponent.checked_add(written)?));
            }
            _ => return None,
        }
        rest = tail;
    }
    Some((digits, exponent))
}

/// |v| as odd·2^power (`None` for zero).
fn odd_times_power_of_two<F: Float>(v: F) -> Option<(u64, i32)> {
    let bits = v.magnitude_bits();
    let stored = bits & ((1u64 << F::SIGNIFICAND_BITS) - 1);
    let biased = (bits >> F::SIGNIFICAND_BITS) as i32;
    let (m, k) = if biased == 0 {
        (stored, 1 - F::BIAS)
    } else {
        (stored | 1 << F::SIGNIFICAND_BITS, biased - F::BIAS)
    };
    if m == 0 {
        return None;
    }
    let t = m.trailing_zeros();
    Some((m >> t, k + t as i32))
}

/// Whether |v| lies exactly halfway between `digits`·10^`exponent` and the next number of
/// as many digits: 2·|v| = (2·digits + 1)·10^exponent. With |v| = odd·2^power, both sides
/// are an odd number times a power of two, so the powers and the odd parts must match:
/// power + 1 = exponent, and odd·5^-exponent = (2·digits + 1)·5^exponent.
fn is_tie<F: Float>(v: F, digits: u64, exponent: i32) -> bool {
    let Some((odd, power)) = odd_times_power_of_two(v) else {
        return false;
    };
    if power + 1 != exponent {
        return false;
    }
    let five_pow = |e: i32| 5u128.checked_pow(e.unsigned_abs());
    let halfway = 2 * u128::from(digits) + 1;
    let (left, right) = if exponent < 0 {
        (
            five_pow(exponent).and_then(|p| p.checked_mul(odd.into())),
            Some(halfway),
        )
    } else {
        (
            Some(odd.into()),
            five_pow(exponent).and_then(|p| p.checked_mul(halfway)),
        )
    };
    left.is_some() && left == right
}

/// How many significant digits a plain decimal has (`123.0`, `1.25`, `0.0012`, not zero).
fn plain_significant_digits(text: &[u8]) -> u32 {
    let count = if let Some(whole) = text.strip_suffix(b".0") {
        whole.len() - whole.iter().rev().take_while(|&&c| c == b'0').count()
    } else if let Some(fraction) = text.strip_prefix(b"0.") {
        fraction.len() - fraction.iter().take_while(|&&c| c == b'0').count()
    } else {
        text.len() - 1 // the point
    };
    u32::try_from(count).unwrap_or(u32::MAX)
}

/// Whether |v| may be halfway between two decimals of `digits()` significant digits, the
/// only place where a tie can arise (see [`is_tie`]): 2·|v| = q·10^(power + 1) with q odd,
/// and q = 2·d + 1 for some d of that many digits. Rare but for halves (x.5) and values
/// with few binary digits; `digits` is asked only then.
fn may_tie<F: Float>(v: F, digits: impl FnOnce() -> u32) -> bool {
    let Some((odd, power)) = odd_times_power_of_two(v) else {
        return false;
    };
    let exponent = power + 1;
    // Past the table, q is too large (exponent < 0) or 5^exponent exceeds odd (> 0).
    let Some(&five_pow) = POWERS_OF_FIVE.get(exponent.unsigned_abs() as usize) else {
        return false;
    };
    let q = if exponent < 0 {
        match odd.checked_mul(five_pow) {
            Some(q) => q,
            None => return false,
        }
    } else if odd % five_pow == 0 {
        odd / five_pow
    } else {
        return false;
    };
    let bound = |n: u32| {
        10u64
            .checked_pow(n)
            .and_then(|p| p.checked_mul(2))
            .unwrap_or(u64::MAX)
    };
    if q >= bound(F::MAX_DIGITS) {
        return false;
    }
    let digits = digits();
    bound(digits.saturating_sub(1)) < q && q < bound(digits)
}

/// 5^k for k from 0 to 27, the last below 2^64.
const POWERS_OF_FIVE: [u64; 28] = {
    let mut powers = [1u64; 28];
    let mut k = 1;
    while k < powers.len() {
        powers[k] = powers[k - 1] * 5;
        k += 1;
    }
    powers
};

/// `digits`·10^`exponent` (no sign) laid out as `{:?}` does.
fn layout(digits: &[u8], exponential: bool, exponent: i32, out: &mut impl Write) -> io::Result<()> {
    let len = digits.len() as i64;
    // Where the decimal point falls, counted from the first digit.
    let point = len + i64::from(exponent);
    if exponential {
        out.write_all(&digits[..1])?;
        if len > 1 {
            out.write_all(b".")?;
            out.write_all(&digits[1..])?;
        }
        out.write_all(b"e")?;
        return out.write_all(itoa::Buffer::new().format(point - 1).as_bytes());
    }
    if point <= 0 {
        out.write_all(b"0.")?;
        out.write_all(zeros(-point))?;
        out.write_all(digits)
    } else if point >= len {
        out.write_all(digits)?;
        out.write_all(zeros(point - len))?;
        out.write_all(b".0")
    } else {
        let (whole, fraction) = digits.split_at(point as usize);
        out.write_all(whole)?;
        out.write_all(b".")?;
        out.write_all(fraction)
    }
}

/// `n` zeros: at most 3 before the digits (1e-4 and up) and 15 after them (below 1e16).
fn zeros(n: i64) -> &'static [u8] {
    const ZEROS: &[u8; 32] = b"00000000000000000000000000000000";
    &ZEROS[..usize::try_from(n).unwrap_or(0).min(ZEROS.len())]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write<F: Float>(v: F, out: &mut Vec<u8>) -> io::Result<()> {
        let mut text = [0u8; MAX_LEN];
        let len = format(v, &mut text);
        out.write_all(&text[..len])
    }

    fn check<F: Float>(v: F) {
        let mut ours = Vec::new();
        write(v, &mut ours).unwrap();
        assert_eq!(
            std::str::from_utf8(&ours).unwrap(),
            format!("{v:?}"),
            "{v:?}"
        );
    }

    #[test]
    fn layouts_ties_and_edges_print_as_debug_does() {
        // 3333333.25 is halfway between 3333333.2 and 3333333.3: `{:?}` rounds up.
        for v in [
            3_333_333.0f32 + 0.25,
            0.1,
            1e-4,
            9.999e-5,
            1e16,
            9.999999e15,
            1.5e16,
            1e-45,
            f32::MAX,
            f32::MIN_POSITIVE,
            16_777_216.0,
            16_777_215.5,
            1.0,
            -0.0,
            0.0,
            -2.5,
            123_456.79,
        ] {
            check(v);
            check(-v);
            check(f64::from(v));
        }
        for v in [
            0.1f64,
            1e-4,
            1e16,
            9_007_199_254_740_993.0,
            // Around 2^52, where the integral test's rounding trick stops being exact.
            4_503_599_627_370_495.5,
            4_503_599_627_370_497.0,
            9_007_199_254_740_991.0,
            5e-324,
            f64::MAX,
            2.5e-8,
            1e22,
        ] {
            check(v);
            check(-v);
        }
    }

    /// A fixed-seed sample of bit patterns (xorshift), every exponent covered many times.
    #[test]
    fn a_sample_of_bit_patterns_prints_as_debug_does() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let single = f32::from_bits(state as u32);
            if single.is_finite() {
                check(single);
                check(f64::from(single));
            }
            let double = f64::from_bits(state);
            if double.is_finite() {
                check(double);
            }
        }
    }

    /// Every finite f32, as itself and widened to f64 (gguf-py's JSON prints floats so):
    /// about 20 minutes of one core. `cargo test --release --lib render::float -- --ignored`
    #[test]
    #[ignore]
    fn every_f32_prints_as_debug_does() {
        let threads = 2u32;
        let handles: Vec<_> = (0..threads)
            .map(|part| {
                std::thread::spawn(move || {
                    let (mut ours, mut debug) = (Vec::with_capacity(64), String::with_capacity(64));
                    let mut compared = 0u64;
                    for bits in (0..=u32::MAX).filter(|b| b % threads == part) {
                        if bits % (1 << 28) == part {
                            eprintln!("at {bits:#010x}");
                        }
                        let v = f32::from_bits(bits);
                        if !v.is_finite() {
                            continue;
                        }
                        for wide in [false, true] {
                            ours.clear();
                            debug.clear();
                            if wide {
                                write(f64::from(v), &mut ours).unwrap();
                                std::fmt::Write::write_fmt(
                                    &mut debug,
                                    format_args!("{:?}", f64::from(v)),
                                )
                                .unwrap();
                            } else {
                                write(v, &mut ours).unwrap();
                                std::fmt::Write::write_fmt(&mut debug, format_args!("{v:?}"))
                                    .unwrap();
                            }
                            assert_eq!(ours, debug.as_bytes(), "{bits:#010x} wide: {wide}");
                            compared += 1;
                        }
                    }
                    compared
                })
            })
            .collect();
        let compared: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
        eprintln!("{compared} outputs compared with {{:?}}");
        assert_eq!(compared, 2 * (u64::from(u32::MAX) + 1 - 2 * (1 << 23)));
    }
}
