//! The header: the version and byte order the references read.

use super::{Checker, GGML, PY};
use crate::validate::codes;
use crate::validate::diagnostics::At;
use crate::{Endian, Version};

impl Checker<'_, '_> {
    pub(super) fn header(&mut self) {
        let version = || At::header("version", 4..8);
        if self.gguf.header.ctx.version == Version::V1 {
            self.out.reject(
                codes::VERSION_1,
                GGML | PY,
                version(),
                "GGUF v1 (32-bit counts and lengths): ggml no longer reads it, gguf-py reads only v2 and v3".into(),
            );
        }
        if self.gguf.endian() == Endian::Big {
            self.out.reject(
                codes::BIG_ENDIAN,
                GGML,
                version(),
                format!(
                    "big-endian file: ggml on a little-endian host reads the version as {:#x} and rejects it",
                    self.gguf.version().number().swap_bytes()
                ),
            );
        }
    }
}
