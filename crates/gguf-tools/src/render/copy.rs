//! Short byte moves for the JSON writers, below every other piece of them.

/// Copies `src` to the start of `dst` with a few fixed-size moves (overlapping where the
/// length is not a power of two) instead of a call to `memcpy`, which costs more for the
/// short pieces JSON is made of; longer pieces go to `copy_from_slice`.
#[inline(always)]
pub(super) fn copy_short(dst: &mut [u8], src: &[u8]) {
    let n = src.len();
    match n {
        0 => {}
        1..=3 => {
            dst[0] = src[0];
            dst[n / 2] = src[n / 2];
            dst[n - 1] = src[n - 1];
        }
        4..=7 => {
            dst[..4].copy_from_slice(&src[..4]);
            dst[n - 4..n].copy_from_slice(&src[n - 4..]);
        }
        8..=15 => {
            dst[..8].copy_from_slice(&src[..8]);
            dst[n - 8..n].copy_from_slice(&src[n - 8..]);
        }
        16..=32 => {
            dst[..16].copy_from_slice(&src[..16]);
            dst[n - 16..n].copy_from_slice(&src[n - 16..]);
        }
        _ => dst[..n].copy_from_slice(src),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_short_copies_every_length() {
        for n in 0..=40 {
            let src: Vec<u8> = (1..=n as u8).collect();
            let mut dst = [0u8; 48];
            copy_short(&mut dst, &src);
            assert_eq!(&dst[..n], &src[..], "length {n}");
            assert!(
                dst[n..].iter().all(|&b| b == 0),
                "length {n}: wrote past the end"
            );
        }
    }
}
