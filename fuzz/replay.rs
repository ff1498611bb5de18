//! Replays a fuzz target's corpus (fuzz/corpus/TARGET/) and its fixed crash reproducers
//! (fuzz/regressions/TARGET/) through the target's check, as an ordinary test on stable.
//! Included by path by the replay test of each crate that owns a target.

use std::path::Path;

/// Runs `check` on every input of `target`, sorted, naming the one that panics; returns how
/// many there were.
pub fn replay(target: &str, mut check: impl FnMut(&[u8])) -> usize {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = root
        .ancestors()
        .find(|p| p.join("fuzz/replay.rs").is_file())
        .expect("the workspace root");
    let mut inputs = Vec::new();
    for dir in ["corpus", "regressions"] {
        if let Ok(entries) = std::fs::read_dir(root.join("fuzz").join(dir).join(target)) {
            inputs.extend(entries.map(|e| e.unwrap().path()).filter(|p| p.is_file()));
        }
    }
    inputs.sort();
    for path in &inputs {
        let data = std::fs::read(path).unwrap();
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&data)));
        assert!(
            result.is_ok(),
            "{} fails the {target} check",
            path.display()
        );
    }
    eprintln!("fuzz replay: {} {target} inputs", inputs.len());
    inputs.len()
}
