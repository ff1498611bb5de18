//! The floor every benchmark is measured against: a minimal walk over a GGUF header that
//! skips strings by their length and checks nothing but slice bounds (it panics on a bad
//! file; it only ever sees good ones).

/// Walks a little-endian GGUF v2/v3 header and returns where the tensor infos end.
pub fn floor(bytes: &[u8]) -> usize {
    let walk = Floor(bytes);
    let (n_tensors, n_kv) = (walk.u64(8), walk.u64(16));
    let mut pos = 24;
    for _ in 0..n_kv {
        pos += 8 + walk.u64(pos);
        pos = walk.value(pos + 4, walk.u32(pos));
    }
    for _ in 0..n_tensors {
        pos += 8 + walk.u64(pos);
        pos += 4 + 8 * walk.u32(pos) + 12;
    }
    pos
}

struct Floor<'a>(&'a [u8]);

impl Floor<'_> {
    fn u32(&self, pos: usize) -> usize {
        u32::from_le_bytes(self.0[pos..pos + 4].try_into().unwrap()) as usize
    }

    fn u64(&self, pos: usize) -> usize {
        u64::from_le_bytes(self.0[pos..pos + 8].try_into().unwrap()) as usize
    }

    /// Where a value of type `ty` starting at `pos` ends.
    fn value(&self, pos: usize, ty: usize) -> usize {
        match ty {
            0 | 1 | 7 => pos + 1,
            2 | 3 => pos + 2,
            4..=6 => pos + 4,
            10..=12 => pos + 8,
            8 => pos + 8 + self.u64(pos),
            _ => {
                let (element, n) = (self.u32(pos), self.u64(pos + 4));
                let mut pos = pos + 12;
                match element {
                    8 => {
                        for _ in 0..n {
                            pos += 8 + self.u64(pos);
                        }
                        pos
                    }
                    9 => {
                        for _ in 0..n {
                            pos = self.value(pos, element);
                        }
                        pos
                    }
                    _ => pos + n * self.value(0, element),
                }
            }
        }
    }
}
